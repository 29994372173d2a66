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
