//! `tcplab mesh`: one test type between every sender and receiver of an inventory.

use clap::Args;

use crate::args::archive::{ConfidenceArgs, StoreArgs};
use crate::args::shape::TestShapeArgs;
use crate::args::OutputArgs;
use crate::parse;

/// `tcplab mesh`.
#[derive(Debug, Args)]
pub struct MeshArgs {
    /// TOML inventory of hosts (`[[host]]` with name, address = `"HOST[:PORT]"`, role = sender|receiver|both, labels), each running `tcplab server --allow-third-party`.
    #[arg(required_unless_present = "resume")]
    pub inventory: Option<std::path::PathBuf>,
    /// Leave out each host's loop-back baseline (a third-party test from the host to itself).
    #[arg(long)]
    pub no_baseline: bool,
    /// Continue the interrupted mesh with this run id: its stored hosts, test and settings are reused; finished cells are kept.
    #[arg(long, value_name = "ID", conflicts_with_all = ["inventory", "every"])]
    pub resume: Option<i64>,
    /// Authenticate to every host with the pre-shared key in FILE; TCPLAB_KEY=ID:SECRET does
    /// the same.
    #[arg(long, value_name = "FILE")]
    pub key_file: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub schedule: ScheduleArgs,
    #[command(flatten)]
    pub shape: TestShapeArgs,
    #[command(flatten)]
    pub confidence: ConfidenceArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Scheduled rounds (`mesh` and every test command), and the spool results wait in.
#[derive(Debug, Args, Clone, Default)]
pub struct ScheduleArgs {
    /// Run a round every INTERVAL (e.g. 1h, 15m, 30s) until stopped (Ctrl-C, SIGTERM), one
    /// archived run per round; rounds never overlap. With a postgres:// archive each round is
    /// kept in a local spool first and pushed, so results survive an archive that is down.
    #[arg(long, value_name = "INTERVAL", value_parser = parse::interval)]
    pub every: Option<std::time::Duration>,
    /// Start each round up to this much after its slot, at random (e.g. 5m).
    #[arg(long, value_name = "DURATION", value_parser = parse::age, requires = "every")]
    pub jitter: Option<std::time::Duration>,
    /// Stop after N rounds.
    #[arg(long, value_name = "N", requires = "every", value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: Option<u32>,
    /// Where results wait when the archive cannot take them (a full disk, a PostgreSQL
    /// outage), to be delivered by the next run or `tcplab archive push` (default:
    /// $TCPLAB_SPOOL, else the data directory, beside the default archive).
    #[arg(long, value_name = "DIR")]
    pub spool_dir: Option<std::path::PathBuf>,
}
