//! Third-party tests on loopback: server A runs the client end against server B and the
//! asking client gets both ends; A refuses without `allow_third_party` (naming the flag),
//! applies its own limits, and sends a host that is not a tcplab server nothing but its hello.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::time::Duration;

use engine::client::ClientOptions;
use engine::limits::Limits;
use engine::server::ServerHandle;
use engine::third_party::{run, Ends};
use engine::{Server, ServerConfig, StopFlag};
use results::{Status, TestKind, TestSpec};
use wire::HELLO_LEN;

fn server(allow_third_party: bool, limits: Limits) -> ServerHandle {
    let cfg = ServerConfig {
        bind: SocketAddr::from(([127, 0, 0, 1], 0)),
        handshake_timeout: Duration::from_secs(2),
        allow_third_party,
        limits,
        ..ServerConfig::default()
    };
    Server::bind(cfg).unwrap().spawn().unwrap()
}

fn ends(from: u16, to: u16) -> Ends {
    let from = ClientOptions {
        host: "127.0.0.1".into(),
        port: from,
        bind: None,
        family: None,
        timeout: Duration::from_secs(5),
        busy_wait: Duration::ZERO,
        key: None,
    };
    Ends { from, to_host: "127.0.0.1".into(), to_port: to }
}

fn spec(kind: TestKind, ms: u64) -> TestSpec {
    TestSpec { duration_ms: ms, interval_ms: 0, ..TestSpec::new(kind) }
}

#[test]
fn both_ends_come_back_from_a_to_b() {
    let (a, b) = (server(true, Limits::default()), server(false, Limits::default()));
    let (r, host) = run(&ends(a.addr.port(), b.addr.port()), &spec(TestKind::TcpRr, 300), &StopFlag::new());
    assert_eq!(r.status, Status::Completed, "{:?}", r.error);
    assert!(host.is_some(), "B's description");
    assert!(r.remote.is_some() && r.local.measured_s > 0.0);
    assert!(r.summary.rr.as_ref().is_some_and(|s| s.transactions > 0));
    let tp = r.third_party.unwrap();
    assert_eq!((tp.from, tp.to), (a.addr.to_string(), b.addr.to_string()));
    assert_eq!(r.server, b.addr.to_string());
}

#[test]
fn a_server_without_the_flag_refuses_naming_it() {
    let (a, b) = (server(false, Limits::default()), server(false, Limits::default()));
    let (r, _) = run(&ends(a.addr.port(), b.addr.port()), &spec(TestKind::TcpStream, 300), &StopFlag::new());
    let e = r.error.unwrap();
    assert_eq!((r.status, e.code.as_str()), (Status::Failed, "unsupported"));
    assert!(e.message.contains("--allow-third-party"), "{}", e.message);
}

#[test]
fn a_applies_its_own_limits() {
    let strict = Limits { max_duration_ms: 1000, ..Limits::default() };
    let (a, b) = (server(true, strict), server(false, Limits::default()));
    let (r, _) = run(&ends(a.addr.port(), b.addr.port()), &spec(TestKind::TcpStream, 5000), &StopFlag::new());
    let e = r.error.unwrap();
    assert_eq!(e.code, "bad-field", "{}", e.message);
    assert!(e.message.contains("duration_ms"), "{}", e.message);
}

#[test]
fn a_sends_a_non_tcplab_port_only_its_hello() {
    let other = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = other.local_addr().unwrap().port();
    let service = std::thread::spawn(move || {
        let (mut s, _) = other.accept().unwrap();
        s.write_all(b"SSH-2.0-OpenSSH_9.2 not tcplab at all, but long enough\r\n").unwrap();
        s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        let mut got = Vec::new();
        let _ = s.read_to_end(&mut got);
        got.len()
    });
    let a = server(true, Limits::default());
    let (r, _) = run(&ends(a.addr.port(), port), &spec(TestKind::TcpStream, 300), &StopFlag::new());
    assert_eq!(r.status, Status::Failed);
    let e = r.error.unwrap();
    assert!(e.message.contains("not a tcplab server") || e.code == "bad-version", "{e:?}");
    assert_eq!(service.join().unwrap(), HELLO_LEN, "A sent more than its hello");
}
