//! The path summary (schema 9) on SQLite and on a real PostgreSQL server: kept on every insert
//! (by writes and by pushes, a late older result not hiding a newer one), equal to what the
//! stored results say, and back-filled for an archive written before it existed.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

#[path = "support/fixtures.rs"]
mod fixtures;
#[path = "support/pg_cluster.rs"]
mod pg_cluster;

use std::collections::BTreeMap;
use std::path::Path;

use fixtures::{record, result};
use results::Status;
use stats::regression::Moments;
use store::summary::{Day, Latest, DAY_MS};
use store::{RunKind, RunStatus, Store};

const T0: u64 = 1_700_000_000_000;

/// Three paths over four days, every 5 h: goodput varying by path and time; the newest test of
/// path "b → s2:1" failed; an interrupted test (never summarised) newest on path "a → s1:1".
fn fill(st: &mut Store) {
    for k in 0..20u64 {
        for (p, (host, server)) in [("a", "s1:1"), ("a", "s2:1"), ("b", "s2:1")].into_iter().enumerate() {
            let at = T0 + k * 5 * 3_600_000 + p as u64;
            let run = st.begin_run(&record(host), RunKind::Test, server).unwrap();
            let mut r = result(1e9 + 1e7 * ((k * 7 + p as u64) % 11) as f64);
            r.started_unix_ms = at;
            r.summary.directions[0].retransmits = Some(k * 3 + p as u64);
            r.summary.directions[0].rtt_mean_us = (k % 4 != 0).then_some(100 + k as u32);
            if k == 19 && p == 2 {
                r.status = Status::Failed;
                r.summary.headline = None;
            }
            st.add_test(run, &r).unwrap();
            if k == 19 && p == 0 {
                let mut i = result(1.0);
                (i.started_unix_ms, i.status) = (at + 10, Status::Interrupted);
                st.add_test(run, &i).unwrap();
            }
            st.finish_run(run, RunStatus::Complete, None, at + 1000).unwrap();
        }
    }
    for inventory in ["east.toml", "west.toml", "east.toml"] {
        let run = st.begin_run(&record("a"), RunKind::Sweep, "mesh").unwrap();
        let mesh = results::MeshPlan { inventory: inventory.into(), hosts: Vec::new(), cells: Vec::new() };
        let plan = results::SweepPlan {
            base: results::TestSpec::new(results::TestKind::TcpStream),
            axes: Vec::new(),
            confidence: None,
            metric: "goodput_bps".into(),
            mesh: Some(mesh),
        };
        st.begin_sweep(run, &plan).unwrap();
    }
}

/// The newest mesh round per inventory: runs 63 (east, after 61) and 62 (west).
fn meshes_found(st: &Store, what: &str) {
    let want = vec![("east.toml".to_string(), 63), ("west.toml".to_string(), 62)];
    assert_eq!(st.latest_meshes().unwrap(), want, "{what}");
}

/// The summary as the stored results say it should be.
/// Per (sender, receiver, UTC day): the moments of its completed results.
type DayMoments = BTreeMap<(String, String, u64), Moments>;

fn expected(st: &Store) -> (Vec<Latest>, DayMoments) {
    let all = st.path_results(0).unwrap();
    let mut latest: BTreeMap<(String, String), &store::PathResult> = BTreeMap::new();
    let mut days: BTreeMap<(String, String, u64), Vec<f64>> = BTreeMap::new();
    for r in &all {
        latest.insert((r.sender.clone(), r.receiver.clone()), r);
        if let (Some(v), "completed") = (r.value, r.status.as_str()) {
            let day = r.started_unix_ms - r.started_unix_ms % DAY_MS;
            days.entry((r.sender.clone(), r.receiver.clone(), day)).or_default().push(v);
        }
    }
    let latest = latest
        .values()
        .map(|r| Latest {
            sender: r.sender.clone(),
            receiver: r.receiver.clone(),
            test: r.test.clone(),
            label: r.label.clone(),
            test_id: r.test_id,
            run: r.run,
            started_unix_ms: r.started_unix_ms,
            status: r.status.clone(),
            metric: r.metric.clone(),
            value: r.value,
        })
        .collect();
    (latest, days.into_iter().map(|(k, v)| (k, Moments::of(&v))).collect())
}

fn check(st: &Store, what: &str) {
    let (latest, days) = expected(st);
    let found = st.latest_per_path().unwrap();
    assert_eq!(found.len(), 3, "{what}");
    for (f, e) in found.iter().zip(&latest) {
        assert_eq!(Latest { test_id: e.test_id, run: e.run, ..f.clone() }, *e, "{what}");
    }
    assert_eq!(found[2].status, "failed", "{what}");
    let got: Vec<Day> = st.path_days(0, None).unwrap();
    assert_eq!(got.len(), days.len(), "{what}");
    for d in &got {
        let m = days[&(d.sender.clone(), d.receiver.clone(), d.day_unix_ms)];
        assert_eq!(d.n, m.n, "{what}: {d:?}");
        assert!((d.mean - m.mean).abs() < 1e-3, "{what}: {d:?} vs {m:?}");
        assert!((d.m2 - m.m2).abs() <= 1e-9 * m.m2.max(1.0), "{what}: {d:?} vs {m:?}");
    }
    let one = st.path_days(T0 + 2 * DAY_MS + 5, Some(("a", "s1:1"))).unwrap();
    assert!(
        !one.is_empty() && one.iter().all(|d| d.day_unix_ms >= T0 + 2 * DAY_MS - (T0 + 2 * DAY_MS) % DAY_MS)
    );
    assert!(one.iter().all(|d| (d.sender.as_str(), d.receiver.as_str()) == ("a", "s1:1")));
    details(st, what);
}

/// Each result's lean details (schema 10) are what its stored result says.
fn details(st: &Store, what: &str) {
    let all = st.path_detail(0, None, None).unwrap();
    assert_eq!(all.len(), 60, "{what}");
    let mut with_rtt = 0;
    for r in &all {
        let run = st.load_run(r.run).unwrap();
        let stored = run.tests.iter().find(|t| t.started_unix_ms == r.started_unix_ms).unwrap();
        let dir = stored.summary.directions.first();
        let want = store::Detail {
            retransmits: dir.and_then(|d| d.retransmits).map(|v| v as f64),
            rtt_mean_us: dir.and_then(|d| d.rtt_mean_us).map(f64::from),
            p50_us: None,
            p99_us: None,
        };
        assert_eq!(r.detail, want, "{what}: {r:?}");
        with_rtt += usize::from(want.rtt_mean_us.is_some());
    }
    assert_eq!(with_rtt, 45, "{what}");
}

#[test]
fn sqlite_summary_is_kept_on_insert_and_back_filled() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.db");
    let mut st = Store::open(&path).unwrap();
    fill(&mut st);
    check(&st, "kept on insert");
    meshes_found(&st, "kept on insert");
    let before = (st.latest_per_path().unwrap(), st.path_days(0, None).unwrap());
    drop(st);
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "DROP TABLE path_latest; DROP TABLE path_days; DROP INDEX sweeps_inventory;
         ALTER TABLE sweeps DROP COLUMN inventory; PRAGMA user_version = 8;
         ALTER TABLE tests DROP COLUMN retransmits; ALTER TABLE tests DROP COLUMN rtt_mean_us;
         ALTER TABLE tests DROP COLUMN p50_us; ALTER TABLE tests DROP COLUMN p99_us",
    )
    .unwrap();
    drop(conn);
    let st = Store::open(&path).unwrap();
    check(&st, "back-filled");
    meshes_found(&st, "back-filled");
    assert_eq!(st.latest_per_path().unwrap(), before.0);
    assert_eq!(st.path_days(0, None).unwrap().len(), before.1.len());
}

#[test]
fn postgres_summary_is_kept_on_insert_and_push_and_back_filled() {
    let Some(c) = pg_cluster::shared() else { return };
    let url = c.new_db("summary");
    let mut shared = Store::open(Path::new(&url)).unwrap();
    fill(&mut shared);
    check(&shared, "postgres, kept on insert");
    meshes_found(&shared, "postgres, kept on insert");
    drop(shared);
    c.query(
        "summary",
        "DROP TABLE path_latest; DROP TABLE path_days; ALTER TABLE sweeps DROP COLUMN inventory;
         ALTER TABLE tests DROP COLUMN retransmits, DROP COLUMN rtt_mean_us, DROP COLUMN p50_us,
             DROP COLUMN p99_us;
         UPDATE tcplab_schema SET version = 8",
    );
    let shared = Store::open(Path::new(&url)).unwrap();
    check(&shared, "postgres, back-filled");
    meshes_found(&shared, "postgres, back-filled");
    // Pushed from SQLite: newest first then an older one, which must not replace it.
    let dir = tempfile::tempdir().unwrap();
    let mut lite = Store::open(&dir.path().join("b.db")).unwrap();
    let add = |lite: &mut Store, at: u64| {
        let run = lite.begin_run(&record("c"), RunKind::Test, "s3:1").unwrap();
        let mut r = result(7e8);
        r.started_unix_ms = at;
        r.summary.directions[0].retransmits = Some(7);
        lite.add_test(run, &r).unwrap();
        lite.finish_run(run, RunStatus::Complete, None, at + 1).unwrap();
    };
    add(&mut lite, T0 + 9 * DAY_MS);
    let mut shared = Store::open(Path::new(&url)).unwrap();
    lite.push_to(&mut shared, 2, &mut |_| {}).unwrap();
    add(&mut lite, T0);
    lite.push_to(&mut shared, 2, &mut |_| {}).unwrap();
    let c3: Vec<Latest> = shared.latest_per_path().unwrap().into_iter().filter(|l| l.sender == "c").collect();
    assert_eq!(c3.len(), 1);
    assert_eq!(c3[0].started_unix_ms, T0 + 9 * DAY_MS);
    assert_eq!(shared.path_days(0, Some(("c", "s3:1"))).unwrap().len(), 2);
    let pushed = shared.path_detail(0, Some("c"), None).unwrap();
    assert_eq!(pushed.len(), 2);
    assert!(pushed.iter().all(|r| r.detail.retransmits == Some(7.0)), "details kept on push: {pushed:?}");
}
