//! `tcplab mesh`: one test type between every sender and receiver of an inventory.

use clap::Args;

use crate::args::archive::{ConfidenceArgs, StoreArgs};
use crate::args::{OutputArgs, SocketArgs, TimingArgs};
use crate::parse;

/// `tcplab mesh`.
#[derive(Debug, Args)]
pub struct MeshArgs {
    /// TOML inventory of hosts (`[[host]]` with name, address = `"HOST[:PORT]"`, role = sender|receiver|both, labels), each running `tcplab server --allow-third-party`.
    #[arg(required_unless_present = "resume")]
    pub inventory: Option<std::path::PathBuf>,
    /// Test type: any registered one, by command or id (stream, rr, crr, udp, udp-rr, tcp-stream …).
    #[arg(long, value_parser = parse::test_kind, default_value = "stream")]
    pub test: results::TestKind,
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
    pub timing: TimingArgs,
    #[command(flatten)]
    pub socket: SocketArgs,
    /// Bytes per write and read (stream; default 128K), datagram size (udp; default 1460).
    #[arg(short = 'l', long = "len", value_parser = parse::size_u32)]
    pub len: Option<u32>,
    /// UDP target rate per stream in bit/s; k, M, G are powers of 1000 (100M = 10⁸ bit/s).
    #[arg(short = 'b', long = "rate", value_parser = parse::rate_bps)]
    pub rate: Option<u64>,
    /// Request and response sizes, REQ,RESP (rr, crr, udp-rr; default: the test type's).
    #[arg(short = 'r', long = "size", value_parser = parse::rr_sizes)]
    pub size: Option<(u32, u32)>,
    /// Transactions in flight per flow (rr).
    #[arg(long, default_value_t = 1)]
    pub burst: u32,
    #[command(flatten)]
    pub confidence: ConfidenceArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}
