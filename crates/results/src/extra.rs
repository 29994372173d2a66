//! What one test type measures beyond the figures every test has: its own *sections*, in
//! its own shape, which only that type reads back (engine's registry), and its own *figures*,
//! labelled values every renderer shows as they are. A new test type with figures of its own
//! therefore needs no change here, on the wire or in the renderers.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A test type's own sections of a measurement or summary, by name (a file transfer's
/// `file`). Serialized in place, beside the common fields: `{"measured_s": …, "file": {…}}`.
pub type Sections = BTreeMap<String, serde_json::Value>;

/// A labelled value of a test type's own, for people and tables.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// What it is, in words (`receiver disk time`).
    pub label: String,
    /// Its value (after repeats: the mean, or the first run's value when listed per run).
    pub value: FigureValue,
    /// How repeats of the test combine it, as the test type declares.
    #[serde(default, skip_serializing_if = "Combine::is_by_kind")]
    pub combine: Combine,
    /// After repeats, of an averaged figure: how the runs spread around the mean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<Spread>,
    /// After repeats, of a figure that cannot be averaged and differed between runs: each
    /// run's value, in run order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_run: Vec<FigureValue>,
}

/// How repeats of a test (`-I`, `--iterations`) combine one of its figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Combine {
    /// As its value's kind says: numbers are averaged ([`Combine::Mean`]), words listed
    /// per run ([`Combine::PerRun`]).
    #[default]
    ByKind,
    /// The mean over the runs, with its [`Spread`].
    Mean,
    /// Not averaged: one value when every run agrees, else each run's value.
    PerRun,
}

impl Combine {
    /// Whether this is the default, [`Combine::ByKind`].
    pub fn is_by_kind(&self) -> bool {
        *self == Combine::ByKind
    }
}

/// How an averaged figure's runs spread, in the figure's own unit (bytes, seconds, bit/s…).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Runs that had the figure.
    pub runs: u32,
    /// Sample standard deviation (0 for one run).
    pub stddev: f64,
    /// The smallest run's value.
    pub min: f64,
    /// The largest run's value.
    pub max: f64,
}

/// A figure's value, typed so that every renderer writes it in tcplab's units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "kebab-case")]
pub enum FigureValue {
    /// Bytes (rendered in KiB/MiB/GiB).
    Bytes(u64),
    /// A count of things.
    Count(u64),
    /// Seconds (rendered in µs/ms/s).
    Seconds(f64),
    /// Bits per second (rendered in kbit/s … Gbit/s).
    BitRate(f64),
    /// A share, 0–1 (rendered in %).
    Share(f64),
    /// Words.
    Text(String),
}

/// A table of a test type's own, shown by every renderer as it is: its cells are typed
/// values, so each renderer writes them in tcplab's units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OwnTable {
    /// What it shows (`Processing time per segment`).
    pub title: String,
    /// Column titles.
    pub head: Vec<String>,
    /// Rows, each as long as `head`.
    pub rows: Vec<Vec<FigureValue>>,
    /// Lines shown under it (how it was measured, why a part is missing).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// A line plot of a test type's own: curves of points, drawn by the HTML report and listed
/// by the text report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OwnPlot {
    /// Its title.
    pub title: String,
    /// The horizontal axis.
    pub x: PlotAxis,
    /// The vertical axis.
    pub y: PlotAxis,
    /// What the curves differ in (legend title), may be empty.
    #[serde(default)]
    pub legend: String,
    /// The curves.
    pub series: Vec<PlotSeries>,
}

/// An axis of an [`OwnPlot`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlotAxis {
    /// Its title with the unit (`µs per segment`).
    pub label: String,
    /// How values are spaced and written.
    pub scale: AxisScale,
}

/// How an axis spaces and writes its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AxisScale {
    /// Plain numbers, evenly spaced from 0.
    Linear,
    /// Byte sizes on a log-2 scale (`64`, `4K`).
    Log2Bytes,
    /// Plain numbers on the scale that shows them all: linear from 0, or log-10 when the
    /// positive values span [`FITTED_LOG_SPAN`] or more (one stalled point would flatten the
    /// rest against the axis).
    Fitted,
}

/// How many times the largest positive value of a [`AxisScale::Fitted`] axis must exceed the
/// smallest for the axis to go log-10.
pub const FITTED_LOG_SPAN: f64 = 20.0;

/// One curve of an [`OwnPlot`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlotSeries {
    /// Its name in the legend.
    pub name: String,
    /// Its points, `[x, y]`, in x order.
    pub points: Vec<[f64; 2]>,
}

impl Figure {
    /// A figure labelled `label`.
    pub fn new(label: impl Into<String>, value: FigureValue) -> Figure {
        Figure { label: label.into(), value, combine: Combine::ByKind, spread: None, per_run: Vec::new() }
    }

    /// This figure, combined over repeats as `combine` says.
    pub fn combined(self, combine: Combine) -> Figure {
        Figure { combine, ..self }
    }

    /// Whether repeats average it: declared [`Combine::Mean`], or a number by kind.
    pub fn averaged(&self) -> bool {
        self.combine != Combine::PerRun && self.value.number().is_some()
    }
}

impl FigureValue {
    /// The value as a number in its unit; `None` for words.
    pub fn number(&self) -> Option<f64> {
        match self {
            FigureValue::Bytes(n) | FigureValue::Count(n) => Some(*n as f64),
            FigureValue::Seconds(v) | FigureValue::BitRate(v) | FigureValue::Share(v) => Some(*v),
            FigureValue::Text(_) => None,
        }
    }

    /// A value of the same kind holding `x` (rounded for bytes and counts; words unchanged).
    pub fn with_number(&self, x: f64) -> FigureValue {
        let whole = x.max(0.0).round() as u64;
        match self {
            FigureValue::Bytes(_) => FigureValue::Bytes(whole),
            FigureValue::Count(_) => FigureValue::Count(whole),
            FigureValue::Seconds(_) => FigureValue::Seconds(x),
            FigureValue::BitRate(_) => FigureValue::BitRate(x),
            FigureValue::Share(_) => FigureValue::Share(x),
            FigureValue::Text(t) => FigureValue::Text(t.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_tagged_by_kind() {
        let f = Figure::new("receiver disk time", FigureValue::Seconds(0.25));
        let json = serde_json::to_string(&f).unwrap_or_default();
        assert_eq!(json, r#"{"label":"receiver disk time","value":{"kind":"seconds","value":0.25}}"#);
    }
}
