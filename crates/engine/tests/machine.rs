//! Which machine a server runs on, from its hello (issue 30 item 9): servers on one machine
//! answer one client's nonce with one id; a server that predates the flag answers without it.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::time::Duration;

use engine::client::Quiet;
use engine::{Server, ServerConfig, StopFlag};
use results::{Status, TestKind, TestSpec};
use support::loopback_client;
use wire::{Hello, HELLO_LEN};

fn server() -> engine::server::ServerHandle {
    let cfg = ServerConfig {
        bind: SocketAddr::from(([127, 0, 0, 1], 0)),
        handshake_timeout: Duration::from_secs(2),
        ..ServerConfig::default()
    };
    Server::bind(cfg).unwrap().spawn().unwrap()
}

#[test]
fn two_servers_on_this_machine_give_one_id_from_its_boot_id() {
    let (a, b) = (server(), server());
    let nonce = [7u8; 32];
    let ida = engine::machine::machine_id(&loopback_client(a.addr.port()), &nonce).unwrap();
    let idb = engine::machine::machine_id(&loopback_client(b.addr.port()), &nonce).unwrap();
    assert!(ida.is_some());
    assert_eq!(ida, idb);
    assert_eq!(ida, Some(wire::machine_id(&netio::host::boot_id(), &nonce)));
    let other = engine::machine::machine_id(&loopback_client(a.addr.port()), &[8; 32]).unwrap();
    assert_ne!(other, ida, "another nonce gives another id");
    // The question left nothing behind: the server runs a test next.
    let mut spec = TestSpec::new(TestKind::TcpStream);
    spec.duration_ms = 200;
    let (r, _) = engine::run_test(&loopback_client(a.addr.port()), &spec, &mut Quiet, &StopFlag::new());
    assert_eq!(r.status, Status::Completed, "{:?}", r.error);
}

#[test]
fn a_server_without_the_flag_gives_no_id() {
    // A protocol-3 server from before the flag: the plain 44-byte hello, byte 7 zero.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let old = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut buf = [0u8; HELLO_LEN];
        s.read_exact(&mut buf).unwrap();
        s.write_all(&Hello::server([2; 32]).encode()).unwrap();
        Hello::decode(&buf).unwrap().flags
    });
    assert_eq!(engine::machine::machine_id(&loopback_client(port), &[7; 32]).unwrap(), None);
    assert_eq!(old.join().unwrap(), wire::MACHINE_FLAG, "the client asked");
}
