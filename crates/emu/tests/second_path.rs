//! A second emulated path between the same two namespaces: each path carries TCP at its
//! own configured rate and counts its own packets. Needs root (namespaces, TUN).
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

use emu::pump::{second, Emulator, Options, Role};
use emu::PathConfig;

const FIRST: &str = "rate=20mbit,delay=5ms";
const SECOND: &str = "rate=50mbit,delay=10ms";
/// How long each transfer runs; goodput is measured after the first second (slow start).
const RUN: Duration = Duration::from_secs(3);
const WARMUP: Duration = Duration::from_secs(1);
/// Longer than a full queue takes to drain at 20 Mbit/s.
const SETTLE: Duration = Duration::from_millis(500);

fn path(spec: &str) -> PathConfig {
    spec.parse().unwrap()
}

/// Bytes the server side received over `to`, per second after the warm-up, in bit/s.
fn goodput(emu: &Emulator, to: Ipv4Addr) -> f64 {
    let listener = emu.netns(Role::Server).run(|| TcpListener::bind((to, 0))).unwrap().unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let mut client = emu.netns(Role::Client).run(|| TcpStream::connect(addr)).unwrap().unwrap();
    let writer = thread::spawn(move || {
        let block = vec![0u8; 64 * 1024];
        let start = Instant::now();
        while start.elapsed() < RUN + Duration::from_millis(200) {
            if client.write_all(&block).is_err() {
                break;
            }
        }
    });
    let (mut server, _) = listener.accept().unwrap();
    let bps = support::goodput_after(&mut server, RUN, WARMUP);
    drop(server);
    writer.join().unwrap();
    bps
}

fn delivered_up(report: &results::EmuReport) -> u64 {
    report.directions.iter().find(|d| d.direction == "up").map_or(0, |d| d.delivered.bytes)
}

#[test]
fn each_path_carries_traffic_at_its_own_rate_and_counts_it_apart() {
    if !netio::netns::is_root() {
        eprintln!("skipped: needs root");
        return;
    }
    let opts = Options { realtime: false, ..Options::default() };
    let mut emu = Emulator::start(FIRST, &path(FIRST), &opts).unwrap();
    assert!(emu.enable_mptcp().is_err(), "MPTCP over two paths needs the second");
    assert_eq!(emu.second_report(), None);
    emu.add_path(SECOND, &path(SECOND), (second::CLIENT_ADDR, second::SERVER_ADDR)).unwrap();
    assert!(emu
        .add_path(SECOND, &path(SECOND), (Ipv4Addr::new(198, 18, 4, 1), Ipv4Addr::new(198, 18, 4, 2)))
        .is_err());
    assert_eq!(emu.second_addr(Role::Server), Some(second::SERVER_ADDR));

    let first = goodput(&emu, emu.addr(Role::Server));
    thread::sleep(SETTLE); // the first path's queue drains
    let first_bytes = delivered_up(&emu.report());
    let second_bytes_before = delivered_up(&emu.second_report().unwrap());
    let second = goodput(&emu, second::SERVER_ADDR);
    thread::sleep(SETTLE);
    let first_bytes_after = delivered_up(&emu.report());
    let second_bytes = delivered_up(&emu.second_report().unwrap());
    eprintln!(
        "goodput: first path {:.1} Mbit/s (of 20), second {:.1} Mbit/s (of 50)",
        first / 1e6,
        second / 1e6
    );
    assert!(emu.failure().is_none(), "{:?}", emu.failure());

    // Goodput cannot exceed the configured rate (5 % for bytes buffered before the window
    // opened); a loaded host may lower it, not by half.
    assert!(first <= 21e6 && first > 10e6, "first path: {first} bit/s");
    assert!(second <= 52.5e6 && second > 25e6, "second path: {second} bit/s");
    // Each path counts only its own traffic.
    assert!(
        second_bytes_before < 10_000,
        "the second path carried {second_bytes_before} B before its transfer"
    );
    assert!(
        first_bytes_after - first_bytes < 10_000,
        "the first path carried {} B during the second's transfer",
        first_bytes_after - first_bytes
    );
    assert!(second_bytes > first_bytes, "{second_bytes} B on the second path, {first_bytes} B on the first");
}
