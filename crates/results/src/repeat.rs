//! Repeat-until-confident results (netperf `-i max,min -I level,width`,
//! measurement-methods.md §1): what was asked, each judged metric's estimate, every iteration.

use serde::{Deserialize, Serialize};

use crate::run::TestResult;

/// What repetition was asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfidenceTarget {
    /// Confidence level, in %, e.g. 99.
    pub level_pct: f64,
    /// Full interval width asked for, in % of the mean (netperf's `-I 99,5`: 5 = ±2.5 %).
    pub width_pct: f64,
    /// Iterations always run.
    pub min_iterations: u32,
    /// Iterations at most.
    pub max_iterations: u32,
    /// Judge on the result alone, ignoring CPU (`--confidence-on result`, netperf `-r`).
    pub result_only: bool,
}

/// A metric's mean over iterations with its Student-t confidence interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// Metric id: `goodput_bps`, `trans_per_s`, `local_cpu_pct` or `remote_cpu_pct`.
    pub metric: String,
    /// Mean over the iterations.
    pub mean: f64,
    /// Sample standard deviation (0 with one value).
    pub stddev: f64,
    /// Half-width of the confidence interval, in the metric's unit (0 with one value).
    pub half_width: f64,
    /// Confidence level of `half_width`, in %.
    pub level_pct: f64,
    /// Achieved full width, in % of the mean (`2 · half_width / mean · 100`).
    pub width_pct: f64,
    /// Whether this metric's width is within the target.
    pub met: bool,
    /// One value per iteration, in order (drift and warm-up stay visible).
    pub values: Vec<f64>,
}

impl Estimate {
    /// Lower end of the interval.
    pub fn lower(&self) -> f64 {
        self.mean - self.half_width
    }

    /// Upper end of the interval.
    pub fn upper(&self) -> f64 {
        self.mean + self.half_width
    }
}

/// How a repeated test went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Repetition {
    /// What was asked.
    pub target: ConfidenceTarget,
    /// Iterations run.
    pub iterations: u32,
    /// Whether every judged metric reached the target width.
    pub met: bool,
    /// One estimate per judged metric; the first is the result (goodput or transactions/s).
    pub estimates: Vec<Estimate>,
    /// Every iteration's full result, in order (their own `repetition` is `None`).
    pub runs: Vec<TestResult>,
    /// Iterations that did not count and were run again: a hypervisor took
    /// [`crate::cpu::STOLEN_PCT`] or more of a host's CPU time during them, so they measured
    /// the host's neighbours as much as the test (kept here, in order).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub set_aside: Vec<TestResult>,
}

impl Repetition {
    /// The estimate of `metric`, if judged.
    pub fn estimate(&self, metric: &str) -> Option<&Estimate> {
        self.estimates.iter().find(|e| e.metric == metric)
    }
}
