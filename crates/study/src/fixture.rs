//! Test results for the studies' ground-truth tests: one shape of a repeated case, one
//! outcome, so each judge's tests say only what their numbers are.

use results::{DirectionSummary, Repetition, TestResult, TestSpec};

use crate::plan::{self, Case, Mode};
use crate::{Done, Options, Outcome};

/// A quick run's outcome with these cases done.
pub fn outcome(done: Vec<Done>) -> Outcome {
    Outcome { mode: Mode::Quick, host: None, done, skipped: Vec::new(), run_id: None }
}

/// `r` as the finished case `key`.
pub fn done(key: &str, r: TestResult) -> Done {
    Done { stage: "s".into(), case: Case::new(key, r.spec.clone()), result: r, rtt: None }
}

/// A case of `spec` repeated once per value, each run made by `one`; the first run's
/// figures stand as the case's own, as a repeated result's headline does.
pub fn repeated<T>(spec: &TestSpec, values: &[T], one: impl Fn(&TestSpec, &T) -> TestResult) -> TestResult {
    let runs: Vec<TestResult> = values.iter().map(|v| one(spec, v)).collect();
    let mut r = runs.first().cloned().unwrap_or_else(|| TestResult::new("none", spec.clone(), "h:1", 0));
    let iterations = runs.len() as u32;
    r.repetition = Some(Repetition {
        target: plan::times(3),
        iterations,
        met: true,
        estimates: Vec::new(),
        runs,
        set_aside: Vec::new(),
    });
    r
}

/// A stream of `spec` whose receiver got `mbps` Mbit/s.
pub fn stream_run(spec: &TestSpec, mbps: &f64) -> TestResult {
    let mut r = TestResult::new("stream", spec.clone(), "h:1", 0);
    r.summary.directions = vec![DirectionSummary { receiver_bps: mbps * 1e6, ..DirectionSummary::default() }];
    r
}

/// A stream case of `spec` repeated once per value of `mbps`.
pub fn streams(spec: &TestSpec, mbps: &[f64]) -> TestResult {
    repeated(spec, mbps, stream_run)
}

/// Options of an emulated run in `mode`, `-t seconds` if given, nothing else set.
pub fn options(mode: Mode, seconds: Option<u64>) -> Options {
    Options {
        mode,
        host: None,
        inventory: None,
        key: None,
        seconds,
        report: None,
        storage: pipeline::Storage::default(),
        resume: None,
        remeasure_stolen: false,
    }
}

/// A copy of the archive of full runs kept in `bench/full-runs/` (with its write-ahead log
/// while a sitting writes it), opened; the directory must outlive the store.
pub fn kept_archive() -> (tempfile::TempDir, store::Store) {
    let kept = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/full-runs");
    let dir = tempfile::tempdir().unwrap();
    for name in ["studies.db", "studies.db-wal"].iter().filter(|n| kept.join(n).exists()) {
        std::fs::copy(kept.join(name), dir.path().join(name)).unwrap();
    }
    let st = store::Store::open(&dir.path().join("studies.db")).unwrap();
    (dir, st)
}
