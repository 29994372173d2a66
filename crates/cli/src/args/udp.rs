//! `tcplab udp` and `tcplab udp-rr`.

use clap::Args;

use super::{ClientArgs, TimingArgs};
use crate::parse;

/// Socket options of UDP tests (TCP-only options such as -N/-M/-C do not apply).
#[derive(Debug, Args, Clone)]
pub struct UdpSocketArgs {
    #[command(flatten)]
    pub buffers: super::BufferArgs,
    /// Send without UDP checksums (SO_NO_CHECK, seed 002's checksum experiment). IPv4 only:
    /// IPv6 requires the checksum. Turns UDP GSO off.
    #[arg(long)]
    pub no_checksum: bool,
    /// One datagram per system call: no sendmmsg/recvmmsg batches, no UDP GSO/GRO (for comparison).
    #[arg(long)]
    pub no_offload: bool,
}

/// `tcplab udp`.
#[derive(Debug, Args)]
pub struct UdpArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    #[command(flatten)]
    pub link: super::link::LinkArgs,
    #[command(flatten)]
    pub path: super::emu::PathArgs,
    #[command(flatten)]
    pub timing: TimingArgs,
    #[command(flatten)]
    pub socket: UdpSocketArgs,
    /// Target rate per stream in bit/s of UDP payload; k, M, G are powers of 1000 as in iperf3
    /// (100M = 10⁸ bit/s, as rate=100M in --path); 0 = as fast as possible.
    #[arg(short = 'b', long = "rate", value_parser = parse::rate_bps, default_value = "1M")]
    pub rate: u64,
    /// Datagram size: UDP payload bytes, 16 to 65507 (K = 1024).
    #[arg(short = 'l', long = "len", value_parser = parse::size_u32, default_value = "1460")]
    pub len: u32,
    /// Bytes to send in all (instead of -t), e.g. 100M.
    #[arg(short = 'n', long = "bytes", value_parser = parse::size_u64)]
    pub bytes: Option<u64>,
    /// Pacing granularity: datagrams sent back to back at each pacing step.
    #[arg(long, default_value_t = 1)]
    pub burst: u32,
    /// Server sends, client receives.
    #[arg(short = 'R', long, conflicts_with = "bidir")]
    pub reverse: bool,
    /// Both directions at once.
    #[arg(long)]
    pub bidir: bool,
    /// Receivers work this long per datagram they read, as a slow receiving host would (seed
    /// 002's receiver overrun): what arrives meanwhile waits in the socket buffer and what does
    /// not fit is dropped, counted as socket drops. A duration with its unit (2.6ms, 500us),
    /// 1us … 1s.
    #[arg(long, value_parser = parse::duration, value_name = "DURATION")]
    pub recv_delay: Option<std::time::Duration>,
}

/// `tcplab udp-rr`.
#[derive(Debug, Args)]
pub struct UdpRrArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    #[command(flatten)]
    pub path: super::emu::PathArgs,
    #[command(flatten)]
    pub timing: TimingArgs,
    #[command(flatten)]
    pub socket: UdpSocketArgs,
    /// Request and response sizes, REQ,RESP (each 16 to 65507: a request carries its number).
    #[arg(short = 'r', long = "size", value_parser = parse::rr_sizes, default_value = "64,64")]
    pub size: (u32, u32),
    /// Requests kept in flight per flow.
    #[arg(long, default_value_t = 1)]
    pub burst: u32,
}
