//! Repeat-until-confident (netperf `-i max,min -I level,width`, measurement-methods.md §1):
//! the per-metric estimate, the stop rule, and combining iterations into one result.
//!
//! After n iterations a metric with mean m and sample standard deviation s has the
//! confidence interval m ± t(level, n−1)·s/√n; netperf stops when the full width
//! 2·t·s/√n is at most `width` % of m for every judged metric (and n ≥ min), or at max.

use results::{ConfidenceTarget, Estimate, Headline, Repetition, Summary, TestResult, Warning, WarningKind};

use crate::student;

mod figures;

/// Mean, sample standard deviation and the `level_pct` confidence half-width of `values`
/// (half-width 0 for fewer than two values, when it is unknown).
pub fn estimate(metric: &str, values: &[f64], level_pct: f64, target_width_pct: f64) -> Estimate {
    // A non-finite value (a failed measurement) counts as 0 rather than poisoning the mean,
    // and keeps the result serialisable (JSON has no NaN).
    let values: Vec<f64> = values.iter().map(|v| if v.is_finite() { *v } else { 0.0 }).collect();
    let n = values.len();
    let mean = if n == 0 { 0.0 } else { values.iter().sum::<f64>() / n as f64 };
    let stddev = if n < 2 {
        0.0
    } else {
        (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    };
    let t = student::two_sided(level_pct / 100.0, (n as f64) - 1.0).unwrap_or(0.0);
    let half_width = if n < 2 { 0.0 } else { t * stddev / (n as f64).sqrt() };
    let width_pct = relative_width_pct(half_width, mean);
    Estimate {
        metric: metric.to_string(),
        mean,
        stddev,
        half_width,
        level_pct,
        width_pct,
        met: n >= 2 && width_pct <= target_width_pct,
        values,
    }
}

/// Full width `2·half` in % of `mean`; `f64::MAX` when the mean is 0 but the width is not.
fn relative_width_pct(half: f64, mean: f64) -> f64 {
    if half == 0.0 {
        0.0
    } else if mean == 0.0 {
        f64::MAX
    } else {
        (200.0 * half / mean).abs()
    }
}

/// Whether to run another iteration after `n`, given the estimates so far.
pub fn another(target: &ConfidenceTarget, n: u32, estimates: &[Estimate]) -> bool {
    n < target.min_iterations || (n < target.max_iterations && !estimates.iter().all(|e| e.met))
}

/// The judged metrics of one iteration: `(id, value)`, the test's headline first (when
/// measured), then local and remote CPU utilisation where measured (unless `result_only`).
pub fn metrics_of(r: &TestResult, result_only: bool) -> Vec<(&'static str, f64)> {
    let mut out: Vec<(&'static str, f64)> = match r.summary.headline {
        Some(h) => h.value.map(|v| (h.metric.id(), v)).into_iter().collect(),
        None => Vec::new(),
    };
    if !result_only {
        if let Some(c) = &r.summary.local_cost {
            out.push(("local_cpu_pct", c.util_pct));
        }
        if let Some(c) = &r.summary.remote_cost {
            out.push(("remote_cpu_pct", c.util_pct));
        }
    }
    out
}

/// The estimates after the iterations `runs`.
pub fn estimates(target: &ConfidenceTarget, runs: &[TestResult]) -> Vec<Estimate> {
    let Some(first) = runs.first() else { return Vec::new() };
    let ids: Vec<&str> = metrics_of(first, target.result_only).into_iter().map(|(id, _)| id).collect();
    ids.into_iter()
        .filter_map(|id| {
            let values: Vec<f64> = runs
                .iter()
                .map(|r| {
                    metrics_of(r, target.result_only).into_iter().find(|(m, _)| *m == id).map(|(_, v)| v)
                })
                .collect::<Option<Vec<f64>>>()?;
            Some(estimate(id, &values, target.level_pct, target.width_pct))
        })
        .collect()
}

/// One result from the iterations `runs` (at least one): the last run's measurements, a
/// summary of means, the union of warnings plus [`WarningKind::ConfidenceNotMet`] when the
/// target was missed, and the repetition itself with every run.
pub fn combine(target: &ConfidenceTarget, runs: Vec<TestResult>) -> Option<TestResult> {
    let last = runs.last()?.clone();
    let est = estimates(target, &runs);
    let met = !est.is_empty() && est.iter().all(|e| e.met);
    let mut out = last;
    out.summary = mean_summary(&runs);
    out.warnings = union_warnings(&runs);
    if !met {
        out.warnings.push(not_met_warning(target, &est, runs.len()));
    }
    out.repetition = Some(Repetition {
        target: target.clone(),
        iterations: runs.len() as u32,
        met,
        estimates: est,
        runs,
        set_aside: Vec::new(),
    });
    Some(out)
}

/// One warning of each kind any iteration had: the latest iteration's where several had
/// it, since the combined result shows the last iteration's facts (its threads' CPUs, its
/// sockets) and an earlier run's words could contradict them.
fn union_warnings(runs: &[TestResult]) -> Vec<Warning> {
    let mut out: Vec<Warning> = Vec::new();
    for w in runs.iter().rev().flat_map(|r| &r.warnings) {
        if !out.iter().any(|o| o.kind == w.kind) {
            out.push(w.clone());
        }
    }
    out
}

fn not_met_warning(target: &ConfidenceTarget, est: &[Estimate], n: usize) -> Warning {
    let widths: Vec<String> =
        est.iter().map(|e| format!("{} ±{:.1}%", e.metric, e.width_pct / 2.0)).collect();
    Warning {
        kind: WarningKind::ConfidenceNotMet,
        message: format!(
            "{}% confidence of ±{:.1}% not reached in {n} iterations (achieved: {})",
            target.level_pct,
            target.width_pct / 2.0,
            widths.join(", ")
        ),
        advice: "raise --iterations MAX, lengthen -t, or quiet the hosts".into(),
    }
}

/// Field-wise means of the headline numbers over `runs` (shape of the first run); the test
/// type's own figures combined as each declares; its own sections kept only where every run
/// has the same (each run's are in the repetition's runs).
pub fn mean_summary(runs: &[TestResult]) -> Summary {
    let Some(first) = runs.first() else { return Summary::default() };
    let n = runs.len() as f64;
    let mean = |f: &dyn Fn(&TestResult) -> Option<f64>| runs.iter().filter_map(f).sum::<f64>() / n;
    let mut s = first.summary.clone();
    for (i, d) in s.directions.iter_mut().enumerate() {
        let dir = |r: &TestResult| r.summary.directions.get(i).cloned();
        d.sender_bps = mean(&|r| dir(r).map(|d| d.sender_bps));
        d.receiver_bps = mean(&|r| dir(r).map(|d| d.receiver_bps));
        d.sender_bytes = mean(&|r| dir(r).map(|d| d.sender_bytes as f64)) as u64;
        d.receiver_bytes = mean(&|r| dir(r).map(|d| d.receiver_bytes as f64)) as u64;
        let retransmits: Option<Vec<u64>> = runs.iter().map(|r| dir(r).and_then(|d| d.retransmits)).collect();
        d.retransmits = retransmits.map(|v| (v.iter().sum::<u64>() as f64 / n).round() as u64);
    }
    for (i, d) in s.udp.iter_mut().enumerate() {
        let dir = |r: &TestResult| r.summary.udp.get(i).cloned();
        d.sender_bps = mean(&|r| dir(r).map(|d| d.sender_bps));
        d.receiver_bps = mean(&|r| dir(r).map(|d| d.receiver_bps));
        d.sender_datagrams_per_s = mean(&|r| dir(r).map(|d| d.sender_datagrams_per_s));
        d.receiver_datagrams_per_s = mean(&|r| dir(r).map(|d| d.receiver_datagrams_per_s));
        d.loss_pct = mean(&|r| dir(r).map(|d| d.loss_pct));
    }
    s.headline = first.summary.headline.map(|h| {
        let values: Option<Vec<f64>> = runs.iter().map(|r| r.summary.headline_value()).collect();
        Headline { metric: h.metric, value: values.map(|v| v.iter().sum::<f64>() / n), partial: false }
    });
    if let Some(rr) = s.rr.as_mut() {
        rr.trans_per_s = mean(&|r| r.summary.rr.as_ref().map(|x| x.trans_per_s));
        rr.transactions = mean(&|r| r.summary.rr.as_ref().map(|x| x.transactions as f64)) as u64;
        rr.rtt_from_rate_us = mean(&|r| r.summary.rr.as_ref().map(|x| x.rtt_from_rate_us));
    }
    for (cost, pick) in [
        (s.local_cost.as_mut(), (|r: &TestResult| r.summary.local_cost.clone()) as fn(&TestResult) -> _),
        (s.remote_cost.as_mut(), |r: &TestResult| r.summary.remote_cost.clone()),
    ] {
        if let Some(c) = cost {
            c.util_pct = mean(&|r| pick(r).map(|c| c.util_pct));
            c.cores_busy = mean(&|r| pick(r).map(|c| c.cores_busy));
            c.service_demand_us = mean(&|r| pick(r).map(|c| c.service_demand_us));
            c.figure_of_merit = c.figure_of_merit.map(|_| mean(&|r| pick(r).and_then(|c| c.figure_of_merit)));
        }
    }
    s.figures = figures::combine(runs);
    s.sections.retain(|k, v| runs.iter().all(|r| r.summary.sections.get(k) == Some(&*v)));
    // A type's own tables and plots are one run's: kept only where every run has the same
    // (the reports show each run's from the repetition's runs otherwise).
    if runs.iter().any(|r| r.summary.own_tables != s.own_tables || r.summary.own_plots != s.own_plots) {
        (s.own_tables, s.own_plots) = (Vec::new(), Vec::new());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use results::{DirectionSummary, TestKind, TestSpec};

    fn target(width_pct: f64, min: u32, max: u32) -> ConfidenceTarget {
        ConfidenceTarget {
            level_pct: 99.0,
            width_pct,
            min_iterations: min,
            max_iterations: max,
            result_only: false,
        }
    }

    fn run(bps: f64) -> TestResult {
        let mut summary = Summary {
            headline: Some(Headline::measured(results::Metric::Goodput, bps)),
            ..Summary::default()
        };
        summary.directions.push(DirectionSummary {
            receiver_bps: bps,
            sender_bps: bps,
            ..Default::default()
        });
        TestResult {
            status: results::Status::Completed,
            summary,
            ..TestResult::new("stream", TestSpec::new(TestKind::TcpStream), String::new(), 0)
        }
    }

    /// measurement-methods.md §1.5: netperf's worked example.
    #[test]
    fn worked_example() {
        let e = estimate("goodput_bps", &[940.0, 945.0, 938.0], 99.0, 5.0);
        assert!((e.mean - 941.0).abs() < 1e-9);
        assert!((e.stddev - 3.606).abs() < 1e-3);
        assert!((e.half_width - 20.66).abs() < 0.02, "{}", e.half_width);
        assert!((e.width_pct - 4.39).abs() < 0.01 && e.met);
        assert!(!estimate("x", &[940.0, 945.0, 938.0], 99.0, 2.0).met);
        let e = estimate("x", &[940.0, 945.0, 938.0, 950.0, 942.0], 99.0, 2.0);
        assert!((e.width_pct - 2.05).abs() < 0.01 && !e.met, "{}", e.width_pct);
    }

    #[test]
    fn stop_rule_follows_netperf() {
        let met = [estimate("x", &[1.0, 1.0, 1.0], 99.0, 5.0)];
        let missed = [estimate("x", &[1.0, 2.0, 3.0], 99.0, 5.0)];
        assert!(another(&target(5.0, 3, 10), 2, &met), "below min");
        assert!(!another(&target(5.0, 3, 10), 3, &met));
        assert!(another(&target(5.0, 3, 10), 3, &missed));
        assert!(!another(&target(5.0, 3, 10), 10, &missed), "at max");
    }

    #[test]
    fn combine_means_and_warns_when_missed() {
        let r = combine(&target(1.0, 3, 3), vec![run(1.0), run(2.0), run(3.0)]).unwrap_or_else(|| run(0.0));
        assert_eq!(r.summary.goodput_bps(), 2.0);
        let rep = r.repetition.as_ref().map(|x| (x.iterations, x.met, x.runs.len()));
        assert_eq!(rep, Some((3, false, 3)));
        assert!(r.warnings.iter().any(|w| w.kind == WarningKind::ConfidenceNotMet));
        let ok = combine(&target(5.0, 3, 3), vec![run(5.0), run(5.0), run(5.0)]).unwrap_or_else(|| run(0.0));
        assert!(ok.warnings.is_empty());
        assert!(combine(&target(5.0, 3, 3), Vec::new()).is_none());
    }

    /// The combined result shows the last iteration's facts (its threads' CPUs), so a warning
    /// several iterations gave is the last one's words; a kind only an earlier one had stays.
    #[test]
    fn combined_warnings_are_the_latest_of_each_kind() {
        let warned = |bps: f64, placed: &str, extra: bool| {
            let mut r = run(bps);
            let w = |kind, message: &str| Warning { kind, message: message.into(), advice: String::new() };
            r.warnings.push(w(WarningKind::Unpinned, placed));
            if extra {
                r.warnings.push(w(WarningKind::SameHost, "shared"));
            }
            r
        };
        let runs = vec![warned(1.0, "client on CPU 1", true), warned(1.0, "client on CPU 0", false)];
        let r = combine(&target(5.0, 2, 2), runs).unwrap_or_else(|| run(0.0));
        let said: Vec<(WarningKind, &str)> =
            r.warnings.iter().map(|w| (w.kind, w.message.as_str())).collect();
        assert_eq!(said, vec![(WarningKind::Unpinned, "client on CPU 0"), (WarningKind::SameHost, "shared")]);
    }

    /// A repeated `file` test: its own times are averaged with their spread, not the first
    /// run's; words that agree stay one value, words that differ are listed per run; a
    /// section that differs between runs is not carried beside the means.
    #[test]
    fn repeats_combine_each_figure_as_declared() {
        use results::{Combine, Figure, FigureValue as V};
        let file_run = |disk_s: f64, verdict: &str, size: u64| {
            let mut r = run(1.0);
            r.summary.figures = vec![
                Figure::new("file size", V::Bytes(size)).combined(Combine::PerRun),
                Figure::new("verification", V::Text(verdict.into())),
                Figure::new("receiver disk time", V::Seconds(disk_s)),
                Figure::new("note", V::Text("a".into())),
                Figure::new("note", V::Text(format!("took {disk_s}"))),
            ];
            r.summary.sections.insert("file".into(), disk_s.to_string().into());
            r.summary.sections.insert("same".into(), "x".into());
            r
        };
        let runs = vec![file_run(1.0, "ok", 10), file_run(2.0, "ok", 10), file_run(6.0, "ok", 10)];
        let s = mean_summary(&runs);
        let get = |label: &str, k: usize| s.figures.iter().filter(|f| f.label == label).nth(k).cloned();
        let disk = get("receiver disk time", 0).unwrap_or_else(|| Figure::new("missing", V::Count(0)));
        assert_eq!(disk.value, V::Seconds(3.0));
        let spread = disk.spread.map(|p| (p.runs, p.min, p.max, (p.stddev - 7f64.sqrt()).abs() < 1e-9));
        assert_eq!(spread, Some((3, 1.0, 6.0, true)));
        let size = get("file size", 0).map(|f| (f.value, f.spread, f.per_run));
        assert_eq!(size, Some((V::Bytes(10), None, Vec::new())), "declared per run, all the same");
        assert_eq!(get("verification", 0).map(|f| f.per_run.len()), Some(0));
        assert_eq!(get("note", 0).map(|f| f.per_run.len()), Some(0));
        let took: Vec<V> = ["took 1", "took 2", "took 6"].iter().map(|t| V::Text(t.to_string())).collect();
        assert_eq!(get("note", 1).map(|f| f.per_run), Some(took));
        assert_eq!(s.figures.len(), 5);
        assert!(!s.sections.contains_key("file") && s.sections.contains_key("same"), "{:?}", s.sections);
    }

    proptest! {
        #[test]
        fn mean_lies_within_the_values_and_width_is_scale_free(
            values in prop::collection::vec(1.0f64..1e6, 2..40),
            scale in 0.001f64..1000.0,
        ) {
            let e = estimate("x", &values, 95.0, 5.0);
            let (lo, hi) = values.iter().fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(*v), b.max(*v)));
            prop_assert!(e.mean >= lo - 1e-9 && e.mean <= hi + 1e-9);
            prop_assert!(e.half_width >= 0.0 && e.lower() <= e.mean && e.upper() >= e.mean);
            let scaled: Vec<f64> = values.iter().map(|v| v * scale).collect();
            let s = estimate("x", &scaled, 95.0, 5.0);
            prop_assert!((s.width_pct - e.width_pct).abs() <= 1e-6 * e.width_pct.max(1.0));
        }

        #[test]
        fn estimates_are_always_finite(values in prop::collection::vec(prop::num::f64::ANY, 0..10)) {
            let e = estimate("x", &values, 99.0, 5.0);
            prop_assert!(e.mean.is_finite() || values.iter().any(|v| v.abs() > 1e300));
            prop_assert!(e.values.iter().all(|v| v.is_finite()));
        }

        #[test]
        fn higher_level_means_wider_interval(values in prop::collection::vec(1.0f64..100.0, 3..20)) {
            let a = estimate("x", &values, 90.0, 5.0);
            let b = estimate("x", &values, 99.0, 5.0);
            prop_assert!(b.half_width >= a.half_width);
        }

        #[test]
        fn iterations_stay_within_min_and_max(
            values in prop::collection::vec(1.0f64..100.0, 30),
            min in 1u32..10, extra in 0u32..10, width in 0.1f64..50.0,
        ) {
            let t = target(width, min, min + extra);
            let mut n = 0u32;
            while n == 0 || another(&t, n, &[estimate("x", &values[..n as usize], 99.0, width)]) {
                n += 1;
            }
            prop_assert!(n >= min && n <= min + extra);
        }
    }
}
