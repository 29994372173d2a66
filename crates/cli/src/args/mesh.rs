//! `tcplab mesh`: one test type between every sender and receiver of an inventory.

use clap::Args;

use crate::args::archive::{ConfidenceArgs, StoreArgs};
use crate::args::shape::TestShapeArgs;
use crate::args::OutputArgs;

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
    #[arg(long, value_name = "ID", conflicts_with = "inventory")]
    pub resume: Option<i64>,
    /// Authenticate to every host with the pre-shared key in FILE; TCPLAB_KEY=ID:SECRET does
    /// the same.
    #[arg(long, value_name = "FILE")]
    pub key_file: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub shape: TestShapeArgs,
    #[command(flatten)]
    pub confidence: ConfidenceArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}
