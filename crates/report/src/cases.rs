//! A study's run for a terminal: one line per case, each in its own metric, with its spread
//! over the case's runs. A sweep's grid tabulates one metric across its cells; a study mixes
//! streams (bit/s) and request/response (transactions/s), so its plan names no single metric.

use std::fmt::Write as _;

use results::setting::ValueKind;
use results::{Estimate, Metric, RunRecord, Sweep};

use crate::units::{metric, setting_value, UNKNOWN};

/// Whether `sweep`'s points are in different metrics (a study's run), so that they are shown
/// by [`table`] rather than as a grid.
pub fn is_mixed(sweep: &Sweep) -> bool {
    Metric::from_id(&sweep.plan.metric).is_none()
}

/// One line per case of `run`'s sweep, in plan order: its mean in its own unit, the half-width
/// of its confidence interval in % of the mean, its sample standard deviation, how many runs
/// made it, `!` when its confidence target was not met; `failed` or `not run` otherwise.
pub fn table(run: &RunRecord) -> String {
    let Some(sweep) = &run.sweep else { return String::new() };
    let names: Vec<String> = case_names(sweep);
    let w = names.iter().map(|n| n.chars().count()).max().unwrap_or(0).max(4);
    let mut o =
        format!("{:<w$}  {:>14}  {:>16}  {:>7}  {:>4}\n", "case", "mean", "± CI (level)", "sd", "runs");
    let mut missed = false;
    for (i, name) in names.iter().enumerate() {
        let point = sweep.points.iter().find(|p| p.index as usize == i);
        let cells = match point {
            None => "not run".to_string(),
            Some(p) if crate::grid::failed(run, p) => "failed".to_string(),
            Some(p) => {
                missed |= !p.met;
                cells(&p.headline, p.met)
            }
        };
        let _ = writeln!(o, "{name:<w$}  {cells}");
    }
    if missed {
        o.push_str("! confidence target not met\n");
    }
    o
}

/// The cases' names: the single axis's values, in plan order.
fn case_names(sweep: &Sweep) -> Vec<String> {
    let Some(axis) = sweep.plan.axes.first() else { return Vec::new() };
    let kind = results::setting::find(&axis.name).map_or(ValueKind::Count, |s| s.kind);
    axis.values.iter().map(|v| setting_value(kind, v)).collect()
}

/// A finished case's figures: mean, ± half-width in % (level), sd in %, runs, mark.
fn cells(e: &Estimate, met: bool) -> String {
    let shown = |v: f64| Metric::from_id(&e.metric).map_or_else(|| crate::units::sig3(v), |m| metric(m, v));
    let pct = |v: f64| match e.mean {
        m if m > 0.0 && e.values.len() > 1 => match v / m * 100.0 {
            p if p < 0.095 => format!("{p:.2} %"),
            p => format!("{p:.1} %"),
        },
        _ => UNKNOWN.to_string(),
    };
    let ci = match pct(e.half_width).as_str() {
        UNKNOWN => UNKNOWN.to_string(),
        p => format!("± {p} ({:.0} %)", e.level_pct),
    };
    format!(
        "{:>14}  {ci:>16}  {:>7}  {:>4}{}",
        shown(e.mean),
        pct(e.stddev),
        e.values.len(),
        if met { "" } else { " !" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A study's cases read in their own units, with the spread of their runs; a case not run
    /// yet and a failed one say so, and a missed target is marked.
    #[test]
    fn a_studys_cases_are_listed_each_in_its_own_metric() {
        let mut run = crate::fixture::sweep_run();
        assert!(!is_mixed(run.sweep.as_ref().unwrap()));
        let sw = run.sweep.as_mut().unwrap();
        sw.plan.metric = "headline".into();
        sw.plan.axes = vec![results::Axis {
            name: "case".into(),
            tied: Vec::new(),
            values: ["loopback", "rr-1-1", "clip", "slow"]
                .map(|s| results::ParamValue::Text(s.into()))
                .to_vec(),
            text: String::new(),
        }];
        sw.points.truncate(3);
        sw.points[1].headline = Estimate {
            metric: "trans_per_s".into(),
            mean: 19_569.0,
            values: vec![19_569.0],
            ..sw.points[1].headline.clone()
        };
        sw.points[1].met = false;
        assert!(is_mixed(sw));
        run.tests[2].status = results::Status::Failed;
        let text = table(&run);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 6, "{text}");
        assert!(lines[1].starts_with("loopback") && lines[1].contains("2.00 Gbit/s"), "{text}");
        assert!(
            lines[1].contains("± 3.0 % (95 %)") && lines[1].contains("1.0 %") && lines[1].ends_with("   3"),
            "{text}"
        );
        assert!(lines[2].contains("19569 trans/s") && lines[2].ends_with("   1 !"), "{text}");
        assert!(lines[3].ends_with("failed") && lines[4].ends_with("not run"), "{text}");
        assert_eq!(lines[5], "! confidence target not met");
    }
}
