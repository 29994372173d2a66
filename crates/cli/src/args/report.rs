//! `tcplab report`: an HTML (or any other document format's) report of archived runs or saved `--json` output.

use std::path::PathBuf;

use clap::Args;

use crate::args::archive::format_parser;

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
    /// Format (default: the one the output file's extension names — .md markdown, .csv, .json
    /// … — else html).
    #[arg(short = 'f', long, value_parser = format_parser(report::View::Runs))]
    pub format: Option<&'static report::Renderer>,
    /// The archive: a file or postgres://user@host/db (default: $TCPLAB_DB, else
    /// $XDG_DATA_HOME/tcplab/results.db).
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<PathBuf>,
}

impl ReportArgs {
    /// The format asked for or implied by the output file's extension (html otherwise).
    pub fn format(&self) -> Option<&'static report::Renderer> {
        let by_ext = || self.output.as_ref()?.extension()?.to_str().and_then(report::by_extension);
        self.format.or_else(by_ext).or_else(|| report::by_name("html"))
    }
}
