//! A test type's own figures, tables and plots (`Summary::figures`, `own_tables`,
//! `own_plots`), shown as they are — labelled values in tcplab's units, tables of typed
//! cells, curves of points — for whatever test type has them; no renderer knows which.

use std::fmt::Write;

use results::{AxisScale, Figure, FigureValue, OwnPlot, OwnTable, PlotAxis, Summary, TestResult};

use crate::plot::{AxisSpec, LineChart, Point, ScaleKind, Series, TickFormat};
use crate::tables::Table;

use crate::units::{bytes, micros, rate};

/// A figure's value in words and units: `11.0 MiB`, `40.0 ms`, `75%`.
pub fn value(v: &FigureValue) -> String {
    match v {
        FigureValue::Bytes(n) => bytes(*n),
        FigureValue::Count(n) => crate::units::count(*n),
        FigureValue::Seconds(s) => micros(s * 1e6),
        FigureValue::BitRate(bps) => rate(*bps),
        FigureValue::Share(f) => format!("{:.0}%", f * 100.0),
        FigureValue::Text(t) => t.clone(),
    }
}

/// The figures block of a text summary: one line each.
pub fn block(o: &mut String, figures: &[Figure]) {
    for f in figures {
        let _ = writeln!(o, "    {}: {}", f.label, shown(f));
    }
}

/// A figure's value as shown: after repeats, a mean with its spread
/// (`3.00 s ± 2.65 s (1.00 s–6.00 s, 3 runs)`) or each run's value (`run 1: a · run 2: b`).
pub fn shown(f: &Figure) -> String {
    if !f.per_run.is_empty() {
        let runs: Vec<String> =
            f.per_run.iter().enumerate().map(|(i, v)| format!("run {}: {}", i + 1, value(v))).collect();
        return runs.join(" · ");
    }
    match f.spread {
        Some(p) if p.runs > 1 => {
            let [sd, lo, hi] = [p.stddev, p.min, p.max].map(|x| value(&f.value.with_number(x)));
            format!("{} ± {sd} ({lo}–{hi}, {} runs)", value(&f.value), p.runs)
        }
        _ => value(&f.value),
    }
}

/// The summaries whose own tables and plots `t` shows, each with a suffix for its label: its
/// own, or, for a repeated test whose runs differed (the combined summary keeps none), each
/// run's (` · run 2`).
pub fn own_views(t: &TestResult) -> Vec<(String, &Summary)> {
    let has = |s: &Summary| !s.own_tables.is_empty() || !s.own_plots.is_empty();
    if has(&t.summary) {
        return vec![(String::new(), &t.summary)];
    }
    let runs = t.repetition.as_ref().map_or(&[][..], |r| &r.runs[..]);
    runs.iter()
        .enumerate()
        .filter(|(_, r)| has(&r.summary))
        .map(|(i, r)| (format!(" · run {}", i + 1), &r.summary))
        .collect()
}

/// A type's own table with its cells in tcplab's units.
pub fn own_table(t: &OwnTable) -> Table {
    let head: Vec<&str> = t.head.iter().map(String::as_str).collect();
    let mut out = Table::new(&head);
    out.rows = t.rows.iter().map(|r| r.iter().map(value).collect()).collect();
    out
}

/// A type's own plot as a line chart, titled `label: title`.
pub fn own_chart(label: &str, p: &OwnPlot) -> LineChart {
    let values = |i: usize| p.series.iter().flat_map(move |s| s.points.iter().map(move |pt| pt[i]));
    let (x, y) = (plot_axis(&p.x, values(0)), plot_axis(&p.y, values(1)));
    let mut chart = LineChart::new(&format!("{label}: {}", p.title), x, y);
    chart.legend = p.legend.clone();
    chart.series = p
        .series
        .iter()
        .map(|s| Series {
            name: s.name.clone(),
            points: s.points.iter().map(|&[x, y]| Point::new(x, y)).collect(),
        })
        .collect();
    chart
}

/// The chart axis of a declared plot axis over its values: a fitted one goes log-10 (and says
/// so in its label) when its positive values span [`results::extra::FITTED_LOG_SPAN`] or more.
fn plot_axis(a: &PlotAxis, values: impl Iterator<Item = f64>) -> AxisSpec {
    match a.scale {
        AxisScale::Linear => AxisSpec::linear(&a.label),
        AxisScale::Log2Bytes => AxisSpec::sizes(&a.label),
        AxisScale::Fitted => {
            let (lo, hi) = values
                .filter(|v| v.is_finite() && *v > 0.0)
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
            if hi / lo >= results::extra::FITTED_LOG_SPAN {
                let label = format!("{}, log scale", a.label);
                AxisSpec { label, kind: ScaleKind::Log10, format: TickFormat::Number, zero: false }
            } else {
                AxisSpec::linear(&a.label)
            }
        }
    }
}

/// The text of a test's own tables (aligned columns, then their notes) and plots (each curve's
/// points, `x→y`; the HTML report draws them).
pub fn own_block(o: &mut String, t: &TestResult) {
    for (run, s) in own_views(t) {
        for table in &s.own_tables {
            let _ = writeln!(o, "  {}{run}:", table.title);
            crate::tables::aligned(&own_table(table)).lines().for_each(|l| _ = writeln!(o, "    {l}"));
            table.notes.iter().for_each(|n| _ = writeln!(o, "    {n}"));
        }
        for p in &s.own_plots {
            let _ = writeln!(o, "  plot: {}{run} ({} against {}):", p.title, p.y.label, p.x.label);
            for c in &p.series {
                let x = |x: f64| match p.x.scale {
                    AxisScale::Log2Bytes => crate::units::bytes(x.max(0.0) as u64),
                    AxisScale::Linear | AxisScale::Fitted => crate::units::sig3(x),
                };
                let pts: Vec<String> =
                    c.points.iter().map(|&[a, b]| format!("{}→{}", x(a), crate::units::sig3(b))).collect();
                let _ = writeln!(o, "    {}: {}", c.name, pts.join(", "));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn own(t: &mut TestResult, y: f64) {
        t.summary.own_tables = vec![OwnTable {
            title: "Widget cost".into(),
            head: vec!["size".into(), "p99".into()],
            rows: vec![vec![FigureValue::Bytes(4096), FigureValue::Seconds(y * 1e-6)]],
            notes: vec!["measured by widgets".into()],
        }];
        t.summary.own_plots = vec![OwnPlot {
            title: "widget time".into(),
            x: PlotAxis { label: "message size".into(), scale: AxisScale::Log2Bytes },
            y: PlotAxis { label: "µs per widget".into(), scale: AxisScale::Linear },
            legend: "side".into(),
            series: vec![results::PlotSeries { name: "send".into(), points: vec![[64.0, 1.5], [4096.0, y]] }],
        }];
    }

    /// What a type declares of its own is in the text and the HTML, whatever the type; a
    /// repeated test whose runs differ shows each run's.
    #[test]
    fn a_types_own_table_and_plot_appear_in_text_and_html() {
        let mut t = crate::fixture::stream(8192, 65536, 1.0);
        own(&mut t, 3.0);
        let text = crate::text::test_summary(&t);
        for needle in
            ["Widget cost:", "4.00 KiB", "3.00 µs", "measured by widgets", "send: 64 B→1.50, 4.00 KiB→3.00"]
        {
            assert!(text.contains(needle), "{needle}: {text}");
        }
        let html = crate::html::document(&[crate::fixture::run(vec![t.clone()])]);
        for needle in ["Each test type", "Widget cost", "3.00 µs", ": widget time", "µs per widget", "<svg"]
        {
            assert!(html.contains(needle), "{needle}");
        }
        let mut run2 = t.clone();
        own(&mut run2, 4.0);
        let mut combined = t.clone();
        combined.summary.own_tables.clear();
        combined.summary.own_plots.clear();
        let target = results::ConfidenceTarget {
            level_pct: 99.0,
            width_pct: 5.0,
            min_iterations: 2,
            max_iterations: 2,
            result_only: false,
        };
        let runs = vec![t, run2];
        combined.repetition = Some(results::Repetition {
            target,
            iterations: 2,
            met: true,
            estimates: Vec::new(),
            runs,
            set_aside: Vec::new(),
        });
        let got: Vec<String> = own_views(&combined).into_iter().map(|(run, _)| run).collect();
        assert_eq!(got, [" · run 1", " · run 2"]);
        assert!(crate::text::test_summary(&combined).contains("Widget cost · run 2:"));
    }

    /// A fitted axis stays linear while its values are close, and goes log-10 once one value
    /// (a stalled size) is 20 times another, so that the rest are not flattened against 0.
    #[test]
    fn a_fitted_axis_goes_log_when_one_value_would_flatten_the_rest() {
        let axis = PlotAxis { label: "µs per segment".into(), scale: AxisScale::Fitted };
        let close = plot_axis(&axis, [2.0, 5.0, 30.0].into_iter());
        assert_eq!((close.kind, close.label.as_str()), (ScaleKind::Linear, "µs per segment"));
        let stalled = plot_axis(&axis, [0.0, 2.0, 5.0, 40.0, f64::NAN].into_iter());
        assert_eq!((stalled.kind, stalled.label.as_str()), (ScaleKind::Log10, "µs per segment, log scale"));
        assert_eq!(plot_axis(&axis, std::iter::empty()).kind, ScaleKind::Linear, "no values");
        let mut t = crate::fixture::stream(8192, 65536, 1.0);
        own(&mut t, 400.0);
        t.summary.own_plots[0].y.scale = AxisScale::Fitted;
        let html = crate::html::document(&[crate::fixture::run(vec![t])]);
        assert!(html.contains("µs per widget, log scale"), "1.5 and 400 µs: the chart is drawn log-10");
    }

    #[test]
    fn each_kind_reads_in_its_unit() {
        let figures = vec![
            Figure::new("file size", FigureValue::Bytes(11 << 20)),
            Figure::new("receiver sync time (part of disk)", FigureValue::Seconds(0.04)),
            Figure::new("truly zero-copy", FigureValue::Share(0.75)),
            Figure::new("MSG_ZEROCOPY sends", FigureValue::Count(1234)),
            Figure::new("verification", FigureValue::Text("SHA-256 verified".into())),
        ];
        let mut o = String::new();
        block(&mut o, &figures);
        for needle in [
            "file size: 11.0 MiB",
            "receiver sync time (part of disk): 40.0 ms",
            "truly zero-copy: 75%",
            "MSG_ZEROCOPY sends: 1,234",
            "verification: SHA-256 verified",
        ] {
            assert!(o.contains(needle), "{needle} in {o}");
        }
    }

    #[test]
    fn repeats_show_their_spread_or_each_run() {
        let mut disk = Figure::new("receiver disk time", FigureValue::Seconds(0.003));
        disk.spread = Some(results::Spread { runs: 3, stddev: 0.002, min: 0.001, max: 0.006 });
        let mut verdict = Figure::new("verification", FigureValue::Text("a".into()));
        verdict.per_run = vec![FigureValue::Text("a".into()), FigureValue::Text("b".into())];
        assert_eq!(shown(&disk), "3.00 ms ± 2.00 ms (1.00 ms–6.00 ms, 3 runs)");
        assert_eq!(shown(&verdict), "run 1: a · run 2: b");
    }
}
