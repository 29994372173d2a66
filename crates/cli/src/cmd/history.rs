//! Browsing the archive: `tcplab history` (recent runs, filterable), `tcplab show ID` (one
//! run through the live renderers) and `tcplab export` (CSV or JSON for other tools).

use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::ValueEnum;
use report::units::utc_datetime;
use report::{csv, grid, json, text};
use results::RunRecord;
use store::{RunFilter, RunSummary, Store};

use crate::args::archive::{ExportFormat, RunFilterArgs, ShowFormat};
use crate::args::{ExportArgs, HistoryArgs, ShowArgs};
use crate::output::{emit, now_unix_ms};
use crate::recorder::open_store;

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

/// `tcplab history`.
pub fn history(a: &HistoryArgs) -> Result<ExitCode> {
    let st = open_store(&a.store)?;
    let runs = st.list_runs(&filter_of(&a.filter, 20))?;
    if a.json {
        let list: Vec<serde_json::Value> = runs.iter().map(summary_json).collect();
        emit(&serde_json::to_string_pretty(&list).unwrap_or_else(|_| "[]".into()));
        return Ok(ExitCode::SUCCESS);
    }
    emit(&format!(
        "{:>6}  {:<20} {:<6} {:<12} {:>9}  {:<22} {:>16}  command",
        "id", "started (UTC)", "kind", "status", "tests", "server", "best"
    ));
    for r in &runs {
        emit(&summary_line(r));
    }
    if runs.is_empty() {
        eprintln!("no runs in {}", st.path().display());
    }
    Ok(ExitCode::SUCCESS)
}

fn summary_line(r: &RunSummary) -> String {
    let tests = match r.points_total {
        Some(n) => format!("{}/{n}", r.tests),
        None => r.tests.to_string(),
    };
    let best = report::units::headline(r.best);
    let cmd = r.command_line.iter().skip(1).cloned().collect::<Vec<_>>().join(" ");
    format!(
        "{:>6}  {:<20} {:<6} {:<12} {:>9}  {:<22} {:>16}  {}",
        r.id,
        utc_datetime(r.started_unix_ms),
        r.kind,
        r.status,
        tests,
        r.server,
        best,
        cmd
    )
}

fn summary_json(r: &RunSummary) -> serde_json::Value {
    serde_json::json!({
        "id": r.id, "kind": r.kind, "status": r.status, "started_unix_ms": r.started_unix_ms,
        "server": r.server, "tests": r.tests, "points_total": r.points_total, "first_label": r.first_label,
        "best": r.best, "command_line": r.command_line,
    })
}

/// A run id from the command line: a number or `last`.
pub fn run_id(st: &Store, text: &str) -> Result<i64> {
    if text == "last" {
        return st.last_run()?.context("the archive has no runs yet");
    }
    text.parse().with_context(|| format!("'{text}' is not a run id (a number or 'last')"))
}

/// `tcplab show ID`.
pub fn show(a: &ShowArgs) -> Result<ExitCode> {
    let st = open_store(&a.store)?;
    let run = st.load_run(run_id(&st, &a.id)?)?;
    let format = match (a.format, a.json, a.csv) {
        (Some(f), _, _) => f,
        (None, true, _) => ShowFormat::Json,
        (None, _, true) => ShowFormat::Csv,
        (None, false, false) => ShowFormat::Text,
    };
    match format {
        ShowFormat::Json => emit(&json::document(&run)),
        ShowFormat::Csv => emit(csv::tests(std::slice::from_ref(&run)).trim_end()),
        ShowFormat::Markdown => emit(report::markdown::document(std::slice::from_ref(&run)).trim_end()),
        ShowFormat::Text => emit(&show_text(&run)),
    }
    Ok(ExitCode::SUCCESS)
}

fn show_text(run: &RunRecord) -> String {
    let mut o = format!(
        "run {} · {} UTC · tcplab {} · {}\n",
        run.id.unwrap_or(0),
        utc_datetime(run.started_unix_ms),
        run.tool_version,
        run.command_line.join(" ")
    );
    let host = |h: &results::HostInfo| {
        format!("{} ({}, {} × {}, {})", h.hostname, h.kernel, h.cpus, h.cpu_model, h.congestion_default)
    };
    o.push_str(&format!("client {}\n", host(&run.local_host)));
    if let Some(h) = &run.remote_host {
        o.push_str(&format!("server {}\n", host(h)));
    }
    if let Some(e) = &run.error {
        o.push_str(&format!("error: {}\n", e.message));
    }
    if let Some(sw) = &run.sweep {
        o.push_str(&grid::table(run));
        o.push_str(&format!(
            "{} of {} points{}; every point: tcplab show {} --csv\n",
            sw.points.len(),
            sw.plan.len(),
            if sw.complete { "" } else { " (resume with tcplab sweep --resume ID)" },
            run.id.unwrap_or(0)
        ));
    } else if let [one] = run.tests.as_slice() {
        o.push_str(&text::test_summary(one));
    } else {
        o.push_str(&text::suite_table(&run.tests));
    }
    o
}

/// `tcplab export`.
pub fn export(a: &ExportArgs) -> Result<ExitCode> {
    let st = open_store(&a.store)?;
    let ids: Vec<i64> = if a.ids.is_empty() {
        let mut ids: Vec<i64> = st.list_runs(&filter_of(&a.filter, 0))?.iter().map(|r| r.id).collect();
        ids.reverse();
        ids
    } else {
        a.ids.clone()
    };
    let runs = ids.iter().map(|id| st.load_run(*id)).collect::<store::Result<Vec<_>>>()?;
    let body = match a.format {
        ExportFormat::Csv => csv::tests(&runs),
        ExportFormat::IntervalsCsv => csv::intervals(&runs),
        ExportFormat::Json => serde_json::to_string_pretty(&runs).context("encoding JSON")? + "\n",
        ExportFormat::Markdown => report::markdown::document(&runs),
    };
    match &a.output {
        Some(path) => std::fs::write(path, body).with_context(|| format!("writing {}", path.display()))?,
        None => emit(body.trim_end()),
    }
    Ok(ExitCode::SUCCESS)
}
