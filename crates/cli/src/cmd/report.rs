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
        runs.extend(from_archive(a.db.as_deref(), &a.ids)?);
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

fn from_archive(db: Option<&Path>, ids: &[i64]) -> Result<Vec<RunRecord>> {
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
    let store = store::Store::open(&path)?;
    let ids = if ids.is_empty() {
        vec![store.last_run()?.context("the archive holds no runs yet")?]
    } else {
        ids.to_vec()
    };
    ids.iter().map(|id| Ok(store.load_run(*id)?)).collect()
}
