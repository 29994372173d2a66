//! `tcplab compare A B`: per test and metric, B − A with a Welch confidence interval and a
//! verdict; `--fail-if-slower PCT` exits 1 when B is significantly slower by more than PCT %,
//! and 3 when it cannot tell (a headline metric with one value per run).
//!
//! Samples of a metric: the per-iteration values of a repeated test (`-I`), else the
//! per-interval rates of the measured window (autocorrelated, so the interval is optimistic:
//! repeat with `-I` for a sound comparison), else the single summary value (no interval).

use std::process::ExitCode;

use anyhow::{bail, Result};
use report::compare::{Comparison, Notes, Row, Verdict};
use results::setting;
use results::{ParamSetting, ParamValue, RunRecord, Sweep, SweepPoint, TestResult};

use crate::args::CompareArgs;
use crate::cmd::history::run_id;
use crate::output::{self, emit_all};
use crate::recorder::open_store_read;

/// Exit status when `--fail-if-slower` cannot decide: some headline metric has one value
/// per run, so no interval and no verdict (a gate never passes silently).
pub const UNDECIDED: u8 = 3;

/// Runs the comparison.
pub fn run(a: &CompareArgs) -> Result<ExitCode> {
    if !(a.level > 0.0 && a.level < 100.0) {
        bail!("--level {} must lie between 0 and 100", a.level);
    }
    let st = open_store_read(&a.store)?;
    let (ia, ib) = (run_id(&st, &a.a)?, run_id(&st, &a.b)?);
    let (ra, rb) = (st.load_run(ia)?, st.load_run(ib)?);
    let paired = pair_tests(&ra, &rb);
    if paired.pairs.is_empty() {
        bail!("runs {ia} and {ib} have no tests in common (matched by parameters, position or label)");
    }
    let mut rows = Vec::new();
    let mut notes = Notes { only_a: paired.only_a, only_b: paired.only_b, settings: Vec::new() };
    for (label, ta, tb) in &paired.pairs {
        rows.extend(compare_test(label, ta, tb, a.level));
        for d in report::compare::setting_differences(&ta.spec, &tb.spec) {
            if !notes.settings.contains(&d) {
                notes.settings.push(d);
            }
        }
    }
    let (name_a, name_b) = (format!("run {ia}"), format!("run {ib}"));
    let shown = Comparison { a: &name_a, b: &name_b, level_pct: a.level, rows: &rows, notes: &notes };
    emit_all(report::live::printer(output::json_or_text(a.json)).shown(&shown));
    Ok(match a.fail_if_slower {
        Some(pct) => gate(&rows, pct),
        None => ExitCode::SUCCESS,
    })
}

/// `--fail-if-slower PCT`: 1 when a metric is significantly slower by more than PCT %,
/// else [`UNDECIDED`] when a headline metric has no verdict, else 0.
fn gate(rows: &[Row], pct: f64) -> ExitCode {
    let slow = rows.iter().filter(|r| r.verdict == Verdict::Slower && -r.diff_pct > pct);
    if let Some(worst) = slow.min_by(|x, y| x.diff_pct.total_cmp(&y.diff_pct)) {
        eprintln!("slower: {} {} by {:.1} % (more than {pct} %)", worst.test, worst.metric, -worst.diff_pct);
        return ExitCode::from(1);
    }
    let unknown: Vec<String> = rows
        .iter()
        .filter(|r| r.verdict == Verdict::Unknown && results::Metric::from_id(&r.metric).is_some())
        .map(|r| format!("{} {} ({:+.1} %)", r.test, r.metric, r.diff_pct))
        .collect();
    if !unknown.is_empty() {
        eprintln!(
            "cannot decide --fail-if-slower {pct}: one value per run for {} (repeat with -I); exit status {UNDECIDED}",
            unknown.join(", ")
        );
        return ExitCode::from(UNDECIDED);
    }
    ExitCode::SUCCESS
}

/// Tests paired for comparison, and those left over on either side.
struct Paired<'a> {
    pairs: Vec<(String, &'a TestResult, &'a TestResult)>,
    only_a: Vec<String>,
    only_b: Vec<String>,
}

/// Tests to compare: sweep points with the same parameter values, else tests by position
/// when both runs have the same labels in order, else by label.
fn pair_tests<'a>(a: &'a RunRecord, b: &'a RunRecord) -> Paired<'a> {
    if let (Some(sa), Some(sb)) = (&a.sweep, &b.sweep) {
        return pair_points(a, sa, b, sb);
    }
    let same_order =
        a.tests.len() == b.tests.len() && a.tests.iter().zip(&b.tests).all(|(x, y)| x.label == y.label);
    if same_order {
        let pairs = a.tests.iter().zip(&b.tests).map(|(x, y)| (x.label.clone(), x, y)).collect();
        return Paired { pairs, only_a: Vec::new(), only_b: Vec::new() };
    }
    let pairs = a
        .tests
        .iter()
        .filter_map(|x| b.tests.iter().find(|y| y.label == x.label).map(|y| (x.label.clone(), x, y)))
        .collect();
    let missing = |from: &RunRecord, other: &RunRecord| -> Vec<String> {
        let found = |l: &str| other.tests.iter().any(|t| t.label == l);
        from.tests.iter().filter(|t| !found(&t.label)).map(|t| t.label.clone()).collect()
    };
    Paired { pairs, only_a: missing(a, b), only_b: missing(b, a) }
}

/// Sweep points paired by their parameter values (named by setting id, so old aliases
/// match), whatever their position in either grid.
fn pair_points<'a>(a: &'a RunRecord, sa: &'a Sweep, b: &'a RunRecord, sb: &'a Sweep) -> Paired<'a> {
    let keyed = |sw: &'a Sweep| -> Vec<(Vec<(String, ParamValue)>, &'a SweepPoint)> {
        sw.points.iter().map(|p| (point_key(&p.params), p)).collect()
    };
    let (ka, kb) = (keyed(sa), keyed(sb));
    let mut pairs = Vec::new();
    let mut only_a = Vec::new();
    for (key, pa) in &ka {
        let found = kb.iter().find(|(k, _)| k == key).map(|(_, p)| *p);
        let tests = found.and_then(|pb| {
            Some((a.tests.get(pa.test_index as usize)?, b.tests.get(pb.test_index as usize)?))
        });
        match tests {
            Some((ta, tb)) => pairs.push((point_label(&pa.params), ta, tb)),
            None => only_a.push(point_label(&pa.params)),
        }
    }
    let only_b = kb
        .iter()
        .filter(|(k, _)| !ka.iter().any(|(x, _)| x == k))
        .map(|(_, p)| point_label(&p.params))
        .collect();
    Paired { pairs, only_a, only_b }
}

/// A point's parameters by setting id, sorted.
fn point_key(params: &[ParamSetting]) -> Vec<(String, ParamValue)> {
    let mut key: Vec<(String, ParamValue)> = params
        .iter()
        .map(|p| (setting::find(&p.name).map_or(p.name.clone(), |s| s.id.to_string()), p.value.clone()))
        .collect();
    key.sort_by(|x, y| x.0.cmp(&y.0));
    key
}

/// `len=8K rcvbuf=64K`.
fn point_label(params: &[ParamSetting]) -> String {
    params.iter().map(|p| report::units::param(&p.name, &p.value)).collect::<Vec<_>>().join(" ")
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
                (false, _, _) if d.half_width.is_none() => Verdict::Unknown,
                (false, _, _) => Verdict::NoDifference,
                (true, true, true) => Verdict::Faster,
                (true, false, true) => Verdict::Slower,
                (true, true, false) => Verdict::MoreCpu,
                (true, false, false) => Verdict::LessCpu,
            };
            let pct_of_a = |v: f64| if d.mean_a == 0.0 { 0.0 } else { 100.0 * v / d.mean_a.abs() };
            Some(Row {
                test: label.to_string(),
                metric: metric.to_string(),
                a: report::confidence::value(metric, d.mean_a),
                b: report::confidence::value(metric, d.mean_b),
                diff_pct: d.diff_pct,
                ci_pct: d.half_width.map(pct_of_a),
                verdict,
            })
        })
        .collect()
}

/// Goodput per measured interval: what the receiving streams read, at whichever end they
/// are (the sender's count is not goodput once datagrams are lost), both directions summed.
fn goodput_per_interval(r: &TestResult) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::new();
    for side in std::iter::once(&r.local).chain(r.remote.as_ref()) {
        let receiving: Vec<u32> =
            side.streams.iter().filter(|s| s.role == results::Role::Recv).map(|s| s.index).collect();
        if receiving.is_empty() {
            continue;
        }
        let rates = side.intervals.iter().filter(|iv| !iv.omitted && iv.len_s() > 0.0).map(|iv| {
            let bytes: u64 =
                iv.streams.iter().filter(|s| receiving.contains(&s.index)).map(|s| s.bytes).sum();
            bytes as f64 * 8.0 / iv.len_s()
        });
        for (i, v) in rates.enumerate() {
            match out.get_mut(i) {
                Some(sum) => *sum += v,
                None => out.push(v),
            }
        }
    }
    out
}

/// The samples of `metric` in `r` (see the module docs).
fn samples(r: &TestResult, metric: &str) -> Option<Vec<f64>> {
    if let Some(e) = r.repetition.as_ref().and_then(|rep| rep.estimate(metric)) {
        return Some(e.values.clone());
    }
    let per_interval: Vec<f64> = match results::Metric::from_id(metric) {
        Some(m) if m.is_bit_rate() => goodput_per_interval(r),
        Some(_) => r
            .local
            .intervals
            .iter()
            .filter(|iv| !iv.omitted && iv.len_s() > 0.0)
            .map(|iv| iv.transactions() as f64 / iv.len_s())
            .collect(),
        None => Vec::new(),
    };
    if per_interval.len() >= 2 {
        return Some(per_interval);
    }
    let v = stats::confidence::metrics_of(r, false).into_iter().find(|(m, _)| *m == metric)?.1;
    Some(vec![v])
}

#[cfg(test)]
mod tests {
    use results::{Interval, Role, SideMeasurement, StreamInterval, StreamStats, TestKind, TestResult};

    use super::*;

    fn side(role: Role, bytes_per_interval: &[u64]) -> SideMeasurement {
        let iv = |(i, b): (usize, &u64)| Interval {
            start_s: i as f64,
            end_s: i as f64 + 1.0,
            omitted: false,
            streams: vec![StreamInterval { index: 0, bytes: *b, ..StreamInterval::default() }],
        };
        SideMeasurement {
            streams: vec![StreamStats {
                index: 0,
                role,
                bytes: 0,
                bytes_total: 0,
                calls: 0,
                transactions: 0,
                socket: results::SocketReport::default(),
                tcp: None,
                placement: results::Placement::default(),
                udp: None,
            }],
            intervals: bytes_per_interval.iter().enumerate().map(iv).collect(),
            ..SideMeasurement::default()
        }
    }

    /// A lossy UDP stream: the sender wrote 1000 B a second, the receiver read 500. The
    /// per-interval samples of goodput are the receiver's, not the sender's.
    #[test]
    fn goodput_samples_are_what_the_receiver_read() {
        let spec = engine::registry::defaults(TestKind::UdpStream);
        let r = TestResult {
            local: side(Role::Send, &[1000, 1000, 1000]),
            remote: Some(side(Role::Recv, &[500, 500, 500])),
            ..TestResult::new("udp", spec, "h:1", 0)
        };
        assert_eq!(samples(&r, "goodput_bps"), Some(vec![4000.0; 3]));
    }
}
