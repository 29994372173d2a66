//! One line of a study's comparison: the paper's number, tcplab's measured number and the
//! model's ceiling for the same case, their ratios, and why they differ when they do.

use results::TestResult;

use crate::explain;

/// A paper value, a measured value and a model value for one case.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row {
    /// The group in the report (`Table 2`, `Figure 15 (b)`).
    pub group: String,
    /// What is compared (`8K writes, 64K buffers`).
    pub case: String,
    /// Unit of all three numbers (`Mbit/s`).
    pub unit: &'static str,
    /// The paper's number and where it is.
    pub paper: Option<(f64, String)>,
    /// What tcplab measured (`None`: not run, failed, or not measurable yet).
    pub measured: Option<f64>,
    /// The measured value's standard deviation (over a run's intervals or over runs).
    pub sd: Option<f64>,
    /// The ± the paper prints beside its number.
    pub paper_sd: Option<f64>,
    /// The model's ceiling for this case.
    pub model: Option<f64>,
    /// Why measured and paper (or model) differ, when they differ much.
    pub why: String,
    /// A case of the paper this host cannot run (`why` says why): no measured value, and not
    /// pending either.
    pub not_reproducible: bool,
}

impl Row {
    /// A row of `case` in `group`, in `unit`.
    pub fn new(group: &str, case: &str, unit: &'static str) -> Row {
        Row { group: group.into(), case: case.into(), unit, ..Row::default() }
    }

    /// With the paper's value.
    pub fn paper(mut self, cite: Option<(f64, String)>) -> Row {
        self.paper = cite;
        self
    }

    /// With the measured goodput (Mbit/s) of `r` and its model ceiling (the reference of
    /// the path it ran on), and the explanation the diagnosis gives.
    pub fn goodput(mut self, r: Option<&TestResult>) -> Row {
        self.measured = r.and_then(mbps);
        self.model = r.and_then(|r| r.reference.as_ref()).map(|re| re.limit_bps / 1e6);
        self.why = explain::why(&self, r);
        self
    }

    /// With a measured value and no model.
    pub fn measured(mut self, value: Option<f64>, r: Option<&TestResult>) -> Row {
        self.measured = value;
        self.why = explain::why(&self, r);
        self
    }

    /// Measured ÷ paper.
    pub fn vs_paper(&self) -> Option<f64> {
        ratio(self.measured, self.paper.as_ref().map(|p| p.0))
    }

    /// Measured ÷ model.
    pub fn vs_model(&self) -> Option<f64> {
        ratio(self.measured, self.model)
    }
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

/// A finished test's goodput in Mbit/s, or `None` when it failed.
pub fn mbps(r: &TestResult) -> Option<f64> {
    if r.status == results::Status::Failed {
        return None;
    }
    let bps = r.summary.goodput_bps();
    (bps > 0.0).then_some(bps / 1e6)
}

/// A finished request/response test's transactions per second.
pub fn trans_per_s(r: &TestResult) -> Option<f64> {
    (r.status != results::Status::Failed).then(|| r.summary.rr.as_ref().map(|rr| rr.trans_per_s)).flatten()
}

/// A number for a table cell: `–` when unknown.
pub fn cell(v: Option<f64>) -> String {
    match v {
        None => "–".into(),
        Some(x) if x.abs() >= 100.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.2}"),
    }
}

/// A number with its ± for a table cell (`91.0 ± 21.0`); the number alone without one.
pub fn cell_pm(v: Option<f64>, sd: Option<f64>) -> String {
    match (v, sd) {
        (Some(_), Some(sd)) => format!("{} ± {}", cell(v), cell(Some(sd))),
        _ => cell(v),
    }
}

/// A ratio for a table cell (`0.97×`).
pub fn ratio_cell(v: Option<f64>) -> String {
    v.map_or("–".into(), |x| format!("{x:.2}×"))
}

/// The goodput (Mbit/s) of every run of case `key`.
pub fn mbps_sample(out: &crate::Outcome, key: &str) -> Option<crate::status::Sample> {
    crate::status::Sample::of(out.get(key)?, mbps).map(crate::status::Sample::steal_lowers)
}

/// The transactions per second of every run of case `key`.
pub fn tps_sample(out: &crate::Outcome, key: &str) -> Option<crate::status::Sample> {
    crate::status::Sample::of(out.get(key)?, trans_per_s).map(crate::status::Sample::steal_lowers)
}
