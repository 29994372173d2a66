//! The test a sweep or a mesh runs at each point: its type and the settings every point shares.

use clap::Args;

use crate::args::{SocketArgs, TimingArgs};
use crate::parse;

/// `--test` and the settings of the test at every point (`sweep`, `mesh`).
#[derive(Debug, Args)]
pub struct TestShapeArgs {
    /// Test type: any registered one, by command or id (stream, rr, crr, udp, udp-rr, tcp-stream …).
    #[arg(long, value_parser = parse::test_kind, default_value = "stream")]
    pub test: results::TestKind,
    #[command(flatten)]
    pub timing: TimingArgs,
    #[command(flatten)]
    pub socket: SocketArgs,
    /// Bytes per write and read (stream; default 128K), datagram size (udp; default 1460).
    #[arg(short = 'l', long = "len", value_parser = parse::size_u32)]
    pub len: Option<u32>,
    /// Target rate per stream in bit/s (udp; stream paces each sending stream as iperf3's -b on
    /// TCP); k, M, G are powers of 1000 (100M = 10⁸ bit/s); 0 = as fast as possible (default:
    /// the test type's, 1M for udp as `tcplab udp`, unlimited for stream).
    #[arg(short = 'b', long = "rate", value_parser = parse::rate_bps)]
    pub rate: Option<u64>,
    /// Request and response sizes, REQ,RESP (rr, crr, udp-rr; default: the test type's).
    #[arg(short = 'r', long = "size", value_parser = parse::rr_sizes)]
    pub size: Option<(u32, u32)>,
    /// Transactions in flight per flow (rr).
    #[arg(long, default_value_t = 1)]
    pub burst: u32,
}
