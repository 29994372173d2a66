//! Kill at every step (issue 18, security notes R2): whatever state a client dies in, a real
//! `tcplab server` (one test at a time) serves the next test within 2 s, and a killed
//! client's archive holds only complete rows.
//!
//! The protocol is driven from here with the engine's own `Control` and the wire types, as
//! the real client does, step by step; at each state the control connection, or the data
//! connection, is cut (closed: FIN, or RST when unread data is pending). Real `tcplab`
//! clients writing an archive are killed with SIGKILL at timed points (during the
//! handshake, mid-data, around the results), and the archive is checked with SQLite.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use engine::control::Control;
use results::{TestKind, TestResult, TestSpec};
use support::{command, ServerProc};
use wire::{Hello, Message, Token};

/// How soon after a cut the server must have accepted a new test.
const READY_WITHIN: Duration = Duration::from_secs(2);

/// Protocol states, in the order a client goes through them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    /// TCP connected, nothing sent.
    Connected,
    /// Half of the hello sent.
    MidHello,
    /// Hello sent, the server's hello read.
    Hello,
    /// Half of the setup frame sent.
    MidSetup,
    /// Setup sent, `accepted` read; no data connection yet.
    Accepted,
    /// The data connection opened; `ready` read.
    Ready,
    /// `start` sent; no data yet.
    Started,
    /// Data flowing for 0.4 s.
    MidData,
    /// `stop` sent; the server is sending its results, which are not read.
    Results,
}

const STEPS: [Step; 9] = [
    Step::Connected,
    Step::MidHello,
    Step::Hello,
    Step::MidSetup,
    Step::Accepted,
    Step::Ready,
    Step::Started,
    Step::MidData,
    Step::Results,
];

/// A client driven by hand up to some step.
struct Driven {
    raw: TcpStream,
    ctrl: Option<Control>,
    data: Vec<TcpStream>,
}

fn spec(test: TestKind) -> TestSpec {
    TestSpec { duration_ms: 3000, interval_ms: 0, ..TestSpec::new(test) }
}

/// Drives a TCP stream test on `port` up to (and including) `upto`.
fn drive(port: u16, upto: Step) -> Driven {
    drive_test(port, upto, &spec(TestKind::TcpStream))
}

/// Drives test `spec` on `port` up to `upto` (at most [`Step::Accepted`] unless it is a TCP
/// stream test).
fn drive_test(port: u16, upto: Step, spec: &TestSpec) -> Driven {
    let raw = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut d = Driven { raw: raw.try_clone().unwrap(), ctrl: None, data: Vec::new() };
    if upto == Step::Connected {
        return d;
    }
    let hello = Hello::control([1; 32]).encode();
    d.raw.write_all(&hello[..20]).unwrap();
    if upto == Step::MidHello {
        return d;
    }
    d.raw.write_all(&hello[20..]).unwrap();
    let mut ctrl = Control::client(raw);
    let server = ctrl.recv_hello(Duration::from_secs(2)).unwrap();
    assert!(matches!(server.kind, wire::HelloKind::Server { .. }), "{server:?}");
    d.ctrl = Some(ctrl);
    if upto == Step::Hello {
        return d;
    }
    anonymous(&mut d.raw);
    let setup = Message::Setup { spec: engine::protocol::request(spec) }.encode().unwrap();
    d.raw.write_all(&setup[..setup.len() / 2]).unwrap();
    if upto == Step::MidSetup {
        return d;
    }
    d.raw.write_all(&setup[setup.len() / 2..]).unwrap();
    let ctrl = d.ctrl.as_mut().unwrap();
    let token = match recv(ctrl) {
        Message::Accepted(a) => Token::from_hex(&a.token).unwrap(),
        other => panic!("expected accepted, got {other:?}"),
    };
    if upto == Step::Accepted {
        return d;
    }
    let mut conn = TcpStream::connect(("127.0.0.1", port)).unwrap();
    conn.write_all(&wire::DataHello::new(token, 0, [0; wire::auth::TAG_LEN]).encode()).unwrap();
    d.data.push(conn);
    assert_eq!(recv(ctrl), Message::Ready {});
    if upto == Step::Ready {
        return d;
    }
    ctrl.send(&Message::Start {}).unwrap();
    if upto == Step::Started {
        return d;
    }
    let chunk = vec![0x5a; 64 * 1024];
    let until = Instant::now() + Duration::from_millis(400);
    while Instant::now() < until {
        d.data[0].write_all(&chunk).unwrap();
    }
    if upto == Step::MidData {
        return d;
    }
    ctrl.send(&Message::Stop { reason: "kill-steps harness".into() }).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    d
}

/// Authenticates anonymously (the server has no keys) right after the hellos.
fn anonymous(raw: &mut TcpStream) {
    raw.write_all(&wire::auth::ClientAuth::Anonymous.encode()).unwrap();
    let mut reply = [0u8; wire::auth::SERVER_AUTH_LEN];
    raw.read_exact(&mut reply).unwrap();
    assert_eq!(wire::auth::ServerAuth::decode(&reply).unwrap().status, wire::auth::Status::Ok);
}

fn recv(ctrl: &mut Control) -> Message {
    ctrl.recv_by(Instant::now() + Duration::from_secs(5)).unwrap()
}

/// Runs short real tests until one succeeds; panics if none was accepted within
/// [`READY_WITHIN`] of `since`. Returns how long after `since` the accepted one started.
fn served_again(srv: &ServerProc, since: Instant, what: &str) -> Duration {
    let mut last = String::new();
    while since.elapsed() <= READY_WITHIN {
        let started = since.elapsed();
        let out = command().args(["rr", "127.0.0.1", "-p", &srv.port(), "-t", "0.3"]).output().unwrap();
        if out.status.success() {
            return started;
        }
        last = support::stderr(&out);
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!(
        "{what}: no test accepted within {READY_WITHIN:?} (last attempt: {last})\nserver log:\n{}",
        srv.log()
    );
}

#[test]
fn cutting_the_control_connection_at_any_step_frees_the_server_at_once() {
    let srv = ServerProc::start(&[]);
    for step in STEPS {
        let driven = drive(srv.port, step);
        // Cut control only: any data connection stays open, as if its host kept it.
        let Driven { raw, ctrl, data } = driven;
        drop((raw, ctrl));
        let cut = Instant::now();
        let took = served_again(&srv, cut, &format!("control cut at {step:?}"));
        eprintln!("control cut at {step:?}: next test accepted after {took:?}");
        drop(data);
    }
    assert!(!srv.log().contains("panicked"), "{}", srv.log());
}

#[test]
fn cutting_the_control_connection_of_a_udp_test_before_its_hellos_frees_the_server_at_once() {
    let srv = ServerProc::start(&[]);
    let udp = TestSpec { rate_bps: 1_000_000, send_len: 1000, recv_len: 1000, ..spec(TestKind::UdpStream) };
    let Driven { raw, ctrl, .. } = drive_test(srv.port, Step::Accepted, &udp);
    drop((raw, ctrl));
    let took = served_again(&srv, Instant::now(), "udp control cut after accepted");
    eprintln!("udp control cut after accepted: next test accepted after {took:?}");
}

#[test]
fn cutting_the_data_connection_at_any_step_frees_the_server_at_once() {
    let srv = ServerProc::start(&[]);
    for step in STEPS.into_iter().filter(|s| *s >= Step::Ready) {
        let mut driven = drive(srv.port, step);
        // Cut the data connection only; the control connection stays open and silent.
        driven.data.clear();
        let cut = Instant::now();
        let took = served_again(&srv, cut, &format!("data cut at {step:?}"));
        eprintln!("data cut at {step:?}: next test accepted after {took:?}");
        drop(driven);
    }
    assert!(!srv.log().contains("panicked"), "{}", srv.log());
}

/// When to SIGKILL a real client: after a delay from its start, or once it has printed its
/// first interval (the test is under way), plus a delay.
#[derive(Debug, Clone, Copy)]
enum KillAt {
    Spawned(u64),
    Interval(u64),
}

#[test]
fn sigkill_of_a_real_client_at_timed_points_frees_the_server_and_keeps_the_archive_whole() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    let srv = ServerProc::start(&[]);
    // -t 1: killed at 20, 60 and 150 ms (connect, hello, setup on a debug build), at the
    // first 0.1 s interval, half-way, and as the results are being exchanged.
    let points = [
        KillAt::Spawned(20),
        KillAt::Spawned(60),
        KillAt::Spawned(150),
        KillAt::Interval(0),
        KillAt::Interval(400),
        KillAt::Interval(880),
    ];
    for at in points {
        let mut child = command()
            .args(["stream", "127.0.0.1", "-p", &srv.port(), "-t", "1", "-i", "0.1", "--db"])
            .arg(&db)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let wait = match at {
            KillAt::Spawned(ms) => ms,
            KillAt::Interval(ms) => {
                assert!(lines.any(|l| l.is_ok_and(|l| l.contains("bit/s"))), "no interval before {at:?}");
                ms
            }
        };
        std::thread::spawn(move || lines.for_each(drop));
        std::thread::sleep(Duration::from_millis(wait));
        child.kill().unwrap();
        let cut = Instant::now();
        child.wait().unwrap();
        let took = served_again(&srv, cut, &format!("client killed at {at:?}"));
        eprintln!("client killed at {at:?}: next test accepted after {took:?}");
        check_archive(&db);
    }
    assert!(!srv.log().contains("panicked"), "{}", srv.log());
}

/// Every run and test row of the archive is complete or absent: SQLite's integrity check
/// passes; a run is either finished (end time set) or `running` with an owner (so that
/// `history` can call it abandoned); every test row's spec and result parse, and its sample
/// rows match its result's intervals.
fn check_archive(db: &Path) {
    if !db.exists() {
        return; // killed before the archive was opened
    }
    let conn = rusqlite::Connection::open(db).unwrap();
    let ok: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(ok, "ok");
    drop(conn);
    // Killed while creating the archive, the file may stand at any schema version (each
    // migration is one transaction); the next command migrates it, as this one does.
    let history = command().args(["history", "--json", "--db"]).arg(db).output().unwrap();
    assert!(history.status.success(), "{}", support::stderr(&history));
    let list = support::json_of(&history);
    let running: Vec<_> = list.as_array().unwrap().iter().filter(|r| r["status"] == "running").collect();
    assert!(running.is_empty(), "a killed client's run still shows as running: {running:?}");
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut runs = conn.prepare("SELECT id, status, finished_unix_ms, owner_pid FROM runs").unwrap();
    let rows = runs
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<i64>>(2)?,
                r.get::<_, Option<i64>>(3)?,
            ))
        })
        .unwrap();
    for row in rows {
        let (id, status, finished, owner) = row.unwrap();
        match status.as_str() {
            "running" => assert!(finished.is_none() && owner.is_some(), "run {id}: running without an owner"),
            "complete" | "failed" | "interrupted" | "abandoned" => {
                assert!(finished.is_some() || status == "abandoned", "run {id}: {status} without an end time")
            }
            other => panic!("run {id}: unknown status {other}"),
        }
    }
    let mut tests = conn.prepare("SELECT id, spec, result FROM tests").unwrap();
    let rows = tests
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?)))
        .unwrap();
    for row in rows {
        let (id, spec, result) = row.unwrap();
        serde_json::from_str::<TestSpec>(&spec).unwrap_or_else(|e| panic!("test {id}: spec {e}"));
        let r: TestResult = serde_json::from_str(&result).unwrap_or_else(|e| panic!("test {id}: result {e}"));
        let intervals = r.local.intervals.len() + r.remote.as_ref().map_or(0, |m| m.intervals.len());
        let samples: i64 =
            conn.query_row("SELECT COUNT(*) FROM samples WHERE test_id = ?1", [id], |r| r.get(0)).unwrap();
        assert_eq!(samples as usize, intervals, "test {id}: sample rows");
    }
}

/// A client killed mid-test: the server's log line says what moved until then, not
/// `bytes=0` (issue 28).
#[test]
fn a_killed_clients_test_is_logged_with_what_moved() {
    let srv = ServerProc::start(&[]);
    let mut client = command()
        .args(["stream", "127.0.0.1", "-p", &srv.port(), "-t", "10", "-i", "0", "--no-store"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !srv.log().contains("accepted") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(1500));
    client.kill().unwrap();
    client.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !srv.log().contains("failed") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let log = srv.log();
    let line = log.lines().find(|l| l.contains(": failed tcp-stream")).unwrap_or_else(|| panic!("{log}"));
    let bytes: u64 = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("bytes="))
        .and_then(|b| b.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    let secs: f64 = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("duration_s="))
        .and_then(|b| b.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    eprintln!("{line}");
    assert!(bytes > 0 && secs > 0.5, "{line}");
}
