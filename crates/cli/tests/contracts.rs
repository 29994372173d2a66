//! The run pipeline's contracts, as a user meets them: signals keep what was measured, a
//! closed stdout does not lose the run, `--json` is one document with a top-level `error`
//! whenever the exit status is not 0, and `--report` is checked before anything runs.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

mod support;

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{command, json_of, stderr, tcplab, ServerProc};

/// A stream test against `srv` writing NDJSON, its archive in `db`; returns once its first
/// interval is out, so the test is measuring when the caller acts.
fn streaming(srv: &ServerProc, db: &Path, secs: &str) -> (Child, BufReader<std::process::ChildStdout>) {
    let port = srv.port();
    let db = db.display().to_string();
    let mut child = command()
        .args(["stream", "127.0.0.1", "-p", &port, "-t", secs, "-i", "0.2", "--json-stream", "--db", &db])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while out.read_line(&mut line).unwrap_or(0) > 0 && !line.contains(r#""event":"interval""#) {
        line.clear();
    }
    assert!(line.contains("interval"), "no interval event: {line}");
    (child, out)
}

/// Sends `signal` to `pid` `times` times from one process, microseconds apart (as
/// `timeout -s INT` and some terminals do).
fn signal(pid: u32, signal: &str, times: u32) {
    let script = format!("import os, signal\nfor _ in range({times}): os.kill({pid}, signal.{signal})");
    let status = std::process::Command::new("python3").args(["-c", &script]).status().unwrap();
    assert!(status.success());
}

fn stored(db: &Path, what: &str) -> Value {
    let out = tcplab(&["history", "--json", "--db", &db.display().to_string()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json_of(&out);
    assert!(v.as_array().is_some_and(|a| !a.is_empty()), "{what}: nothing stored");
    v[0].clone()
}

fn finish(mut child: Child, mut out: BufReader<std::process::ChildStdout>) -> (Option<i32>, String, String) {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut rest = String::new();
    let _ = out.read_to_string(&mut rest);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            let _ = child.stderr.take().map(|mut e| e.read_to_string(&mut err));
            return (status.code(), rest, err);
        }
        assert!(Instant::now() < deadline, "tcplab did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn two_sigints_at_once_are_one_interrupt_and_keep_the_result() {
    let srv = ServerProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    for _ in 0..3 {
        let (child, out) = streaming(&srv, &db, "5");
        signal(child.id(), "SIGINT", 2);
        let (code, rest, err) = finish(child, out);
        assert_eq!(code, Some(2), "{err}");
        assert!(!err.contains("interrupted twice"), "a burst of two SIGINTs was taken as two: {err}");
        let end = rest.lines().find(|l| l.contains(r#""event":"end""#)).expect("an end event");
        let end: Value = serde_json::from_str(end).unwrap();
        assert_eq!(end["result"]["status"], "interrupted");
        assert!(end["result"]["summary"]["headline"]["value"].as_f64().unwrap_or(0.0) > 0.0, "{end}");
        assert!(rest.lines().last().unwrap_or("").contains(r#""event":"error""#), "{rest}");
        std::thread::sleep(Duration::from_millis(300)); // the server frees its slot
    }
    assert_eq!(stored(&db, "sigint")["status"], "interrupted");
}

#[test]
fn sigterm_is_handled_as_ctrl_c() {
    let srv = ServerProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let (child, out) = streaming(&srv, &db, "5");
    signal(child.id(), "SIGTERM", 1);
    let (code, rest, err) = finish(child, out);
    assert_eq!(code, Some(2), "not 143: the run is ended, not killed ({err})");
    assert!(rest.contains(r#""status":"interrupted""#), "{rest}");
    assert_eq!(stored(&db, "sigterm")["status"], "interrupted");
}

#[test]
fn a_closed_stdout_does_not_lose_the_run() {
    let srv = ServerProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let port = srv.port();
    let mut child = command()
        .args(["stream", "127.0.0.1", "-p", &port, "-t", "1", "-i", "0.2", "--db", &db.display().to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap(); // `| head -1`
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "a closed pipe is not an error");
    let run = stored(&db, "closed stdout");
    assert_eq!((run["status"].as_str(), run["tests"].as_u64()), (Some("complete"), Some(1)));
    assert!(run["best"]["value"].as_f64().unwrap_or(0.0) > 0.0, "{run}");
}

#[test]
fn json_is_one_document_with_an_error_whenever_the_exit_is_not_zero() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, "x").unwrap();
    let bad_db = file.join("r.db").display().to_string();
    let cases: [&[&str]; 4] = [
        &["stream", "127.0.0.1", "-l", "0", "--json"],
        &["stream", "127.0.0.1", "--json", "--db", &bad_db],
        &["stream", "127.0.0.1", "--json", "--no-such-flag"],
        &["udp", "127.0.0.1", "-J", "-b", "lots"],
    ];
    for args in cases {
        let out = tcplab(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let v = json_of(&out);
        let message = v["error"]["message"].as_str().unwrap_or("");
        assert!(!message.is_empty(), "{args:?}: {v}");
        assert_eq!(v["tests"], Value::Array(Vec::new()), "{args:?}");
        assert!(stderr(&out).starts_with("error"), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn a_report_path_that_cannot_be_written_fails_before_the_test() {
    let srv = ServerProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db").display().to_string();
    let report = dir.path().join("no-such-dir/r.html").display().to_string();
    let started = Instant::now();
    let port = srv.port();
    let out = tcplab(&["stream", "127.0.0.1", "-p", &port, "-t", "3", "--db", &db, "--report", &report]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--report"), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(3), "the test ran before the report path was checked");
    let fine = dir.path().join("r.html");
    let out = tcplab(&[
        "rr",
        "127.0.0.1",
        "-p",
        &port,
        "-t",
        "0.3",
        "--db",
        &db,
        "--report",
        &fine.display().to_string(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(std::fs::read_to_string(&fine).unwrap().contains("<svg"));
}

#[test]
fn run_json_names_its_archive_id_and_udp_is_found_by_its_command_name() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db").display().to_string();
    let out = tcplab(&["run", "-t", "0.3", "--json", "--db", &db]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json_of(&out);
    assert_eq!(v["id"], 1);
    assert!(v["error"].is_null());
    let udp = v["tests"].as_array().unwrap().iter().find(|t| t["spec"]["test"] == "udp-stream").unwrap();
    assert!(udp["summary"]["headline"]["value"].as_f64().unwrap() > 0.0, "UDP has a headline");
    let out = tcplab(&["history", "--test", "udp", "--json", "--db", &db]);
    let list = json_of(&out);
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{list}");
    assert!(list[0]["best"]["value"].as_f64().is_some(), "{list}");
}

#[test]
fn a_db_in_a_missing_directory_is_refused_like_a_report_there() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("no-such-dir/r.db").display().to_string();
    let out = tcplab(&["stream", "127.0.0.1", "-p", "9", "-t", "0.3", "--db", &db]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("no-such-dir does not exist") && err.contains("--no-store"), "{err}");
    assert!(!dir.path().join("no-such-dir").exists(), "the directory is not created");
}
