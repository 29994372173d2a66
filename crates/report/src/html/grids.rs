//! Sweeps and grids: the metric against one parameter with a curve per value of the others
//! (log-2 x axis for sizes, CI error bars, peaks marked, theoretical limits), a heatmap for
//! two-parameter grids, and the grid as a table.

use results::{RunRecord, TestResult};

use super::charts::{limit_lines, rate_unit};
use super::page::Page;
use crate::param_grid::{Grid, GridAxis};
use crate::plot::{
    AxisSpec, BarChart, BarSeries, Cell, Heatmap, LineChart, Point, ScaleKind, Series, TickFormat,
};
use crate::tables;

/// The section, when `runs` hold any grid.
pub fn section(p: &mut Page, runs: &[RunRecord]) {
    let grids = Grid::all(runs);
    if grids.is_empty() {
        return;
    }
    let tests: Vec<&TestResult> = runs.iter().flat_map(|r| &r.tests).collect();
    p.section("sweeps", "Sweeps and grids");
    for g in &grids {
        p.h3(&format!(
            "{} · {} point{}",
            g.title,
            g.points.len(),
            if g.points.len() == 1 { "" } else { "s" }
        ));
        let (div, unit) = unit_of(g);
        p.open_row();
        match g.x_axis() {
            Some(x) => {
                p.plot(&curves(g, x, (div, unit), &tests));
                if g.axes.len() == 2 {
                    p.plot(&heatmap(g, x, (div, unit)));
                }
            }
            None => p.plot(&bars(g, (div, unit))),
        }
        p.close_row();
        p.table(&tables::grid(g), true);
        if g.points.iter().any(|pt| pt.half_width.is_some()) {
            p.para("note", "Error bars and ± values: confidence interval of the mean over repetitions.");
        }
    }
    p.end_section();
}

/// Divisor and unit name for the grid's metric.
fn unit_of(g: &Grid) -> (f64, &'static str) {
    let max = g.points.iter().map(|p| p.mean + p.half_width.unwrap_or(0.0)).fold(0.0, f64::max);
    match g.metric.is_bit_rate() {
        true => rate_unit(max),
        false => (1.0, g.metric.unit()),
    }
}

fn metric_name(g: &Grid, unit: &str) -> String {
    format!("{} ({unit})", g.metric.name())
}

fn x_spec(a: &GridAxis) -> AxisSpec {
    let nums: Vec<f64> = a.values.iter().filter_map(|v| v.num).collect();
    let lo = nums.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = nums.iter().copied().fold(0.0, f64::max);
    let log = a.bytes && lo > 0.0 && hi / lo >= 4.0;
    let unit = if a.bytes { " (bytes)" } else { "" };
    AxisSpec {
        label: format!("{}{unit}", a.name),
        kind: if log { ScaleKind::Log2 } else { ScaleKind::Linear },
        format: if a.bytes { TickFormat::Bytes } else { TickFormat::Number },
        zero: !log,
    }
}

/// Label of a curve: the values of every axis but `x` at `coords`.
fn curve_label(g: &Grid, x: usize, coords: &[usize]) -> String {
    let parts: Vec<String> = g
        .axes
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != x)
        .filter_map(|(i, a)| a.values.get(*coords.get(i)?).map(|v| v.label.clone()))
        .collect();
    parts.join(", ")
}

fn curves(g: &Grid, x: usize, (div, unit): (f64, &str), tests: &[&TestResult]) -> String {
    let mut c = LineChart::new(&g.title, x_spec(&g.axes[x]), AxisSpec::linear(&metric_name(g, unit)));
    c.peaks = true;
    c.legend = g
        .axes
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != x)
        .map(|(_, a)| a.name.clone())
        .collect::<Vec<_>>()
        .join(", ");
    let mut keys: Vec<Vec<usize>> = Vec::new();
    for pt in &g.points {
        let key: Vec<usize> =
            pt.coords.iter().enumerate().filter(|(i, _)| *i != x).map(|(_, c)| *c).collect();
        let Some(xv) = pt.coords.get(x).and_then(|i| g.axes[x].values.get(*i)).and_then(|v| v.num) else {
            continue;
        };
        let idx = match keys.iter().position(|k| *k == key) {
            Some(i) => i,
            None => {
                keys.push(key);
                c.series.push(Series { name: curve_label(g, x, &pt.coords), points: Vec::new() });
                c.series.len() - 1
            }
        };
        c.series[idx].points.push(Point { x: xv, y: pt.mean / div, err: pt.half_width.map(|h| h / div) });
    }
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by(|a, b| keys[*a].cmp(&keys[*b]));
    c.series = order.into_iter().map(|i| c.series[i].clone()).collect();
    c.series.iter_mut().for_each(|s| s.points.sort_by(|a, b| a.x.total_cmp(&b.x)));
    if g.metric.is_bit_rate() {
        c.refs = limit_lines(tests, div);
    }
    c.render()
}

fn heatmap(g: &Grid, x: usize, (div, unit): (f64, &str)) -> String {
    let y = if x == 0 { 1 } else { 0 };
    let mut cells = vec![vec![None; g.axes[x].values.len()]; g.axes[y].values.len()];
    for pt in &g.points {
        let (Some(cx), Some(cy)) = (pt.coords.get(x), pt.coords.get(y)) else { continue };
        if let Some(slot) = cells.get_mut(*cy).and_then(|r| r.get_mut(*cx)) {
            let v = pt.mean / div;
            *slot = Some(Cell { value: v, text: crate::plot::line::value(v, TickFormat::Number) });
        }
    }
    Heatmap {
        title: format!("{}: {}", g.title, metric_name(g, unit)),
        x_label: g.axes[x].name.clone(),
        y_label: g.axes[y].name.clone(),
        columns: g.axes[x].values.iter().map(|v| v.label.clone()).collect(),
        rows: g.axes[y].values.iter().map(|v| v.label.clone()).collect(),
        cells,
        unit: unit.to_string(),
    }
    .render()
}

/// A grid without a numeric axis (congestion controls, on/off): one bar per point.
fn bars(g: &Grid, (div, unit): (f64, &str)) -> String {
    let categories: Vec<String> = g.points.iter().map(|pt| curve_label(g, usize::MAX, &pt.coords)).collect();
    BarChart {
        title: g.title.clone(),
        y_label: metric_name(g, unit),
        y_format: TickFormat::Number,
        categories,
        series: vec![BarSeries {
            name: "mean".into(),
            values: g.points.iter().map(|pt| Some(pt.mean / div)).collect(),
        }],
    }
    .render()
}
