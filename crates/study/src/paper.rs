//! A paper's published numbers as data: each figure or table the seed text prints, with
//! where it is in the paper and its unit as printed, so the report can set them beside what
//! tcplab measured. Only numbers that appear in the seed texts are stored; values read off a
//! plot that the text does not print are not.

/// A unit as a paper prints it, and how to bring it to the unit tcplab reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Megabits per second (`Mbps`, `Mbit/s`): 10⁶ bit/s.
    Mbps,
    /// Transactions (request–response pairs) per second.
    TransPerS,
    /// Milliseconds.
    Ms,
    /// Percent (CPU utilisation, loss, efficiency).
    Percent,
    /// A plain number (a ratio, the figure of merit M).
    Number,
    /// Bytes.
    Bytes,
}

impl Unit {
    /// The unit as tcplab's tables print it.
    pub fn label(self) -> &'static str {
        match self {
            Unit::Mbps => "Mbit/s",
            Unit::TransPerS => "trans/s",
            Unit::Ms => "ms",
            Unit::Percent => "%",
            Unit::Number => "",
            Unit::Bytes => "bytes",
        }
    }
}

/// One published value: its row label (what it is), an optional x (a size or window in
/// bytes) and, when the paper gives one, a ± spread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Value {
    /// What the value is, in the paper's words (`PPro-200 Linux`, `window 4096`).
    pub label: &'static str,
    /// The x coordinate of a curve point (bytes), if the value is one.
    pub x: Option<f64>,
    /// The value in `Figure::unit`.
    pub value: f64,
    /// The ± the paper prints beside it.
    pub spread: Option<f64>,
}

/// A value with a label only.
pub const fn v(label: &'static str, value: f64) -> Value {
    Value { label, x: None, value, spread: None }
}

/// A curve point at `x` bytes.
pub const fn xy(label: &'static str, x: f64, value: f64) -> Value {
    Value { label, x: Some(x), value, spread: None }
}

/// A value with the ± the paper prints.
pub const fn pm(label: &'static str, value: f64, spread: f64) -> Value {
    Value { label, x: None, value, spread: Some(spread) }
}

/// A figure or table of a paper.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figure {
    /// Short id used by the comparisons (`t2`, `fig7b`).
    pub id: &'static str,
    /// Where it is: `Table 2`, `Figure 7 (b) and §5 text`.
    pub source: &'static str,
    /// What it shows.
    pub caption: &'static str,
    /// The unit as printed (`Mbps`, `Mbit/s`, `%`).
    pub printed_unit: &'static str,
    /// The unit the values are in.
    pub unit: Unit,
    /// The numbers.
    pub values: &'static [Value],
}

impl Figure {
    /// The value labelled `label`.
    pub fn get(&self, label: &str) -> Option<&Value> {
        self.values.iter().find(|v| v.label == label)
    }

    /// Where the value labelled `label` comes from, for a table cell (`Table 2: 119.12 Mbps`).
    pub fn cite(&self, label: &str) -> Option<(f64, String)> {
        self.get(label).map(|v| (v.value, format!("{} ({})", self.source, v.label)))
    }
}

/// Finds figure `id` among `figures`.
pub fn find<'a>(figures: &'a [Figure], id: &str) -> Option<&'a Figure> {
    figures.iter().find(|f| f.id == id)
}

/// What is wrong with a figure's data, if anything: every figure needs a source, a caption,
/// a printed unit that matches its unit, and finite values in a sane range for that unit.
pub fn problems(f: &Figure) -> Vec<String> {
    let mut out = Vec::new();
    if f.source.trim().is_empty() || f.caption.trim().is_empty() {
        out.push(format!("{}: no source or caption", f.id));
    }
    let printed_ok = match f.unit {
        Unit::Mbps => matches!(f.printed_unit, "Mbps" | "Mbit/s"),
        Unit::TransPerS => f.printed_unit.contains("per second"),
        Unit::Ms => f.printed_unit == "ms",
        Unit::Percent => f.printed_unit == "%",
        Unit::Number => f.printed_unit.is_empty() || f.printed_unit == "dimensionless",
        Unit::Bytes => f.printed_unit == "bytes",
    };
    if !printed_ok {
        out.push(format!("{}: printed unit `{}` does not match {:?}", f.id, f.printed_unit, f.unit));
    }
    let (lo, hi) = match f.unit {
        Unit::Mbps => (0.0, 10_000.0),
        Unit::TransPerS => (0.0, 1e6),
        Unit::Ms => (0.0, 10_000.0),
        Unit::Percent => (0.0, 100.0),
        Unit::Number => (0.0, 1e6),
        Unit::Bytes => (1.0, 1e9),
    };
    if f.values.is_empty() {
        out.push(format!("{}: no values", f.id));
    }
    for v in f.values {
        if !v.value.is_finite() || v.value < lo || v.value > hi || v.label.is_empty() {
            out.push(format!("{}: value {} ({}) out of range for {:?}", f.id, v.value, v.label, f.unit));
        }
        if v.spread.is_some_and(|s| !s.is_finite() || s < 0.0) {
            out.push(format!("{}: bad spread at {}", f.id, v.label));
        }
    }
    out
}
