//! `tcplab report`: an HTML (or markdown) report of archived runs or saved `--json` output.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// Report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// One self-contained HTML file with plots.
    Html,
    /// Markdown tables, for pasting into issues.
    Markdown,
}

/// `tcplab report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Archive run ids (default, without --from: the last run).
    pub ids: Vec<i64>,
    /// Saved `--json` output (a run document, or an array of them); repeatable.
    #[arg(long = "from", value_name = "FILE")]
    pub from: Vec<PathBuf>,
    /// Write the report here (default: stdout).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Format (default: markdown for a `.md` output file, else html).
    #[arg(long, value_enum)]
    pub format: Option<ReportFormat>,
    /// The archive (default: $XDG_DATA_HOME/tcplab/results.db).
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
}

impl ReportArgs {
    /// The format asked for or implied by the output file's extension.
    pub fn format(&self) -> ReportFormat {
        let md =
            self.output.as_ref().and_then(|p| p.extension()).is_some_and(|e| e == "md" || e == "markdown");
        self.format.unwrap_or(if md { ReportFormat::Markdown } else { ReportFormat::Html })
    }
}
