//! `tcplab mesh INVENTORY` (or `--resume ID`): the sender × receiver matrix of an inventory's
//! hosts through the run pipeline; with `--every`, one mesh per round on a schedule
//! ([`super::schedule`]).

use std::collections::BTreeSet;
use std::process::ExitCode;

use anyhow::Result;
use engine::StopFlag;
use pipeline::mesh::Job;
use pipeline::{Config, Target};
use results::TestSpec;

use crate::args::mesh::MeshArgs;
use crate::output::format_of;
use crate::settings::{self, storage};

/// Runs (or resumes) a mesh, once or on a schedule.
pub fn run(a: &MeshArgs, stop: &StopFlag) -> Result<ExitCode> {
    // --spool-dir before the resume reads the archive: a resume delivers that spool first.
    let storage = pipeline::Storage { spool_dir: a.schedule.spool_dir.clone(), ..storage(&a.store) };
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
    super::schedule::run(&a.schedule, &cfg, stop, |cfg| pipeline::mesh::run(cfg, &job, stop))
}

fn base_spec(a: &MeshArgs) -> Result<TestSpec> {
    let spec = settings::shaped_spec(&a.shape);
    settings::check_spec(&spec, "mesh")?;
    Ok(spec)
}
