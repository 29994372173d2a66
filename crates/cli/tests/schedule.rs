//! Scheduled meshes (`tcplab mesh INVENTORY --every …`) against real `tcplab server
//! --allow-third-party` processes on loopback: bounded rounds, one archived run each, never
//! overlapping, an overrun said, failed cells not ending the schedule; SIGTERM between rounds
//! ends it cleanly; and with a real PostgreSQL archive that is down for the first round, the
//! round waits in the local spool and reaches the archive once it is back.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

#[path = "../../store/tests/support/pg_cluster.rs"]
mod pg_cluster;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use support::{command, stderr, stdout, ServerProc};

/// An inventory of the servers (names h0, h1, …) and, when `down`, a host nobody listens on.
fn inventory(dir: &Path, servers: &[ServerProc], down: bool) -> String {
    let mut text: String = servers
        .iter()
        .enumerate()
        .map(|(i, s)| format!("[[host]]\nname = \"h{i}\"\naddress = \"127.0.0.1:{}\"\n", s.port))
        .collect();
    if down {
        text.push_str("[[host]]\nname = \"down\"\naddress = \"127.0.0.1:1\"\n");
    }
    let path = dir.join("fleet.toml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn servers(n: usize) -> Vec<ServerProc> {
    (0..n).map(|_| ServerProc::start(&["--allow-third-party"])).collect()
}

/// `(started, finished)` of every run, in id order.
fn run_times(db: &Path) -> Vec<(i64, i64)> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn.prepare("SELECT started_unix_ms, finished_unix_ms FROM runs ORDER BY id").unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
}

#[test]
fn bounded_rounds_each_archived_never_overlapping_and_failures_do_not_stop_them() {
    let srv = servers(2);
    let dir = tempfile::tempdir().unwrap();
    let inv = inventory(dir.path(), &srv, true);
    let db = dir.path().join("fleet.db");
    let out = command()
        .args(["mesh", &inv, "--every", "1s", "--rounds", "2", "-t", "0.2", "-i", "0", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let err = stderr(&out);
    // The host that is down fails five of nine cells each round: the mesh's own status.
    assert_eq!(out.status.code(), Some(2), "{}\n{err}", stdout(&out));
    for want in
        ["round 1: starting", "round 2: starting", "round 1: ended with a failure", "the schedule goes on"]
    {
        assert!(err.contains(want), "{want:?} in\n{err}");
    }
    assert!(err.contains("longer than the 1.0 s interval; round 2 starts now"), "{err}");
    assert!(!err.contains("round 3"), "{err}");
    let times = run_times(&db);
    assert_eq!(times.len(), 2, "one run per round");
    assert!(times[0].1 <= times[1].0, "rounds overlap: {times:?}");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let per_run: Vec<(i64, i64)> = conn
        .prepare("SELECT run_id, SUM(status = 'completed') FROM tests GROUP BY run_id ORDER BY run_id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(per_run, vec![(1, 4), (2, 4)], "the four cells between live hosts, each round");
}

/// Stderr lines of `child` as they come.
fn lines(child: &mut Child) -> Receiver<String> {
    let (tx, rx) = channel();
    let err = BufReader::new(child.stderr.take().unwrap());
    std::thread::spawn(move || {
        for l in err.lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    rx
}

/// Waits (at most `limit`) for a line containing `want`; the lines seen.
fn wait_for_line(rx: &Receiver<String>, want: &str, limit: Duration) -> Vec<String> {
    let end = Instant::now() + limit;
    let mut seen = Vec::new();
    while let Some(left) = end.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(l) => {
                let hit = l.contains(want);
                seen.push(l);
                if hit {
                    return seen;
                }
            }
            Err(_) => break,
        }
    }
    panic!("no line with {want:?} within {limit:?}; saw:\n{}", seen.join("\n"));
}

fn wait_exit(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let end = Instant::now() + limit;
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if Instant::now() > end {
            let _ = child.kill();
            panic!("tcplab did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn sigterm_between_rounds_ends_the_schedule_cleanly() {
    let srv = servers(2);
    let dir = tempfile::tempdir().unwrap();
    let inv = inventory(dir.path(), &srv, false);
    let db = dir.path().join("fleet.db");
    let mut child = command()
        .args(["mesh", &inv, "--every", "1h", "--jitter", "1s", "-t", "0.2", "-i", "0", "--db"])
        .arg(&db)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let rx = lines(&mut child);
    wait_for_line(&rx, "round 1: done", Duration::from_secs(60));
    let asked = Instant::now();
    assert_eq!(signal(child.id(), libc::SIGTERM), 0);
    let status = wait_exit(&mut child, Duration::from_secs(10));
    assert!(asked.elapsed() < Duration::from_secs(5), "stopped between rounds at once");
    assert_eq!(status.code(), Some(0));
    wait_for_line(&rx, "schedule stopped", Duration::from_secs(1));
    assert_eq!(run_times(&db).len(), 1);
}

/// Sends `sig` to the child this test started, by its pid (the `kill` command: no unsafe code).
fn signal(pid: u32, sig: i32) -> i32 {
    let ok = std::process::Command::new("kill")
        .args([format!("-{sig}"), pid.to_string()])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if ok {
        0
    } else {
        -1
    }
}

#[test]
fn a_round_measured_while_postgresql_is_down_waits_in_the_spool_and_is_pushed_later() {
    let Some(c) = pg_cluster::shared() else { return };
    let _alone = pg_cluster::alone();
    let url = c.new_db("schedule");
    let srv = servers(2);
    let dir = tempfile::tempdir().unwrap();
    let inv = inventory(dir.path(), &srv, false);
    let spool = dir.path().join("spool");
    c.stop();
    let mut child = command()
        .args(["mesh", &inv, "--every", "1s", "--rounds", "3", "-t", "0.2", "-i", "0", "--db", &url])
        .arg("--spool-dir")
        .arg(&spool)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let rx = lines(&mut child);
    let seen = wait_for_line(&rx, "they wait in", Duration::from_secs(90));
    assert!(
        seen.iter().any(|l| l.contains("round 1: starting")) && !seen.iter().any(|l| l.contains("round 2")),
        "{seen:?}"
    );
    c.restart();
    let status = wait_exit(&mut child, Duration::from_secs(120));
    let rest: Vec<String> = rx.try_iter().collect();
    assert_eq!(status.code(), Some(0), "{}", rest.join("\n"));
    assert!(rest.iter().any(|l| l.contains("spool: pushed")), "{rest:?}");
    let counts = c.query("schedule", "SELECT COUNT(DISTINCT r.uid) || ' ' || COUNT(t.uid) || ' ' || MIN(r.status) || ' ' || MAX(r.status) FROM runs r JOIN tests t ON t.run_id = r.id");
    assert_eq!(counts.trim(), "3 12 complete complete", "three rounds of four cells, none lost");
    let left: Vec<_> = std::fs::read_dir(&spool).unwrap().collect();
    assert!(left.is_empty(), "the spool is emptied once everything is pushed: {left:?}");
}

/// `run` (the suite) and `sweep` take `--every` as the test commands do: two rounds, two
/// archived runs, not overlapping; `sweep --resume` refuses it.
#[test]
fn the_suite_and_a_sweep_run_on_a_schedule_and_resume_refuses_one() {
    let srv = servers(1);
    let dir = tempfile::tempdir().unwrap();
    let port = srv[0].port.to_string();
    for (name, args) in [
        ("suite.db", vec!["run", "127.0.0.1", "-p", &port, "-t", "0.2"]),
        (
            "sweep.db",
            vec![
                "sweep",
                "127.0.0.1",
                "-p",
                &port,
                "--test",
                "tcp-stream",
                "-t",
                "0.2",
                "--vary",
                "len=16K,32K",
            ],
        ),
    ] {
        let db = dir.path().join(name);
        let out =
            command().args(&args).args(["--every", "1s", "--rounds", "2", "--db"]).arg(&db).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let runs = run_times(&db);
        assert_eq!(runs.len(), 2, "{args:?}: one run per round");
        assert!(runs[1].0 >= runs[0].1, "{args:?}: rounds never overlap: {runs:?}");
    }
    let out = command().args(["sweep", "--resume", "1", "--every", "1h"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("'--every <INTERVAL>' cannot be used with '--resume <ID>'")
            || stderr(&out).contains("cannot be used with"),
        "{}",
        stderr(&out)
    );
}

/// `compare-cc` takes `--every/--rounds` as the test commands do (its interleaving is
/// `--repeat`): two rounds on loopback, one archived comparison each with a stream per
/// control, not overlapping.
#[test]
fn compare_cc_runs_on_a_schedule() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cc.db");
    let args =
        ["compare-cc", "--cc", "reno,cubic", "-t", "1", "--window", "1", "--every", "1s", "--rounds", "2"];
    let out = command().args(args).arg("--db").arg(&db).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let runs = run_times(&db);
    assert_eq!(runs.len(), 2, "one run per round: {runs:?}");
    assert!(runs[1].0 >= runs[0].1, "rounds never overlap: {runs:?}");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let per_run: Vec<i64> = conn
        .prepare("SELECT COUNT(*) FROM tests GROUP BY run_id ORDER BY run_id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(per_run, [2, 2], "a stream per control in each round");
}

/// A study (hours long, resumed with `--resume`) refuses a schedule in one line that says
/// why and what to use instead.
#[test]
fn a_study_refuses_every_in_one_line() {
    for flag in [["--every", "1s"], ["--rounds", "2"]] {
        let out = command().args(["study", "tcp-atm-2000", "--quick"]).args(flag).output().unwrap();
        assert!(!out.status.success(), "{flag:?}");
        let err = stderr(&out);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(&format!("study takes no {}", flag[0])) && err.contains("--resume"), "{err}");
        assert!(err.contains("with --every"), "names what to use instead: {err}");
    }
}
