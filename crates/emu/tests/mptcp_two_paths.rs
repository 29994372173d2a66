//! MPTCP over two emulated paths of different rate and delay: the in-kernel path manager,
//! configured over netlink (`Emulator::enable_mptcp`), opens a second subflow over the second path, and the
//! connection's goodput exceeds the faster path's alone. Needs root (namespaces, TUN).
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

use emu::pump::{second, Emulator, Options, Role};
use emu::PathConfig;
use netio::mptcp::{self, Level};
use netio::TcpInfo;

const SLOW: &str = "rate=20mbit,delay=10ms";
const FAST: &str = "rate=50mbit,delay=30ms";
const RUN: Duration = Duration::from_secs(5);
/// Slow start and the second subflow's join happen before goodput is counted.
const WARMUP: Duration = Duration::from_secs(2);
const RUNS: usize = 3;

/// What one transfer measured: goodput in bit/s, and the client's MPTCP view at its end.
struct Transfer {
    bps: f64,
    level: Option<Level>,
    subflows: Vec<TcpInfo>,
}

/// A transfer to `to`; an MPTCP server listens on every address (subflows join on another).
fn transfer(emu: &Emulator, to: Ipv4Addr, multipath: bool) -> Transfer {
    let listen = move || {
        if multipath {
            mptcp::listen(SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)))
        } else {
            TcpListener::bind((to, 0))
        }
    };
    let listener = emu.netns(Role::Server).run(listen).unwrap().unwrap();
    let addr = SocketAddr::from((to, listener.local_addr().unwrap().port()));
    let connect = move || if multipath { mptcp::connect(addr) } else { TcpStream::connect(addr) };
    let mut client = emu.netns(Role::Client).run(connect).unwrap().unwrap();
    let writer = thread::spawn(move || {
        let (block, start) = (vec![0u8; 64 * 1024], Instant::now());
        while start.elapsed() < RUN + Duration::from_millis(200) && client.write_all(&block).is_ok() {}
        let level = mptcp::info(&client).ok();
        let subflows = mptcp::subflows(&client).map(|(s, _)| s).unwrap_or_default();
        (level, subflows)
    });
    let (mut server, _) = listener.accept().unwrap();
    let bps = support::goodput_after(&mut server, RUN, WARMUP);
    let (level, subflows) = writer.join().unwrap();
    drop(server);
    thread::sleep(Duration::from_millis(500)); // queues drain before the next run
    Transfer { bps, level, subflows }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[test]
fn mptcp_over_two_paths_opens_two_subflows_and_beats_the_faster_path() {
    if !netio::netns::is_root() {
        eprintln!("skipped: needs root");
        return;
    }
    let opts = Options { realtime: false, ..Options::default() };
    let mut emu = Emulator::start(SLOW, &SLOW.parse::<PathConfig>().unwrap(), &opts).unwrap();
    emu.add_path(FAST, &FAST.parse().unwrap(), (second::CLIENT_ADDR, second::SERVER_ADDR)).unwrap();
    emu.enable_mptcp().unwrap();
    let (first, fast) = (emu.addr(Role::Server), second::SERVER_ADDR);
    let (mut multi, mut single) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let m = transfer(&emu, first, true);
        let Some(Level::Mptcp(info)) = m.level else { panic!("no MPTCP connection: {:?}", m.level) };
        let counters = || format!("client {}; server {}", mib(&emu, Role::Client), mib(&emu, Role::Server));
        assert_eq!(info.open_subflows(), 2, "{info:?}; {}", counters());
        assert_eq!(m.subflows.len(), 2, "{:?}", m.subflows);
        assert!(
            m.subflows.iter().all(|s| s.data_segs_out > 100),
            "each subflow carried data: {:?}",
            m.subflows
        );
        multi.push(m.bps);
        single.push(transfer(&emu, fast, false).bps);
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let (m, s) = (median(multi.clone()), median(single.clone()));
    eprintln!("MPTCP over {SLOW} + {FAST}: {multi:.0?} bit/s; TCP over the faster path: {single:.0?} bit/s");
    eprintln!(
        "median ratio {:.2} ({:.1} / {:.1} Mbit/s); load average {}",
        m / s,
        m / 1e6,
        s / 1e6,
        load.trim()
    );
    assert!(emu.failure().is_none(), "{:?}", emu.failure());
    assert!(m > s, "MPTCP {m} bit/s does not exceed the faster path alone, {s} bit/s");
}

/// The nonzero MPTCP counters of `role`'s namespace.
fn mib(emu: &Emulator, role: Role) -> String {
    let text =
        emu.netns(role).run(|| std::fs::read_to_string("/proc/thread-self/net/netstat")).unwrap().unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("MPTcpExt:")).collect();
    let (names, values) = (lines[0].split_whitespace(), lines[1].split_whitespace());
    names.zip(values).filter(|(_, v)| *v != "0").map(|(n, v)| format!("{n}={v} ")).collect()
}
