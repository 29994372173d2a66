//! `tcplab server --iperf3` against the real iperf3 client (Debian's iperf3; CI installs it):
//! TCP and UDP, each direction, one and four streams, the client's `-J` read by iperf3's own
//! field names and its byte counts checked against what the server archived; two clients at
//! once; silent and garbage connections. Skipped, with the reason printed, without iperf3.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::ServerProc;

/// Seconds each matrix test runs, and the client's report interval.
const SECONDS: f64 = 2.0;
const INTERVAL: f64 = 0.5;

fn have_iperf3() -> bool {
    let ok = Command::new("iperf3").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped: iperf3 is not installed (apt-get install iperf3)");
    }
    ok
}

/// A server with `--iperf3` on ephemeral ports; returns it and its iperf3 port.
fn server(extra: &[&str]) -> (ServerProc, u16) {
    let mut args = vec!["--iperf3", "--iperf3-port", "0"];
    args.extend_from_slice(extra);
    let s = ServerProc::start(&args);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let log = s.log();
        if let Some(port) = log
            .split("serving iperf3 clients on ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|a| a.rsplit(':').next())
            .and_then(|p| p.parse().ok())
        {
            return (s, port);
        }
        assert!(Instant::now() < deadline, "no iperf3 port in the server's log: {log}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn iperf3(port: u16, args: &[&str]) -> Command {
    let mut c = Command::new("iperf3");
    c.args(["-c", "127.0.0.1", "-p", &port.to_string(), "-J"]).args(args);
    c
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("iperf3 -J printed no JSON ({e}): {}", String::from_utf8_lossy(&out.stdout))
    })
}

fn num(v: &Value, path: &str) -> f64 {
    path.split('/')
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("no number at {path} in {v}"))
}

/// The archived run of the test whose cookie is `cookie` (the server writes it just after the
/// client's IPERF_DONE, so wait a little).
fn archived(db: &Path, cookie: &str) -> results::TestResult {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(st) = store::Store::open(db) {
            let last = st.last_run().ok().flatten().unwrap_or(0);
            for id in (1..=last).rev() {
                let Ok(run) = st.load_run(id) else { continue };
                let Some(t) = run.tests.into_iter().next() else { continue };
                let marker = &t.local.sections["iperf3_client"];
                if marker["cookie"] == cookie {
                    assert_eq!(marker["served_to"], "iperf3 client");
                    return t;
                }
            }
        }
        assert!(Instant::now() < deadline, "no archived run with cookie {cookie}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Bytes the server archived as moved in role `role` ("send" or "recv").
fn server_bytes(t: &results::TestResult, role: results::Role) -> f64 {
    let remote = t.remote.as_ref().expect("the server's measurement");
    remote.streams.iter().filter(|s| s.role == role).map(|s| s.bytes as f64).sum()
}

/// `a` and `b` agree within one report interval's worth of `a`'s mean rate.
fn agree(what: &str, a: f64, b: f64) {
    let slack = a / SECONDS * INTERVAL;
    assert!((a - b).abs() <= slack, "{what}: client {a} vs server {b} (allowed ±{slack})");
}

fn check_udp_fields(doc: &Value) {
    let sum = &doc["end"]["sum"];
    for key in ["jitter_ms", "lost_packets", "packets", "lost_percent"] {
        assert!(sum[key].is_number(), "end.sum.{key} missing: {sum}");
    }
    assert!(num(sum, "jitter_ms") >= 0.0 && num(sum, "lost_packets") <= num(sum, "packets"));
    for s in doc["end"]["streams"].as_array().expect("end.streams") {
        assert!(s["udp"]["jitter_ms"].is_number() && s["udp"]["lost_packets"].is_number(), "{s}");
    }
}

/// One matrix cell: the client's view, the server's archive, and their agreement.
fn cell(port: u16, db: &Path, udp: bool, dir: &str, streams: &str) {
    let mut args = vec!["-t", "2", "-i", "0.5", "-P", streams];
    if udp {
        args.extend(["-u", "-b", "20M", "-l", "1400"]);
    }
    if !dir.is_empty() {
        args.push(dir);
    }
    let out = iperf3(port, &args).output().expect("iperf3 runs");
    let doc = json(&out);
    assert!(out.status.success() && doc.get("error").is_none(), "{args:?}: {doc}");
    let end = &doc["end"];
    assert_eq!(
        end["streams"].as_array().map(Vec::len),
        Some(streams.parse::<usize>().unwrap() * if dir == "--bidir" { 2 } else { 1 })
    );
    for key in ["sum_sent", "sum_received"] {
        assert!(num(end, &format!("{key}/bytes")) > 0.0, "{args:?}: end.{key}: {end}");
    }
    if udp {
        check_udp_fields(&doc);
    }
    let t = archived(db, doc["start"]["cookie"].as_str().expect("start.cookie"));
    let (send, recv) = (results::Role::Send, results::Role::Recv);
    // The client's own counts: what it sent (forward) and what it received (reverse).
    let (fwd, rev) = match dir {
        "-R" => (None, Some(num(end, "sum_received/bytes"))),
        "--bidir" => (Some(num(end, "sum_sent/bytes")), Some(num(end, "sum_received_bidir_reverse/bytes"))),
        _ => (Some(num(end, "sum_sent/bytes")), None),
    };
    if let Some(sent) = fwd {
        agree(&format!("{args:?} client→server"), sent, server_bytes(&t, recv));
    }
    if let Some(got) = rev {
        agree(&format!("{args:?} server→client"), got, server_bytes(&t, send));
    }
    assert!(t.label.contains("iperf3"), "{}", t.label);
}

#[test]
fn the_real_iperf3_client_runs_every_mode_and_the_archive_agrees() {
    if !have_iperf3() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("served.db");
    let (srv, port) = server(&["--db", db.to_str().unwrap()]);
    for udp in [false, true] {
        for mode in ["", "-R", "--bidir"] {
            for streams in ["1", "4"] {
                cell(port, &db, udp, mode, streams);
            }
        }
    }
    let history = support::tcplab(&["history", "--db", db.to_str().unwrap(), "--kind", "iperf3-client"]);
    let text = support::stdout(&history);
    assert_eq!(text.matches("iperf3-client").count(), 12, "{text}\n{}", srv.log());
}

/// iperf3's `-b` on TCP is per stream; the sender paces: the iperf3 client itself forward,
/// this server with `-R` (and each stream at the rate with `-P 2`). The rate each end saw is
/// checked within ±10 %, and the archive records the target.
#[test]
fn a_tcp_client_with_b_gets_its_rate_both_ways() {
    if !have_iperf3() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("served.db");
    let (srv, port) = server(&["--db", db.to_str().unwrap()]);
    for (extra, streams) in [(&[][..], 1.0), (&["-R"][..], 1.0), (&["-R", "-P", "2"][..], 2.0)] {
        let mut args = vec!["-b", "20M", "-t", "2"];
        args.extend_from_slice(extra);
        let out = iperf3(port, &args).output().expect("iperf3 runs");
        let doc = json(&out);
        assert!(out.status.success() && doc.get("error").is_none(), "{args:?}: {doc}\n{}", srv.log());
        let want = 20e6 * streams;
        for key in ["sum_sent", "sum_received"] {
            let got = num(&doc["end"], &format!("{key}/bits_per_second"));
            assert!((got - want).abs() <= 0.1 * want, "{args:?} {key}: {got} bit/s, asked {want}");
        }
        let t = archived(&db, doc["start"]["cookie"].as_str().expect("start.cookie"));
        assert_eq!(t.spec.rate_bps, 20_000_000, "{args:?}: the archive records the target");
    }
}

#[test]
fn two_iperf3_clients_at_once_both_succeed() {
    if !have_iperf3() {
        return;
    }
    let (_srv, port) = server(&["--max-concurrent", "2"]);
    let spawn = |extra: &str| -> Child {
        iperf3(port, &["-t", "2", extra]).stdout(Stdio::piped()).spawn().expect("iperf3 runs")
    };
    let (a, b) = (spawn("-R"), spawn("-N"));
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        let doc = json(&out);
        assert!(out.status.success() && doc.get("error").is_none(), "{doc}");
        assert!(num(&doc["end"], "sum_received/bytes") > 0.0);
    }
}

#[test]
fn iperf3_clients_get_the_anonymous_limits() {
    if !have_iperf3() {
        return;
    }
    let (srv, port) = server(&["--anon-max-duration", "1", "--anon-max-streams", "2"]);
    for (args, what) in [(&["-t", "3"][..], "duration"), (&["-t", "1", "-P", "3"][..], "streams")] {
        let out = iperf3(port, args).output().unwrap();
        let doc = json(&out);
        assert!(doc.get("error").is_some(), "{what} over the limit ran: {doc}");
    }
    let out = iperf3(port, &["-t", "1", "-P", "2"]).output().unwrap();
    assert!(out.status.success(), "within the limits: {}", json(&out));
    assert!(srv.log().contains("max-duration"), "{}", srv.log());
}

/// Reads until the server closes the connection; false if it is still open at `deadline`.
fn closed_by(mut s: &TcpStream, deadline: Instant) -> bool {
    let mut buf = [0u8; 64];
    while Instant::now() < deadline {
        let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => return true,
        }
    }
    false
}

#[test]
fn silent_clients_are_dropped_and_hold_nobody_up() {
    if !have_iperf3() {
        return;
    }
    let (srv, port) = server(&["--max-concurrent", "1"]);
    // Connected, no cookie: takes no test slot.
    let mute = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let out = iperf3(port, &["-t", "1"]).output().unwrap();
    assert!(out.status.success(), "{}", json(&out));
    // A cookie, then silence: holds the only slot, so a client meanwhile hears "busy" ...
    let mut silent = TcpStream::connect(("127.0.0.1", port)).unwrap();
    silent.write_all(b"abcdefghijklmnopqrstuvwxyz234567abcd\0").unwrap();
    let mut state = [0u8; 1];
    silent.read_exact(&mut state).unwrap();
    assert_eq!(state[0], 9, "PARAM_EXCHANGE");
    let busy = iperf3(port, &["-t", "1"]).output().unwrap();
    let doc = json(&busy);
    // (iperf3 3.12 with -J exits 0 even then: the error is in the document.)
    assert!(doc["error"].as_str().is_some_and(|e| e.contains("busy")), "{doc}");
    // ... until the handshake timeout (5 s) drops both silent connections.
    let deadline = Instant::now() + Duration::from_secs(10);
    assert!(closed_by(&silent, deadline) && closed_by(&mute, deadline), "{}", srv.log());
    let out = iperf3(port, &["-t", "1"]).output().unwrap();
    assert!(out.status.success(), "{}", json(&out));
    let log = srv.log();
    assert!(log.contains("no cookie within") && log.contains("timed out"), "{log}");
}

#[test]
fn garbage_and_oversized_frames_get_a_log_line_and_no_crash() {
    if !have_iperf3() {
        return;
    }
    let (mut srv, port) = server(&[]);
    let mut junk = TcpStream::connect(("127.0.0.1", port)).unwrap();
    junk.write_all(b"GET / HTTP/1.1\r\nHost: example\r\n\r\nmore bytes than a cookie").unwrap();
    assert!(closed_by(&junk, Instant::now() + Duration::from_secs(5)));
    // A well-formed cookie, then a 4 GB parameter frame: SERVER_ERROR IERECVPARAMS (114).
    let mut big = TcpStream::connect(("127.0.0.1", port)).unwrap();
    big.write_all(b"abcdefghijklmnopqrstuvwxyz234567abcd\0").unwrap();
    let mut state = [0u8; 1];
    big.read_exact(&mut state).unwrap();
    big.write_all(&[0xff, 0xff, 0xff, 0xf0]).unwrap();
    let mut err = [0u8; 9];
    big.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    big.read_exact(&mut err).unwrap();
    assert_eq!((err[0], i32::from_be_bytes([err[1], err[2], err[3], err[4]])), (0xfe, 114));
    let out = iperf3(port, &["-t", "1", "-u"]).output().unwrap();
    assert!(out.status.success(), "{}", json(&out));
    assert!(!srv.exited());
    let log = srv.log();
    assert_eq!(log.matches("not an iperf3 client").count(), 1, "{log}");
    assert!(log.contains("iperf3 error 114"), "{log}");
}

/// Issue 25: `show` of a `server --iperf3` run prints what an iperf3 client did not report as
/// unknown ("–", "not reported"), never as empty fields or zeros.
#[test]
fn show_of_a_served_run_says_what_the_peer_did_not_report() {
    if !have_iperf3() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("served.db");
    let (srv, port) = server(&["--db", db.to_str().unwrap()]);
    let out = iperf3(port, &["-t", "1"]).output().expect("iperf3 runs");
    assert!(out.status.success(), "{}", srv.log());
    // The server archives the test after the client has gone: wait (bounded) for it.
    let deadline = Instant::now() + Duration::from_secs(10);
    let show = loop {
        let show = support::tcplab(&["show", "1", "--db", db.to_str().unwrap()]);
        if support::stdout(&show).contains("TCP_INFO") || Instant::now() > deadline {
            break show;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    drop(srv);
    let text = support::stdout(&show);
    assert!(show.status.success(), "{}", support::stderr(&show));
    assert!(!text.contains("(, 0 × , )") && text.contains("not reported"), "{text}");
    assert!(text.contains("busy –") && !text.contains("busy 0%"), "{text}");
}

/// A keys file holding one new key (`tcplab keygen`); its path.
fn keygen(dir: &Path) -> String {
    let key = dir.join("good.key").display().to_string();
    let made = support::tcplab(&["keygen", "--id", "good", "-o", &key]);
    assert!(made.status.success(), "keygen: {}", support::stderr(&made));
    key
}

/// A keyed server does not serve iperf3 clients without explicit anonymous limits (issue 28:
/// an anonymous iperf3 client got 3600 s × 8 streams and unpaced UDP there).
#[test]
fn a_keyed_server_needs_anonymous_limits_for_iperf3() {
    let dir = tempfile::tempdir().unwrap();
    let key = keygen(dir.path());
    let mut child = support::command()
        .args(["server", "-p", "0", "--bind", "127.0.0.1", "--keys", &key, "--iperf3", "--iperf3-port", "0"])
        .args(["--anon-max-duration", "5"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    let err = support::stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let line = err.lines().find(|l| l.starts_with("error:")).unwrap_or_default();
    for flag in ["--anon-max-streams", "--anon-max-rate", "--anon-max-concurrent"] {
        assert!(line.contains(flag), "{flag} not named: {err}");
    }
    assert!(!line.contains("--anon-max-duration"), "{err}");
}

/// On a keyed server iperf3 clients get the anonymous caps and never a key holder's slot:
/// with one test slot, a keyed client is served while an iperf3 test runs, and a second
/// iperf3 client is told busy (`--anon-max-concurrent 1`).
#[test]
fn iperf3_clients_on_a_keyed_server_never_take_a_key_holders_slot() {
    if !have_iperf3() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let key = keygen(dir.path());
    let (srv, port) = server(&[
        "--keys",
        &key,
        "--max-concurrent",
        "1",
        "--anon-max-duration",
        "3",
        "--anon-max-streams",
        "2",
        "--anon-max-rate",
        "20M",
        "--anon-max-concurrent",
        "1",
    ]);
    for (args, what) in [
        (&["-t", "3600", "-P", "8"][..], "3600 s x 8 streams"),
        (&["-t", "1", "-P", "8"][..], "8 streams"),
        (&["-u", "-b", "0", "-t", "1"][..], "unpaced UDP"),
        (&["-u", "-b", "1G", "-t", "1"][..], "UDP over the rate cap"),
    ] {
        let out = iperf3(port, args).output().unwrap();
        assert!(json(&out).get("error").is_some(), "{what} ran: {}", json(&out));
    }
    let running = iperf3(port, &["-t", "3"]).stdout(Stdio::piped()).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(800));
    let second = iperf3(port, &["-t", "1"]).output().unwrap();
    let keyed = support::command()
        .args([
            "rr",
            "127.0.0.1",
            "-p",
            &srv.port(),
            "-t",
            "0.3",
            "-i",
            "0",
            "--no-store",
            "--key-file",
            &key,
        ])
        .output()
        .unwrap();
    let first = running.wait_with_output().unwrap();
    assert!(keyed.status.success(), "keyed client refused: {}\n{}", support::stderr(&keyed), srv.log());
    assert!(json(&second).get("error").is_some(), "a second iperf3 test ran: {}", json(&second));
    assert!(first.status.success(), "the iperf3 test within the caps failed: {}", json(&first));
}

/// A forged log line the injection tests try to plant (issue 28: a newline in iperf3's
/// `client_version` wrote a fake `finished … key=admin` line).
const FORGED: &str = "FORGED INFO engine::server::record: 6.6.6.6:1: finished tcp-stream key=admin";

/// Speaks iperf3's protocol by hand: cookie, then the parameters `params` (JSON); waits for
/// the server's next state byte, then closes.
fn raw_iperf3(port: u16, seed: u8, params: &str) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(&wire::iperf3::Cookie::from_random([seed; 36]).encode()).unwrap();
    let mut state = [0u8; 1];
    s.read_exact(&mut state).unwrap();
    assert_eq!(state[0], wire::iperf3::State::ParamExchange.to_byte());
    s.write_all(&wire::iperf3::frame::encode(params.as_bytes(), 8192).unwrap()).unwrap();
    let _ = s.read(&mut state);
}

/// Every string an iperf3 client sends is escaped in the server's log: a newline in its
/// version or in a congestion control name the server refuses never starts a line of its
/// own.
#[test]
fn peer_strings_cannot_forge_log_lines() {
    let (srv, port) = server(&["--max-concurrent", "2"]);
    let version = serde_json::to_string(&format!("3.12\n{FORGED}\r\x1b[2J")).unwrap();
    let cc = serde_json::to_string(&format!("nope\n{FORGED}")).unwrap();
    let accepted = format!(r#"{{"tcp":true,"time":1,"parallel":1,"client_version":{version}}}"#);
    let refused = format!(r#"{{"tcp":true,"time":1,"parallel":1,"congestion":{cc}}}"#);
    for (seed, params) in [(1, &accepted), (2, &refused)] {
        raw_iperf3(port, seed, params);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while !(srv.log().contains("accepted") && srv.log().contains("refused")) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let log = srv.log();
    assert!(log.contains(r#"from iperf3 "3.12\nFORGED"#), "version not quoted and escaped: {log}");
    assert!(log.lines().all(|l| !l.starts_with("FORGED")), "a forged line: {log}");
    assert!(!log.contains('\x1b') && !log.contains('\r'), "a control character reached the log: {log:?}");
}
