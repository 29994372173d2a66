//! The archive against real SQLite files in a temp dir: round trips, duplicate points,
//! filters, and upgrades from every earlier schema version.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

use results::{
    Axis, Headline, HostInfo, Metric, ParamValue, Shape, SweepPlan, TestKind, TestSpec, UdpSummary,
};
use rusqlite::{params, Connection};

#[path = "support/fixtures.rs"]
mod fixtures;
use fixtures::{point, record, result};
use store::{schema, RunFilter, RunKind, RunStatus, Store};

fn plan() -> SweepPlan {
    let axis = |name: &str, v: &[u64]| Axis {
        name: name.into(),
        tied: Vec::new(),
        values: v.iter().map(|n| ParamValue::Int(*n)).collect(),
        text: String::new(),
    };
    SweepPlan {
        base: TestSpec::new(TestKind::TcpStream),
        axes: vec![axis("rcvbuf", &[4096, 8192]), axis("len", &[512, 1024, 1536])],
        confidence: None,
        metric: "goodput_bps".into(),
        mesh: None,
    }
}

#[test]
fn run_round_trips_with_hosts_tests_and_rows() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Store::open_creating_dir(&dir.path().join("sub/results.db")).unwrap();
    assert_eq!(st.schema_version().unwrap(), schema::latest());
    let id = st.begin_run(&record("here"), RunKind::Test, "127.0.0.1:9").unwrap();
    st.add_test(id, &result(1e9)).unwrap();
    st.add_test(id, &result(2e9)).unwrap();
    st.set_remote_host(id, &HostInfo { hostname: "there".into(), ..HostInfo::default() }).unwrap();
    st.finish_run(id, RunStatus::Complete, None, 2000).unwrap();
    let back = st.load_run(id).unwrap();
    assert_eq!(back.id, Some(id));
    assert_eq!(back.tests, vec![result(1e9), result(2e9)]);
    assert_eq!(back.remote_host.unwrap().hostname, "there");
    assert_eq!(back.command_line, record("here").command_line);
    let list = st.list_runs(&RunFilter::default()).unwrap();
    assert_eq!(list.len(), 1);
    let best = Some(Headline::measured(Metric::Goodput, 2e9));
    assert_eq!((list[0].tests, list[0].best, list[0].status.as_str()), (2, best, "complete"));
    let conn = Connection::open(st.path()).unwrap();
    let samples: i64 = conn.query_row("SELECT COUNT(*) FROM samples", [], |r| r.get(0)).unwrap();
    let warnings: i64 = conn.query_row("SELECT COUNT(*) FROM warnings", [], |r| r.get(0)).unwrap();
    assert_eq!((samples, warnings), (4, 2));
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn sweep_points_are_stored_once_with_coordinates() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Store::open(&dir.path().join("r.db")).unwrap();
    let id = st.begin_run(&record("here"), RunKind::Sweep, "h:1").unwrap();
    st.begin_sweep(id, &plan()).unwrap();
    st.add_point(id, &point(4, 4.0), &result(4.0)).unwrap();
    st.add_point(id, &point(1, 1.0), &result(1.0)).unwrap();
    assert!(matches!(
        st.add_point(id, &point(4, 9.0), &result(9.0)),
        Err(store::Error::Duplicate { point: 4, .. })
    ));
    assert_eq!(st.finished_points(id).unwrap(), vec![1, 4]);
    let sw = st.load_sweep(id).unwrap();
    assert!(!sw.complete);
    assert_eq!(sw.points.len(), 2);
    assert_eq!(sw.points[1].coords, vec![1, 1]);
    assert_eq!(sw.points[1].headline.mean, 4.0);
    let run = st.load_run(id).unwrap();
    let p = &run.sweep.as_ref().unwrap().points[1];
    assert_eq!(run.tests[p.test_index as usize].summary.goodput_bps(), 4.0);
    assert!(matches!(st.load_sweep(999), Err(store::Error::NotFound(999))));
}

#[test]
fn history_filters() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Store::open(&dir.path().join("r.db")).unwrap();
    let a = st.begin_run(&record("here"), RunKind::Test, "alpha:9180").unwrap();
    st.add_test(a, &result(1.0)).unwrap();
    let b = st.begin_run(&record("here"), RunKind::Sweep, "beta:9180").unwrap();
    let ids = |f: RunFilter| st.list_runs(&f).unwrap().iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(ids(RunFilter::default()), vec![b, a]);
    assert_eq!(ids(RunFilter { kind: Some("sweep".into()), ..RunFilter::default() }), vec![b]);
    assert_eq!(ids(RunFilter { server: Some("alph".into()), ..RunFilter::default() }), vec![a]);
    assert_eq!(ids(RunFilter { test: Some("tcp-stream".into()), ..RunFilter::default() }), vec![a]);
    assert_eq!(ids(RunFilter { test: Some("tcp-rr".into()), ..RunFilter::default() }), Vec::<i64>::new());
    assert_eq!(ids(RunFilter { limit: 1, ..RunFilter::default() }), vec![b]);
    assert_eq!(ids(RunFilter { since_unix_ms: Some(5000), ..RunFilter::default() }), Vec::<i64>::new());
}

/// Writes the data a tcplab of schema `version` would have written, by hand.
fn fill_old(conn: &Connection, version: i64) {
    let rec = record("here");
    conn.execute(
        "INSERT INTO runs (id, kind, status, started_unix_ms, tool_version, command_line, server, local_host)
         VALUES (1, 'sweep', 'interrupted', 1000, '0.0.9', ?1, 'h:1', ?2)",
        params![
            serde_json::to_string(&rec.command_line).unwrap(),
            serde_json::to_string(&rec.local_host).unwrap()
        ],
    )
    .unwrap();
    let r = serde_json::to_string(&result(3e9)).unwrap();
    let spec = serde_json::to_string(&result(3e9).spec).unwrap();
    conn.execute(
        "INSERT INTO tests (id, run_id, seq, label, test, status, started_unix_ms, goodput_bps, spec, result)
         VALUES (7, 1, 2, 'stream', 'tcp-stream', 'completed', 5, 3e9, ?1, ?2)",
        params![spec, r],
    )
    .unwrap();
    if version >= 7 {
        // Schema 7 writes the run's client host and stable ids with the rows.
        conn.execute_batch(
            "UPDATE runs SET host = 'here', uid = '00000000-0000-4000-8000-000000000001';
             UPDATE tests SET uid = '00000000-0000-4000-8000-000000000007';",
        )
        .unwrap();
    }
    if version >= 4 {
        conn.execute_batch("UPDATE tests SET headline_metric = 'goodput_bps', headline_value = 3e9").unwrap();
    }
    if version >= 8 {
        conn.execute_batch("UPDATE tests SET sender = 'here', receiver = 'h:1'").unwrap();
    }
    if version >= 9 {
        // Schema 9 keeps the path summary with each test.
        conn.execute_batch(
            "INSERT INTO path_latest VALUES ('here', 'h:1', 'tcp-stream', 'stream', 7, 1, 5, 'completed', 'goodput_bps', 3e9);
             INSERT INTO path_days VALUES ('here', 'h:1', 'tcp-stream', 'stream', 'goodput_bps', 0, 1, 3e9, 0, 3e9, 3e9);",
        )
        .unwrap();
    }
    if version >= 2 {
        conn.execute(
            "INSERT INTO sweeps (run_id, plan, points_total) VALUES (1, ?1, 6)",
            [serde_json::to_string(&plan()).unwrap()],
        )
        .unwrap();
        let p = point(2, 3e9);
        conn.execute(
            "INSERT INTO sweep_points VALUES (1, 2, 7, ?1, ?2, 1)",
            params![serde_json::to_string(&p.params).unwrap(), serde_json::to_string(&p.headline).unwrap()],
        )
        .unwrap();
    }
}

#[test]
fn upgrades_from_every_earlier_version() {
    for version in 0..schema::latest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        {
            let mut conn = Connection::open(&path).unwrap();
            schema::migrate_to(&mut conn, version).unwrap();
            assert_eq!(schema::version(&conn).unwrap(), version);
            if version >= 1 {
                fill_old(&conn, version);
            }
        }
        let mut st = Store::open(&path).unwrap();
        assert_eq!(st.schema_version().unwrap(), schema::latest(), "from {version}");
        if version >= 1 {
            let run = st.load_run(1).unwrap();
            assert_eq!(run.tests, vec![result(3e9)], "from {version}");
            assert_eq!(run.sweep.is_some(), version >= 2, "from {version}");
            let conn = Connection::open(&path).unwrap();
            let samples: i64 =
                conn.query_row("SELECT COUNT(*) FROM samples WHERE test_id = 7", [], |r| r.get(0)).unwrap();
            // Schema 3 and later write sample rows with the test; earlier ones get them back-filled.
            assert_eq!(samples, if version < 3 { 2 } else { 0 }, "back-filled from {version}");
            // Schema 7 gives stored rows stable ids and the run its client host.
            let ids: (i64, String) = conn
                .query_row("SELECT COUNT(DISTINCT uid), MIN(host) FROM runs", [], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .unwrap();
            assert_eq!(ids, (1, "here".to_string()), "from {version}");
            let uid: String = conn.query_row("SELECT uid FROM tests", [], |r| r.get(0)).unwrap();
            assert!(store::ids::is_uid(&uid), "from {version}: {uid}");
            assert_eq!(st.run_by_uid(&st.run_uid(1).unwrap()).unwrap(), 1);
            // Schema 8 gives stored tests the ends of their path.
            let ends: (String, String) = conn
                .query_row("SELECT sender, receiver FROM tests", [], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap();
            assert_eq!(ends, ("here".to_string(), "h:1".to_string()), "from {version}");
            // Schema 9 summarises each path: its newest test and its days.
            let latest = st.latest_per_path().unwrap();
            assert_eq!(latest.len(), 1, "from {version}");
            assert_eq!((latest[0].test_id, latest[0].value), (7, Some(3e9)), "from {version}");
            let days = st.path_days(0, Some(("here", "h:1"))).unwrap();
            assert_eq!(
                days.iter().map(|d| (d.n, d.mean)).collect::<Vec<_>>(),
                vec![(1, 3e9)],
                "from {version}"
            );
        }
        // Still writable after the upgrade.
        let id = st.begin_run(&record("here"), RunKind::Test, "h:1").unwrap();
        st.add_test(id, &result(1.0)).unwrap();
    }
}

#[test]
fn newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.db");
    Connection::open(&path).unwrap().pragma_update(None, "user_version", 99).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(err.to_string().contains("schema version 99"), "{err}");
}

#[test]
fn two_writers_share_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    let mut a = Store::open(&path).unwrap();
    let mut b = Store::open(&path).unwrap();
    let ra = a.begin_run(&record("here"), RunKind::Test, "a").unwrap();
    let rb = b.begin_run(&record("here"), RunKind::Test, "b").unwrap();
    for _ in 0..5 {
        a.add_test(ra, &result(1.0)).unwrap();
        b.add_test(rb, &result(2.0)).unwrap();
    }
    assert_eq!(a.load_run(rb).unwrap().tests.len(), 5);
}

#[test]
fn processes_opening_a_new_file_at_once_migrate_it_once() {
    for round in 0..10 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.db");
        let start = std::sync::Arc::new(std::sync::Barrier::new(16));
        let threads: Vec<_> = (0..16)
            .map(|_| {
                let (p, start) = (path.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    let mut st = Store::open(&p).unwrap_or_else(|e| panic!("round {round}: {e}"));
                    let id = st.begin_run(&record("here"), RunKind::Test, "h:1").unwrap();
                    st.add_test(id, &result(1.0)).unwrap();
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let st = Store::open(&path).unwrap();
        assert_eq!(st.schema_version().unwrap(), schema::latest());
        assert_eq!(st.list_runs(&RunFilter::default()).unwrap().len(), 16);
    }
}

/// Schema 3 stored UDP streams with a NULL goodput column and no headline (the bug the
/// headline migration fixes): after the upgrade they have one, in the columns and the result.
#[test]
fn udp_streams_stored_before_headlines_get_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v3.db");
    {
        let mut conn = Connection::open(&path).unwrap();
        schema::migrate_to(&mut conn, 3).unwrap();
        fill_old(&conn, 3);
        let mut r = serde_json::to_value(result(0.0)).unwrap();
        r["spec"]["test"] = "udp-stream".into();
        r["label"] = "udp 1400".into();
        r["summary"]["directions"] = serde_json::json!([]);
        let udp = UdpSummary { receiver_bps: 9.5e7, ..UdpSummary::default() };
        r["summary"]["udp"] = serde_json::json!([udp]);
        r["summary"].as_object_mut().unwrap().remove("headline");
        r["summary"].as_object_mut().unwrap().remove("shape");
        conn.execute(
            "INSERT INTO tests (id, run_id, seq, label, test, status, started_unix_ms, goodput_bps, spec, result)
             VALUES (8, 1, 3, 'udp 1400', 'udp-stream', 'completed', 6, NULL, ?1, ?2)",
            params![r["spec"].to_string(), r.to_string()],
        )
        .unwrap();
    }
    let st = Store::open(&path).unwrap();
    let conn = Connection::open(&path).unwrap();
    let row: (String, f64, f64) = conn
        .query_row("SELECT headline_metric, headline_value, goodput_bps FROM tests WHERE id = 8", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap();
    assert_eq!(row, ("goodput_bps".to_string(), 9.5e7, 9.5e7));
    let run = st.load_run(1).unwrap();
    let udp = run.tests.iter().find(|t| t.label == "udp 1400").unwrap();
    assert_eq!(udp.summary.headline, Some(Headline::measured(Metric::Goodput, 9.5e7)));
    assert_eq!(udp.summary.shape, Some(Shape::UdpBulk));
    let filter = RunFilter { test: Some("udp-stream".into()), ..RunFilter::default() };
    assert_eq!(st.list_runs(&filter).unwrap().len(), 1);
}

fn owner(pid: u32, boot: &str) -> store::Owner {
    store::Owner { pid, pid_start: Some(99), boot_id: boot.into(), hostname: "here".into() }
}

/// Schema 4 had no run owners: after the upgrade its runs list without one (never judged
/// abandoned, never pruned), and new runs record theirs.
#[test]
fn runs_stored_at_schema_4_get_owner_columns_and_stay_unjudged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v4.db");
    {
        let mut conn = Connection::open(&path).unwrap();
        schema::migrate_to(&mut conn, 4).unwrap();
        fill_old(&conn, 4);
        conn.execute("UPDATE runs SET status = 'running' WHERE id = 1", []).unwrap();
    }
    let mut st = Store::open(&path).unwrap();
    assert_eq!(st.schema_version().unwrap(), schema::latest());
    let old = st.list_runs(&RunFilter::default()).unwrap();
    assert_eq!((old.len(), old[0].owner.as_ref(), old[0].status.as_str()), (1, None, "running"));
    let new = st.begin_run_by(&record("here"), RunKind::Test, "h:1", &owner(4242, "boot-a")).unwrap();
    let listed = st.list_runs(&RunFilter::default()).unwrap();
    assert_eq!(listed[0].id, new);
    assert_eq!(listed[0].owner, Some(owner(4242, "boot-a")));
    let pruned = st.prune_abandoned(&owner(1, "boot-a"), |_, _| false).unwrap();
    assert_eq!(pruned, vec![new], "the pre-owner run is left alone");
    let status =
        |id| st.list_runs(&RunFilter::default()).unwrap().into_iter().find(|r| r.id == id).unwrap().status;
    assert_eq!((status(1), status(new)), ("running".to_string(), "abandoned".to_string()));
}

#[test]
fn pruning_spares_live_processes_and_finished_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Store::open(&dir.path().join("p.db")).unwrap();
    let live = st.begin_run_by(&record("here"), RunKind::Test, "h:1", &owner(10, "boot-a")).unwrap();
    let dead = st.begin_run_by(&record("here"), RunKind::Sweep, "h:1", &owner(11, "boot-a")).unwrap();
    let done = st.begin_run_by(&record("here"), RunKind::Test, "h:1", &owner(12, "boot-a")).unwrap();
    st.finish_run(done, RunStatus::Complete, None, 2000).unwrap();
    let alive = |pid: u32, start: Option<u64>| pid == 10 && start == Some(99);
    assert_eq!(st.prune_abandoned(&owner(1, "boot-a"), alive).unwrap(), vec![dead]);
    assert_eq!(st.prune_abandoned(&owner(1, "boot-a"), alive).unwrap(), Vec::<i64>::new(), "once");
    let by_status = |st: &Store, s: &str| {
        let f = RunFilter { status: Some(s.into()), ..RunFilter::default() };
        st.list_runs(&f).unwrap().iter().map(|r| r.id).collect::<Vec<_>>()
    };
    assert_eq!(by_status(&st, "running"), vec![live]);
    assert_eq!(by_status(&st, "abandoned"), vec![dead]);
    assert_eq!(by_status(&st, "complete"), vec![done]);
    // A resumed sweep is running again, owned by the process that resumed it.
    st.reopen_run(dead, Some(&owner(13, "boot-a"))).unwrap();
    assert_eq!(by_status(&st, "running"), vec![dead, live]);
}

#[test]
fn a_damaged_archive_is_not_written_to() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    {
        let mut st = Store::open(&path).unwrap();
        for _ in 0..20 {
            let id = st.begin_run(&record("here"), RunKind::Test, "127.0.0.1:9").unwrap();
            st.add_test(id, &result(1e9)).unwrap();
        }
    }
    // Garbage over the last page: a table's b-tree page, not the header or the schema.
    let mut bytes = std::fs::read(&path).unwrap();
    let page = 4096;
    assert!(bytes.len() >= 4 * page, "{} bytes", bytes.len());
    let last = bytes.len() - page;
    bytes[last..].fill(0xA5);
    std::fs::write(&path, &bytes).unwrap();
    let mut st = Store::open(&path).unwrap();
    let err = st.begin_run(&record("here"), RunKind::Test, "127.0.0.1:9").unwrap_err();
    assert!(matches!(err, store::Error::Damaged { .. }), "{err}");
    assert!(err.to_string().contains("is damaged"), "{err}");
}

#[test]
fn an_archive_in_a_missing_directory_is_refused_unless_asked_to_create_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nowhere/r.db");
    let err = Store::open(&path).unwrap_err();
    assert!(err.to_string().ends_with("nowhere does not exist"), "{err}");
    assert!(!dir.path().join("nowhere").exists());
    Store::open_creating_dir(&path).unwrap();
}

#[test]
fn reading_a_missing_archive_says_so_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("never.db");
    let Err(e) = Store::open_read_only(&path) else { panic!("a missing archive cannot be read") };
    assert!(matches!(e, store::Error::Missing { .. }) && e.is_unusable_archive(), "{e}");
    assert!(e.to_string().starts_with("no archive at ") && e.to_string().contains("never.db"), "{e}");
    assert!(!path.exists(), "reading created the archive");
}
