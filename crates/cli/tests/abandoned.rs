//! End to end: a test client killed with SIGKILL leaves its run `running` in the archive;
//! `history` shows it as abandoned, `--status abandoned` lists it, and `--prune-abandoned`
//! marks it for good while a run whose client is still alive stays running.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Output, Stdio};

use serde_json::Value;
use support::{command, ServerProc};

fn tcplab(db: &Path, args: &[&str]) -> Output {
    command().args(args).arg("--db").arg(db).output().unwrap()
}

/// A long `tcplab stream` against `srv`, returned once it has printed its first interval (so
/// its run is in the archive and the test is under way).
fn streaming_client(db: &Path, srv: &ServerProc) -> Child {
    let mut child = command()
        .args(["stream", "127.0.0.1", "-p", &srv.port(), "-t", "60", "-i", "0.1", "--db"])
        .arg(db)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.find(|l| l.as_ref().is_ok_and(|l| l.contains("bit/s")));
    assert!(first.is_some(), "the client printed no interval");
    // Keep reading so the client never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    child
}

fn history_json(db: &Path, extra: &[&str]) -> Vec<Value> {
    let out = tcplab(db, &[&["history", "--json"], extra].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice::<Value>(&out.stdout).unwrap().as_array().cloned().unwrap()
}

fn status_in_db(db: &Path, id: i64) -> String {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row("SELECT status FROM runs WHERE id = ?1", [id], |r| r.get(0)).unwrap()
}

fn ids_with(list: &[Value], status: &str) -> Vec<i64> {
    list.iter().filter(|r| r["status"] == status).filter_map(|r| r["id"].as_i64()).collect()
}

#[test]
fn a_killed_client_leaves_an_abandoned_run_that_prune_marks_and_a_live_one_stays() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let (srv_a, srv_b) = (ServerProc::start(&[]), ServerProc::start(&[]));

    let mut killed = streaming_client(&db, &srv_a);
    killed.kill().unwrap(); // SIGKILL: no chance to finish the run
    killed.wait().unwrap();
    let mut live = streaming_client(&db, &srv_b);

    let all = history_json(&db, &[]);
    assert_eq!((ids_with(&all, "abandoned"), ids_with(&all, "running")), (vec![1], vec![2]), "{all:?}");
    assert_eq!(status_in_db(&db, 1), "running", "history alone writes nothing");
    let table = String::from_utf8_lossy(&tcplab(&db, &["history"]).stdout).to_string();
    let line = table.lines().find(|l| l.trim_start().starts_with("1 ")).unwrap_or_default();
    assert!(line.contains("abandoned"), "{table}");
    let only = history_json(&db, &["--status", "abandoned"]);
    assert_eq!(only.iter().filter_map(|r| r["id"].as_i64()).collect::<Vec<_>>(), vec![1]);
    let running = history_json(&db, &["--status", "running"]);
    assert_eq!(running.iter().filter_map(|r| r["id"].as_i64()).collect::<Vec<_>>(), vec![2]);

    // A report of the abandoned run says so and fails, instead of "No tests" and exit 0; one
    // of it with a finished run notes it.
    let out = tcplab(&db, &["report", "1", "-o", dir.path().join("r.html").to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(
        err.trim(),
        "error: nothing to report: run 1 is abandoned: its process ended before the run finished (0 test(s) stored)"
    );
    let done = tcplab(&db, &["rr", "127.0.0.1", "-p", &srv_a.port(), "-t", "0.2", "-i", "0"]);
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    let out = tcplab(&db, &["report", "1", "3", "-o", dir.path().join("r.html").to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{err}");
    assert!(err.contains("note: run 1 is abandoned") && err.contains("wrote"), "{err}");

    let pruned = tcplab(&db, &["history", "--prune-abandoned"]);
    assert!(pruned.status.success());
    assert!(String::from_utf8_lossy(&pruned.stderr).contains("marked 1 run(s) abandoned: 1"));
    assert_eq!((status_in_db(&db, 1), status_in_db(&db, 2)), ("abandoned".into(), "running".into()));

    live.kill().unwrap();
    live.wait().unwrap();
    assert_eq!(ids_with(&history_json(&db, &[]), "abandoned"), vec![2, 1]);
}
