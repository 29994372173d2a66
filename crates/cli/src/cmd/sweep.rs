//! `tcplab sweep`: one test type over a grid of parameter values (or `--resume ID` of a
//! stored one), through the run pipeline.

use std::collections::BTreeSet;
use std::process::ExitCode;

use anyhow::{bail, Result};
use engine::StopFlag;
use pipeline::place::Stored;
use pipeline::sweep::{Job, Points};
use pipeline::{Config, PathOptions, Target};
use results::{ParamSetting, SweepPlan, TestSpec};

use crate::args::SweepArgs;
use crate::output::format_of;
use crate::settings;
use crate::settings::{link_reference, path_options, remote, storage};
use crate::sweep_plan::{describe, plan, point_spec};

/// Default control port.
const PORT: u16 = 9180;

/// Runs (or resumes) a sweep.
pub fn run(a: &SweepArgs, stop: &StopFlag) -> Result<ExitCode> {
    // --spool-dir before the resume reads the archive: a resume delivers that spool first.
    let storage = pipeline::Storage { spool_dir: a.schedule.spool_dir.clone(), ..storage(&a.store) };
    let (job, stored) = match a.resume {
        Some(id) => pipeline::sweep::stored(&storage, id)?,
        None => (Job { plan: new_plan(a)?, resume: None, done: BTreeSet::new() }, Stored::Loopback),
    };
    // A resumed sweep goes where it ran unless HOST or --path says otherwise.
    let (stored_host, stored_port, stored_path) = match stored {
        Stored::Remote { host, port } => (Some(host), port, None),
        Stored::Path(spec) => (None, None, Some(spec)),
        Stored::Loopback => (None, None, None),
    };
    let path = path_options(&a.path.emu).or_else(|| {
        let spec = stored_path.filter(|_| a.host.is_none())?;
        Some(PathOptions { spec, seed: a.path.emu.emu_seed, ..PathOptions::default() })
    });
    let host = a.host.clone().or(stored_host.filter(|_| path.is_none()));
    let target = match (host, path) {
        (Some(_), Some(_)) => bail!("--path runs its own server across the emulated link; drop HOST"),
        (_, Some(p)) => Target::Path(p),
        (Some(h), None) => Target::Remote(remote(&h, a.port.or(stored_port).unwrap_or(PORT))?),
        (None, None) => Target::Loopback,
    };
    let cfg = Config {
        target,
        format: format_of(&a.output),
        report: a.output.report.clone(),
        storage,
        trace: a.output.trace.clone(),
        trace_level: a.output.trace_level.level(),
    };
    let reference = link_reference(&a.path.link, job.plan.base.test)?;
    super::schedule::run(&a.schedule, &cfg, stop, |cfg| {
        pipeline::sweep::run(cfg, &job, &Grid, reference.clone(), stop)
    })
}

/// The grid expansion of `--vary` and `--tie`.
#[derive(Debug)]
struct Grid;

impl Points for Grid {
    fn spec(&self, plan: &SweepPlan, index: u32) -> Result<(TestSpec, Vec<ParamSetting>)> {
        point_spec(plan, index as usize)
    }

    fn describe(&self, params: &[ParamSetting]) -> String {
        describe(params)
    }
}

fn new_plan(a: &SweepArgs) -> Result<SweepPlan> {
    let base = base_spec(a)?;
    let metric = engine::registry::of(base.test).headline().id();
    let mut plan = plan(&base, &a.vary, &a.tie, metric)?;
    plan.confidence = settings::confidence(&a.confidence);
    Ok(plan)
}

fn base_spec(a: &SweepArgs) -> Result<TestSpec> {
    let mut spec = settings::shaped_spec(&a.shape);
    spec.direction = match (a.reverse, a.bidir) {
        (true, _) => results::Direction::Reverse,
        (_, true) => results::Direction::Bidir,
        _ => results::Direction::Forward,
    };
    settings::check_spec(&spec, "sweep")?;
    Ok(spec)
}
