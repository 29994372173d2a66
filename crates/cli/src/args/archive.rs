//! Arguments of the archive (`--db`, `--no-store`), of repeat-until-confident (`-I`,
//! `--iterations`, `--confidence-on`) and of the browsing commands (`history`, `show`,
//! `export`, `compare`).

use std::path::PathBuf;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, ValueEnum};

use crate::parse;

/// Where results are kept.
#[derive(Debug, Args, Clone, Default)]
pub struct StoreArgs {
    /// Archive: a file, or postgres://user@host/db for a shared PostgreSQL (default: $TCPLAB_DB,
    /// else $XDG_DATA_HOME/tcplab/results.db or ~/.local/share/tcplab/results.db).
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<PathBuf>,
    /// Do not write results to the archive.
    #[arg(long, conflicts_with = "db")]
    pub no_store: bool,
}

/// Metrics that must reach the confidence target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ConfidenceOn {
    /// The result (throughput or transactions/s) and, when measured, local and remote CPU.
    #[default]
    All,
    /// The result alone (netperf -r).
    Result,
}

/// Repeat-until-confident (netperf -i / -I).
#[derive(Debug, Args, Clone, Default)]
pub struct ConfidenceArgs {
    /// Repeat until LEVEL % confident that the mean lies within ±WIDTH/2 % (e.g. 99,5).
    #[arg(short = 'I', long = "confidence", value_name = "LEVEL,WIDTH", value_parser = parse::confidence)]
    pub confidence: Option<(f64, f64)>,
    /// At most MAX, at least MIN iterations (e.g. 10,3; MIN is at least 3).
    #[arg(long, value_name = "MAX,MIN", value_parser = parse::iterations)]
    pub iterations: Option<(u32, u32)>,
    /// What must reach the target.
    #[arg(long, value_enum, default_value_t = ConfidenceOn::All)]
    pub confidence_on: ConfidenceOn,
}

/// What made a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KindArg {
    /// stream, rr, crr.
    Test,
    /// tcplab run.
    Suite,
    /// tcplab sweep.
    Sweep,
    /// Tests `tcplab server --iperf3` served to iperf3 clients.
    Iperf3Client,
}

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StatusArg {
    /// Being written by a live process.
    Running,
    /// Finished.
    Complete,
    /// Stopped with Ctrl-C.
    Interrupted,
    /// Ended by an error.
    Failed,
    /// Left running by a process that is gone (killed, or its host rebooted).
    Abandoned,
}

/// Filters of `history` and `export`.
#[derive(Debug, Args, Clone, Default)]
pub struct RunFilterArgs {
    /// Only runs of this kind.
    #[arg(long, value_enum)]
    pub kind: Option<KindArg>,
    /// Only runs with a test of this type, by command or id (stream, udp, udp-rr, tcp-stream …).
    #[arg(long, value_parser = crate::parse::test_kind)]
    pub test: Option<results::TestKind>,
    /// Only runs against a server whose host:port contains this.
    #[arg(long)]
    pub server: Option<String>,
    /// Only runs with this status.
    #[arg(long, value_enum)]
    pub status: Option<StatusArg>,
    /// Only runs of the last SECS seconds.
    #[arg(long, value_name = "SECS", value_parser = parse::seconds_ms, allow_negative_numbers = true)]
    pub since: Option<u64>,
    /// At most this many runs, newest first (0 = all; default: 20 for history, all for export).
    #[arg(short = 'n', long)]
    pub limit: Option<u32>,
}

/// `--format` values for `view`: the formats of report's registry that render it, each with
/// its one-line description. Parses to the format itself.
pub fn format_parser(view: report::View) -> impl TypedValueParser<Value = &'static report::Renderer> {
    let values = report::render::for_view(view).map(|r| PossibleValue::new(r.name).help(r.about));
    PossibleValuesParser::new(values)
        .try_map(|name: String| report::by_name(&name).ok_or_else(|| format!("no format {name}")))
}

/// `tcplab history`.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub filter: RunFilterArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    /// One JSON array of runs (same as --format json).
    #[arg(short = 'J', long, conflicts_with = "format")]
    pub json: bool,
    /// Output format.
    #[arg(short = 'f', long, value_parser = format_parser(report::View::History))]
    pub format: Option<&'static report::Renderer>,
    /// Mark runs whose process is gone as abandoned in the archive, for good (runs of live
    /// processes and of other hosts are left alone).
    #[arg(long)]
    pub prune_abandoned: bool,
}

/// `tcplab show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Run id (`last` for the newest), or its stable id (a UUID, the same in every archive).
    pub id: String,
    #[command(flatten)]
    pub store: StoreArgs,
    /// The run as one JSON document (same as --format json).
    #[arg(short = 'J', long, conflicts_with_all = ["csv", "format"])]
    pub json: bool,
    /// The run's tests as CSV (same as --format csv).
    #[arg(long, conflicts_with = "format")]
    pub csv: bool,
    /// Output format (default: text).
    #[arg(short = 'f', long, value_parser = format_parser(report::View::Run))]
    pub format: Option<&'static report::Renderer>,
}

/// `tcplab export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Run ids; none = the runs the filters select.
    pub ids: Vec<i64>,
    #[command(flatten)]
    pub filter: RunFilterArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Format.
    #[arg(short = 'f', long, default_value = "csv", value_parser = format_parser(report::View::Runs))]
    pub format: &'static report::Renderer,
    /// Write to this file instead of stdout.
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
}

/// `tcplab compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline run id.
    pub a: String,
    /// The run compared with it.
    pub b: String,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Confidence level of the difference's interval, in %.
    #[arg(long, default_value_t = 95.0)]
    pub level: f64,
    /// Exit 1 when B is significantly slower than A by more than PCT %; exit 3 when that
    /// cannot be decided (a headline metric with one value per run: repeat with -I).
    #[arg(long, value_name = "PCT")]
    pub fail_if_slower: Option<f64>,
    /// The comparison as one JSON document (also on failure).
    #[arg(short = 'J', long)]
    pub json: bool,
}
