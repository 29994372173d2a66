//! `tcplab segment-cost` end to end on loopback: per size, the sender's and the receiver's
//! stack time per segment by both methods, the methods agreeing, the HTML plot rendered; a
//! client without root says why its tracepoints did not run and keeps its timestamps.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

mod support;

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use support::{chromium, json_of, stderr, tcplab, ServerProc};

const SIZES: [u64; 4] = [64, 256, 1024, 4096];

fn root() -> bool {
    let out = Command::new("id").arg("-u").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim() == "0"
}

fn run(server: &ServerProc, report: &Path) -> Value {
    let out = tcplab(&[
        "segment-cost",
        "127.0.0.1",
        "-p",
        &server.port(),
        "--sizes",
        "64..4K:x4",
        "-t",
        "0.4",
        "-i",
        "0",
        "--json",
        "--no-store",
        "--report",
        report.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    json_of(&out)["tests"][0].clone()
}

/// A side's rows, checked: every size, in order, with messages and a positive median by
/// `SO_TIMESTAMPING`; the tracepoints' medians too when `traced`.
fn check_side(side: &Value, traced: bool) -> Vec<(f64, Option<f64>)> {
    let rows = side["rows"].as_array().unwrap_or_else(|| panic!("no rows: {side}"));
    let sizes: Vec<u64> = rows.iter().map(|r| r["size"].as_u64().unwrap()).collect();
    assert_eq!(sizes, SIZES, "{side}");
    rows.iter()
        .map(|r| {
            assert!(r["messages"].as_u64().unwrap() >= 10, "{r}");
            let a = r["timestamping"]["dist"]["median_ns"].as_f64().unwrap_or_else(|| panic!("{r}"));
            assert!(a > 0.0 && a < 1e8, "{r}");
            let b = r["tracepoints"]["dist"]["median_ns"].as_f64();
            assert_eq!(b.is_some(), traced, "{r}");
            let unpaired = r["timestamping"]["unpaired"].as_u64().unwrap();
            assert!(unpaired * 10 <= r["messages"].as_u64().unwrap(), "most messages pair: {r}");
            (a, b)
        })
        .collect()
}

#[test]
fn both_sides_by_both_methods_agree_and_plot() {
    if !root() {
        eprintln!("skipped: segment-cost's tracepoint method needs root (tracefs); the non-root path runs in CI as nobody");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.html");
    let srv = ServerProc::start(&[]);
    let t = run(&srv, &report);
    let cost = &t["summary"]["segment-cost"];
    for side in ["send", "receive"] {
        for (a, b) in check_side(&cost[side], true) {
            let ratio = b.unwrap() / a;
            assert!((0.2..5.0).contains(&ratio), "{side}: the methods disagree, {b:?} vs {a}: {cost}");
        }
        assert!(cost[side]["tracepoints_off"].is_null(), "{cost}");
    }
    let figures = t["summary"]["figures"].as_array().unwrap();
    let label = |f: &Value| f["label"].as_str().unwrap_or_default().to_string();
    assert!(
        figures.iter().any(|f| label(f).starts_with("4.00 KiB message (1 segment at MSS ")),
        "{figures:?}"
    );
    match chromium::render(&report, dir.path()) {
        Some(r) => assert!(r.plots >= 1 && r.drawn == r.plots && r.errors == 0 && r.fetches == 0, "{r:?}"),
        None => {
            assert!(std::env::var_os("CI").is_none(), "chromium is required in CI (.ci/packages)");
            eprintln!("skipped the browser check: chromium is not installed");
        }
    }
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("Processing time per segment") && html.contains("recv, tracepoints"));
}

#[test]
fn without_root_the_client_says_why_and_keeps_its_timestamps() {
    if !root() {
        eprintln!("skipped: needs root to start the client as another user");
        return;
    }
    let srv = ServerProc::start(&[]);
    let bin = env!("CARGO_BIN_EXE_tcplab");
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", bin, "segment-cost", "127.0.0.1"])
        .args(["-p", &srv.port(), "--sizes", "64..4K:x4", "-t", "0.3", "-i", "0", "--json", "--no-store"])
        .output()
        .expect("setpriv runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let cost = json_of(&out)["tests"][0]["summary"]["segment-cost"].clone();
    check_side(&cost["send"], false);
    let why = cost["send"]["tracepoints_off"].as_str().unwrap_or_default();
    assert!(why.starts_with("tracepoints: "), "{cost}");
    check_side(&cost["receive"], true);
}

#[test]
fn bad_sizes_are_one_line() {
    let out = tcplab(&["segment-cost", "127.0.0.1", "--sizes", "8..64:x2"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.trim().lines().count() == 1 && err.contains("--sizes"), "{err}");
}

/// The text summary says what the sizes are: messages of so many segments at the MSS, and a
/// request/response block over several sizes, not "request 4096 B" with one latency.
#[test]
fn the_summary_names_messages_segments_and_mixed_sizes() {
    let srv = ServerProc::start(&[]);
    let out = tcplab(&[
        "segment-cost",
        "127.0.0.1",
        "-p",
        &srv.port(),
        "--sizes",
        "64,4K",
        "-t",
        "0.4",
        "--no-store",
    ]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(text.contains("64 B message (1 segment at MSS "), "{text}");
    assert!(text.contains("requests of 2 sizes, 64 B–4.00 KiB, one size at a time"), "{text}");
    assert!(text.contains("latency (all sizes together) mean"), "{text}");
    assert!(!text.contains("request 4096 B") && !text.contains("KiB per segment"), "{text}");
}
