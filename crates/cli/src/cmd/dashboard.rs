//! `tcplab dashboard`: glue from the flags to `dashboard::serve`.

use std::process::ExitCode;

use anyhow::{Context, Result};
use engine::StopFlag;
use stats::regression::Rule;

use crate::args::dashboard::DashboardArgs;

/// Serves until Ctrl-C or SIGTERM.
pub fn run(a: &DashboardArgs, stop: &StopFlag) -> Result<ExitCode> {
    let token = match &a.token_file {
        Some(f) => Some(
            std::fs::read_to_string(f)
                .with_context(|| format!("reading the token file {}", f.display()))?
                .lines()
                .next()
                .unwrap_or_default()
                .trim()
                .to_string(),
        ),
        None => a.token.clone(),
    };
    let db = match a.db.clone().or_else(store::env_path) {
        Some(db) => db,
        None => store::default_path().context("no XDG_DATA_HOME or HOME for the archive; use --db")?,
    };
    let opts = dashboard::Options {
        db,
        listen: a.listen,
        token,
        since: a.since,
        rule: Rule { level_pct: 95.0, threshold_pct: a.threshold, latest: 1 },
        poll_ms: a.poll.as_millis() as u64,
    };
    let flag = stop.clone();
    dashboard::serve(
        opts,
        |addr| eprintln!("dashboard: serving http://{addr}/ (read-only)"),
        move || flag.is_set(),
    )?;
    Ok(ExitCode::SUCCESS)
}
