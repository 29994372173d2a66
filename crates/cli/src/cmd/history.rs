//! Browsing the archive: `tcplab history` (recent runs, filterable; runs whose process is gone
//! shown, and optionally marked, abandoned), `tcplab show ID` (one run) and `tcplab export`
//! (several runs for other tools). Every format comes from report's registry.

use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::ValueEnum;
use report::Renderer;
use store::{RunFilter, RunSummary, Store};

use crate::args::archive::{RunFilterArgs, StatusArg};
use crate::args::{ExportArgs, HistoryArgs, ShowArgs};
use crate::output::{emit, now_unix_ms};
use crate::recorder::{open_store, open_store_read, this_process};

fn filter_of(f: &RunFilterArgs, default_limit: u32) -> RunFilter {
    let test = f.test.map(|k| k.id().to_string());
    RunFilter {
        kind: f.kind.and_then(|k| k.to_possible_value()).map(|v| v.get_name().to_string()),
        test,
        server: f.server.clone(),
        status: f.status.and_then(|k| k.to_possible_value()).map(|v| v.get_name().to_string()),
        since_unix_ms: f.since.map(|ms| now_unix_ms().saturating_sub(ms)),
        limit: f.limit.unwrap_or(default_limit),
    }
}

/// The format named `name`, which the registry must have.
fn format(name: &str) -> Result<&'static Renderer> {
    report::by_name(name).with_context(|| format!("no {name} format in this build"))
}

/// `tcplab history`.
pub fn history(a: &HistoryArgs) -> Result<ExitCode> {
    // Only pruning writes: a plain listing reads a read-only archive too.
    let mut st = if a.prune_abandoned { open_store(&a.store)? } else { open_store_read(&a.store)? };
    if a.prune_abandoned {
        let pruned = st.prune_abandoned(&this_process(), netio::host::pid_alive)?;
        let ids: Vec<String> = pruned.iter().map(i64::to_string).collect();
        eprintln!(
            "marked {} run(s) abandoned{}{}",
            pruned.len(),
            if ids.is_empty() { "" } else { ": " },
            ids.join(", ")
        );
    }
    let runs = list(&st, &a.filter, 20)?;
    let fmt = match (a.format, a.json) {
        (Some(f), _) => f,
        (None, true) => format("json")?,
        (None, false) => format("text")?,
    };
    let body = fmt.render_history(&runs).with_context(|| format!("{} cannot list runs", fmt.name))?;
    emit(body.trim_end());
    if runs.is_empty() {
        eprintln!("no runs in {}", st.path().display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The runs `f` selects (at most `default_limit` unless it says; 0 = all), each `running` one whose process is gone shown as `abandoned`.
/// `running` and `abandoned` are decided here, not by SQL, so those two filters read every
/// run stored with either status and apply the limit after judging them.
fn list(st: &Store, f: &RunFilterArgs, default_limit: u32) -> Result<Vec<RunSummary>> {
    let filter = filter_of(f, default_limit);
    let mut runs = match f.status {
        Some(StatusArg::Running | StatusArg::Abandoned) => {
            let with = |s: &str| RunFilter { status: Some(s.into()), limit: 0, ..filter.clone() };
            let mut runs = st.list_runs(&with("running"))?;
            runs.extend(st.list_runs(&with("abandoned"))?);
            runs.sort_by_key(|r| std::cmp::Reverse(r.id));
            runs
        }
        _ => st.list_runs(&filter)?,
    };
    for r in &mut runs {
        r.status = judged_status(&r.status, r.owner.as_ref()).to_string();
    }
    if let Some(status) = f.status.and_then(|s| s.to_possible_value()) {
        runs.retain(|r| r.status == status.get_name());
    }
    if filter.limit > 0 {
        runs.truncate(filter.limit as usize);
    }
    Ok(runs)
}

/// A run's status as shown: a `running` run whose process is gone is `abandoned`.
pub fn judged_status<'a>(stored: &'a str, owner: Option<&results::Owner>) -> &'a str {
    let gone = || owner.is_some_and(|o| store::owner::abandoned(o, &this_process(), netio::host::pid_alive));
    if stored == "running" && gone() {
        "abandoned"
    } else {
        stored
    }
}

/// A run id from the command line: a number, `last`, or a stable id.
pub fn run_id(st: &Store, text: &str) -> Result<i64> {
    if text == "last" {
        return st.last_run()?.context("the archive has no runs yet");
    }
    if store::ids::is_uid(text) {
        return Ok(st.run_by_uid(text)?);
    }
    text.parse().with_context(|| format!("'{text}' is not a run id (a number, 'last' or a stable id)"))
}

/// `tcplab show ID`.
pub fn show(a: &ShowArgs) -> Result<ExitCode> {
    let st = open_store_read(&a.store)?;
    let run = st.load_run(run_id(&st, &a.id)?)?;
    let fmt = match (a.format, a.json, a.csv) {
        (Some(f), _, _) => f,
        (None, true, _) => format("json")?,
        (None, _, true) => format("csv")?,
        (None, false, false) => format("text")?,
    };
    let body = fmt.render_run(&run).with_context(|| format!("{} cannot show a run", fmt.name))?;
    emit(body.trim_end());
    Ok(ExitCode::SUCCESS)
}

/// `tcplab export`.
pub fn export(a: &ExportArgs) -> Result<ExitCode> {
    let st = open_store_read(&a.store)?;
    let ids: Vec<i64> = if a.ids.is_empty() {
        let mut ids: Vec<i64> = list(&st, &a.filter, 0)?.iter().map(|r| r.id).collect();
        ids.reverse();
        ids
    } else {
        a.ids.clone()
    };
    let runs = ids.iter().map(|id| st.load_run(*id)).collect::<store::Result<Vec<_>>>()?;
    let body =
        a.format.render_runs(&runs).with_context(|| format!("{} cannot export runs", a.format.name))?;
    match &a.output {
        Some(path) => std::fs::write(path, body).with_context(|| format!("writing {}", path.display()))?,
        None => emit(body.trim_end()),
    }
    Ok(ExitCode::SUCCESS)
}
