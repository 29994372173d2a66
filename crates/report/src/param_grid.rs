//! Parameter grids to plot: a sweep's axes and points, or a grid found in loose results
//! (tests of one kind whose specs differ in one or more parameters, e.g. several saved
//! `--json` runs with different `-l` and `-w`). Both become a [`Grid`], which the HTML and
//! markdown renderers draw as curves, heatmaps and tables.

use std::collections::BTreeMap;

use results::setting::{self, Setting, ValueKind};
use results::{Direction, Metric, ParamValue, RunRecord, TestResult, TestSpec};

/// The value of `metric` in a result: its headline, when that is `metric` and was measured.
pub fn value(metric: Metric, r: &TestResult) -> Option<f64> {
    let h = r.summary.headline.filter(|h| h.metric == metric)?;
    h.value.filter(|v| v.is_finite())
}

/// One value an axis takes: its label and, when numeric, its number.
#[derive(Debug, Clone, PartialEq)]
pub struct AxisValue {
    /// As shown (`64K`, `cubic`, `default`).
    pub label: String,
    /// As a number, when it is one.
    pub num: Option<f64>,
}

/// One parameter of a grid.
#[derive(Debug, Clone, PartialEq)]
pub struct GridAxis {
    /// Name for people (`write size`, `window`); tied parameters joined with `=`.
    pub name: String,
    /// Byte sizes (log-2 axis, `64K` labels).
    pub bytes: bool,
    /// Values in order.
    pub values: Vec<AxisValue>,
}

impl GridAxis {
    /// Whether every value is a number (so the axis can be an x axis).
    pub fn numeric(&self) -> bool {
        self.values.iter().all(|v| v.num.is_some())
    }
}

/// One measured point: its coordinates (indices into each axis) and the estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct GridPoint {
    /// Index into each axis's values.
    pub coords: Vec<usize>,
    /// Mean of the metric.
    pub mean: f64,
    /// Half-width of its confidence interval, when repeated.
    pub half_width: Option<f64>,
    /// Measurements behind the mean.
    pub n: usize,
}

/// A grid of results to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// Title (`tcp-stream forward sweep`).
    pub title: String,
    /// What the values are.
    pub metric: Metric,
    /// Parameters that vary, slowest first.
    pub axes: Vec<GridAxis>,
    /// Points measured.
    pub points: Vec<GridPoint>,
}

impl Grid {
    /// The axis to draw along x: the numeric one with most values (the last on ties,
    /// which varies fastest in a sweep).
    pub fn x_axis(&self) -> Option<usize> {
        let mut best: Option<usize> = None;
        for (i, a) in self.axes.iter().enumerate().filter(|(_, a)| a.numeric()) {
            if best.is_none_or(|b| a.values.len() >= self.axes[b].values.len()) {
                best = Some(i);
            }
        }
        best
    }

    /// The grid of a sweep run, if the run is one.
    pub fn from_sweep(run: &RunRecord) -> Option<Grid> {
        // A mesh has its own matrix (crate::mesh), not a parameter grid.
        let sweep = run.sweep.as_ref().filter(|s| s.plan.mesh.is_none())?;
        let axes = sweep
            .plan
            .axes
            .iter()
            .map(|a| {
                let mut names = vec![a.name.clone()];
                names.extend(a.tied.iter().cloned());
                let kind = kind_of(&a.name);
                let values = a.values.iter().map(|v| value_of(v, kind)).collect();
                GridAxis { name: names.join("="), bytes: kind == ValueKind::Bytes, values }
            })
            .collect();
        let points = sweep
            .points
            .iter()
            .filter(|p| p.headline.mean.is_finite())
            .map(|p| GridPoint {
                coords: p.coords.iter().map(|c| *c as usize).collect(),
                mean: p.headline.mean,
                half_width: (p.headline.half_width > 0.0).then_some(p.headline.half_width),
                n: p.headline.values.len().max(1),
            })
            .collect();
        let title = format!("{} sweep", spec_title(&sweep.plan.base));
        let metric = Metric::from_id(&sweep.plan.metric)?;
        Some(Grid { title, metric, axes, points })
    }

    /// The grids of `runs`: each sweep's, then those found among the other runs' tests.
    pub fn all(runs: &[RunRecord]) -> Vec<Grid> {
        let mut out: Vec<Grid> = runs.iter().filter_map(Grid::from_sweep).collect();
        let loose: Vec<&TestResult> =
            runs.iter().filter(|r| r.sweep.is_none()).flat_map(|r| &r.tests).collect();
        out.extend(Grid::derive(&loose));
        out
    }

    /// Grids found among loose results: per test kind and direction, the spec parameters
    /// that differ between tests (parameters equal to each other in every test become one
    /// axis), kept when some curve has two points or more.
    /// Repeated settings are averaged, with a 95 % confidence interval.
    pub fn derive(tests: &[&TestResult]) -> Vec<Grid> {
        let mut groups: BTreeMap<String, Vec<&TestResult>> = BTreeMap::new();
        for t in tests {
            groups.entry(spec_title(&t.spec)).or_default().push(t);
        }
        groups.into_iter().filter_map(|(title, ts)| derive_one(title, &ts)).collect()
    }
}

/// `tcp-stream`, `tcp-stream reverse`, `tcp-rr`.
fn spec_title(s: &TestSpec) -> String {
    match s.direction {
        Direction::Forward => s.test.id().to_string(),
        Direction::Reverse => format!("{} reverse", s.test.id()),
        Direction::Bidir => format!("{} bidir", s.test.id()),
    }
}

/// A spec's settings as a grid may vary them: every spec field of [`results::setting`] but
/// the direction (which is in the grid's title), in the table's order (sizes first).
type Row = Vec<(&'static Setting, Option<ParamValue>)>;

fn params(s: &TestSpec) -> Row {
    setting::ALL
        .iter()
        .filter(|p| !p.is_combined() && p.id != setting::DIRECTION.id)
        .map(|p| (*p, (p.get)(s)))
        .collect()
}

/// Parameters of `tests` that differ: (settings changing together, their kind of value,
/// column index in [`params`]).
type Varying = Vec<(Vec<&'static Setting>, ValueKind, usize)>;

/// A name for settings that change together: the label of the combined setting made of
/// exactly them (`-w` sets all four socket buffers: `window`), else the first label with the
/// rest in parentheses.
fn axis_name(settings: &[&Setting]) -> String {
    let combined = setting::ALL.iter().find(|c| {
        c.is_combined() && c.parts.len() == settings.len() && settings.iter().all(|s| c.parts.contains(&s.id))
    });
    if let Some(c) = combined {
        return c.label.to_string();
    }
    match settings {
        [] => String::new(),
        [one] => one.label.to_string(),
        [first, rest @ ..] => {
            let rest: Vec<&str> = rest.iter().map(|s| s.label).collect();
            format!("{} (= {})", first.label, rest.join(", "))
        }
    }
}

fn varying(table: &[Row]) -> Varying {
    let column = |i: usize| -> Vec<Option<ParamValue>> { table.iter().map(|row| row[i].1.clone()).collect() };
    let mut axes: Varying = Vec::new();
    let Some(first) = table.first() else { return Vec::new() };
    for (i, (s, _)) in first.iter().enumerate() {
        let col = column(i);
        if col.iter().all(|v| *v == col[0]) {
            continue;
        }
        match axes.iter_mut().find(|(_, _, j)| column(*j) == col) {
            Some(axis) => axis.0.push(s),
            None => axes.push((vec![s], s.kind, i)),
        }
    }
    axes
}

/// Labels that tell tests apart: each test's label, plus, where several tests share a
/// label, the parameters that differ between them (`stream (write size 1K, sndbuf=rcvbuf 32K)`).
pub fn distinct_labels(tests: &[&TestResult]) -> Vec<String> {
    let mut out: Vec<String> = tests.iter().map(|t| t.label.clone()).collect();
    let mut seen: Vec<&str> = Vec::new();
    for t in tests {
        if seen.contains(&t.label.as_str()) {
            continue;
        }
        seen.push(&t.label);
        let members: Vec<usize> = (0..tests.len()).filter(|i| tests[*i].label == t.label).collect();
        if members.len() < 2 {
            continue;
        }
        let table: Vec<_> = members.iter().map(|i| params(&tests[*i].spec)).collect();
        let axes = varying(&table);
        if axes.is_empty() {
            continue;
        }
        for (row, i) in table.iter().zip(&members) {
            let parts: Vec<String> = axes
                .iter()
                .map(|(names, kind, c)| {
                    format!("{} {}", axis_name(names), value_of_opt(&row[*c].1, *kind).label)
                })
                .collect();
            out[*i] = format!("{} ({})", t.label, parts.join(", "));
        }
    }
    out
}

fn derive_one(title: String, tests: &[&TestResult]) -> Option<Grid> {
    let first = tests.first()?;
    let metric = first.summary.headline?.metric;
    let table: Vec<Row> = tests.iter().map(|t| params(&t.spec)).collect();
    let mut axes = varying(&table);
    if axes.is_empty() {
        return None;
    }
    // Sizes come first in `params`; as the last (fastest) axis they become the x axis.
    axes.reverse();
    let column = |i: usize| -> Vec<Option<ParamValue>> { table.iter().map(|row| row[i].1.clone()).collect() };
    let grid_axes: Vec<GridAxis> = axes
        .iter()
        .map(|(names, kind, i)| GridAxis {
            name: axis_name(names),
            bytes: *kind == ValueKind::Bytes,
            values: distinct(&column(*i), *kind),
        })
        .collect();
    let mut cells: BTreeMap<Vec<usize>, Vec<f64>> = BTreeMap::new();
    for (row, t) in table.iter().zip(tests) {
        let Some(v) = value(metric, t) else { continue };
        let coords: Option<Vec<usize>> = axes
            .iter()
            .zip(&grid_axes)
            .map(|((_, kind, i), ga)| {
                let label = value_of_opt(&row[*i].1, *kind).label;
                ga.values.iter().position(|v| v.label == label)
            })
            .collect();
        let Some(coords) = coords else { continue };
        cells.entry(coords).or_default().push(v);
    }
    let points = cells.into_iter().map(|(coords, vs)| point(coords, &vs)).collect();
    let grid = Grid { title, metric, axes: grid_axes, points };
    has_curve(&grid).then_some(grid)
}

/// Whether some curve of `grid` has two points or more: tests equal in every setting but
/// the x axis's, at two values of it. Tests that differ in several settings at once
/// (`tcplab run`'s rr tests, 1/1 … 128/8192) have none: no setting was varied alone.
fn has_curve(grid: &Grid) -> bool {
    let x = grid.x_axis().unwrap_or(0);
    let mut curves: BTreeMap<Vec<usize>, usize> = BTreeMap::new();
    for p in &grid.points {
        let rest: Vec<usize> =
            p.coords.iter().enumerate().filter(|(i, _)| *i != x).map(|(_, c)| *c).collect();
        *curves.entry(rest).or_default() += 1;
    }
    curves.values().any(|n| *n >= 2)
}

fn distinct(col: &[Option<ParamValue>], kind: ValueKind) -> Vec<AxisValue> {
    let mut vals: Vec<AxisValue> = Vec::new();
    for v in col {
        let av = value_of_opt(v, kind);
        if !vals.iter().any(|x| x.label == av.label) {
            vals.push(av);
        }
    }
    vals.sort_by(|a, b| match (a.num, b.num) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Greater,
        (None, Some(_)) => std::cmp::Ordering::Less,
        (None, None) => a.label.cmp(&b.label),
    });
    vals
}

fn value_of_opt(v: &Option<ParamValue>, kind: ValueKind) -> AxisValue {
    match v {
        Some(v) => value_of(v, kind),
        None => AxisValue { label: "default".into(), num: None },
    }
}

/// A value as an axis shows it, as the command line takes it ([`crate::units::setting_value`]:
/// sizes `64K`, rates `100M`, times `2.5 s`), with its number when it has one.
fn value_of(v: &ParamValue, kind: ValueKind) -> AxisValue {
    let num = match v {
        ParamValue::Int(n) => Some(*n as f64),
        _ => None,
    };
    AxisValue { label: crate::units::setting_value(kind, v), num }
}

/// The kind of value of a sweep axis (a setting's id or alias); a count when unknown.
fn kind_of(name: &str) -> ValueKind {
    setting::find(name).map_or(ValueKind::Count, |s| s.kind)
}

fn point(coords: Vec<usize>, vs: &[f64]) -> GridPoint {
    let n = vs.len();
    let mean = vs.iter().sum::<f64>() / n.max(1) as f64;
    let half_width = (n > 1).then(|| {
        let var = vs.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        t95(n - 1) * (var / n as f64).sqrt()
    });
    GridPoint { coords, mean, half_width, n }
}

/// Two-sided 95 % Student-t quantile for `df` degrees of freedom.
fn t95(df: usize) -> f64 {
    const T: [f64; 10] = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228];
    match df {
        0 => f64::NAN,
        1..=10 => T[df - 1],
        11..=20 => 2.086 + (2.228 - 2.086) * (20 - df) as f64 / 10.0,
        21..=30 => 2.042 + (2.086 - 2.042) * (30 - df) as f64 / 10.0,
        _ => 1.96,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    fn labels(names: &[&str]) -> String {
        let settings: Vec<&Setting> =
            names.iter().map(|n| setting::by_id(n).unwrap_or_else(|| panic!("{n}"))).collect();
        axis_name(&settings)
    }

    #[test]
    fn settings_changing_together_are_named_by_their_combined_setting() {
        assert_eq!(labels(&["sndbuf", "rcvbuf", "remote_sndbuf", "remote_rcvbuf"]), "window");
        assert_eq!(labels(&["send_len", "recv_len"]), "write size");
        assert_eq!(labels(&["request_len", "response_len"]), "request=response");
        assert_eq!(labels(&["sndbuf", "rcvbuf"]), "sndbuf (= rcvbuf)");
        assert_eq!(labels(&["remote_rcvbuf"]), "server rcvbuf");
    }

    #[test]
    fn loose_results_differing_in_any_setting_form_a_grid_labelled_from_the_table() {
        let mut tests = Vec::new();
        for (rate, secs) in [(1_000_000, 5_000), (1_000_000, 10_000), (5_000_000, 5_000), (5_000_000, 10_000)]
        {
            let mut t = fixture::stream(1024, 65_536, 1.0);
            (t.spec.rate_bps, t.spec.duration_ms) = (rate, secs);
            tests.push(t);
        }
        let refs: Vec<&TestResult> = tests.iter().collect();
        let grids = Grid::derive(&refs);
        let [grid] = &grids[..] else { panic!("one grid expected: {grids:?}") };
        let axes: Vec<(&str, Vec<&str>)> = grid
            .axes
            .iter()
            .map(|a| (a.name.as_str(), a.values.iter().map(|v| v.label.as_str()).collect()))
            .collect();
        assert_eq!(axes, vec![("duration", vec!["5 s", "10 s"]), ("rate", vec!["1M", "5M"])]);
        assert_eq!(grid.points.len(), 4, "different settings are not averaged together");
        let labels = distinct_labels(&refs);
        assert!(labels[3].ends_with("(rate 5M, duration 10 s)"), "{labels:?}");
    }

    /// An rr test labelled as `tcplab run` labels them all.
    fn rr(req: u32, resp: u32) -> TestResult {
        TestResult { label: "rr".into(), ..fixture::rr(req, resp, 1e4) }
    }

    #[test]
    fn settings_changing_together_but_unequal_are_not_one_axis_and_form_no_grid() {
        let tests: Vec<TestResult> =
            [(1, 1), (64, 64), (100, 200), (128, 8192)].iter().map(|(q, r)| rr(*q, *r)).collect();
        let refs: Vec<&TestResult> = tests.iter().collect();
        assert_eq!(Grid::derive(&refs), Vec::new(), "no setting varies alone");
        let labels = distinct_labels(&refs);
        assert!(labels[3].ends_with("(request 128, response 8K)"), "{labels:?}");
        let mut one_more = tests.clone();
        one_more.push(rr(128, 64));
        let refs: Vec<&TestResult> = one_more.iter().collect();
        let grids = Grid::derive(&refs);
        let [grid] = &grids[..] else { panic!("one grid expected: {grids:?}") };
        let names: Vec<&str> = grid.axes.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, vec!["response", "request"]);
    }

    #[test]
    fn sweep_axes_take_their_kind_from_the_table_under_old_names_too() {
        assert_eq!(kind_of("send-len"), ValueKind::Bytes);
        assert_eq!(kind_of("window"), ValueKind::Bytes);
        assert_eq!(kind_of("time"), ValueKind::Millis);
        assert_eq!(kind_of("parallel"), ValueKind::Count);
        let grid =
            Grid::from_sweep(&fixture::sweep_run()).unwrap_or_else(|| panic!("the fixture is a sweep"));
        assert!(grid.axes.iter().all(|a| a.bytes), "window and len are sizes");
    }
}
