//! A sweep: one test type over a grid of parameter values, each point stored as it finishes
//! (test and point in one transaction), so `--resume ID` runs only the points not yet
//! stored. A progress bar with an ETA on a terminal, the grid as a table at the end; NDJSON
//! start and end events name their point.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use engine::StopFlag;
use report::ndjson::Point;
use results::{Estimate, ParamSetting, Reference, RunRecord, Status, SweepPlan, SweepPoint, TestError};
use results::{TestResult, TestSpec};

use crate::config::{Config, Storage};
use crate::progress::Progress;
use crate::run::{Ending, Run};

/// How a sweep's points are made: the CLI's grid expansion.
pub trait Points {
    /// The spec of point `index` of `plan`, and its parameter values.
    fn spec(&self, plan: &SweepPlan, index: u32) -> Result<(TestSpec, Vec<ParamSetting>)>;
    /// Parameter values in words (`len=4K window=64K`).
    fn describe(&self, params: &[ParamSetting]) -> String;
}

pub use crate::points::Job;
use crate::points::{End, Kind};

/// A stored sweep, for `--resume`: its job and where it ran.
pub fn stored(storage: &Storage, id: i64) -> Result<(Job, crate::place::Stored)> {
    let (job, server) = crate::points::stored(storage, id, Kind::Sweep)?;
    Ok((job, crate::place::Stored::parse(&server)))
}

/// Codes after which the sweep stops (to be resumed) rather than storing a failed point.
fn transient(code: &str) -> bool {
    matches!(
        code,
        "connect" | "busy" | "peer-vanished" | "io" | "timeout" | "protocol" | "interrupted" | "run"
    )
}

/// Runs (or resumes) `job` where `cfg` says.
pub fn run(
    cfg: &Config,
    job: &Job,
    points: &dyn Points,
    reference: Option<Reference>,
    stop: &StopFlag,
) -> Result<ExitCode> {
    let mut run = crate::points::open(cfg, job, Duration::from_secs(3))?;
    let mut ran = Vec::new();
    let end = run_points(&mut run, job, points, &reference, stop, &mut ran);
    run.end(|run| ending(run, job, points, end, ran))
}

fn run_points(
    run: &mut Run,
    job: &Job,
    points: &dyn Points,
    reference: &Option<Reference>,
    stop: &StopFlag,
    ran: &mut Vec<(SweepPoint, TestResult)>,
) -> End {
    let bar = Progress::new(job.plan.len() as u64, job.done.len() as u64, run.live.printer().for_people());
    let mut end = End::Complete;
    for index in (0..job.plan.len() as u32).filter(|i| !job.done.contains(i)) {
        if stop.is_set() {
            end = End::Interrupted;
            break;
        }
        match one_point(run, job, points, index, reference, stop, &bar) {
            Ok(done) => ran.push(done),
            Err(e) => {
                end = e;
                break;
            }
        }
        bar.inc();
    }
    bar.finish();
    end
}

/// Runs and stores point `index`; `Err` ends the sweep.
fn one_point(
    run: &mut Run,
    job: &Job,
    points: &dyn Points,
    index: u32,
    reference: &Option<Reference>,
    stop: &StopFlag,
    bar: &Progress,
) -> Result<(SweepPoint, TestResult), End> {
    let failed = |code: &str, e: anyhow::Error| {
        End::Failed(TestError { code: code.into(), message: format!("{e:#}") })
    };
    let (spec, params) = points.spec(&job.plan, index).map_err(|e| failed("bad-plan", e))?;
    bar.message(points.describe(&params));
    run.live.point = Some(Point { index, of: job.plan.len(), params: params.clone() });
    let confidence = job.plan.confidence.as_ref();
    let r = run.test(&spec, confidence, stop, |_| reference.clone(), false);
    match (&r.status, &r.error) {
        (Status::Interrupted, _) => return Err(End::Interrupted),
        (Status::Failed, Some(e)) if transient(&e.code) => return Err(End::Failed(e.clone())),
        _ => {}
    }
    let point = point_of(&job.plan, index, params, &r);
    // The archive failing moves the run to the spool; a point neither can take is still
    // measured and shown (in --json too), and the failure ends the command with status 2.
    let stored = run.rec.point(&point, &r);
    run.note(stored);
    Ok((point, r))
}

pub(crate) fn point_of(
    plan: &SweepPlan,
    index: u32,
    params: Vec<ParamSetting>,
    r: &TestResult,
) -> SweepPoint {
    let headline = match r.repetition.as_ref().and_then(|rep| rep.estimate(&plan.metric)) {
        Some(e) => e.clone(),
        None => {
            // A failed point's value is never read as a measurement: the grid shows the
            // point's test as failed.
            let v = r.summary.headline_value().unwrap_or(0.0);
            Estimate { metric: plan.metric.clone(), mean: v, values: vec![v], ..Estimate::default() }
        }
    };
    SweepPoint {
        index,
        coords: store::coords_of(plan, index),
        params,
        test_index: 0,
        headline,
        met: r.repetition.as_ref().is_none_or(|rep| rep.met),
    }
}

fn ending(
    run: &mut Run,
    job: &Job,
    points: &dyn Points,
    end: End,
    ran: Vec<(SweepPoint, TestResult)>,
) -> Ending {
    let (status, error, hint) = crate::points::status(end, run, Kind::Sweep);
    let remote = run.remote().cloned();
    let shown = crate::points::shown(run, &job.plan, ran, remote);
    let error = error.or_else(|| failed_points(&shown, points));
    Ending { status, error, text: report::grid::table(&shown), hint, run: shown }
}

/// The points that failed (e.g. a congestion control the server lacks), in one error: they
/// are stored as failed and shown as such in the grid.
fn failed_points(run: &RunRecord, points: &dyn Points) -> Option<TestError> {
    let sweep = run.sweep.as_ref()?;
    let failed: Vec<String> = sweep
        .points
        .iter()
        .filter_map(|p| {
            let t = run.tests.get(p.test_index as usize).filter(|t| t.status == Status::Failed)?;
            let why = t.error.as_ref().map(|e| e.message.as_str()).unwrap_or("failed");
            Some(format!("{} ({why})", points.describe(&p.params)))
        })
        .collect();
    let first = failed.first()?;
    let more = if failed.len() > 1 { format!(" and {} more", failed.len() - 1) } else { String::new() };
    let message = format!("{} of {} points failed: {first}{more}", failed.len(), sweep.points.len());
    Some(TestError { code: "points-failed".into(), message })
}
