//! `--every` for `mesh` and every test command: one run per round on a schedule
//! ([`pipeline::schedule`]). With a PostgreSQL archive each round is written to the local spool
//! first ([`pipeline::spool`]) and pushed while it runs and when it ends, so a round measured
//! while the server is down waits on this host; with a file archive a round writes there
//! directly and moves to the spool only if the archive refuses a write.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use engine::StopFlag;
use pipeline::schedule::Schedule;
use pipeline::spool::Spool;
use pipeline::{Config, Storage};

use crate::args::mesh::ScheduleArgs;

/// How often a running round is pushed from the spool to the archive.
const LIVE_PUSH: Duration = Duration::from_secs(2);

/// Runs `round` once, or on the schedule `a` asks for.
pub fn run(
    a: &ScheduleArgs,
    cfg: &Config,
    stop: &StopFlag,
    round: impl Fn(&Config) -> Result<ExitCode>,
) -> Result<ExitCode> {
    let Some(every) = a.every else { return round(cfg) };
    let spool = Spool::of(&cfg.storage)?.filter(Spool::is_remote);
    if let Some(sp) = &spool {
        let dir = sp.file.parent().unwrap_or(std::path::Path::new("."));
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating the spool directory {}", dir.display()))?;
        sp.flush_and_say();
    }
    let s = Schedule { every, jitter: a.jitter.unwrap_or_default(), rounds: a.rounds };
    Ok(pipeline::schedule::run(&s, stop, |_| match &spool {
        None => round(cfg),
        Some(sp) => {
            let storage = Storage { db: Some(sp.file.clone()), ..cfg.storage.clone() };
            let cfg = Config { storage, ..cfg.clone() };
            let code = sp.pushing_while(LIVE_PUSH, || round(&cfg));
            sp.flush_and_say();
            code
        }
    }))
}
