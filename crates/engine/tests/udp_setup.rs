//! The UDP flow setup against hostile peers: stray datagrams, wrong tokens, wrong stream
//! numbers, the right token from another address and a flood never connect a flow; the
//! server times the test out with a structured error and serves the next client.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

mod support;

use std::io::Write;
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

use engine::client::Quiet;
use engine::protocol::request;
use engine::{Server, ServerConfig, StopFlag};
use results::{Status, TestKind, TestSpec};
use support::{authed, read_message};
use wire::{DataHello, ErrorCode, Message, Token};

fn udp_spec() -> TestSpec {
    TestSpec {
        duration_ms: 500,
        rate_bps: 10_000_000,
        send_len: 200,
        recv_len: 200,
        ..TestSpec::new(TestKind::UdpStream)
    }
}

/// Control connection up to `accepted`; returns it with the token and the UDP ports.
fn accepted(addr: SocketAddr, spec: TestSpec) -> (TcpStream, Token, Vec<u16>) {
    let mut s = authed(addr);
    s.write_all(&Message::Setup { spec: request(&spec) }.encode().unwrap()).unwrap();
    match read_message(&mut s) {
        Message::Accepted(a) => {
            let token = Token::from_hex(&a.token).unwrap();
            (s, token, a.udp_ports)
        }
        other => panic!("expected accepted, got {other:?}"),
    }
}

#[test]
fn hostile_datagrams_never_open_a_flow_and_the_server_stays_healthy() {
    let cfg = ServerConfig {
        bind: SocketAddr::from(([127, 0, 0, 1], 0)),
        handshake_timeout: Duration::from_secs(2),
        ..ServerConfig::default()
    };
    let srv = Server::bind(cfg).unwrap().spawn().unwrap();
    let (mut ctrl, token, ports) = accepted(srv.addr, udp_spec());
    assert_eq!(ports.len(), 1);
    let target = SocketAddr::from(([127, 0, 0, 1], ports[0]));
    let attacker = UdpSocket::bind("127.0.0.1:0").unwrap();
    let started = Instant::now();
    attacker.send_to(b"junk", target).unwrap();
    attacker.send_to(&DataHello::new(Token([9; 16]), 0, [0; 32]).encode(), target).unwrap();
    attacker.send_to(&DataHello::new(token, 1, [0; 32]).encode(), target).unwrap();
    let mut wrong_version = DataHello::new(token, 0, [0; 32]);
    wrong_version.version = 99;
    attacker.send_to(&wrong_version.encode(), target).unwrap();
    // The right token and stream, but not from the control peer's address.
    let elsewhere = UdpSocket::bind("127.0.0.2:0").unwrap();
    elsewhere.send_to(&DataHello::new(token, 0, [0; 32]).encode(), target).unwrap();
    for i in 0..20_000u32 {
        let _ = attacker.send_to(&i.to_be_bytes(), target);
    }
    match read_message(&mut ctrl) {
        Message::Error(r) => assert_eq!(r.code, ErrorCode::Timeout, "{r}"),
        other => panic!("a hostile hello was accepted: {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(6));
    // Nothing was ever sent to an address that did not show the token.
    for s in [&attacker, &elsewhere] {
        s.set_nonblocking(true).unwrap();
        assert!(s.recv(&mut [0u8; 64]).is_err());
    }
    drop(ctrl);
    // The next, honest client runs a full UDP test.
    let opts = support::loopback_client(srv.addr.port());
    let (r, _) = engine::run_test(&opts, &udp_spec(), &mut Quiet, &StopFlag::new());
    assert_eq!(r.status, Status::Completed, "{:?}", r.error);
    let d = &r.summary.udp[0];
    assert!(d.sent > 0);
    assert_eq!(d.lost, d.sent - (d.received - d.duplicates));
    srv.shutdown();
}
