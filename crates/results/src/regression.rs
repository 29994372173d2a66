//! What `tcplab archive regressions` and the dashboard say of a path: per series (one path,
//! one test), the newest results against that series' own history. Computed by
//! `stats::regression`.

use serde::{Deserialize, Serialize};

/// A path and a test: what a history is kept of.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Series {
    /// The sending end (a mesh host's name, or the client host).
    pub sender: String,
    /// The receiving end (a mesh host's name, or the server asked for).
    pub receiver: String,
    /// Test type id (`tcp-stream`).
    pub test: String,
    /// The test's label (tells a suite's rr sizes apart).
    pub label: String,
    /// Headline metric id (`goodput_bps`).
    pub metric: String,
}

/// What the rule says of a series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Significantly worse by more than the threshold.
    Regressed,
    /// The newest result failed (no value to judge).
    Failed,
    /// Too little history for an interval.
    Unknown,
    /// Significantly better by more than the threshold.
    Improved,
    /// No significant change, or one within the threshold.
    Steady,
}

/// The newest results of a series against its history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    /// The series.
    pub series: Series,
    /// The verdict.
    pub verdict: Verdict,
    /// History values, oldest first.
    pub history: Vec<f64>,
    /// Newest values judged (oldest first).
    pub latest: Vec<f64>,
    /// Start of the newest result.
    pub latest_unix_ms: u64,
    /// Mean of the history (0 without one).
    pub history_mean: f64,
    /// Mean of the newest values (0 when the newest failed).
    pub latest_mean: f64,
    /// Change in % of the history's mean.
    pub change_pct: f64,
    /// Half-width of the change's interval in % of the history's mean; `None` without one.
    pub interval_pct: Option<f64>,
    /// Why the newest result failed.
    pub failure: Option<String>,
}
