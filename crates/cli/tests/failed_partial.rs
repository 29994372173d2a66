//! End to end (issue 28): one rule for a test that fails part-way, whatever its type. The
//! server is killed with SIGKILL 1.5 s into a 6 s test; the result keeps what was measured
//! before the failure, marked partial in the JSON (`headline.partial`) and the text, and never
//! a made-up 0: rr keeps its transactions, a reverse stream the bytes the client read, and a
//! forward stream (whose receiver's count died with the server) says it is not measured.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

use std::process::Output;
use std::time::Duration;

use serde_json::Value;
use support::{command, json_of, stdout, ServerProc};

/// `tcplab ARGS 127.0.0.1 -p PORT -t 6 --no-store EXTRA` with the server killed 1.5 s in.
fn cut_short(args: &[&str], extra: &[&str]) -> Output {
    let srv = ServerProc::start(&[]);
    let pid = srv.pid().to_string();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        let _ = std::process::Command::new("kill").args(["-KILL", &pid]).status();
    });
    let out = command()
        .args(args)
        .args(["127.0.0.1", "-p", &srv.port(), "-t", "6", "--no-store"])
        .args(extra)
        .output()
        .unwrap();
    killer.join().unwrap();
    out
}

fn test_of(out: &Output) -> Value {
    json_of(out)["tests"][0].clone()
}

#[test]
fn a_failed_rr_and_a_failed_reverse_stream_keep_their_figures_marked_partial() {
    for args in [&["rr"][..], &["stream", "-R"][..]] {
        let t = test_of(&cut_short(args, &["--json"]));
        assert_eq!(t["status"], "failed", "{args:?}: {t}");
        let h = &t["summary"]["headline"];
        assert!(h["value"].as_f64().is_some_and(|v| v > 0.0), "{args:?}: no partial figure kept: {h}");
        assert_eq!(h["partial"], true, "{args:?}: a failed test's figure is not marked partial: {h}");
        let text = stdout(&cut_short(args, &[]));
        assert!(text.contains("PARTIAL: the test failed after"), "{args:?}:\n{text}");
    }
}

#[test]
fn a_failed_forward_stream_says_what_it_sent_and_no_goodput() {
    let t = test_of(&cut_short(&["stream"], &["--json"]));
    assert_eq!(t["status"], "failed", "{t}");
    let h = &t["summary"]["headline"];
    assert!(h["value"].is_null() && h.get("partial").is_none(), "{h}");
    assert!(t["summary"]["directions"][0]["sender_bytes"].as_u64().is_some_and(|b| b > 0), "{t}");
    let text = stdout(&cut_short(&["stream"], &[]));
    assert!(text.contains("sender wrote") && text.contains("goodput: – (not measured)"), "{text}");
}
