//! `tcplab archive`: the archive's own maintenance. Here only `audit --inventory`.

use clap::{Args, Subcommand};

use crate::parse;

/// `tcplab archive`.
#[derive(Debug, Args)]
pub struct ArchiveArgs {
    /// What to do with the archive.
    #[command(subcommand)]
    pub command: ArchiveCommand,
}

/// `tcplab archive …`.
#[derive(Debug, Subcommand)]
pub enum ArchiveCommand {
    /// List what is missing: with --inventory, the mesh cells (sender → receiver) with no completed result in the period.
    Audit(AuditArgs),
}

/// `tcplab archive audit`.
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// The mesh inventory whose cells (every sender → receiver pair and each host's loop-back) must have results.
    #[arg(long, value_name = "FILE")]
    pub inventory: std::path::PathBuf,
    /// Only results of the last SECS seconds (default: any time).
    #[arg(long, value_name = "SECS", value_parser = parse::seconds_ms)]
    pub since: Option<u64>,
    /// Leave out the loop-back baselines (a host to itself).
    #[arg(long)]
    pub no_baseline: bool,
    /// Archive file (default: $XDG_DATA_HOME/tcplab/results.db or ~/.local/share/tcplab/results.db).
    #[arg(long, value_name = "PATH")]
    pub db: Option<std::path::PathBuf>,
    /// One JSON document: every cell, its last result's time, and whether it is missing.
    #[arg(short = 'J', long)]
    pub json: bool,
}
