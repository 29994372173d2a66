//! The study report: one self-contained HTML page (the report crate's page and plot modules)
//! with the comparison table, the overlaid plots, the explanations, what was skipped or
//! cannot run yet, and every published figure of the paper with its source.

use report::html::page::Page;
use report::plot::{AxisSpec, LineChart, Point, RefLine, Series};
use report::tables::Table;

use crate::compare::Row;
use crate::paper::Figure;
use crate::{Outcome, Study};

/// The report of one study run.
pub fn document(study: &dyn Study, out: &Outcome, rows: &[Row]) -> String {
    let info = study.info();
    let mut p = Page::new();
    let judged = crate::status::judge_all(study, out);
    p.section("status", "Status of every figure and table");
    let legend = format!(
        "Computed from the measurements: reproduced (the whole 95 % interval over repeated runs within \
         the stated tolerance), same shape (the paper's order or sign holds, significantly and by at \
         least 2 %), differs (reversed, level where the paper drew a gap, or outside the tolerance), \
         not measurable here (the interval spans zero or straddles the tolerance, one run, or runs a \
         hypervisor stole {:.0} % or more of the CPU time from, where the steal could have made the \
         verdict), not reproducible here (why), not run (what it needs).",
        results::cpu::STOLEN_PCT
    );
    p.para("", &legend);
    let head = ["figure", "what", "status", "evidence"].iter().map(|s| s.to_string()).collect();
    let rows_s = judged
        .iter()
        .map(|j| {
            vec![
                j.entry.figure.to_string(),
                j.entry.what.to_string(),
                j.verdict.status.label().to_string(),
                j.verdict.evidence.clone(),
            ]
        })
        .collect();
    p.table(&Table { head, rows: rows_s }, false);
    p.end_section();
    p.section("comparison", "Paper, tcplab and model");
    p.para("", &setting(out));
    let head = crate::text::HEAD.iter().map(|s| s.to_string()).collect();
    p.table(&Table { head, rows: rows.iter().map(crate::text::cells).collect() }, true);
    p.end_section();
    p.section("plots", "Overlays");
    p.open_row();
    for svg in study.charts(out) {
        p.plot(&svg);
    }
    p.close_row();
    p.end_section();
    notes(&mut p, study, out, rows);
    p.section("paper", "The paper's figures as data");
    for f in study.paper() {
        figure_table(&mut p, f);
    }
    p.end_section();
    let subtitle = format!("seed {} · {} · {} mode", info.seed, info.paper, out.mode.id());
    p.finish(&format!("tcplab study {}", info.name), &subtitle)
}

fn setting(out: &Outcome) -> String {
    let place =
        out.host.as_ref().map_or("emulated paths on this host".to_string(), |h| format!("real host {h}"));
    let run = out.run_id.map_or(String::new(), |id| format!(" Archived as run {id} (tcplab show {id})."));
    format!(
        "{} tests on {place}. The model ceiling is the goodput the link's framing allows for the test's \
         stack (the diagnosis's reference); ratios far from 1 are explained below.{run}",
        out.done.len()
    )
}

fn notes(p: &mut Page, study: &dyn Study, out: &Outcome, rows: &[Row]) {
    p.section("why", "Why the numbers differ");
    for r in rows.iter().filter(|r| !r.why.is_empty()) {
        p.para("", &format!("{} — {}: {}", r.group, r.case, r.why));
    }
    for s in &out.skipped {
        p.para("", &format!("Skipped: {s}"));
    }
    let judged = crate::status::judge_all(study, out);
    for pending in crate::text::pending(&judged, rows) {
        p.para("", &format!("Not run: {pending}."));
    }
    p.end_section();
}

fn figure_table(p: &mut Page, f: &Figure) {
    p.h3(&format!("{} — {} ({})", f.source, f.caption, f.printed_unit));
    let rows = f
        .values
        .iter()
        .map(|v| {
            let x = v.x.map_or(String::new(), |x| format!("{x}"));
            let spread = v.spread.map_or(String::new(), |s| format!("± {s}"));
            vec![v.label.to_string(), x, format!("{}", v.value), spread]
        })
        .collect();
    let head = ["what", "x", "value", "±"].iter().map(|s| s.to_string()).collect();
    p.table(&Table { head, rows }, false);
}

/// A line chart of throughput against a byte size (log-2 x), with the paper's curve, the
/// measured curve and the model's ceiling as a reference line.
pub fn size_chart(title: &str, x_label: &str, series: Vec<Series>, ceiling: Option<(f64, String)>) -> String {
    let mut c = LineChart::new(title, AxisSpec::sizes(x_label), AxisSpec::linear("Mbit/s"));
    c.series = series.into_iter().filter(|s| !s.points.is_empty()).collect();
    c.refs = ceiling.into_iter().map(|(y, label)| RefLine { y, label }).collect();
    c.render()
}

/// `rows` with their names shortened for a bar chart's axis, which cuts a name after 30
/// characters: each `(long, short)` pair replaces `long` wherever it occurs in a name.
pub fn relabelled(rows: &[&Row], short: &[(&str, &str)]) -> Vec<Row> {
    rows.iter()
        .map(|r| {
            let mut r = (*r).clone();
            r.case = short.iter().fold(r.case, |c, (long, s)| c.replace(long, s));
            r
        })
        .collect()
}

/// Reference lines whose labels do not overprint: a line within `REF_GAP` of the largest
/// value of one above it keeps its line, and its label joins that one's
/// (`paper 134.5 (Fig. 2) · model ceiling 134.3`), the lines' order from the top.
pub fn ref_lines(mut refs: Vec<(f64, String)>) -> Vec<RefLine> {
    refs.sort_by(|a, b| b.0.total_cmp(&a.0));
    let top = refs.iter().map(|r| r.0.abs()).fold(0.0, f64::max);
    let mut lines: Vec<RefLine> = Vec::new();
    let mut shown = None;
    for (y, label) in refs {
        match shown.filter(|&i: &usize| (lines[i].y - y).abs() <= REF_GAP * top) {
            Some(i) => {
                lines[i].label = format!("{} · {label}", lines[i].label);
                lines.push(RefLine { y, label: String::new() });
            }
            None => {
                shown = Some(lines.len());
                lines.push(RefLine { y, label });
            }
        }
    }
    lines
}

/// Reference lines closer than this share of the largest one's value share one label (the
/// labels are about 12 px high on a plot about 300 px high whose axis starts at zero).
const REF_GAP: f64 = 0.06;

/// A chart of curves against a size axis with the y axis `y_label` (a percentage, a delay).
pub fn curve_chart(title: &str, x_label: &str, y_label: &str, series: Vec<Series>) -> String {
    let mut c = LineChart::new(title, AxisSpec::sizes(x_label), AxisSpec::linear(y_label));
    c.series = series.into_iter().filter(|s| !s.points.is_empty()).collect();
    c.render()
}

/// A chart of curves against a linear x axis (user data sizes in steps, as a paper drew them).
pub fn linear_chart(title: &str, x_label: &str, y_label: &str, series: Vec<Series>) -> String {
    let mut c = LineChart::new(title, AxisSpec::linear(x_label), AxisSpec::linear(y_label));
    c.series = series.into_iter().filter(|s| !s.points.is_empty()).collect();
    c.render()
}

/// A series from (x, y) pairs.
pub fn series(name: &str, points: impl IntoIterator<Item = (f64, f64)>) -> Series {
    Series { name: name.into(), points: points.into_iter().map(|(x, y)| Point::new(x, y)).collect() }
}

/// A bar chart of the rows' paper, measured and model values, one group per row. A row
/// whose values are over ten times every other row's is left out and named in the title
/// (it would flatten the rest); a series with no value is left out of the legend.
pub fn rows_chart(title: &str, unit: &str, rows: &[&Row]) -> String {
    let top = |r: &Row| {
        [r.paper.as_ref().map(|p| p.0), r.measured, r.model].into_iter().flatten().fold(0.0, f64::max)
    };
    let mut order: Vec<f64> = rows.iter().map(|r| top(r)).collect();
    order.sort_by(|a, b| b.total_cmp(a));
    let off = match order.as_slice() {
        [a, b, ..] if *b > 0.0 && *a > 10.0 * b => Some(*a),
        _ => None,
    };
    let (kept, out): (Vec<&Row>, Vec<&Row>) = rows.iter().partition(|r| off.is_none_or(|a| top(r) < a));
    let title = match out.first() {
        Some(r) => format!("{title} (off scale: {})", r.case),
        None => title.to_string(),
    };
    let bar = |name: &str, f: &dyn Fn(&Row) -> Option<f64>| report::plot::BarSeries {
        name: name.into(),
        values: kept.iter().map(|r| f(r)).collect(),
    };
    let series = vec![
        bar("paper", &|r| r.paper.as_ref().map(|p| p.0)),
        bar("tcplab measured", &|r| r.measured),
        bar("model ceiling", &|r| r.model),
    ];
    report::plot::BarChart {
        title,
        y_label: unit.into(),
        y_format: report::plot::TickFormat::Number,
        categories: kept.iter().map(|r| r.case.clone()).collect(),
        series: series.into_iter().filter(|s| s.values.iter().any(Option::is_some)).collect(),
    }
    .render()
}
