//! Repeat-until-confident around one test (netperf `-i`/`-I` semantics,
//! measurement-methods.md §1): run at least MIN times, then until every judged metric's
//! confidence interval is narrow enough or MAX runs are done; report the means.

use engine::client::ClientOptions;
use engine::{Observer, StopFlag};
use results::cpu::STOLEN_PCT;
use results::{ConfidenceTarget, HostInfo, Status, TestResult, TestSpec, Warning, WarningKind};

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

/// Runs `once` until `target` is met (or an iteration fails). An iteration during which a
/// hypervisor took [`STOLEN_PCT`] or more of a host's CPU time does not count: it is set aside
/// and run again, so that a neighbour's burst on a shared host does not become a sample of
/// the path. The `max_iterations`-th set aside means the host is stolen from all along: then
/// the result is the one the loop would have given without the rule (see [`as_without_rule`]),
/// so it never counts more than `max_iterations`.
fn repeated(
    spec: &TestSpec,
    target: &ConfidenceTarget,
    once: &mut dyn FnMut() -> (TestResult, Option<HostInfo>),
) -> (TestResult, Option<HostInfo>) {
    let (mut runs, mut set_aside): (Vec<TestResult>, Vec<TestResult>) = (Vec::new(), Vec::new());
    let mut host = None;
    loop {
        let (r, h) = once();
        host = host.or(h);
        if r.status != Status::Completed {
            return (ended_early(target, runs, set_aside, r), host);
        }
        if !r.stolen_from() {
            runs.push(r);
        } else {
            set_aside.push(r);
            if set_aside.len() < target.max_iterations as usize {
                continue;
            }
            runs.append(&mut set_aside);
            return (as_without_rule(target, runs).unwrap_or_else(|| unreachable_empty(spec)), host);
        }
        let est = stats::confidence::estimates(target, &runs);
        if !stats::confidence::another(target, runs.len() as u32, &est) {
            break;
        }
    }
    let combined = stats::confidence::combine(target, runs).map(|c| with_set_aside(c, set_aside));
    (combined.unwrap_or_else(|| unreachable_empty(spec)), host)
}

/// The result of a host stolen from all along: every iteration in the order it ran, cut where
/// the loop would have stopped without the set-aside rule (at `max_iterations` at the latest),
/// each counted one with its own `cpu-stolen` warning. The iterations past that point, run
/// only because earlier ones were set aside, are kept in the repetition's `set_aside`.
fn as_without_rule(target: &ConfidenceTarget, mut runs: Vec<TestResult>) -> Option<TestResult> {
    runs.sort_by_key(|r| r.started_unix_ms);
    let stop = (1..=runs.len())
        .find(|&n| {
            let est = stats::confidence::estimates(target, &runs[..n]);
            !stats::confidence::another(target, n as u32, &est)
        })
        .unwrap_or(runs.len());
    let past = runs.split_off(stop);
    let mut combined = stats::confidence::combine(target, runs)?;
    if !past.is_empty() {
        combined.warnings.push(Warning {
            kind: WarningKind::IterationsSetAside,
            message: format!(
                "the hypervisor took {STOLEN_PCT:.0}% or more of a host's CPU time in {} iterations: every iteration counts, as without setting any aside, up to where that loop would have stopped; {} iteration(s) past it are kept apart",
                target.max_iterations,
                past.len()
            ),
            advice: "the host's CPUs are shared with other guests all along: each counted iteration carries its cpu-stolen warning; a host of its own needs none".into(),
        });
        if let Some(rep) = combined.repetition.as_mut() {
            rep.set_aside = past;
        }
    }
    Some(combined)
}

fn ended_early(
    target: &ConfidenceTarget,
    runs: Vec<TestResult>,
    set_aside: Vec<TestResult>,
    bad: TestResult,
) -> TestResult {
    match stats::confidence::combine(target, runs) {
        Some(mut out) => {
            out.status = bad.status;
            out.error = bad.error;
            with_set_aside(out, set_aside)
        }
        None => bad,
    }
}

/// `combined` with the iterations set aside kept in its repetition, and a warning that
/// says how many and how much CPU time the hypervisor took during them.
fn with_set_aside(mut combined: TestResult, set_aside: Vec<TestResult>) -> TestResult {
    if set_aside.is_empty() {
        return combined;
    }
    let stolen = set_aside.iter().map(TestResult::stolen_pct);
    let (low, high) = stolen.fold((f64::MAX, 0.0_f64), |(l, h), s| (l.min(s), h.max(s)));
    combined.warnings.push(Warning {
        kind: WarningKind::IterationsSetAside,
        message: format!(
            "{} iteration(s) set aside and run again: the hypervisor took {low:.0}–{high:.0}% of a host's CPU time during them (from {STOLEN_PCT:.0}% they do not count)",
            set_aside.len()
        ),
        advice: "the host's CPUs are shared with other guests: their results are kept in repetition.set_aside; a host of its own needs none".into(),
    });
    if let Some(rep) = combined.repetition.as_mut() {
        rep.set_aside = set_aside;
    }
    combined
}

/// `combine` of a non-empty list never returns `None`; this keeps the code panic-free.
fn unreachable_empty(spec: &TestSpec) -> TestResult {
    TestResult {
        status: Status::Failed,
        error: Some(results::TestError { code: "internal".into(), message: "no iterations ran".into() }),
        ..TestResult::new(engine::registry::label(spec), spec.clone(), String::new(), 0)
    }
}

#[cfg(test)]
mod tests {
    use results::{CpuUsage, Headline, Metric, TestKind};

    use super::*;

    /// Iterations measuring `mbps` Mbit/s while the hypervisor took `steal` % of the CPU time,
    /// in order; `None` fails.
    fn script(runs: &[Option<(f64, f64)>]) -> impl FnMut() -> (TestResult, Option<HostInfo>) + '_ {
        let mut next = runs.iter();
        move || {
            let spec = TestSpec::new(TestKind::TcpStream);
            let mut r = TestResult::new("stream", spec, "h:1", 0);
            match next.next().copied().flatten() {
                Some((mbps, steal)) => {
                    r.summary.headline = Some(Headline::measured(Metric::Goodput, mbps * 1e6));
                    r.local.cpu = Some(CpuUsage { steal_pct: steal, ..CpuUsage::default() });
                }
                None => r.status = Status::Failed,
            }
            (r, None)
        }
    }

    fn target(max: u32) -> ConfidenceTarget {
        ConfidenceTarget {
            level_pct: 99.0,
            width_pct: 5.0,
            min_iterations: 3,
            max_iterations: max,
            result_only: true,
        }
    }

    /// The headline values of the iterations that counted and of those set aside.
    fn split(r: &TestResult) -> (Vec<f64>, Vec<f64>) {
        let rep = r.repetition.as_ref().unwrap();
        let mbps = |v: &[TestResult]| v.iter().map(|r| r.summary.headline_value().unwrap() / 1e6).collect();
        (mbps(&rep.runs), mbps(&rep.set_aside))
    }

    #[test]
    fn an_iteration_the_hypervisor_took_the_cpu_from_is_set_aside_and_run_again() {
        let spec = TestSpec::new(TestKind::TcpStream);
        let runs = [Some((134.0, 0.2)), Some((90.0, 45.0)), Some((134.2, 9.9)), Some((134.1, 0.0))];
        let (r, _) = repeated(&spec, &target(10), &mut script(&runs));
        assert_eq!(split(&r), (vec![134.0, 134.2, 134.1], vec![90.0]));
        let w = r.warnings.iter().find(|w| w.kind == WarningKind::IterationsSetAside).unwrap();
        assert!(
            w.message.starts_with("1 iteration(s) set aside and run again: the hypervisor took 45–45%"),
            "{w:?}"
        );
        assert!(r.summary.headline_value().unwrap() > 134e6, "the set-aside run is not in the mean");

        // A host stolen from all along: the MAX-th set aside makes every run count, those set
        // aside too, so it takes no more runs than without the rule.
        let always = [Some((100.0, 20.0)), Some((101.0, 20.0)), Some((99.0, 20.0)), Some((1.0, 0.0))];
        let (r, _) = repeated(&spec, &target(3), &mut script(&always));
        assert_eq!(split(&r), (vec![100.0, 101.0, 99.0], vec![]));
        assert!(!r.warnings.iter().any(|w| w.kind == WarningKind::IterationsSetAside), "{:?}", r.warnings);

        // Stolen from all along after one clean run: the result is the one without the rule,
        // never more than MAX iterations; the run past MAX is kept apart.
        let later = [Some((100.0, 0.0)), Some((101.0, 20.0)), Some((99.0, 20.0)), Some((98.0, 20.0))];
        let (r, _) = repeated(&spec, &target(3), &mut script(&later));
        assert_eq!(split(&r), (vec![100.0, 101.0, 99.0], vec![98.0]));
        assert_eq!(r.repetition.as_ref().map(|rep| rep.iterations), Some(3));
        let w = r.warnings.iter().find(|w| w.kind == WarningKind::IterationsSetAside).unwrap();
        assert!(
            w.message.contains("in 3 iterations")
                && w.message.contains("; 1 iteration(s) past it are kept apart"),
            "{w:?}"
        );

        // A failed iteration ends the loop; what was set aside before it is kept.
        let failing = [Some((134.0, 0.0)), Some((80.0, 30.0)), None];
        let (r, _) = repeated(&spec, &target(10), &mut script(&failing));
        assert_eq!((r.status, split(&r)), (Status::Failed, (vec![134.0], vec![80.0])));
    }
}
