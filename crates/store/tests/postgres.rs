//! The archive on a real PostgreSQL server (one cluster for this test binary, see
//! `support/pg_cluster.rs`; skipped with a reason when PostgreSQL is not installed):
//! migrations under 16 concurrent openers, reads identical to SQLite's, and pushes that never
//! duplicate a run or a test.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

#[path = "support/fixtures.rs"]
mod fixtures;
#[path = "support/pg_cluster.rs"]
mod pg_cluster;

use fixtures::{point, record, result};

use std::path::Path;

use results::{Axis, HostInfo, ParamValue, SweepPlan, TestKind, TestSpec};
use store::{schema, PushCounts, RunFilter, RunKind, RunStatus, Store};

fn plan() -> SweepPlan {
    SweepPlan {
        base: TestSpec::new(TestKind::TcpStream),
        axes: vec![Axis {
            name: "len".into(),
            tied: Vec::new(),
            values: [512u64, 1024, 2048].iter().map(|n| ParamValue::Int(*n)).collect(),
            text: String::new(),
        }],
        confidence: None,
        metric: "goodput_bps".into(),
        mesh: None,
    }
}

/// A few runs of every shape: plain tests, a finished and an unfinished sweep, a failed run.
fn fill(st: &mut Store, host: &str) -> Vec<i64> {
    let mut ids = Vec::new();
    let a = st.begin_run(&record(host), RunKind::Test, "h:1").unwrap();
    st.add_test(a, &result(9.4e8)).unwrap();
    st.add_test(a, &result(1.25e9 / 3.0)).unwrap();
    st.finish_run(a, RunStatus::Complete, None, 2000).unwrap();
    ids.push(a);
    let s = st.begin_run(&record(host), RunKind::Sweep, "h:2").unwrap();
    st.begin_sweep(s, &plan()).unwrap();
    st.add_point(s, &point(0, 1e8), &result(1e8)).unwrap();
    st.add_point(s, &point(2, 3e8), &result(3e8)).unwrap();
    ids.push(s);
    let f = st.begin_run(&record(host), RunKind::Suite, "h:3").unwrap();
    st.set_remote_host(f, &HostInfo { hostname: "there".into(), ..HostInfo::default() }).unwrap();
    st.finish_run(f, RunStatus::Failed, None, 3000).unwrap();
    ids.push(f);
    ids
}

fn sqlite(dir: &Path, name: &str) -> Store {
    Store::open(&dir.join(name)).unwrap()
}

fn pg(url: &str) -> Store {
    Store::open(Path::new(url)).unwrap()
}

fn push(from: &Store, to: &mut Store) -> PushCounts {
    from.push_to(to, 2, &mut |_| {}).unwrap()
}

#[test]
fn sixteen_hosts_opening_a_new_database_at_once_migrate_it_once() {
    let Some(c) = pg_cluster::shared() else { return };
    let url = c.new_db("migrate16");
    let handles: Vec<_> = (0..16)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || Store::open(Path::new(&url)).map(|s| s.schema_version().unwrap()))
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap().unwrap(), schema::latest());
    }
    assert_eq!(
        c.query("migrate16", "SELECT COUNT(*) || ' ' || MAX(version) FROM tcplab_schema"),
        format!("1 {}", schema::latest())
    );
    assert_eq!(c.query("migrate16", "SELECT COUNT(*) FROM pg_indexes WHERE indexname = 'runs_uid'"), "1");
}

#[test]
fn postgres_reads_back_what_sqlite_reads_back() {
    let Some(c) = pg_cluster::shared() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (mut lite, mut shared) = (sqlite(dir.path(), "a.db"), pg(&c.new_db("same")));
    let ids = fill(&mut lite, "alpha");
    assert_eq!(fill(&mut shared, "alpha"), ids);
    for id in &ids {
        assert_eq!(shared.load_run(*id).unwrap(), lite.load_run(*id).unwrap(), "run {id}");
    }
    assert_eq!(shared.load_sweep(ids[1]).unwrap(), lite.load_sweep(ids[1]).unwrap());
    assert_eq!(shared.finished_points(ids[1]).unwrap(), vec![0, 2]);
    for f in [
        RunFilter::default(),
        RunFilter { test: Some("tcp-stream".into()), ..RunFilter::default() },
        RunFilter { server: Some(":2".into()), limit: 1, ..RunFilter::default() },
    ] {
        assert_eq!(shared.list_runs(&f).unwrap(), lite.list_runs(&f).unwrap(), "{f:?}");
    }
    assert_eq!(shared.last_run().unwrap(), lite.last_run().unwrap());
    let uid = shared.run_uid(ids[0]).unwrap();
    assert_eq!(shared.run_by_uid(&uid).unwrap(), ids[0]);
    assert!(matches!(shared.load_run(999), Err(store::Error::NotFound(999))));
    assert!(matches!(
        shared.add_point(ids[1], &point(2, 1.0), &result(1.0)),
        Err(store::Error::Duplicate { point: 2, .. })
    ));
    let hosts = shared.host_activity(0).unwrap();
    assert_eq!(hosts, lite.host_activity(0).unwrap());
    assert_eq!((hosts[0].host.as_str(), hosts[0].runs, hosts[0].tests), ("alpha", 3, 4));
}

#[test]
fn the_same_run_pushed_twice_is_stored_once() {
    let Some(c) = pg_cluster::shared() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut lite = sqlite(dir.path(), "a.db");
    let ids = fill(&mut lite, "alpha");
    let url = c.new_db("twice");
    let first = push(&lite, &mut pg(&url));
    assert_eq!((first.runs_new, first.tests_pushed, first.tests_present), (3, 4, 0));
    let again = push(&lite, &mut pg(&url));
    assert_eq!((again.runs_new, again.runs_updated, again.tests_pushed, again.tests_present), (0, 0, 0, 4));
    let shared = pg(&url);
    for id in &ids {
        assert_eq!(shared.load_run(*id).unwrap(), lite.load_run(*id).unwrap(), "run {id}");
        assert_eq!(shared.run_uid(*id).unwrap(), lite.run_uid(*id).unwrap());
    }
    assert_eq!(c.query("twice", "SELECT COUNT(*) FROM tests"), "4");
    assert_eq!(c.query("twice", "SELECT COUNT(*) FROM samples"), "8");
    assert_eq!(c.query("twice", "SELECT COUNT(*) FROM sweep_points"), "2");
}

#[test]
fn a_run_pushed_while_running_gets_its_later_tests_and_status() {
    let Some(c) = pg_cluster::shared() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut lite = sqlite(dir.path(), "a.db");
    let url = c.new_db("later");
    let id = lite.begin_run(&record("beta"), RunKind::Test, "h:1").unwrap();
    lite.add_test(id, &result(1e9)).unwrap();
    push(&lite, &mut pg(&url));
    lite.add_test(id, &result(2e9)).unwrap();
    lite.finish_run(id, RunStatus::Complete, None, 5000).unwrap();
    let c2 = push(&lite, &mut pg(&url));
    assert_eq!((c2.runs_new, c2.runs_updated, c2.tests_pushed, c2.tests_present), (0, 1, 1, 1));
    assert_eq!(pg(&url).load_run(id).unwrap(), lite.load_run(id).unwrap());
    assert_eq!(pg(&url).list_runs(&RunFilter::default()).unwrap()[0].status, "complete");
}

#[test]
fn two_hosts_pushing_the_same_archive_at_once_store_it_once() {
    let Some(c) = pg_cluster::shared() else { return };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.db");
    let mut lite = Store::open(&path).unwrap();
    for _ in 0..5 {
        fill(&mut lite, "gamma");
    }
    let url = c.new_db("racing");
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let (path, url) = (path.clone(), url.clone());
            std::thread::spawn(move || {
                Store::open(&path).unwrap().push_to(&mut pg(&url), 3, &mut |_| {}).unwrap()
            })
        })
        .collect();
    let total: u64 = handles.into_iter().map(|h| h.join().unwrap().tests_pushed).sum();
    assert_eq!(total, 20);
    assert_eq!(c.query("racing", "SELECT COUNT(*) || ' ' || COUNT(DISTINCT uid) FROM tests"), "20 20");
    assert_eq!(c.query("racing", "SELECT COUNT(*) FROM runs"), "15");
}

#[test]
fn a_bad_url_or_a_stopped_server_is_one_clear_error() {
    let err = Store::open(Path::new("postgres://nobody@127.0.0.1:1/none")).unwrap_err();
    assert!(err.is_unusable_archive(), "{err}");
    let text = err.to_string();
    assert!(text.starts_with("connecting to the archive postgres://nobody@127.0.0.1:1/none: "), "{text}");
    let err = Store::open(Path::new("postgres://u:secret@127.0.0.1:1/none")).unwrap_err().to_string();
    assert!(!err.contains("secret"), "{err}");
}

/// A sweep point measured again after a push (a study's `--remeasure-stolen`): the next push
/// gives PostgreSQL's point the newer test and keeps the first; an older one never replaces it.
#[test]
fn a_point_measured_again_is_pushed_over_the_older_one() {
    let Some(c) = pg_cluster::shared() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut lite = sqlite(dir.path(), "a.db");
    let ids = fill(&mut lite, "gamma");
    let url = c.new_db("again");
    push(&lite, &mut pg(&url));
    let mut later = result(5e8);
    later.started_unix_ms += 1000;
    lite.add_point_again_as(ids[1], &point(2, 5e8), &later, &store::ids::new_uid().unwrap()).unwrap();
    let pushed = push(&lite, &mut pg(&url));
    assert_eq!(pushed.tests_pushed, 1);
    let shared = pg(&url);
    assert_eq!(shared.load_run(ids[1]).unwrap(), lite.load_run(ids[1]).unwrap());
    assert_eq!(c.query("again", "SELECT COUNT(*) FROM sweep_points"), "2");
    assert_eq!(c.query("again", "SELECT COUNT(*) FROM tests WHERE goodput_bps = 300000000"), "1");
    let holds = "SELECT t.goodput_bps FROM sweep_points p JOIN tests t ON t.id = p.test_id WHERE p.point = 2";
    assert_eq!(c.query("again", holds), "500000000");
    let listed = shared.list_runs(&store::RunFilter::default()).unwrap();
    let sweep = listed.iter().find(|r| r.id == ids[1]).unwrap();
    assert_eq!(sweep.tests, 2, "the points, not the superseded test");
}

/// Two archives holding the same run, already pushed, each with a different new test at the
/// same place (a copy measured on after it was made) pushed at once: both tests are stored, the later one at a free place,
/// and neither push fails on the run's unique places.
#[test]
fn two_copies_of_a_run_with_different_tests_pushed_at_once_store_both() {
    let Some(c) = pg_cluster::shared() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    let run = fill(&mut Store::open(&a).unwrap(), "delta")[0];
    std::fs::copy(&a, &b).unwrap();
    let urls: Vec<String> = (0..8).map(|round| c.new_db(&format!("copies{round}"))).collect();
    for url in &urls {
        push(&Store::open(&a).unwrap(), &mut pg(url));
    }
    for (path, bps) in [(&a, 1e8), (&b, 2e8)] {
        Store::open(path).unwrap().add_test(run, &result(bps)).unwrap();
    }
    for (round, url) in urls.iter().enumerate() {
        let name = format!("copies{round}");
        let gate = std::sync::Arc::new(std::sync::Barrier::new(2));
        let handles: Vec<_> = [&a, &b]
            .into_iter()
            .map(|path| {
                let (path, url, gate) = (path.clone(), url.clone(), gate.clone());
                std::thread::spawn(move || {
                    let (from, mut to) = (Store::open(&path).unwrap(), pg(&url));
                    gate.wait();
                    from.push_to(&mut to, 1, &mut |_| {}).map_err(|e| e.to_string())
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap().unwrap_or_else(|e| panic!("round {round}: {e}"));
        }
        let seqs = "SELECT string_agg(seq::text, ' ' ORDER BY seq) FROM tests GROUP BY run_id ORDER BY COUNT(*) DESC LIMIT 1";
        assert_eq!(c.query(&name, seqs), "0 1 2 3", "round {round}");
    }
}
