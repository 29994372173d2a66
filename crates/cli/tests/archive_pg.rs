//! End to end with a real PostgreSQL archive (one cluster for this test binary, from
//! `crates/store/tests/support/pg_cluster.rs`; skipped with a reason when PostgreSQL is not
//! installed): results written by the real `tcplab` to `--db postgres://…` read back exactly
//! as from SQLite, `archive push` killed mid-way and rerun, a partition caught up, `audit`.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

#[path = "../../store/tests/support/pg_cluster.rs"]
mod pg_cluster;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Output, Stdio};

use results::{
    HostInfo, Interval, RunRecord, SideMeasurement, StreamInterval, TestKind, TestResult, TestSpec,
};
use support::{command, stderr, stdout, ServerProc};

fn tcplab(db: &str, args: &[&str]) -> Output {
    command().args(args).args(["--db", db]).output().unwrap()
}

fn ok(out: Output) -> String {
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    stdout(&out)
}

/// The measuring commands: a stream, an rr and a UDP stream against `port`.
fn measure(db: &str, port: &str) {
    ok(tcplab(db, &["stream", "127.0.0.1", "-p", port, "-t", "0.2", "-i", "0"]));
    ok(tcplab(db, &["rr", "127.0.0.1", "-p", port, "-t", "0.2", "-i", "0"]));
    ok(tcplab(db, &["udp", "127.0.0.1", "-p", port, "-t", "0.2", "-i", "0", "-b", "10M"]));
}

fn sqlite_uids(db: &Path) -> BTreeSet<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn.prepare("SELECT uid FROM tests").unwrap();
    stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
}

fn pg_uids(c: &pg_cluster::Cluster, db: &str) -> BTreeSet<String> {
    c.query(db, "SELECT uid FROM tests").lines().map(String::from).collect()
}

#[test]
fn results_written_to_postgres_read_back_as_from_sqlite() {
    let Some(c) = pg_cluster::shared() else { return };
    let _up = pg_cluster::up();
    let url = c.new_db("cli_same");
    let srv = ServerProc::start(&[]);
    measure(&url, &srv.port());
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy.db");
    let pushed = ok(tcplab(&url, &["archive", "push", "--to", copy.to_str().unwrap()]));
    assert!(pushed.starts_with("pushed 3 test(s) (3 new run(s), 0 updated); 0 already there"), "{pushed}");
    let copy = copy.to_str().unwrap();
    let views: [&[&str]; 9] = [
        &["history"],
        &["history", "--json"],
        &["history", "--test", "udp"],
        &["show", "1"],
        &["show", "2", "--json"],
        &["show", "3", "--csv"],
        &["export", "-f", "json"],
        &["export"],
        &["report", "1", "2", "3", "-f", "markdown"],
    ];
    for args in views {
        let (shared, local) = (ok(tcplab(&url, args)), ok(tcplab(copy, args)));
        assert!(!shared.trim().is_empty(), "{args:?}");
        assert_eq!(shared, local, "{args:?}");
    }
    let uid = c.query("cli_same", "SELECT uid FROM runs WHERE id = 2");
    assert_eq!(ok(tcplab(&url, &["show", &uid])), ok(tcplab(copy, &["show", "2"])));
    let by_env = command().args(["show", "1"]).env("TCPLAB_DB", &url).output().unwrap();
    assert_eq!(ok(by_env), ok(tcplab(copy, &["show", "1"])));
}

/// A stored test with a few intervals, as a host would have measured it.
fn fake(i: usize) -> TestResult {
    let iv = |s: f64| Interval {
        start_s: s,
        end_s: s + 1.0,
        omitted: false,
        streams: vec![StreamInterval { index: 0, bytes: 1000 + i as u64, ..StreamInterval::default() }],
    };
    TestResult {
        local: SideMeasurement {
            measured_s: 3.0,
            intervals: vec![iv(0.0), iv(1.0), iv(2.0)],
            ..SideMeasurement::default()
        },
        ..TestResult::new("stream", TestSpec::new(TestKind::TcpStream), "127.0.0.1:9", 5)
    }
}

fn header() -> RunRecord {
    let local = HostInfo { hostname: "bulk".into(), ..HostInfo::default() };
    RunRecord { command_line: vec!["tcplab".into(), "stream".into()], ..RunRecord::new("0.1.0", 1000, local) }
}

#[test]
fn a_push_killed_mid_way_then_rerun_loses_and_duplicates_nothing() {
    let Some(c) = pg_cluster::shared() else { return };
    let _up = pg_cluster::up();
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("local.db");
    let mut st = store::Store::open(&local).unwrap();
    for r in 0..150 {
        let id = st.begin_run(&header(), store::RunKind::Test, "h:1").unwrap();
        for t in 0..4 {
            st.add_test(id, &fake(r * 4 + t)).unwrap();
        }
        st.finish_run(id, store::RunStatus::Complete, None, 2000).unwrap();
    }
    let url = c.new_db("cli_killed");
    let mut pusher = command()
        .args(["archive", "push", "--db", local.to_str().unwrap(), "--to", &url, "--batch", "4"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(pusher.stderr.take().unwrap()).read_line(&mut first).unwrap();
    pusher.kill().unwrap();
    pusher.wait().unwrap();
    assert!(first.starts_with("archive push: 1 batch(es) stored so far (4 test(s))"), "{first}");
    let before: usize = c.query("cli_killed", "SELECT COUNT(*) FROM tests").parse().unwrap();
    assert!((4..600).contains(&before) && before % 4 == 0, "a batch is stored whole: {before}");
    let rerun = ok(tcplab(local.to_str().unwrap(), &["archive", "push", "--to", &url]));
    assert!(rerun.starts_with(&format!("pushed {} test(s)", 600 - before)), "{rerun}");
    assert!(rerun.contains(&format!("; {before} already there")), "{rerun}");
    assert_eq!(c.query("cli_killed", "SELECT COUNT(*) || ' ' || COUNT(DISTINCT uid) FROM tests"), "600 600");
    assert_eq!(c.query("cli_killed", "SELECT COUNT(*) FROM samples"), "1800");
    assert_eq!(pg_uids(c, "cli_killed"), sqlite_uids(&local));
    let again = ok(tcplab(local.to_str().unwrap(), &["archive", "push", "--to", &url]));
    assert!(again.starts_with("pushed 0 test(s) (0 new run(s), 0 updated); 600 already there"), "{again}");
}

#[test]
fn results_stored_locally_during_a_partition_are_pushed_after_it() {
    let Some(c) = pg_cluster::shared() else { return };
    let _alone = pg_cluster::alone();
    let url = c.new_db("cli_partition");
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("local.db");
    let local = local.to_str().unwrap();
    let srv = ServerProc::start(&[]);
    ok(tcplab(local, &["stream", "127.0.0.1", "-p", &srv.port(), "-t", "0.2", "-i", "0"]));
    ok(tcplab(local, &["archive", "push", "--to", &url]));
    c.stop();
    measure(local, &srv.port());
    let failed = tcplab(local, &["archive", "push", "--to", &url]);
    c.restart();
    assert_eq!(failed.status.code(), Some(2));
    let err = stderr(&failed);
    assert!(
        err.starts_with(&format!("error: connecting to the archive {url}: ")) && err.lines().count() == 1,
        "{err}"
    );
    let caught_up = ok(tcplab(local, &["archive", "push", "--to", &url]));
    assert!(
        caught_up.starts_with("pushed 3 test(s) (3 new run(s), 0 updated); 1 already there"),
        "{caught_up}"
    );
    assert_eq!(pg_uids(c, "cli_partition"), sqlite_uids(Path::new(local)));
    assert_eq!(c.query("cli_partition", "SELECT COUNT(*) FROM runs"), "4");

    let host = c.query("cli_partition", "SELECT DISTINCT host FROM runs");
    let audit =
        tcplab(&url, &["archive", "audit", "--since", "1h", "--expect-hosts", &format!("{host},ghost")]);
    assert_eq!(audit.status.code(), Some(1), "{}", stderr(&audit));
    let text = stdout(&audit);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[1].starts_with("ghost") && lines[1].contains("missing") && lines[1].ends_with("never"),
        "{text}"
    );
    assert!(
        lines[2].starts_with(&host) && lines[2].contains(" ok ") && lines[2].contains("4       4"),
        "{text}"
    );
    assert!(text.trim_end().ends_with("1 of 2 host(s) with no result in the last 1.0 h"), "{text}");
    let all = tcplab(&url, &["archive", "audit", "-J"]);
    assert_eq!(all.status.code(), Some(0), "{}", stderr(&all));
    let v: serde_json::Value = serde_json::from_slice(&all.stdout).unwrap();
    assert_eq!(v["rows"][0]["name"], host.as_str());
    assert_eq!((v["rows"][0]["kind"].as_str(), v["rows"][0]["tests"].as_u64()), (Some("host"), Some(4)));
}
