//! `tcplab report` and `--report FILE`: load runs from the archive or from saved JSON
//! documents, render them (any document format of report's registry), write the file.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use results::RunRecord;

use crate::args::report::ReportArgs;
use crate::output::emit;

/// Runs `tcplab report`.
pub fn run(a: &ReportArgs) -> Result<ExitCode> {
    let mut runs = Vec::new();
    for path in &a.from {
        runs.extend(read_json(path)?);
    }
    if !a.ids.is_empty() || a.from.is_empty() {
        let archived = from_archive(a.db.as_deref(), &a.ids)?;
        check_states(&archived)?;
        runs.extend(archived.into_iter().map(|a| a.run));
    }
    let doc = render(&runs, a.format())?;
    match &a.output {
        Some(path) => {
            write(path, &doc)?;
            let tests: usize = runs.iter().map(|r| r.tests.len()).sum();
            eprintln!("wrote {} ({} run(s), {tests} test(s))", path.display(), runs.len());
        }
        None => emit(doc.trim_end()),
    }
    Ok(ExitCode::SUCCESS)
}

fn render(runs: &[RunRecord], format: Option<&'static report::Renderer>) -> Result<String> {
    format.and_then(|r| r.render_runs(runs)).context("no such report format in this build")
}

fn write(path: &Path, doc: &str) -> Result<()> {
    std::fs::write(path, doc).with_context(|| format!("writing the report {}", path.display()))
}

/// Runs from a saved `--json` document: one run, or an array of runs.
fn read_json(path: &Path) -> Result<Vec<RunRecord>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not JSON (expected the output of --json)", path.display()))?;
    let parsed = if value.is_array() {
        serde_json::from_value::<Vec<RunRecord>>(value)
    } else {
        serde_json::from_value::<RunRecord>(value).map(|r| vec![r])
    };
    parsed.with_context(|| {
        format!("{} is not a tcplab run document (expected the output of --json)", path.display())
    })
}

/// One run read from the archive, with its id and status.
struct Archived {
    id: i64,
    status: String,
    run: RunRecord,
}

/// Says which archived runs did not finish; refuses a report of runs that hold no test at all
/// (it would say "no tests" and exit 0), naming each run's status instead.
fn check_states(archived: &[Archived]) -> Result<()> {
    let unfinished: Vec<String> = archived
        .iter()
        .filter(|a| a.status != "complete")
        .map(|a| format!("run {} is {} ({} test(s) stored)", a.id, explain(&a.status), a.run.tests.len()))
        .collect();
    if !archived.is_empty() && archived.iter().all(|a| a.run.tests.is_empty()) {
        let what =
            if unfinished.is_empty() { "no run holds a test".to_string() } else { unfinished.join("; ") };
        bail!("nothing to report: {what}");
    }
    for line in unfinished {
        eprintln!("note: {line}");
    }
    Ok(())
}

/// A run status with what it means.
fn explain(status: &str) -> String {
    match status {
        "abandoned" => "abandoned: its process ended before the run finished".into(),
        "running" => "still running: tests are stored as each one ends".into(),
        "interrupted" => "interrupted: stopped before its planned end".into(),
        other => other.into(),
    }
}

/// The archived runs `ids` (default: the last one) with each one's id and status.
fn from_archive(db: Option<&Path>, ids: &[i64]) -> Result<Vec<Archived>> {
    let path: PathBuf = match db.map(Path::to_path_buf).or_else(store::env_path) {
        Some(p) => p,
        None => store::default_path()
            .context("no archive path: set HOME or XDG_DATA_HOME, or give --db or --from")?,
    };
    let url = path.to_str().is_some_and(store::db::is_postgres);
    if !url && !path.exists() {
        bail!(
            "no archive at {} (run a test first, or report on saved output with --from FILE.json)",
            path.display()
        );
    }
    let store = pipeline::recorder::open_store_read(Some(&path))?;
    let ids = if ids.is_empty() {
        vec![store.last_run()?.context("the archive holds no runs yet")?]
    } else {
        ids.to_vec()
    };
    let mut archived = Vec::new();
    for &id in &ids {
        let run = store.load_run(id)?;
        let (status, owner) = store.run_state(id)?;
        let status = super::history::judged_status(&status, owner.as_ref()).to_string();
        archived.push(Archived { id, status, run });
    }
    Ok(archived)
}
