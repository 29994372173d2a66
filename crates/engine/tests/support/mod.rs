//! What the protocol tests share: a raw control connection that has exchanged hellos, and
//! reading one framed control message from it.
#![allow(dead_code, reason = "each test file uses the part it needs")]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use wire::{Hello, Message, HELLO_LEN};

/// A TCP connection to `addr` whose reads give up after 10 s.
pub fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).expect("read timeout");
    s
}

/// A control connection that sent a hello of protocol `version` and read the server's.
pub fn hello(addr: SocketAddr, version: u16) -> TcpStream {
    let mut s = connect(addr);
    let mut h = Hello::control([1; 32]);
    h.version = version;
    s.write_all(&h.encode()).expect("send hello");
    let mut buf = [0u8; HELLO_LEN];
    s.read_exact(&mut buf).expect("read hello");
    assert!(matches!(Hello::decode(&buf).expect("a hello").kind, wire::HelloKind::Server { .. }));
    s
}

/// A control connection that exchanged hellos and authenticated anonymously (a server
/// without keys), ready for frames.
pub fn authed(addr: SocketAddr) -> TcpStream {
    let mut s = hello(addr, wire::PROTOCOL_VERSION);
    s.write_all(&wire::auth::ClientAuth::Anonymous.encode()).expect("send auth");
    let mut buf = [0u8; wire::auth::SERVER_AUTH_LEN];
    s.read_exact(&mut buf).expect("read the server's auth answer");
    let reply = wire::auth::ServerAuth::decode(&buf).expect("an auth answer");
    assert_eq!(reply.status, wire::auth::Status::Ok);
    s
}

/// One length-prefixed control message.
pub fn read_message(s: &mut TcpStream) -> Message {
    let mut len = [0u8; 4];
    s.read_exact(&mut len).expect("frame length");
    let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
    s.read_exact(&mut body).expect("frame body");
    Message::decode(&body).expect("a control message")
}

/// Client options for a server on 127.0.0.1:`port` (5 s control timeout, 3 s busy wait).
pub fn loopback_client(port: u16) -> engine::client::ClientOptions {
    engine::client::ClientOptions {
        host: "127.0.0.1".into(),
        port,
        bind: None,
        family: None,
        timeout: Duration::from_secs(5),
        busy_wait: Duration::from_secs(3),
        key: None,
    }
}

/// Runs `spec` against a fresh in-process server on loopback, which is shut down after.
pub fn run_on_loopback(spec: &results::TestSpec) -> results::TestResult {
    let cfg = engine::ServerConfig { bind: SocketAddr::from(([127, 0, 0, 1], 0)), ..Default::default() };
    let srv = engine::Server::bind(cfg).expect("bind").spawn().expect("spawn");
    let opts = loopback_client(srv.addr.port());
    let (r, _) = engine::run_test(&opts, spec, &mut engine::client::Quiet, &engine::StopFlag::new());
    srv.shutdown();
    r
}
