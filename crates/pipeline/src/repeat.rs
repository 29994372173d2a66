//! Repeat-until-confident around one test (netperf `-i`/`-I` semantics,
//! measurement-methods.md §1): run at least MIN times, then until every judged metric's
//! confidence interval is narrow enough or MAX runs are done; report the means.

use engine::client::ClientOptions;
use engine::{Observer, StopFlag};
use results::{ConfidenceTarget, HostInfo, Status, TestResult, TestSpec};

/// How long an iteration retries a server still busy with the previous one.
const BUSY_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// How one iteration runs: `engine::run_test` (a tcplab server) or `engine::iperf3::run_test`.
pub type Runner =
    fn(&ClientOptions, &TestSpec, &mut dyn Observer, &StopFlag) -> (TestResult, Option<HostInfo>);

/// Runs `spec` once, or repeatedly until `target` is met. An iteration that fails or is
/// interrupted ends the loop; the iterations completed before it are kept in the result,
/// which then carries that iteration's status and error.
pub fn run(
    opts: &ClientOptions,
    spec: &TestSpec,
    target: Option<&ConfidenceTarget>,
    observer: &mut dyn Observer,
    stop: &StopFlag,
) -> (TestResult, Option<HostInfo>) {
    run_with(engine::run_test, opts, spec, target, observer, stop)
}

/// [`run`] with each iteration run by `runner`.
pub fn run_with(
    runner: Runner,
    opts: &ClientOptions,
    spec: &TestSpec,
    target: Option<&ConfidenceTarget>,
    observer: &mut dyn Observer,
    stop: &StopFlag,
) -> (TestResult, Option<HostInfo>) {
    let Some(target) = target else { return runner(opts, spec, observer, stop) };
    // The server frees its slot as it sends results; the next iteration may arrive first.
    let opts = &ClientOptions { busy_wait: opts.busy_wait.max(BUSY_WAIT), ..opts.clone() };
    repeated(spec, target, &mut || runner(opts, spec, observer, stop))
}

/// [`run`] for a third-party test: `ends.from` runs `spec` against `ends.to_*`.
pub fn third_party(
    ends: &engine::third_party::Ends,
    spec: &TestSpec,
    target: Option<&ConfidenceTarget>,
    stop: &StopFlag,
) -> (TestResult, Option<HostInfo>) {
    let Some(target) = target else { return engine::third_party::run(ends, spec, stop) };
    let mut ends = ends.clone();
    ends.from.busy_wait = ends.from.busy_wait.max(BUSY_WAIT);
    repeated(spec, target, &mut || engine::third_party::run(&ends, spec, stop))
}

/// Runs `once` until `target` is met (or an iteration fails).
fn repeated(
    spec: &TestSpec,
    target: &ConfidenceTarget,
    once: &mut dyn FnMut() -> (TestResult, Option<HostInfo>),
) -> (TestResult, Option<HostInfo>) {
    let mut runs: Vec<TestResult> = Vec::new();
    let mut host = None;
    loop {
        let (r, h) = once();
        host = host.or(h);
        if r.status != Status::Completed {
            return (ended_early(target, runs, r), host);
        }
        runs.push(r);
        let est = stats::confidence::estimates(target, &runs);
        if !stats::confidence::another(target, runs.len() as u32, &est) {
            break;
        }
    }
    let combined = stats::confidence::combine(target, runs);
    (combined.unwrap_or_else(|| unreachable_empty(spec)), host)
}

fn ended_early(target: &ConfidenceTarget, runs: Vec<TestResult>, bad: TestResult) -> TestResult {
    match stats::confidence::combine(target, runs) {
        Some(mut out) => {
            out.status = bad.status;
            out.error = bad.error;
            out
        }
        None => bad,
    }
}

/// `combine` of a non-empty list never returns `None`; this keeps the code panic-free.
fn unreachable_empty(spec: &TestSpec) -> TestResult {
    TestResult {
        status: Status::Failed,
        error: Some(results::TestError { code: "internal".into(), message: "no iterations ran".into() }),
        ..TestResult::new(engine::registry::label(spec), spec.clone(), String::new(), 0)
    }
}
