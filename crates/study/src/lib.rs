//! `tcplab study`: one command per seed study (../shared/seeds/). Each study is the paper's
//! experiment design as stages of test specs ([`plan`]), run through the ordinary pipeline as
//! one archived run ([`runner`]), and a report ([`html`], [`text`]) that sets the paper's
//! published numbers ([`paper`], stored per study in [`studies`]) beside tcplab's measured
//! numbers and the model's ceilings ([`compare`]), with an explanation of each large
//! difference from the diagnosis ([`explain`]).
//!
//! Every figure and table of the paper is in the study's [`Study::catalogue`] with how it is
//! treated; [`status`] computes each one's status from the measurements and their
//! uncertainty, and the figures not run yet are the study's pending list.
#![forbid(unsafe_code)]

pub mod compare;
pub mod explain;
pub mod html;
pub mod matrix;
pub mod paper;
pub mod plan;
pub mod resume;
pub mod runner;
pub mod status;
pub mod studies;
pub mod text;

#[cfg(test)]
mod fixture;
#[cfg(test)]
mod status_tests;
#[cfg(test)]
mod tests;

use std::path::PathBuf;

use results::TestResult;

pub use plan::{Case, Mode, Stage};

/// What `tcplab study list` shows of a study.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Info {
    /// Command name (`tcp-atm-2000`).
    pub name: &'static str,
    /// Seed number (`000`).
    pub seed: &'static str,
    /// The paper, short.
    pub paper: &'static str,
    /// What the study reruns.
    pub reruns: &'static str,
}

/// A seed study.
pub trait Study: Sync + std::fmt::Debug {
    /// Name and description.
    fn info(&self) -> &'static Info;
    /// The paper's published figures.
    fn paper(&self) -> &'static [paper::Figure];
    /// The stages to run.
    fn stages(&self, mode: Mode) -> Vec<Stage>;
    /// Paper vs measured vs model, row by row.
    fn compare(&self, out: &Outcome) -> Vec<compare::Row>;
    /// Plots overlaying the paper's numbers, the measured ones and the model (SVG).
    fn charts(&self, out: &Outcome) -> Vec<String>;
    /// Every figure and table of the paper, and how the study treats each.
    fn catalogue(&self) -> &'static [status::Entry];
    /// The verdict on `figure`, an entry of [`Study::catalogue`] planned as measured.
    fn judge(&self, figure: &str, out: &Outcome) -> status::Verdict;
    /// The paper's sender × receiver matrix, if it has one (run after the stages).
    fn matrix(&self, _mode: Mode) -> Option<matrix::Matrix> {
        None
    }
    /// Whether the emulated stages need root (namespaces, TUN): every study's do.
    fn needs_root(&self) -> bool {
        true
    }
}

/// Every study, in seed order.
pub fn all() -> [&'static dyn Study; 5] {
    studies::ALL
}

/// The study called `name`.
pub fn find(name: &str) -> Option<&'static dyn Study> {
    all().into_iter().find(|s| s.info().name.eq_ignore_ascii_case(name))
}

/// One finished case.
#[derive(Debug, Clone)]
pub struct Done {
    /// The stage's label.
    pub stage: String,
    /// The case.
    pub case: Case,
    /// Its result.
    pub result: TestResult,
    /// The round trips the probe saw beside it, if the case was probed.
    pub rtt: Option<Rtt>,
}

/// What the RTT probe saw beside one test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rtt {
    /// Probes sent.
    pub sent: usize,
    /// Probes unanswered.
    pub lost: usize,
    /// Median round trip, ms.
    pub p50_ms: f64,
    /// 95th percentile, ms.
    pub p95_ms: f64,
    /// Largest, ms.
    pub max_ms: f64,
}

impl Rtt {
    /// The figures of `samples`; `None` when no probe was answered.
    pub fn of(samples: &[results::cc::ProbeSample]) -> Option<Rtt> {
        let ms: Vec<f64> = samples.iter().filter_map(|s| s.rtt_us).map(|us| us / 1e3).collect();
        Some(Rtt {
            sent: samples.len(),
            lost: samples.len() - ms.len(),
            p50_ms: stats::series::nearest_rank(&ms, 50.0)?,
            p95_ms: stats::series::nearest_rank(&ms, 95.0)?,
            max_ms: ms.iter().copied().fold(0.0, f64::max),
        })
    }
}

/// What a study run gave.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// `quick` or `full`.
    pub mode: Mode,
    /// The real host, when not on emulated paths.
    pub host: Option<String>,
    /// The finished cases.
    pub done: Vec<Done>,
    /// Stages left out, and why.
    pub skipped: Vec<String>,
    /// The archived run's id.
    pub run_id: Option<i64>,
}

impl Outcome {
    /// The result of case `key`.
    pub fn get(&self, key: &str) -> Option<&TestResult> {
        self.done.iter().find(|d| d.case.key == key).map(|d| &d.result)
    }

    /// Results whose key starts with `prefix`, in run order.
    pub fn with_prefix<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = &'a Done> + 'a {
        self.done.iter().filter(move |d| d.case.key.starts_with(prefix))
    }
}

/// How to run a study.
#[derive(Debug, Clone)]
pub struct Options {
    /// Quick or full.
    pub mode: Mode,
    /// A real server instead of emulated paths.
    pub host: Option<engine::client::ClientOptions>,
    /// Real hosts for a sender × receiver matrix (`--inventory FILE`).
    pub inventory: Option<Vec<results::MeshHost>>,
    /// The key shown to the inventory's hosts.
    pub key: Option<engine::auth::ClientKey>,
    /// `-t`: every case's duration in seconds (a trimmed run, e.g. in CI).
    pub seconds: Option<u64>,
    /// `-o`: the HTML report.
    pub report: Option<PathBuf>,
    /// The archive.
    pub storage: pipeline::Storage,
    /// `--resume [ID]`: continue a run of the same design that stopped before its end.
    pub resume: Option<resume::Resume>,
    /// `--remeasure-stolen` (with `resume`): run again the kept cases a hypervisor stole from.
    pub remeasure_stolen: bool,
}

/// Every stage of `study` on emulated paths in `mode`, its matrix's cells included.
pub fn emulated_stages(study: &dyn Study, mode: Mode) -> Vec<Stage> {
    let mut stages = study.stages(mode);
    stages.extend(study.matrix(mode).iter().flat_map(matrix::emulated));
    stages
}

/// The stages of `study` as `opts` asks, and the stages left out on a real host.
pub fn stages_for(study: &dyn Study, opts: &Options) -> (Vec<Stage>, Vec<String>) {
    let mut stages = study.stages(opts.mode);
    let mut skipped = Vec::new();
    if let Some(m) = study.matrix(opts.mode) {
        stages.extend(matrix::stages(&m, opts, &mut skipped));
    }
    if let Some(secs) = opts.seconds {
        plan::override_seconds(&mut stages, secs);
    }
    if opts.host.is_some() {
        stages.retain(|s| {
            let keep = !s.emulated_only;
            if !keep {
                skipped.push(format!(
                    "{}: an emulated impairment or slow host, not run against a real HOST",
                    s.label
                ));
            }
            keep
        });
    }
    (stages, skipped)
}
