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

    let text = tcplab(&["stream", "127.0.0.1", "-p", &port, "--mptcp", "-t", "1", "--no-store"]);
    assert!(text.status.success(), "{}", stderr(&text));
    assert!(stdout(&text).contains("MPTCP subflows"), "{}", stdout(&text));
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
