//! `tcplab sweep`: one test type run over a grid of parameter values.

use clap::Args;

use crate::args::archive::{ConfidenceArgs, StoreArgs};
use crate::args::shape::TestShapeArgs;
use crate::args::OutputArgs;

/// The network path a sweep runs over: the link its throughput is compared with (`--link`)
/// and the emulated path every point runs across (`--path`).
#[derive(Debug, Args, Clone, Default)]
pub struct SweepPath {
    #[command(flatten)]
    pub link: super::link::LinkArgs,
    #[command(flatten)]
    pub emu: super::emu::PathArgs,
}

/// `tcplab sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Server; without it (and without --resume), an embedded server on 127.0.0.1.
    pub host: Option<String>,
    /// Server control port (default 9180; with --resume, the stored one).
    #[arg(short, long)]
    pub port: Option<u16>,
    // The help lists the settings from results::setting, those some test type takes.
    #[arg(long = "vary", value_name = "NAME=VALUES", required_unless_present = "resume", help = crate::sweep_plan::vary_help())]
    pub vary: Vec<String>,
    /// Parameters that take the same value, e.g. window_clamp=sndbuf=len (one of them is varied).
    #[arg(long = "tie", value_name = "A=B[=C…]")]
    pub tie: Vec<String>,
    /// Continue the interrupted sweep with this run id: its stored plan (test, grid, -t, -I …) is reused; HOST and -p may point elsewhere.
    #[arg(long, value_name = "ID", conflicts_with_all = ["vary", "tie", "every"])]
    pub resume: Option<i64>,
    #[command(flatten)]
    pub shape: TestShapeArgs,
    /// Server sends (stream).
    #[arg(short = 'R', long, conflicts_with = "bidir")]
    pub reverse: bool,
    /// Both directions at once (stream).
    #[arg(long)]
    pub bidir: bool,
    #[command(flatten)]
    pub confidence: ConfidenceArgs,
    #[command(flatten)]
    pub path: SweepPath,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub schedule: super::mesh::ScheduleArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}
