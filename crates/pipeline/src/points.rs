//! What sweeps and meshes share: a run whose tests are the points of a stored plan, written
//! one by one as they finish, so that `--resume ID` runs only the points not yet stored.
//! The kind ([`Kind`]) names the command and its points in messages; [`crate::sweep`] and
//! [`crate::mesh`] decide what a point is and how points are scheduled.

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::{bail, Result};
use results::{HostInfo, RunRecord, SweepPlan, SweepPoint, TestError, TestResult};
use store::{RunKind, RunStatus};

use crate::config::{Config, Storage};
use crate::output::record;
use crate::recorder::open_store;
use crate::run::Run;

/// A sweep or a mesh to run: its plan and, when resuming, the stored run and its finished
/// points.
#[derive(Debug, Clone)]
pub struct Job {
    /// The plan (`plan.mesh` is set for a mesh).
    pub plan: SweepPlan,
    /// The stored run to continue.
    pub resume: Option<i64>,
    /// Points (cells) already stored.
    pub done: BTreeSet<u32>,
}

/// Which of the two a run of points is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `tcplab sweep`: points of a grid.
    Sweep,
    /// `tcplab mesh`: cells of a host matrix.
    Mesh,
}

impl Kind {
    /// The command's name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Sweep => "sweep",
            Kind::Mesh => "mesh",
        }
    }

    /// What its points are called.
    pub fn points(self) -> &'static str {
        match self {
            Kind::Sweep => "points",
            Kind::Mesh => "cells",
        }
    }

    fn of(plan: &SweepPlan) -> Kind {
        if plan.mesh.is_some() {
            Kind::Mesh
        } else {
            Kind::Sweep
        }
    }
}

/// A stored run of `kind`, for `--resume`: its job and the stored server label.
pub fn stored(storage: &Storage, id: i64, kind: Kind) -> Result<(Job, String)> {
    if storage.disabled {
        bail!("--resume reads the archive; it cannot be combined with --no-store");
    }
    crate::spool::Spool::deliver(storage);
    let st = open_store(storage.db.as_deref())?;
    let sweep = st.load_sweep(id)?;
    let is = Kind::of(&sweep.plan);
    if is != kind {
        bail!(
            "run {id} is a {}, not a {}: resume it with tcplab {} --resume {id}",
            is.name(),
            kind.name(),
            is.name()
        );
    }
    let done: BTreeSet<u32> = st.finished_points(id)?.into_iter().collect();
    Ok((Job { plan: sweep.plan, resume: Some(id), done }, st.server_of(id)?))
}

/// Begins the job's run (its plan stored first), or resumes the stored one; says what it
/// does on a terminal.
pub fn open(cfg: &Config, job: &Job, busy: Duration) -> Result<Run> {
    let mut run = match job.resume {
        Some(id) => Run::resume(cfg, id, busy)?,
        None => {
            let mut run = Run::begin(cfg, RunKind::Sweep, busy)?;
            // An archive that fails here moves the run to the spool; only when neither can
            // take it does the command stop before measuring.
            run.rec.sweep(&job.plan)?;
            run
        }
    };
    run.live.show_intervals = false;
    note(&run, job);
    Ok(run)
}

fn note(run: &Run, job: &Job) {
    if !run.live.printer().for_people() {
        return;
    }
    let kind = Kind::of(&job.plan);
    let (name, points) = (kind.name(), kind.points());
    let (total, done) = (job.plan.len(), job.done.len());
    match run.rec.run_id() {
        Some(id) if done > 0 => eprintln!("resuming {name} {id}: {done} of {total} {points} done"),
        Some(id) => {
            eprintln!(
                "{name} {id}: {total} {points} (resume after an interruption: tcplab {name} --resume {id})"
            )
        }
        None => eprintln!("{name}: {total} {points} (not stored)"),
    }
}

/// How the loop over the points ended.
#[derive(Debug)]
pub enum End {
    /// Every point ran.
    Complete,
    /// Stopped by the user; the rest can be resumed.
    Interrupted,
    /// Stopped by a failure the rest cannot run past.
    Failed(TestError),
}

/// The run's status and error for `end`, and the resume hint of a run left unfinished.
pub fn status(end: End, run: &Run, kind: Kind) -> (RunStatus, Option<TestError>, String) {
    let (status, error) = match end {
        End::Complete => (RunStatus::Complete, None),
        End::Interrupted => (
            RunStatus::Interrupted,
            Some(TestError { code: "interrupted".into(), message: "interrupted".into() }),
        ),
        End::Failed(e) => (RunStatus::Failed, Some(e)),
    };
    let hint = match (status, run.rec.run_id()) {
        (RunStatus::Complete, _) | (_, None) => String::new(),
        (_, Some(id)) => format!("; resume with: tcplab {} --resume {id}", kind.name()),
    };
    (status, error, hint)
}

/// The run to show: from the archive (points of earlier sessions included), or from memory
/// with `--no-store`, the points in plan order.
pub fn shown(
    run: &mut Run,
    plan: &SweepPlan,
    ran: Vec<(SweepPoint, TestResult)>,
    remote: Option<HostInfo>,
) -> RunRecord {
    if let Some(id) = run.rec.run_id() {
        if let Some(Ok(stored)) = run.rec.store().map(|st| st.load_run(id)) {
            return stored;
        }
    }
    let (mut points, mut tests) = earlier_points(run, &ran);
    for (p, t) in ran {
        points.push(p);
        tests.push(t);
    }
    for (i, p) in points.iter_mut().enumerate() {
        p.test_index = i as u32;
    }
    points.sort_by_key(|p| p.index);
    let complete = points.len() == plan.len();
    let mut shown = record(tests, remote, None, run.started());
    shown.sweep = Some(results::Sweep { plan: plan.clone(), points, complete });
    shown
}

/// A resumed run that moved to the spool: the points its earlier sessions left in the
/// archive (as far as the archive can still be read) that this session did not run, with
/// their tests.
fn earlier_points(run: &Run, ran: &[(SweepPoint, TestResult)]) -> (Vec<SweepPoint>, Vec<TestResult>) {
    let Some(earlier) = run.rec.earlier_sessions() else { return (Vec::new(), Vec::new()) };
    let points = earlier.sweep.iter().flat_map(|s| &s.points);
    points
        .filter(|p| !ran.iter().any(|(q, _)| q.index == p.index))
        .filter_map(|p| Some((p.clone(), earlier.tests.get(p.test_index as usize)?.clone())))
        .unzip()
}
