//! `tcplab stream --mptcp`: Multipath TCP streams against a real `tcplab server --mptcp` on
//! loopback (one subflow: loopback has no second path), their MPTCP figures in the JSON and
//! the text; a server that does not listen for MPTCP refuses in one line.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

use serde_json::Value;
use support::{json_of, stderr, stdout, tcplab, ServerProc};

/// The figure labelled `label` of a result's summary, `{kind, value}`.
fn figure<'a>(t: &'a Value, label: &str) -> Option<&'a Value> {
    t["summary"]["figures"].as_array()?.iter().find(|f| f["label"] == label).map(|f| &f["value"])
}

#[test]
fn an_mptcp_stream_on_loopback_reports_its_one_subflow() {
    let srv = ServerProc::start(&["--mptcp"]);
    let port = srv.port();
    let out = tcplab(&["stream", "127.0.0.1", "-p", &port, "--mptcp", "-t", "1", "--no-store", "-J"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let t = json_of(&out)["tests"][0].clone();
    assert_eq!(t["status"], "completed", "{}", t["error"]);
    assert_eq!(t["spec"]["options"]["mptcp"], true, "{}", t["spec"]);
    assert_eq!(
        figure(&t, "MPTCP subflows").map(|v| v["value"].clone()),
        Some(Value::from(1)),
        "{}",
        t["summary"]
    );
    assert_eq!(
        figure(&t, "MPTCP connections fallen back to TCP").map(|v| v["value"].clone()),
        Some(Value::from(0))
    );
    let bytes = figure(&t, "MPTCP subflow 1 bytes").and_then(|v| v["value"].as_u64()).unwrap_or(0);
    let sent: u64 =
        t["local"]["streams"].as_array().unwrap().iter().filter_map(|s| s["bytes"].as_u64()).sum();
    assert!(bytes > 0 && bytes >= sent / 2, "the subflow carried the stream: {bytes} of {sent}");
    let warnings = t["warnings"].as_array().unwrap();
    assert!(!warnings.iter().any(|w| w["kind"] == "mptcp-fallback"), "{warnings:?}");
}

/// Text, the HTML report and the archive show the figures as the JSON has them, through the
/// type's declarations (no renderer knows MPTCP); repeats combine them as declared.
#[test]
fn mptcp_figures_reach_text_html_and_the_archive_and_combine_over_repeats() {
    let srv = ServerProc::start(&["--mptcp"]);
    let dir = tempfile::tempdir().unwrap();
    let (db, html) = (dir.path().join("r.db"), dir.path().join("r.html"));
    let (db, html) = (db.to_str().unwrap(), html.to_str().unwrap());
    let port = srv.port();
    let args = ["stream", "127.0.0.1", "-p", &port, "--mptcp", "-t", "1", "--iterations", "3,3"];
    let out = tcplab(&[&args[..], &["--db", db, "--report", html]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("MPTCP subflows"), "{}", stdout(&out));
    let page = std::fs::read_to_string(html).unwrap();
    assert!(page.contains("MPTCP subflows") && page.contains("MPTCP subflow 1 bytes"), "the HTML report");

    let shown = tcplab(&["show", "last", "--db", db, "-J"]);
    assert!(shown.status.success(), "{}", stderr(&shown));
    let t = json_of(&shown)["tests"][0].clone();
    let subflows =
        t["summary"]["figures"].as_array().unwrap().iter().find(|f| f["label"] == "MPTCP subflows");
    let subflows = subflows.unwrap_or_else(|| panic!("no subflows figure in the archive: {}", t["summary"]));
    assert_eq!(subflows["value"]["value"], 1, "every run had one subflow: {subflows}");
    assert_eq!(subflows["combine"], "per-run", "{subflows}");
    let bytes =
        t["summary"]["figures"].as_array().unwrap().iter().find(|f| f["label"] == "MPTCP subflow 1 bytes");
    let bytes = bytes.unwrap_or_else(|| panic!("no bytes figure: {}", t["summary"]));
    assert_eq!(bytes["spread"]["runs"], 3, "averaged over the three runs: {bytes}");
}

#[test]
fn a_server_without_mptcp_refuses_an_mptcp_stream_in_one_line() {
    let srv = ServerProc::start(&[]);
    let out = tcplab(&["stream", "127.0.0.1", "-p", &srv.port(), "--mptcp", "-t", "1", "--no-store"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("does not listen for MPTCP") && err.contains("tcplab server --mptcp"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// The faster path, the one every comparison runs over, and the slower second path.
const FAST: &str = "rate=50mbit,delay=30ms";
const SLOW: &str = "rate=20mbit,delay=10ms";
/// Alternating pairs of runs; the medians are compared.
const PAIRS: usize = 3;
/// What the aggregate must beat the faster path by: the ideal is 70/50 = 1.4, measured
/// 1.3–1.4 under load; 1.1 leaves room for a loaded 2-core host without passing a single path.
const MARGIN: f64 = 1.1;

fn is_root() -> bool {
    let out = std::process::Command::new("id").arg("-u").output().unwrap();
    let root = String::from_utf8_lossy(&out.stdout).trim() == "0";
    if !root {
        eprintln!("skipped: the link emulator needs root (network namespaces, TUN devices)");
    }
    root
}

/// The test's own server over one emulated path listens for MPTCP when the test asks for it:
/// MPTCP with its one subflow, no fallback.
#[test]
fn mptcp_over_one_emulated_path_runs_with_one_subflow() {
    if !is_root() {
        return;
    }
    let t = over_path(&["--mptcp", "--path", FAST, "-t", "2"]);
    let value = |label| figure(&t, label).and_then(|v| v["value"].as_u64());
    assert_eq!(value("MPTCP subflows"), Some(1), "{}", t["summary"]);
    assert_eq!(value("MPTCP connections fallen back to TCP"), Some(0), "{}", t["summary"]);
    assert!(value("MPTCP subflow 1 bytes").unwrap_or(0) > 0, "{}", t["summary"]);
    assert!(t["emu"]["second_path"].is_null(), "one path: {}", t["emu"]);
}

/// With a server CPU quota the test's server is a child process in the quota: it listens for
/// MPTCP too, on every address, so the second path's subflow joins.
#[test]
fn mptcp_over_two_emulated_paths_takes_a_server_cpu_quota() {
    if !is_root() {
        return;
    }
    let t = over_path(&["--mptcp", "--path", FAST, "--path2", SLOW, "--host-cpu", "server=80%", "-t", "2"]);
    let value = |label| figure(&t, label).and_then(|v| v["value"].as_u64());
    assert_eq!(value("MPTCP subflows"), Some(2), "{}", t["summary"]);
    assert_eq!(value("MPTCP connections fallen back to TCP"), Some(0), "{}", t["summary"]);
    assert!(value("MPTCP subflow 2 bytes").unwrap_or(0) > 0, "the second path carried data");
}

/// `stream ARGS -J` over an emulated path (4 s unless ARGS say otherwise): its one result.
fn over_path(args: &[&str]) -> Value {
    let time: &[&str] = if args.contains(&"-t") { &[] } else { &["-t", "4"] };
    let out = tcplab(&[&["stream", "--no-store", "-J"], time, args].concat());
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    let t = json_of(&out)["tests"][0].clone();
    assert_eq!(t["status"], "completed", "{args:?}: {}", t["error"]);
    t
}

fn goodput(t: &Value) -> f64 {
    t["summary"]["headline"]["value"].as_f64().unwrap_or(0.0)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `stream --mptcp --path FAST --path2 SLOW` against `stream --path FAST`, alternating: the
/// two subflows' aggregate beats the faster path alone, and the JSON has the subflow figures
/// and both paths' counters.
#[test]
fn mptcp_over_two_emulated_paths_beats_the_faster_path_alone() {
    if !is_root() {
        return;
    }
    let (mut multi, mut single) = (Vec::new(), Vec::new());
    for _ in 0..PAIRS {
        let t = over_path(&["--mptcp", "--path", FAST, "--path2", SLOW]);
        let value = |label| figure(&t, label).and_then(|v| v["value"].as_u64());
        assert_eq!(value("MPTCP subflows"), Some(2), "{}", t["summary"]);
        assert!(value("MPTCP ADD_ADDR accepted").unwrap_or(0) >= 1, "{}", t["summary"]);
        assert!(value("MPTCP subflow 2 bytes").unwrap_or(0) > 1 << 20, "the second path carried data");
        assert_eq!(t["emu"]["second_path"]["path"], SLOW, "the second path's counters: {}", t["emu"]);
        let second_up = &t["emu"]["second_path"]["directions"][0]["delivered"]["bytes"];
        assert!(second_up.as_u64().unwrap_or(0) > 1 << 20, "{}", t["emu"]["second_path"]);
        multi.push(goodput(&t));
        single.push(goodput(&over_path(&["--path", FAST])));
    }
    let (m, s) = (median(multi.clone()), median(single.clone()));
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    eprintln!("MPTCP over {FAST} + {SLOW}: {multi:.0?} bit/s; TCP over {FAST} alone: {single:.0?} bit/s");
    eprintln!(
        "median ratio {:.2} ({:.1} / {:.1} Mbit/s); load average {}",
        m / s,
        m / 1e6,
        s / 1e6,
        load.trim()
    );
    assert!(m > MARGIN * s, "MPTCP {m:.0} bit/s is not {MARGIN}× the faster path alone ({s:.0} bit/s)");
}

/// A server with `--iperf3 --mptcp` on ephemeral ports, archiving what it serves to `db`;
/// returns it and its iperf3 port.
fn iperf3_server(extra: &[&str]) -> (ServerProc, u16) {
    let s = ServerProc::start(&[&["--iperf3", "--iperf3-port", "0"], extra].concat());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let log = s.log();
        let port = log.split("serving iperf3 clients on ").nth(1).and_then(|r| r.split_whitespace().next());
        if let Some(port) = port.and_then(|a| a.rsplit(':').next()).and_then(|p| p.parse().ok()) {
            return (s, port);
        }
        assert!(std::time::Instant::now() < deadline, "no iperf3 port in the server's log: {log}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// An iperf3 client that asks for MPTCP (`"mptcp": true` in its parameters, as iperf3 3.16+
/// sends for `-m`; here tcplab's own iperf3 client, since Debian's 3.12 has no -m) gets MPTCP
/// data streams from `server --iperf3 --mptcp`: neither end fell back, and the served test in
/// the server's archive has the server's MPTCP figures. A server without --mptcp refuses.
#[test]
fn the_iperf3_port_serves_mptcp_clients_with_mptcp_streams() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("served.db");
    let (_srv, port) = iperf3_server(&["--mptcp", "--db", db.to_str().unwrap()]);
    let to = format!("127.0.0.1:{port}");
    let out = tcplab(&["stream", "--iperf3", &to, "--mptcp", "-t", "2", "--no-store", "-J"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let t = json_of(&out)["tests"][0].clone();
    assert_eq!(t["status"], "completed", "{}", t["error"]);
    let value = |t: &Value, label| figure(t, label).and_then(|v| v["value"].as_u64());
    assert_eq!(value(&t, "MPTCP connections fallen back to TCP"), Some(0), "{}", t["summary"]);
    assert_eq!(value(&t, "MPTCP subflows"), Some(1), "{}", t["summary"]);

    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let served = loop {
        let shown = tcplab(&["show", "last", "--db", db.to_str().unwrap(), "-J"]);
        if shown.status.success() {
            break json_of(&shown)["tests"][0].clone();
        }
        assert!(std::time::Instant::now() < deadline, "nothing archived: {}", stderr(&shown));
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert_eq!(served["spec"]["options"]["mptcp"], true, "{}", served["spec"]);
    assert_eq!(value(&served, "MPTCP connections fallen back to TCP"), Some(0), "{}", served["summary"]);
    assert!(value(&served, "MPTCP subflow 1 bytes").unwrap_or(0) > 0, "{}", served["summary"]);

    let (_plain, port) = iperf3_server(&[]);
    let to = format!("127.0.0.1:{port}");
    let out = tcplab(&["stream", "--iperf3", &to, "--mptcp", "-t", "1", "--no-store"]);
    assert!(!out.status.success(), "a server without --mptcp served an MPTCP client");
    assert_eq!(stderr(&out).trim().lines().count(), 1, "{}", stderr(&out));
}
