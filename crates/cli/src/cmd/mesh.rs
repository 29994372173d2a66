//! `tcplab mesh INVENTORY` (or `--resume ID`): the sender × receiver matrix of an inventory's
//! hosts through the run pipeline; with `--every`, one mesh per round on a schedule
//! ([`pipeline::schedule`]), through a local spool when the archive is a PostgreSQL server
//! ([`pipeline::spool`]).

use std::collections::BTreeSet;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use engine::StopFlag;
use pipeline::mesh::Job;
use pipeline::schedule::Schedule;
use pipeline::spool::Spool;
use pipeline::{Config, Storage, Target};
use results::TestSpec;

use crate::args::mesh::MeshArgs;
use crate::output::format_of;
use crate::settings::{self, storage};

/// How often a running round is pushed from the spool to the archive.
const LIVE_PUSH: Duration = Duration::from_secs(2);

/// Runs (or resumes) a mesh, once or on a schedule.
pub fn run(a: &MeshArgs, stop: &StopFlag) -> Result<ExitCode> {
    let storage = storage(&a.store);
    let job = match (a.resume, &a.inventory) {
        (Some(id), _) => pipeline::mesh::stored(&storage, id)?,
        (None, Some(path)) => {
            let hosts = crate::inventory::read(path)?;
            let mut plan =
                pipeline::mesh::plan(base_spec(a)?, hosts, path.display().to_string(), !a.no_baseline);
            plan.confidence = settings::confidence(&a.confidence);
            Job { plan, resume: None, done: BTreeSet::new() }
        }
        (None, None) => anyhow::bail!("give an INVENTORY, or --resume ID"),
    };
    let inventory = job.plan.mesh.as_ref().map(|m| m.inventory.clone()).unwrap_or_default();
    let cfg = Config {
        target: Target::Mesh { inventory, key: crate::settings::client_key(a.key_file.as_deref())? },
        format: format_of(&a.output),
        report: a.output.report.clone(),
        storage,
        trace: None,
        trace_level: Default::default(),
    };
    match a.schedule.every {
        None => pipeline::mesh::run(&cfg, &job, stop),
        Some(every) => scheduled(a, every, &cfg, &job, stop),
    }
}

/// The mesh on a schedule: each round a new run of the same plan.
fn scheduled(a: &MeshArgs, every: Duration, cfg: &Config, job: &Job, stop: &StopFlag) -> Result<ExitCode> {
    let spool = spool_of(a, &cfg.storage)?;
    if let Some(sp) = &spool {
        sp.flush_and_say();
    }
    let s = Schedule { every, jitter: a.schedule.jitter.unwrap_or_default(), rounds: a.schedule.rounds };
    Ok(pipeline::schedule::run(&s, stop, |_| match &spool {
        None => pipeline::mesh::run(cfg, job, stop),
        Some(sp) => {
            let storage = Storage { db: Some(sp.file.clone()), disabled: false };
            let cfg = Config { storage, ..cfg.clone() };
            let code = sp.pushing_while(LIVE_PUSH, || pipeline::mesh::run(&cfg, job, stop));
            sp.flush_and_say();
            code
        }
    }))
}

/// The spool of a PostgreSQL archive (`None` for a file: written directly).
fn spool_of(a: &MeshArgs, storage: &Storage) -> Result<Option<Spool>> {
    let Some(archive) = storage.db.clone().or_else(store::env_path).filter(|_| !storage.disabled) else {
        return Ok(None);
    };
    if !archive.to_str().is_some_and(|p| p.starts_with("postgres://") || p.starts_with("postgresql://")) {
        return Ok(None);
    }
    let dir = match &a.schedule.spool_dir {
        Some(d) => d.clone(),
        None => store::default_path()
            .and_then(|p| p.parent().map(std::path::Path::to_path_buf))
            .context("no XDG_DATA_HOME or HOME for the spool; use --spool-dir DIR")?,
    };
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("creating the spool directory {}", dir.display()))?;
    Ok(Some(Spool::new(&dir, &archive)))
}

fn base_spec(a: &MeshArgs) -> Result<TestSpec> {
    let spec = settings::shaped_spec(&a.shape);
    settings::check_spec(&spec, "mesh")?;
    Ok(spec)
}
