//! A sweep point measured again (a study's `--remeasure-stolen`) in real SQLite files: the
//! point holds the new test and the run keeps the first; a push carries the newer test to an
//! archive that had the first, never an older one over a newer, and a point measured again in
//! a spool (where the run's first tests are not) joins the archive without a clash.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

#[path = "support/fixtures.rs"]
mod fixtures;
use fixtures::{point, record, result};
use results::{Axis, ParamValue, SweepPlan, TestKind, TestResult, TestSpec};
use store::{ids::new_uid, Owner, RunKind, Store};

fn plan() -> SweepPlan {
    let values = (0..4).map(ParamValue::Int).collect();
    let axis = Axis { name: "case".into(), tied: Vec::new(), values, text: String::new() };
    SweepPlan {
        base: TestSpec::new(TestKind::TcpStream),
        axes: vec![axis],
        confidence: None,
        metric: "goodput_bps".into(),
        mesh: None,
    }
}

/// A result of `bps` that started at `at` ms.
fn at(bps: f64, at: u64) -> TestResult {
    let mut r = result(bps);
    r.started_unix_ms = at;
    r
}

/// Point `index`'s goodput as the archive's run `id` has it, and the goodputs of all the
/// run's tests, in order.
fn holds(st: &Store, id: i64, index: u32) -> (f64, Vec<f64>) {
    let run = st.load_run(id).unwrap();
    let points = &run.sweep.as_ref().unwrap().points;
    let p = points.iter().find(|p| p.index == index).unwrap();
    let tests: Vec<f64> = run.tests.iter().map(|t| t.summary.goodput_bps()).collect();
    (run.tests[p.test_index as usize].summary.goodput_bps(), tests)
}

fn owner() -> Owner {
    Owner { pid: 1, pid_start: None, boot_id: "b".into(), hostname: "here".into() }
}

#[test]
fn a_point_measured_again_holds_the_new_test_and_the_run_keeps_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Store::open(&dir.path().join("r.db")).unwrap();
    let id = st.begin_run(&record("here"), RunKind::Sweep, "h:1").unwrap();
    st.begin_sweep(id, &plan()).unwrap();
    st.add_point(id, &point(1, 1.0), &at(1.0, 10)).unwrap();
    st.add_point(id, &point(2, 5.0), &at(5.0, 20)).unwrap();
    // Not stored yet: written as a first measurement.
    st.add_point_again_as(id, &point(3, 3.0), &at(3.0, 30), &new_uid().unwrap()).unwrap();
    st.add_point_again_as(id, &point(1, 2.0), &at(2.0, 40), &new_uid().unwrap()).unwrap();
    assert_eq!(st.finished_points(id).unwrap(), vec![1, 2, 3]);
    assert_eq!(holds(&st, id, 1), (2.0, vec![1.0, 5.0, 3.0, 2.0]));
    assert_eq!(holds(&st, id, 2).0, 5.0);
    let sweep = st.load_sweep(id).unwrap();
    assert_eq!(sweep.points.iter().find(|p| p.index == 1).unwrap().headline.mean, 2.0);
    // A plain write of a stored point is still refused.
    assert!(matches!(
        st.add_point(id, &point(1, 9.0), &at(9.0, 50)),
        Err(store::Error::Duplicate { point: 1, .. })
    ));
    // A third measurement: the newest holds, every earlier one is kept.
    st.add_point_again_as(id, &point(1, 4.0), &at(4.0, 60), &new_uid().unwrap()).unwrap();
    assert_eq!(holds(&st, id, 1), (4.0, vec![1.0, 5.0, 3.0, 2.0, 4.0]));
    // `history` counts the points stored, not the superseded tests kept beside them.
    let listed = st.list_runs(&store::RunFilter::default()).unwrap();
    assert_eq!((listed[0].tests, listed[0].points_total), (3, Some(4)));
}

#[test]
fn a_push_carries_the_newer_measurement_and_never_an_older_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut here = Store::open(&dir.path().join("here.db")).unwrap();
    let mut shared = Store::open(&dir.path().join("shared.db")).unwrap();
    let id = here.begin_run(&record("here"), RunKind::Sweep, "h:1").unwrap();
    here.begin_sweep(id, &plan()).unwrap();
    here.add_point(id, &point(0, 1.0), &at(1.0, 10)).unwrap();
    here.add_point(id, &point(1, 7.0), &at(7.0, 15)).unwrap();
    here.push_to(&mut shared, 10, &mut |_| {}).unwrap();
    assert_eq!(holds(&shared, id, 0).0, 1.0);

    // Measured again here: the push brings the new test and the point takes it.
    here.add_point_again_as(id, &point(0, 2.0), &at(2.0, 20), &new_uid().unwrap()).unwrap();
    let pushed = here.push_to(&mut shared, 10, &mut |_| {}).unwrap();
    assert_eq!((pushed.tests_pushed, pushed.tests_present), (1, 2));
    assert_eq!(holds(&shared, id, 0), (2.0, vec![1.0, 7.0, 2.0]));

    // Measured again in a spool, which holds the run under its stable id but none of its
    // first tests: the spool's test takes the first free place in the archive's run.
    let mut spool = Store::open(&dir.path().join("spool.db")).unwrap();
    let uid = here.run_uid(id).unwrap();
    let sid = spool.begin_run_as(&record("here"), RunKind::Sweep, "h:1", &owner(), &uid).unwrap();
    spool.begin_sweep(sid, &plan()).unwrap();
    spool.add_point_again_as(sid, &point(1, 8.0), &at(8.0, 30), &new_uid().unwrap()).unwrap();
    spool.push_to(&mut shared, 10, &mut |_| {}).unwrap();
    assert_eq!(holds(&shared, id, 1), (8.0, vec![1.0, 7.0, 2.0, 8.0]));
    assert_eq!(holds(&shared, id, 0).0, 2.0);

    // The first archive pushed again: its point 1 (7.0, older) does not replace the 8.0.
    let again = here.push_to(&mut shared, 10, &mut |_| {}).unwrap();
    assert_eq!((again.tests_pushed, again.tests_present), (0, 3));
    assert_eq!(holds(&shared, id, 1), (8.0, vec![1.0, 7.0, 2.0, 8.0]));
}
