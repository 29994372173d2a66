//! Parameter sweeps (`tcplab sweep`): the axes, and for each grid point its parameter values,
//! where its result is and the headline estimate. A sweep lives in a [`crate::RunRecord`]
//! (`sweep` field) whose `tests` hold the points' results.

use serde::{Deserialize, Serialize};

use crate::repeat::{ConfidenceTarget, Estimate};
use crate::spec::TestSpec;

/// One parameter's value.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ParamValue {
    /// On/off (e.g. `nodelay`).
    Bool(bool),
    /// Sizes, counts and times in the spec's units (bytes, ms).
    Int(u64),
    /// Names (e.g. `congestion`, `direction`).
    Text(String),
}

impl std::fmt::Display for ParamValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamValue::Bool(b) => write!(f, "{b}"),
            ParamValue::Int(n) => write!(f, "{n}"),
            ParamValue::Text(s) => f.write_str(s),
        }
    }
}

/// A parameter set to a value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParamSetting {
    /// The setting's id ([`crate::setting`]: `send_len`, `rcvbuf`, `len` …). Points stored
    /// before the ids name it by an alias (`send-len`, `request`, `time`), which
    /// [`crate::setting::find`] resolves too.
    pub name: String,
    /// Its value.
    pub value: ParamValue,
}

/// One `--vary`: a parameter and the values it takes, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Axis {
    /// The setting's id ([`crate::setting`]: `send_len`, `rcvbuf`, `len` …). Plans stored
    /// before the ids name it by an alias (`send-len`, `request`, `time`), which
    /// [`crate::setting::find`] resolves too.
    pub name: String,
    /// Settings tied to this one (`--tie sndbuf=rcvbuf=len`), named as `name` is: they take
    /// the same value.
    #[serde(default)]
    pub tied: Vec<String>,
    /// The values, in sweep order.
    pub values: Vec<ParamValue>,
    /// The range or list as typed, e.g. `512..32768:+512`.
    pub text: String,
}

/// What a sweep was asked to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepPlan {
    /// The spec every point starts from.
    pub base: TestSpec,
    /// Axes; the first varies slowest (rows), the last fastest (columns).
    pub axes: Vec<Axis>,
    /// Repetition per point, if asked.
    pub confidence: Option<ConfidenceTarget>,
    /// The headline metric tabulated: `goodput_bps` or `trans_per_s`.
    pub metric: String,
    /// When the sweep is a mesh (`tcplab mesh`): its hosts and cells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mesh: Option<crate::MeshPlan>,
}

impl SweepPlan {
    /// Points in the grid (product of the axes' lengths).
    pub fn len(&self) -> usize {
        self.axes.iter().map(|a| a.values.len()).product()
    }

    /// Whether the grid is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One finished grid point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// Row-major index in the grid (0-based).
    pub index: u32,
    /// Index into each axis's values.
    pub coords: Vec<u32>,
    /// Every parameter set at this point (ties included).
    pub params: Vec<ParamSetting>,
    /// Index of this point's result in the run's `tests`.
    pub test_index: u32,
    /// The headline metric: mean, confidence interval, iterations (`n` = values' length).
    pub headline: Estimate,
    /// Whether the confidence target was met (true when none was asked).
    pub met: bool,
}

/// A sweep: its plan and the points finished so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sweep {
    /// What was asked.
    pub plan: SweepPlan,
    /// Finished points, in grid order.
    pub points: Vec<SweepPoint>,
    /// Whether every point has been run.
    pub complete: bool,
}
