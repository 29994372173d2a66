//! Arguments of `tcplab archive`: shipping results to the archive a fleet shares (`push`) and
//! finding hosts or mesh cells that stopped sending them (`audit`) and paths that got slower
//! (`regressions`).

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::StoreArgs;
use crate::parse;

/// `tcplab archive`.
#[derive(Debug, Args)]
pub struct ArchiveArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: ArchiveAction,
}

/// `tcplab archive push|audit`.
#[derive(Debug, Subcommand)]
pub enum ArchiveAction {
    /// Copy the results this archive (--db) has and another (--to) lacks, by stable id, in
    /// batches; safe to repeat and to interrupt.
    Push(PushArgs),
    /// List the client hosts (or, with --inventory, the mesh cells) with no result in a recent
    /// period (exit 1 if any).
    Audit(AuditArgs),
    /// Per path and test, the newest results against that path's own history in the period,
    /// with confidence intervals as `compare` (exit 1 if any path regressed).
    Regressions(RegressionsArgs),
}

/// `tcplab archive push`.
#[derive(Debug, Args)]
pub struct PushArgs {
    /// The archive to copy to: postgres://user@host/db (or a file).
    #[arg(long, value_name = "URL|PATH")]
    pub to: PathBuf,
    /// At most about this many tests per transaction.
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u32).range(1..))]
    pub batch: u32,
    /// The spool to deliver first: results that waited because --to could not take them
    /// (default: $TCPLAB_SPOOL, else the data directory).
    #[arg(long, value_name = "DIR")]
    pub spool_dir: Option<PathBuf>,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// `tcplab archive audit`.
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// The period: results since this long ago (e.g. 24h, 90m, 7d, 3600).
    #[arg(long, default_value = "24h", value_parser = parse::age_ms)]
    pub since: u64,
    /// Hosts that must have results (default: every host the archive has runs of).
    #[arg(long, value_name = "HOST,HOST…", value_delimiter = ',')]
    pub expect_hosts: Vec<String>,
    /// Audit a mesh instead of hosts: the inventory's cells (every sender → receiver pair and
    /// each host's loop-back) with no completed result in the period.
    #[arg(long, value_name = "FILE", conflicts_with = "expect_hosts")]
    pub inventory: Option<PathBuf>,
    /// With --inventory: leave out the loop-back baselines (a host to itself).
    #[arg(long, requires = "inventory")]
    pub no_baseline: bool,
    /// One JSON document.
    #[arg(short = 'J', long)]
    pub json: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// `tcplab archive regressions`.
#[derive(Debug, Args)]
pub struct RegressionsArgs {
    /// The period: each path's history is its results since this long ago (e.g. 7d, 24h).
    #[arg(long, default_value = "7d", value_parser = parse::age_ms)]
    pub since: u64,
    /// A path regressed when significantly slower than its history by more than this (10% or 10).
    #[arg(long, default_value = "10%", value_parser = parse::slowdown_pct)]
    pub threshold: f64,
    /// Confidence level of the intervals, in %.
    #[arg(long, default_value_t = 95.0, value_parser = parse::level_pct)]
    pub level: f64,
    /// Judge the newest N results of each path together against the earlier ones.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub latest: u32,
    /// One JSON document (for alerting).
    #[arg(short = 'J', long)]
    pub json: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}
