//! `tcplab sweep`: one test type run over a grid of parameter values.

use clap::Args;

use crate::args::archive::{ConfidenceArgs, StoreArgs};
use crate::args::{OutputArgs, SocketArgs, TimingArgs};
use crate::parse;

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
    /// Test type: any registered one, by command or id (stream, rr, crr, udp, udp-rr, tcp-stream …).
    #[arg(long, value_parser = parse::test_kind, default_value = "stream")]
    pub test: results::TestKind,
    // The help lists the settings from results::setting, those some test type takes.
    #[arg(long = "vary", value_name = "NAME=VALUES", required_unless_present = "resume", help = crate::sweep_plan::vary_help())]
    pub vary: Vec<String>,
    /// Parameters that take the same value, e.g. sndbuf=rcvbuf=len (one of them is varied).
    #[arg(long = "tie", value_name = "A=B[=C…]")]
    pub tie: Vec<String>,
    /// Continue the interrupted sweep with this run id: its stored plan (test, grid, -t, -I …) is reused; HOST and -p may point elsewhere.
    #[arg(long, value_name = "ID", conflicts_with_all = ["vary", "tie"])]
    pub resume: Option<i64>,
    #[command(flatten)]
    pub timing: TimingArgs,
    #[command(flatten)]
    pub socket: SocketArgs,
    /// Bytes per write and read (stream; default 128K), datagram size (udp; default 1460).
    #[arg(short = 'l', long = "len", value_parser = parse::size_u32)]
    pub len: Option<u32>,
    /// UDP target rate per stream in bit/s; k, M, G are powers of 1000 (100M = 10⁸ bit/s);
    /// 0 = as fast as possible (default: the test type's, 1M for udp as `tcplab udp`).
    #[arg(short = 'b', long = "rate", value_parser = parse::rate_bps)]
    pub rate: Option<u64>,
    /// Server sends (stream).
    #[arg(short = 'R', long, conflicts_with = "bidir")]
    pub reverse: bool,
    /// Both directions at once (stream).
    #[arg(long)]
    pub bidir: bool,
    /// Request and response sizes, REQ,RESP (rr, crr, udp-rr; default: the test type's).
    #[arg(short = 'r', long = "size", value_parser = parse::rr_sizes)]
    pub size: Option<(u32, u32)>,
    /// Transactions in flight per flow (rr).
    #[arg(long, default_value_t = 1)]
    pub burst: u32,
    #[command(flatten)]
    pub confidence: ConfidenceArgs,
    #[command(flatten)]
    pub path: SweepPath,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}
