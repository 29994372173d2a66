//! Pre-shared-key authentication against a real server on loopback: keyed tests run, every
//! wrong way in is refused with one line, data connections without the session key's tag
//! never join a test, and a handshake cut at any byte leaves the server serving.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

mod support;

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream, UdpSocket};
use std::sync::Arc;
use std::time::Duration;

use engine::auth::{keys, ClientKey, KeyStore};
use engine::client::{ClientOptions, Quiet};
use engine::protocol::request;
use engine::server::ServerHandle;
use engine::{Server, ServerConfig, StopFlag};
use results::{Status, TestKind, TestSpec};
use support::{connect, read_message};
use wire::auth::{self as wa, ClientAuth, ClientOutcome, ServerAuth, SessionKey};
use wire::{DataHello, ErrorCode, Hello, HelloKind, Message, Token, HELLO_LEN};

const ALICE: &str = "alice:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
const KEYS: &str = "key alice AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n";

fn keyed_server() -> ServerHandle {
    let store = KeyStore::new(keys::parse(KEYS).unwrap());
    let cfg = ServerConfig {
        bind: SocketAddr::from(([127, 0, 0, 1], 0)),
        handshake_timeout: Duration::from_secs(2),
        keys: Some(Arc::new(store)),
        ..ServerConfig::default()
    };
    Server::bind(cfg).unwrap().spawn().unwrap()
}

fn opts(port: u16, key: Option<&str>) -> ClientOptions {
    ClientOptions {
        host: "127.0.0.1".into(),
        port,
        bind: None,
        family: None,
        timeout: Duration::from_secs(5),
        busy_wait: Duration::from_secs(3),
        key: key.map(|k| ClientKey::from_pair(k).unwrap()),
    }
}

fn spec(kind: TestKind) -> TestSpec {
    let mut s = engine::registry::defaults(kind);
    (s.duration_ms, s.interval_ms) = (300, 0);
    if kind == TestKind::UdpStream {
        s.rate_bps = 10_000_000;
    }
    s
}

fn run(port: u16, key: Option<&str>, kind: TestKind) -> results::TestResult {
    engine::run_test(&opts(port, key), &spec(kind), &mut Quiet, &StopFlag::new()).0
}

#[test]
fn the_right_key_runs_tcp_crr_and_udp_tests() {
    let srv = keyed_server();
    for kind in [TestKind::TcpStream, TestKind::TcpCrr, TestKind::UdpStream] {
        let r = run(srv.addr.port(), Some(ALICE), kind);
        assert_eq!(r.status, Status::Completed, "{kind:?}: {:?}", r.error);
    }
}

#[test]
fn a_wrong_secret_an_unknown_id_and_no_key_are_refused_in_one_line() {
    let srv = keyed_server();
    let wrong = "alice:AQECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    let unknown = "mallory:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    for (key, want) in [
        (Some(wrong), "authentication failed"),
        (Some(unknown), "authentication failed"),
        (None, "authentication required"),
    ] {
        let r = run(srv.addr.port(), key, TestKind::TcpStream);
        let e = r.error.unwrap();
        assert_eq!((r.status, e.code.as_str()), (Status::Failed, "auth"), "{key:?}");
        assert!(e.message.starts_with(want) && !e.message.contains('\n'), "{}", e.message);
        assert!(!e.message.contains("AAECAw"), "a secret in {}", e.message);
    }
    assert_eq!(run(srv.addr.port(), Some(ALICE), TestKind::TcpStream).status, Status::Completed);
}

#[test]
fn a_key_against_a_server_without_keys_is_told_so() {
    let cfg = ServerConfig { bind: SocketAddr::from(([127, 0, 0, 1], 0)), ..ServerConfig::default() };
    let srv = Server::bind(cfg).unwrap().spawn().unwrap();
    let r = run(srv.addr.port(), Some(ALICE), TestKind::TcpStream);
    let e = r.error.unwrap();
    assert!(e.message.contains("does not use keys"), "{}", e.message);
    assert_eq!(run(srv.addr.port(), None, TestKind::TcpStream).status, Status::Completed);
}

/// A keyed control connection by hand, up to `accepted`: the stream, the token, the UDP
/// ports and the session key.
fn keyed_accepted(addr: SocketAddr, kind: TestKind) -> (TcpStream, Token, Vec<u16>, SessionKey) {
    let key = ClientKey::from_pair(ALICE).unwrap();
    let mut s = connect(addr);
    let nc = [7u8; 32];
    s.write_all(&Hello::control(nc).encode()).unwrap();
    let mut buf = [0u8; HELLO_LEN];
    s.read_exact(&mut buf).unwrap();
    let HelloKind::Server { nonce: ns } = Hello::decode(&buf).unwrap().kind else { panic!() };
    let (auth, pending) =
        wa::client_start(Some((&key.id, &key.secret)), wire::PROTOCOL_VERSION, &nc, &ns).unwrap();
    s.write_all(&auth.encode()).unwrap();
    let mut reply = [0u8; wa::SERVER_AUTH_LEN];
    s.read_exact(&mut reply).unwrap();
    let ClientOutcome::Keyed(session) = pending.finish(&ServerAuth::decode(&reply).unwrap()).unwrap() else {
        panic!("not authenticated")
    };
    s.write_all(&Message::Setup { spec: request(&spec(kind)) }.encode().unwrap()).unwrap();
    match read_message(&mut s) {
        Message::Accepted(a) => (s, Token::from_hex(&a.token).unwrap(), a.udp_ports, session),
        other => panic!("{other:?}"),
    }
}

#[test]
fn data_connections_without_the_session_tag_never_join_the_test() {
    let srv = keyed_server();
    let (mut ctrl, token, _, session) = keyed_accepted(srv.addr, TestKind::TcpStream);
    let other = keyed_accepted_session_elsewhere(srv.addr);
    let right = wa::data_tag(&session, &token, 0);
    for tag in [[0u8; 32], wa::data_tag(&other, &token, 0), wa::data_tag(&session, &token, 1)] {
        let mut d = connect(srv.addr);
        d.write_all(&DataHello::new(token, 0, tag).encode()).unwrap();
        assert_eq!(d.read(&mut [0u8; 8]).unwrap_or(0), 0, "a forged data connection was kept");
    }
    assert_ne!(right, [0; 32]);
    // No stream joined: the server gives up waiting for the data connections.
    match read_message(&mut ctrl) {
        Message::Error(r) => assert_eq!(r.code, ErrorCode::Timeout, "{r}"),
        other => panic!("a forged data connection joined: {other:?}"),
    }
    drop(ctrl);
    assert_eq!(run(srv.addr.port(), Some(ALICE), TestKind::TcpStream).status, Status::Completed);
}

/// The session key of another connection with the same key (other nonces).
fn keyed_accepted_session_elsewhere(_: SocketAddr) -> SessionKey {
    let key = ClientKey::from_pair(ALICE).unwrap();
    let t = wa::Transcript {
        version: wire::PROTOCOL_VERSION,
        id: &key.id,
        client_nonce: &[1; 32],
        server_nonce: &[2; 32],
    };
    t.session_key(&key.secret)
}

#[test]
fn a_udp_hello_without_the_session_tag_opens_no_flow() {
    let srv = keyed_server();
    let (mut ctrl, token, ports, _) = keyed_accepted(srv.addr, TestKind::UdpStream);
    let target = SocketAddr::from(([127, 0, 0, 1], ports[0]));
    let attacker = UdpSocket::bind("127.0.0.1:0").unwrap();
    attacker.send_to(&DataHello::new(token, 0, [0; 32]).encode(), target).unwrap();
    attacker.send_to(&DataHello::new(token, 0, [1; 32]).encode(), target).unwrap();
    match read_message(&mut ctrl) {
        Message::Error(r) => assert_eq!(r.code, ErrorCode::Timeout, "{r}"),
        other => panic!("an unauthenticated UDP hello opened a flow: {other:?}"),
    }
    attacker.set_nonblocking(true).unwrap();
    assert!(attacker.recv(&mut [0u8; 64]).is_err(), "the server sent to an unauthenticated address");
}

#[test]
fn a_handshake_cut_at_any_byte_leaves_the_server_serving() {
    let srv = keyed_server();
    let key = ClientKey::from_pair(ALICE).unwrap();
    let auth = ClientAuth::Keyed { id: key.id.clone(), tag: [3; 32] }.encode();
    for cut in 0..=wa::CLIENT_AUTH_LEN {
        let mut s = connect(srv.addr);
        s.write_all(&Hello::control([9; 32]).encode()).unwrap();
        s.write_all(&auth[..cut]).unwrap();
        s.shutdown(Shutdown::Write).unwrap();
        let mut rest = Vec::new();
        let _ = s.read_to_end(&mut rest);
        assert_eq!(&rest[..6], b"TCPLAB", "cut {cut}: no server hello");
        if cut == wa::CLIENT_AUTH_LEN {
            let reply = ServerAuth::decode(&rest[HELLO_LEN..]).unwrap();
            assert_eq!(reply.status, wa::Status::Failed, "a made-up tag");
        }
    }
    assert_eq!(run(srv.addr.port(), Some(ALICE), TestKind::TcpStream).status, Status::Completed);
}

#[test]
fn a_connection_that_never_authenticates_does_not_hold_the_test_slot() {
    let srv = keyed_server();
    let mut idle = connect(srv.addr);
    idle.write_all(&Hello::control([5; 32]).encode()).unwrap();
    let mut buf = [0u8; HELLO_LEN];
    idle.read_exact(&mut buf).unwrap();
    // The idle peer is still within its handshake deadline: a keyed client runs meanwhile.
    let at_once = ClientOptions { busy_wait: Duration::ZERO, ..opts(srv.addr.port(), Some(ALICE)) };
    let r = engine::run_test(&at_once, &spec(TestKind::TcpStream), &mut Quiet, &StopFlag::new()).0;
    assert_eq!(r.status, Status::Completed, "{:?}", r.error);
    drop(idle);
}
