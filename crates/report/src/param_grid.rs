//! Parameter grids to plot: a sweep's axes and points, or a grid found in loose results
//! (tests of one kind whose specs differ in one or more parameters, e.g. several saved
//! `--json` runs with different `-l` and `-w`). Both become a [`Grid`], which the HTML and
//! markdown renderers draw as curves, heatmaps and tables.

use std::collections::BTreeMap;

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
        let sweep = run.sweep.as_ref()?;
        let axes = sweep
            .plan
            .axes
            .iter()
            .map(|a| {
                let mut names = vec![a.name.clone()];
                names.extend(a.tied.iter().cloned());
                let bytes = is_size_param(&a.name);
                let values = a.values.iter().map(|v| value_of(v, bytes)).collect();
                GridAxis { name: names.join("="), bytes, values }
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
    /// that differ between tests (parameters that always change together become one axis).
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

/// Parameters of a spec that a grid may vary: name, byte size?, value.
fn params(s: &TestSpec) -> Vec<(&'static str, bool, Option<ParamValue>)> {
    let int = |v: u32| Some(ParamValue::Int(u64::from(v)));
    let opt = |v: Option<u32>| v.map(|v| ParamValue::Int(u64::from(v)));
    vec![
        ("write size", true, int(s.send_len)),
        ("read size", true, int(s.recv_len)),
        ("request", true, int(s.request_len)),
        ("response", true, int(s.response_len)),
        ("sndbuf", true, opt(s.sndbuf)),
        ("rcvbuf", true, opt(s.rcvbuf)),
        ("server sndbuf", true, opt(s.remote_sndbuf)),
        ("server rcvbuf", true, opt(s.remote_rcvbuf)),
        ("mss", true, opt(s.mss)),
        ("streams", false, int(s.parallel)),
        ("burst", false, int(s.burst)),
        ("nodelay", false, Some(ParamValue::Bool(s.nodelay))),
        ("congestion", false, s.congestion.clone().map(ParamValue::Text)),
    ]
}

/// Parameters of `tests` that differ: (names of parameters changing together, byte
/// sizes?, column index in [`params`]).
type Varying = Vec<(Vec<&'static str>, bool, usize)>;

/// A name for parameters that change together: the usual name of a known group (`-w` sets
/// all four socket buffers), else the first name with the rest in parentheses.
fn axis_name(names: &[&str]) -> String {
    const GROUPS: [(&[&str], &str); 4] = [
        (&["sndbuf", "rcvbuf", "server sndbuf", "server rcvbuf"], "window"),
        (&["write size", "read size"], "write size"),
        (&["request", "response"], "request=response"),
        (&["sndbuf", "rcvbuf"], "client buffers"),
    ];
    if let Some((_, name)) = GROUPS.iter().find(|(g, _)| *g == names) {
        return name.to_string();
    }
    match names {
        [] => String::new(),
        [one] => one.to_string(),
        [first, rest @ ..] => format!("{first} (= {})", rest.join(", ")),
    }
}

fn varying(table: &[Vec<(&'static str, bool, Option<ParamValue>)>]) -> Varying {
    let column = |i: usize| -> Vec<Option<ParamValue>> { table.iter().map(|row| row[i].2.clone()).collect() };
    let mut axes: Varying = Vec::new();
    let Some(first) = table.first() else { return Vec::new() };
    for (i, (name, bytes, _)) in first.iter().enumerate() {
        let col = column(i);
        if col.iter().all(|v| *v == col[0]) {
            continue;
        }
        match axes.iter_mut().find(|(_, _, j)| same_partition(&column(*j), &col)) {
            Some(axis) => axis.0.push(name),
            None => axes.push((vec![name], *bytes, i)),
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
                .map(|(names, bytes, c)| {
                    format!("{} {}", axis_name(names), value_of_opt(&row[*c].2, *bytes).label)
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
    let table: Vec<Vec<(&str, bool, Option<ParamValue>)>> = tests.iter().map(|t| params(&t.spec)).collect();
    let mut axes = varying(&table);
    if axes.is_empty() {
        return None;
    }
    // Sizes come first in `params`; as the last (fastest) axis they become the x axis.
    axes.reverse();
    let column = |i: usize| -> Vec<Option<ParamValue>> { table.iter().map(|row| row[i].2.clone()).collect() };
    let grid_axes: Vec<GridAxis> = axes
        .iter()
        .map(|(names, bytes, i)| GridAxis {
            name: axis_name(names),
            bytes: *bytes,
            values: distinct(&column(*i), *bytes),
        })
        .collect();
    let mut cells: BTreeMap<Vec<usize>, Vec<f64>> = BTreeMap::new();
    for (row, t) in table.iter().zip(tests) {
        let Some(v) = value(metric, t) else { continue };
        let coords: Option<Vec<usize>> = axes
            .iter()
            .zip(&grid_axes)
            .map(|((_, bytes, i), ga)| {
                let label = value_of_opt(&row[*i].2, *bytes).label;
                ga.values.iter().position(|v| v.label == label)
            })
            .collect();
        let Some(coords) = coords else { continue };
        cells.entry(coords).or_default().push(v);
    }
    let points = cells.into_iter().map(|(coords, vs)| point(coords, &vs)).collect();
    Some(Grid { title, metric, axes: grid_axes, points })
}

/// Whether two columns split the tests the same way (one value of `a` ⇔ one value of `b`).
fn same_partition(a: &[Option<ParamValue>], b: &[Option<ParamValue>]) -> bool {
    let n = a.len().min(b.len());
    (0..n).all(|i| (0..n).all(|j| (a[i] == a[j]) == (b[i] == b[j])))
}

fn distinct(col: &[Option<ParamValue>], bytes: bool) -> Vec<AxisValue> {
    let mut vals: Vec<AxisValue> = Vec::new();
    for v in col {
        let av = value_of_opt(v, bytes);
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

fn value_of_opt(v: &Option<ParamValue>, bytes: bool) -> AxisValue {
    match v {
        Some(v) => value_of(v, bytes),
        None => AxisValue { label: "default".into(), num: None },
    }
}

fn value_of(v: &ParamValue, bytes: bool) -> AxisValue {
    match v {
        ParamValue::Int(n) if bytes => {
            AxisValue { label: crate::plot::scale::size(*n as f64), num: Some(*n as f64) }
        }
        ParamValue::Int(n) => AxisValue { label: n.to_string(), num: Some(*n as f64) },
        other => AxisValue { label: other.to_string(), num: None },
    }
}

/// Whether a sweep parameter (command-line name) is a byte size.
fn is_size_param(name: &str) -> bool {
    ["len", "buf", "window", "size", "mss", "request", "response"].iter().any(|k| name.contains(k))
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
