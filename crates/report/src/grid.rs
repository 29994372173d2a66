//! The sweep grid as a text table: rows are the combinations of every axis but the last,
//! columns the last axis's values. Each row's peak is marked `*`, and the contiguous run of
//! columns around it within [`BEST_TOLERANCE`] of the peak (the "best" sizes, as seed 000
//! concluded 4 KB…16 KB) is marked `+`; a line per row names both. A point whose confidence
//! target (`-I`) was not met carries `!`; a point that failed reads `failed`, one not run yet `-`.

use std::fmt::Write as _;

use results::setting::ValueKind;
use results::{ParamValue, RunRecord, Status, Sweep, SweepPoint};

use crate::units::{setting_value, sig3};

/// A cell within this fraction of its row's peak counts as "best".
pub const BEST_TOLERANCE: f64 = 0.05;

/// The grid of `run`'s sweep; empty when the run is not a sweep.
pub fn table(run: &RunRecord) -> String {
    let Some(sweep) = &run.sweep else { return String::new() };
    let Some(last) = sweep.plan.axes.last() else { return String::new() };
    let cols = last.values.len().max(1);
    let rows = sweep.plan.len() / cols;
    let (scale, unit) = scale_of(&sweep.plan.metric);
    let cells = cell_values(run, sweep, scale);
    let fails = failed_cells(run, sweep);
    let missed = missed_targets(sweep);
    let labels: Vec<String> = (0..rows).map(|r| row_label(sweep, r, cols)).collect();
    let lw = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0).max(last.name.len() + 2);
    let heads: Vec<String> = last.values.iter().map(|v| value(&last.name, v)).collect();
    let cw = heads.iter().map(String::len).max().unwrap_or(0).max(7) + 2;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{} in {unit}; columns: {}; * peak of the row, + within {:.0} % of it{}",
        results::Metric::from_id(&sweep.plan.metric).map_or(sweep.plan.metric.as_str(), |m| m.name()),
        last.name,
        BEST_TOLERANCE * 100.0,
        if missed.iter().any(|m| *m) { ", ! confidence target not met" } else { "" }
    );
    let _ = write!(o, "{:<lw$}", format!("{} →", last.name));
    for h in &heads {
        let _ = write!(o, "{h:>cw$}");
    }
    o.push('\n');
    let mut notes = Vec::new();
    for (r, label) in labels.iter().enumerate() {
        let row = &cells[r * cols..(r + 1) * cols];
        let marks = marks(row);
        let _ = write!(o, "{label:<lw$}");
        let row_fails = &fails[r * cols..(r + 1) * cols];
        for (((v, m), miss), fail) in
            row.iter().zip(&marks).zip(&missed[r * cols..(r + 1) * cols]).zip(row_fails)
        {
            let bang = if *miss { "!" } else { "" };
            let empty = if *fail { "failed" } else { "-" };
            let text = v.map(|x| format!("{}{m}{bang}", sig3(x))).unwrap_or_else(|| empty.into());
            let _ = write!(o, "{text:>cw$}");
        }
        o.push('\n');
        notes.push(row_note(label, row, &heads, &last.name, unit));
    }
    for n in notes.into_iter().flatten() {
        let _ = writeln!(o, "{n}");
    }
    o
}

fn scale_of(metric: &str) -> (f64, &'static str) {
    match results::Metric::from_id(metric) {
        Some(m) if m.is_bit_rate() => (1e-6, "Mbit/s"),
        Some(m) => (1.0, m.unit()),
        None => (1.0, "(unknown metric)"),
    }
}

/// Each cell's value; `None` for points not run yet and for failed points.
fn cell_values(run: &RunRecord, sweep: &Sweep, scale: f64) -> Vec<Option<f64>> {
    let mut cells = vec![None; sweep.plan.len()];
    for p in sweep.points.iter().filter(|p| !failed(run, p)) {
        if let Some(c) = cells.get_mut(p.index as usize) {
            *c = Some(p.headline.mean * scale);
        }
    }
    cells
}

/// Whether point `p`'s test failed.
pub(crate) fn failed(run: &RunRecord, p: &SweepPoint) -> bool {
    run.tests.get(p.test_index as usize).is_some_and(|t| t.status == Status::Failed)
}

/// Whether each cell's point failed.
fn failed_cells(run: &RunRecord, sweep: &Sweep) -> Vec<bool> {
    let mut out = vec![false; sweep.plan.len()];
    for p in sweep.points.iter().filter(|p| failed(run, p)) {
        if let Some(c) = out.get_mut(p.index as usize) {
            *c = true;
        }
    }
    out
}

fn missed_targets(sweep: &Sweep) -> Vec<bool> {
    let mut out = vec![false; sweep.plan.len()];
    for p in &sweep.points {
        if let Some(m) = out.get_mut(p.index as usize) {
            *m = !p.met;
        }
    }
    out
}

fn row_label(sweep: &Sweep, row: usize, cols: usize) -> String {
    let coords = coords(sweep, row * cols);
    let axes = &sweep.plan.axes[..sweep.plan.axes.len().saturating_sub(1)];
    let parts: Vec<String> = axes
        .iter()
        .zip(coords)
        .map(|(a, i)| {
            format!("{}={}", a.name, a.values.get(i).map(|v| value(&a.name, v)).unwrap_or_default())
        })
        .collect();
    if parts.is_empty() {
        "all".into()
    } else {
        parts.join(" ")
    }
}

/// A value of the axis named `name`, as the command line takes it (`64K`, `100M`).
fn value(name: &str, v: &ParamValue) -> String {
    let kind = results::setting::find(name).map_or(ValueKind::Count, |s| s.kind);
    setting_value(kind, v)
}

fn coords(sweep: &Sweep, index: usize) -> Vec<usize> {
    let mut rest = index;
    let mut out = vec![0; sweep.plan.axes.len()];
    for (c, a) in out.iter_mut().zip(&sweep.plan.axes).rev() {
        let n = a.values.len().max(1);
        *c = rest % n;
        rest /= n;
    }
    out
}

/// `*` on the peak, `+` on the contiguous neighbours within the tolerance, `" "` elsewhere.
fn marks(row: &[Option<f64>]) -> Vec<&'static str> {
    let mut m = vec![" "; row.len()];
    let Some((peak_i, peak)) = peak(row) else { return m };
    let (lo, hi) = best_range(row, peak_i, peak);
    for x in &mut m[lo..=hi] {
        *x = "+";
    }
    m[peak_i] = "*";
    m
}

fn peak(row: &[Option<f64>]) -> Option<(usize, f64)> {
    row.iter().enumerate().filter_map(|(i, v)| v.map(|v| (i, v))).max_by(|a, b| a.1.total_cmp(&b.1))
}

fn best_range(row: &[Option<f64>], at: usize, peak: f64) -> (usize, usize) {
    let good = |i: usize| row.get(i).copied().flatten().is_some_and(|v| v >= peak * (1.0 - BEST_TOLERANCE));
    let (mut lo, mut hi) = (at, at);
    while lo > 0 && good(lo - 1) {
        lo -= 1;
    }
    while good(hi + 1) {
        hi += 1;
    }
    (lo, hi)
}

fn row_note(label: &str, row: &[Option<f64>], heads: &[String], col: &str, unit: &str) -> Option<String> {
    let (at, peak) = peak(row)?;
    let (lo, hi) = best_range(row, at, peak);
    let head = |i: usize| heads.get(i).cloned().unwrap_or_default();
    Some(format!(
        "{label}: peak {} {unit} at {col}={}; best {col}={}…{}",
        sig3(peak),
        head(at),
        head(lo),
        head(hi)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::{Axis, Estimate, HostInfo, ParamValue, SweepPlan, SweepPoint, TestKind, TestSpec};

    fn axis(name: &str, v: &[u64]) -> Axis {
        Axis {
            name: name.into(),
            tied: Vec::new(),
            values: v.iter().map(|n| ParamValue::Int(*n)).collect(),
            text: String::new(),
        }
    }

    fn run(values: &[Option<f64>]) -> RunRecord {
        let plan = SweepPlan {
            base: TestSpec::new(TestKind::TcpStream),
            axes: vec![axis("rcvbuf", &[4096, 8192]), axis("len", &[1024, 2048, 4096, 65_536])],
            confidence: None,
            metric: "goodput_bps".into(),
            mesh: None,
        };
        let points = values
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                v.map(|mean| SweepPoint {
                    index: i as u32,
                    coords: Vec::new(),
                    params: Vec::new(),
                    test_index: 0,
                    headline: Estimate { mean: mean * 1e6, ..Estimate::default() },
                    met: true,
                })
            })
            .collect();
        RunRecord {
            tool_version: String::new(),
            command_line: Vec::new(),
            started_unix_ms: 0,
            local_host: HostInfo::default(),
            remote_host: None,
            tests: Vec::new(),
            error: None,
            id: None,
            sweep: Some(Sweep { plan, points, complete: false }),
            cc: None,
        }
    }

    #[test]
    fn marks_peak_and_best_interval_per_row() {
        let t = table(&run(&[
            Some(10.0),
            Some(97.0),
            Some(100.0),
            Some(50.0),
            Some(5.0),
            None,
            Some(7.0),
            Some(6.9),
        ]));
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[1].starts_with("len →"), "{t}");
        assert!(
            lines[2].starts_with("rcvbuf=4K ") && lines[2].contains("97.0+") && lines[2].contains("100*"),
            "{t}"
        );
        assert!(lines[3].contains('-') && lines[3].contains("7.00*") && lines[3].contains("6.90+"), "{t}");
        assert!(lines[1].ends_with("   1K       2K       4K      64K"), "{t}");
        assert!(t.contains("rcvbuf=4K: peak 100 Mbit/s at len=4K; best len=2K…4K"), "{t}");
        assert!(t.contains("rcvbuf=8K: peak 7.00 Mbit/s at len=4K; best len=4K…64K"), "{t}");
    }

    #[test]
    fn missed_targets_are_flagged() {
        let mut r = run(&[Some(1.0), Some(2.0), None, None, None, None, None, None]);
        if let Some(sw) = r.sweep.as_mut() {
            sw.points[0].met = false;
        }
        let t = table(&r);
        assert!(t.lines().next().is_some_and(|l| l.ends_with("! confidence target not met")), "{t}");
        assert!(t.contains("1.00+!") || t.contains("1.00 !"), "{t}");
        assert!(t.contains("2.00*") && !t.contains("2.00*!"), "{t}");
    }

    #[test]
    fn not_a_sweep_is_empty() {
        let mut r = run(&[]);
        r.sweep = None;
        assert_eq!(table(&r), "");
    }
}
