//! `tcplab compare A B`: per test and metric, B − A with a Welch confidence interval and a
//! verdict; `--fail-if-slower PCT` exits 1 when B is significantly slower by more than PCT %.
//!
//! Samples of a metric: the per-iteration values of a repeated test (`-I`), else the
//! per-interval rates of the measured window (autocorrelated, so the interval is optimistic:
//! repeat with `-I` for a sound comparison), else the single summary value (no interval).

use std::process::ExitCode;

use anyhow::{bail, Result};
use report::compare::Row;
use results::{RunRecord, TestResult};

use crate::args::CompareArgs;
use crate::cmd::history::run_id;
use crate::output::emit;
use crate::recorder::open_store;

/// Runs the comparison.
pub fn run(a: &CompareArgs) -> Result<ExitCode> {
    if !(a.level > 0.0 && a.level < 100.0) {
        bail!("--level {} must lie between 0 and 100", a.level);
    }
    let st = open_store(&a.store)?;
    let (ia, ib) = (run_id(&st, &a.a)?, run_id(&st, &a.b)?);
    let (ra, rb) = (st.load_run(ia)?, st.load_run(ib)?);
    let pairs = pair_tests(&ra, &rb);
    if pairs.is_empty() {
        bail!("runs {ia} and {ib} have no tests in common (matched by position or label)");
    }
    let mut rows = Vec::new();
    for (label, ta, tb) in &pairs {
        rows.extend(compare_test(label, ta, tb, a.level));
    }
    emit(&report::compare::table(&format!("run {ia}"), &format!("run {ib}"), a.level, &rows));
    if let Some(pct) = a.fail_if_slower {
        let slow: Vec<&Row> = rows.iter().filter(|r| r.verdict == "slower" && -r.diff_pct > pct).collect();
        if let Some(worst) = slow.iter().min_by(|x, y| x.diff_pct.total_cmp(&y.diff_pct)) {
            eprintln!(
                "slower: {} {} by {:.1} % (more than {pct} %)",
                worst.test, worst.metric, -worst.diff_pct
            );
            return Ok(ExitCode::from(1));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Tests to compare: sweep points by index, else by position when both runs have the same
/// labels in order, else by label.
fn pair_tests<'a>(a: &'a RunRecord, b: &'a RunRecord) -> Vec<(String, &'a TestResult, &'a TestResult)> {
    if let (Some(sa), Some(sb)) = (&a.sweep, &b.sweep) {
        return sa
            .points
            .iter()
            .filter_map(|pa| {
                let pb = sb.points.iter().find(|p| p.index == pa.index)?;
                let label = crate::sweep_plan::describe(&pa.params);
                Some((label, a.tests.get(pa.test_index as usize)?, b.tests.get(pb.test_index as usize)?))
            })
            .collect();
    }
    let same_order =
        a.tests.len() == b.tests.len() && a.tests.iter().zip(&b.tests).all(|(x, y)| x.label == y.label);
    if same_order {
        return a.tests.iter().zip(&b.tests).map(|(x, y)| (x.label.clone(), x, y)).collect();
    }
    a.tests
        .iter()
        .filter_map(|x| b.tests.iter().find(|y| y.label == x.label).map(|y| (x.label.clone(), x, y)))
        .collect()
}

fn compare_test(label: &str, a: &TestResult, b: &TestResult, level: f64) -> Vec<Row> {
    let metrics = stats::confidence::metrics_of(a, false);
    metrics
        .iter()
        .filter_map(|(metric, _)| {
            let (xa, xb) = (samples(a, metric)?, samples(b, metric)?);
            let d = stats::compare::difference(&xa, &xb, level)?;
            // Headline metrics say which way is better; the CPU utilisations judged beside
            // them are better lower.
            let higher_better =
                results::Metric::from_id(metric).is_some_and(|m| m.better() == results::Better::Higher);
            let verdict = match (d.significant(), d.diff > 0.0, higher_better) {
                (false, _, _) if d.half_width.is_none() => "unknown (one value each: repeat with -I)",
                (false, _, _) => "no significant difference",
                (true, true, true) => "faster",
                (true, false, true) => "slower",
                (true, true, false) => "more CPU",
                (true, false, false) => "less CPU",
            };
            let pct_of_a = |v: f64| if d.mean_a == 0.0 { 0.0 } else { 100.0 * v / d.mean_a.abs() };
            Some(Row {
                test: label.to_string(),
                metric: metric.to_string(),
                a: report::confidence::value(metric, d.mean_a),
                b: report::confidence::value(metric, d.mean_b),
                diff_pct: d.diff_pct,
                ci_pct: d.half_width.map(pct_of_a),
                verdict: verdict.to_string(),
            })
        })
        .collect()
}

/// The samples of `metric` in `r` (see the module docs).
fn samples(r: &TestResult, metric: &str) -> Option<Vec<f64>> {
    if let Some(e) = r.repetition.as_ref().and_then(|rep| rep.estimate(metric)) {
        return Some(e.values.clone());
    }
    let per_interval: Vec<f64> = match results::Metric::from_id(metric) {
        Some(m) => r
            .local
            .intervals
            .iter()
            .filter(|iv| !iv.omitted && iv.len_s() > 0.0)
            .map(|iv| match m.is_bit_rate() {
                true => iv.bytes() as f64 * 8.0 / iv.len_s(),
                false => iv.transactions() as f64 / iv.len_s(),
            })
            .collect(),
        None => Vec::new(),
    };
    if per_interval.len() >= 2 {
        return Some(per_interval);
    }
    let v = stats::confidence::metrics_of(r, false).into_iter().find(|(m, _)| *m == metric)?.1;
    Some(vec![v])
}
