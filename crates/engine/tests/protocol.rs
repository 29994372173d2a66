//! The server against hostile or broken peers, byte by byte: every rejection is a structured
//! error, every wait is bounded, and the server serves the next client afterwards.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use engine::client::{ClientOptions, Quiet};
use engine::protocol::request;
use engine::server::ServerHandle;
use engine::{Server, ServerConfig, StopFlag};
use results::{Status, TestKind, TestSpec};
use support::{authed, connect, hello, read_message};
use wire::{ErrorCode, Hello, Message, Rejection, HELLO_LEN};

fn server(cfg: ServerConfig) -> ServerHandle {
    let cfg = ServerConfig {
        bind: SocketAddr::from(([127, 0, 0, 1], 0)),
        handshake_timeout: Duration::from_secs(2),
        ..cfg
    };
    Server::bind(cfg).unwrap().spawn().unwrap()
}

fn expect_error(s: &mut TcpStream, code: ErrorCode) -> wire::Rejection {
    match read_message(s) {
        Message::Error(r) => {
            assert_eq!(r.code, code, "{r}");
            r
        }
        other => panic!("expected an error, got {other:?}"),
    }
}

fn quick_spec(kind: TestKind) -> TestSpec {
    let mut spec = TestSpec::new(kind);
    spec.duration_ms = 300;
    spec.interval_ms = 0;
    spec
}

fn client_opts(port: u16) -> ClientOptions {
    ClientOptions {
        host: "127.0.0.1".into(),
        port,
        bind: None,
        family: None,
        timeout: Duration::from_secs(5),
        busy_wait: Duration::ZERO,
        key: None,
    }
}

fn run_ok(addr: SocketAddr) {
    let opts = client_opts(addr.port());
    let (r, _) = engine::run_test(&opts, &quick_spec(TestKind::TcpStream), &mut Quiet, &StopFlag::new());
    assert_eq!(r.status, Status::Completed, "{:?}", r.error);
}

#[test]
fn oversized_and_zero_lengths_get_bad_message() {
    let srv = server(ServerConfig::default());
    for header in [[0xff, 0xff, 0xff, 0xff], [0, 0, 0, 0], [0, 1, 0, 1]] {
        let mut s = authed(srv.addr);
        s.write_all(&header).unwrap();
        expect_error(&mut s, ErrorCode::BadMessage);
    }
    run_ok(srv.addr);
}

#[test]
fn wrong_version_is_refused() {
    let srv = server(ServerConfig::default());
    let mut s = hello(srv.addr, 99);
    let r = expect_error(&mut s, ErrorCode::BadVersion);
    assert!(r.message.contains("99"));
}

#[test]
fn an_old_client_is_told_bad_version_with_both_numbers() {
    let srv = server(ServerConfig::default());
    // A protocol-1 client sends its setup without looking at the server's hello.
    let mut s = hello(srv.addr, 1);
    let _ =
        s.write_all(&Message::Setup { spec: request(&quick_spec(TestKind::TcpStream)) }.encode().unwrap());
    let r = expect_error(&mut s, ErrorCode::BadVersion);
    let expected = format!(
        "client speaks tcplab protocol 1, this server {}: upgrade the older side",
        wire::PROTOCOL_VERSION
    );
    assert_eq!(r.message, expected);
    run_ok(srv.addr);
}

/// A protocol-1 server as it behaved: its hello, then a `bad-version` error for any other
/// client version; returns what the client sent after its hello.
fn old_server() -> (SocketAddr, JoinHandle<Vec<u8>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut buf = [0u8; HELLO_LEN];
        s.read_exact(&mut buf).unwrap();
        let client = Hello::decode(&buf).unwrap();
        let mut reply = Hello::server([2; 32]);
        reply.version = 1;
        s.write_all(&reply.encode()).unwrap();
        let why = format!("client speaks protocol version {}, this server 1", client.version);
        s.write_all(&Message::Error(Rejection::new(ErrorCode::BadVersion, why)).encode().unwrap()).unwrap();
        // The client closes with our error unread, so its kernel may answer with a reset;
        // whatever it sent before that has been read into `rest` either way.
        let mut rest = Vec::new();
        let _ = s.read_to_end(&mut rest);
        rest
    });
    (addr, handle)
}

#[test]
fn a_client_names_an_old_server_version_before_sending_setup() {
    let (addr, old) = old_server();
    let spec = quick_spec(TestKind::TcpStream);
    let (r, _) = engine::run_test(&client_opts(addr.port()), &spec, &mut Quiet, &StopFlag::new());
    assert_eq!(r.status, Status::Failed);
    let e = r.error.unwrap();
    assert_eq!(e.code, "bad-version");
    let expected = format!(
        "server {addr} speaks tcplab protocol 1, this client {}: upgrade the older side",
        wire::PROTOCOL_VERSION
    );
    assert_eq!(e.message, expected);
    assert_eq!(old.join().unwrap(), Vec::<u8>::new(), "the client sent something after its hello");
}

#[test]
fn bad_fields_are_named() {
    let srv = server(ServerConfig::default());
    let mut s = authed(srv.addr);
    let mut spec = quick_spec(TestKind::TcpStream);
    spec.parallel = 100_000;
    s.write_all(&Message::Setup { spec: request(&spec) }.encode().unwrap()).unwrap();
    let r = expect_error(&mut s, ErrorCode::BadField);
    assert_eq!(r.field.as_deref(), Some("parallel"));
}

#[test]
fn unknown_fields_and_garbage_json_are_refused() {
    let srv = server(ServerConfig::default());
    let mut s = authed(srv.addr);
    let body = br#"{"type":"setup","spec":{"test":"tcp-stream","evil":1}}"#;
    s.write_all(&(body.len() as u32).to_be_bytes()).unwrap();
    s.write_all(body).unwrap();
    // A setting this server does not know is named (settings travel by their table names).
    let r = expect_error(&mut s, ErrorCode::BadField);
    assert_eq!(r.field.as_deref(), Some("evil"), "{r}");
    let mut s = authed(srv.addr);
    let body = br#"{"type":"setup","spec":{"test":"tcp-stream","parallel":1.5}}"#;
    s.write_all(&(body.len() as u32).to_be_bytes()).unwrap();
    s.write_all(body).unwrap();
    expect_error(&mut s, ErrorCode::BadMessage);
}

#[test]
fn unavailable_congestion_control_is_unsupported() {
    let srv = server(ServerConfig::default());
    let mut s = authed(srv.addr);
    let mut spec = quick_spec(TestKind::TcpStream);
    spec.congestion = Some("nosuchcc".into());
    s.write_all(&Message::Setup { spec: request(&spec) }.encode().unwrap()).unwrap();
    let r = expect_error(&mut s, ErrorCode::Unsupported);
    assert!(r.message.contains("nosuchcc"));
}

#[test]
fn a_silent_client_is_dropped_and_the_server_stays_usable() {
    let srv = server(ServerConfig::default());
    let mut silent = connect(srv.addr);
    let started = Instant::now();
    let mut buf = [0u8; 16];
    let n = silent.read(&mut buf).unwrap_or(0);
    assert_eq!(n, 0, "the server should close a connection that never says hello");
    assert!(started.elapsed() < Duration::from_secs(8));
    let mut half = authed(srv.addr);
    expect_error(&mut half, ErrorCode::Timeout);
    run_ok(srv.addr);
}

#[test]
fn a_second_client_is_told_busy() {
    let srv = server(ServerConfig::default());
    let setup = Message::Setup { spec: request(&quick_spec(TestKind::TcpStream)) }.encode().unwrap();
    let mut first = authed(srv.addr);
    first.write_all(&setup).unwrap();
    assert!(matches!(read_message(&mut first), Message::Accepted(_)));
    // A test is running: the next client is told once it has authenticated, instead of the
    // answer to its authentication.
    let mut second = hello(srv.addr, wire::PROTOCOL_VERSION);
    second.write_all(&wire::auth::ClientAuth::Anonymous.encode()).unwrap();
    let r = expect_error(&mut second, ErrorCode::Busy);
    assert!(r.retry_after_ms.is_some());
}

/// Peers that send a hello (or authenticate) and stall hold no test slot: the one slot of a
/// default server stays free for a client that asks for a test.
#[test]
fn peers_stalled_in_the_handshake_hold_no_slot() {
    let srv = server(ServerConfig::default());
    let _stalled: Vec<TcpStream> = (0..4).map(|_| hello(srv.addr, wire::PROTOCOL_VERSION)).collect();
    let _authed: Vec<TcpStream> = (0..4).map(|_| authed(srv.addr)).collect();
    std::thread::sleep(Duration::from_millis(200));
    run_ok(srv.addr);
}

#[test]
fn max_concurrent_admits_more() {
    let srv = server(ServerConfig { max_concurrent: 2, ..ServerConfig::default() });
    let _first = hello(srv.addr, wire::PROTOCOL_VERSION);
    std::thread::sleep(Duration::from_millis(200));
    run_ok(srv.addr);
}

#[test]
fn data_connections_with_a_wrong_token_are_closed() {
    let srv = server(ServerConfig::default());
    let mut d = connect(srv.addr);
    d.write_all(&wire::DataHello::new(wire::Token([9; 16]), 0, [0; 32]).encode()).unwrap();
    let mut buf = [0u8; 8];
    assert_eq!(d.read(&mut buf).unwrap_or(0), 0);
    run_ok(srv.addr);
}

#[test]
fn a_client_vanishing_before_start_frees_the_server() {
    let srv = server(ServerConfig::default());
    {
        let mut s = authed(srv.addr);
        let setup = Message::Setup { spec: request(&quick_spec(TestKind::TcpStream)) };
        s.write_all(&setup.encode().unwrap()).unwrap();
        assert!(matches!(read_message(&mut s), Message::Accepted(_)));
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    let opts = client_opts(srv.addr.port());
    loop {
        let (r, _) = engine::run_test(&opts, &quick_spec(TestKind::TcpStream), &mut Quiet, &StopFlag::new());
        if r.status == Status::Completed {
            break;
        }
        assert!(Instant::now() < deadline, "server still busy: {:?}", r.error);
        std::thread::sleep(Duration::from_millis(200));
    }
}
