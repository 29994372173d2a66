//! `tcplab model …`: theoretical limits. Specs and numbers stay strings here; `cmd::model`
//! validates them so a bad one is one `error:` line and exit 2.

use clap::{Args, Subcommand};

/// `tcplab model`.
#[derive(Debug, Args)]
pub struct ModelArgs {
    /// What to compute.
    #[command(subcommand)]
    pub what: ModelCommand,
}

/// The quantities `tcplab model` computes.
#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// Maximum goodput of a link for a stack, every overhead byte itemised.
    Goodput(GoodputArgs),
    /// Goodput versus application message size (seed 000 Fig. 2, seed 002 Fig. 3).
    Curve(CurveArgs),
    /// Throughput allowed by a window over a round trip (window / RTT).
    Window(WindowArgs),
    /// Bandwidth-delay product and the window scale it needs.
    Bdp(BdpArgs),
    /// Loss-limited TCP throughput: Mathis, Padhye, RFC 5348, CUBIC.
    Loss(LossArgs),
}

/// Output format of `tcplab model`.
#[derive(Debug, Args, Clone, Default)]
pub struct ModelOutput {
    /// JSON instead of a table.
    #[arg(short = 'J', long, conflicts_with = "csv")]
    pub json: bool,
    /// CSV instead of a table.
    #[arg(long)]
    pub csv: bool,
}

/// A link and a protocol stack.
#[derive(Debug, Args, Clone)]
pub struct LinkStack {
    /// Link spec, e.g. ethernet:1g, ethernet:10g:mtu=9000, atm:oc3c:mtu=9180, atm:oc3c:lane, raw:100m:overhead=20 (docs/model.md).
    #[arg(long, value_name = "SPEC")]
    pub link: String,
    /// Protocol stack, e.g. tcp, tcp+ts, ipv6/tcp+ts, udp (default: IPv4, TCP without options).
    #[arg(long, value_name = "SPEC", default_value = "ipv4:tcp")]
    pub stack: String,
}

/// `tcplab model goodput`.
#[derive(Debug, Args)]
pub struct GoodputArgs {
    #[command(flatten)]
    pub path: LinkStack,
    /// Application bytes per write, each sent as its own segments (default: one full segment).
    #[arg(long, value_name = "BYTES")]
    pub size: Option<String>,
    /// Data segments per pure ACK in the reverse direction (TCP).
    #[arg(long, default_value_t = 2)]
    pub segments_per_ack: u64,
    #[command(flatten)]
    pub output: ModelOutput,
}

/// `tcplab model curve`.
#[derive(Debug, Args)]
pub struct CurveArgs {
    #[command(flatten)]
    pub path: LinkStack,
    /// Message sizes: 1..65536:x2 (doubling), 64..40000:+64 (steps) or a list 1,40,48.
    #[arg(long, value_name = "SIZES", default_value = "1..65536:x2")]
    pub sizes: String,
    #[command(flatten)]
    pub output: ModelOutput,
}

/// `tcplab model window`.
#[derive(Debug, Args)]
pub struct WindowArgs {
    /// Window in bytes, e.g. 64K or 65535.
    #[arg(short = 'w', long, value_name = "BYTES")]
    pub window: String,
    /// Round-trip time, e.g. 170ms.
    #[arg(long, value_name = "TIME")]
    pub rtt: String,
    /// Optional link spec whose maximum goodput caps the window's rate.
    #[arg(long, value_name = "SPEC")]
    pub link: Option<String>,
    /// Protocol stack for the link's limit.
    #[arg(long, value_name = "SPEC", default_value = "ipv4:tcp")]
    pub stack: String,
    #[command(flatten)]
    pub output: ModelOutput,
}

/// `tcplab model bdp`.
#[derive(Debug, Args)]
pub struct BdpArgs {
    /// Path rate, e.g. 1g or 134.51m.
    #[arg(long, value_name = "RATE", required_unless_present = "link", conflicts_with = "link")]
    pub rate: Option<String>,
    /// A link spec: its maximum goodput is the rate.
    #[arg(long, value_name = "SPEC")]
    pub link: Option<String>,
    /// Protocol stack for the link's goodput and MSS.
    #[arg(long, value_name = "SPEC", default_value = "ipv4:tcp")]
    pub stack: String,
    /// Round-trip time, e.g. 170ms.
    #[arg(long, value_name = "TIME")]
    pub rtt: String,
    /// Segment size for counting segments (default: the link's MSS, or 1448).
    #[arg(long, value_name = "BYTES")]
    pub mss: Option<String>,
    #[command(flatten)]
    pub output: ModelOutput,
}

/// `tcplab model loss`.
#[derive(Debug, Args)]
pub struct LossArgs {
    /// Segment payload in bytes (1448 with timestamps at MTU 1500).
    #[arg(long, value_name = "BYTES", default_value = "1448")]
    pub mss: String,
    /// Round-trip time, e.g. 170ms.
    #[arg(long, value_name = "TIME")]
    pub rtt: String,
    /// Segment loss probability, e.g. 1e-4.
    #[arg(long, value_name = "P")]
    pub loss: String,
    /// Retransmission timeout T0 for Padhye.
    #[arg(long, value_name = "TIME", default_value = "1s")]
    pub rto: String,
    /// Segments per ACK, b, for Padhye (2 with delayed ACKs).
    #[arg(long, default_value_t = 2)]
    pub segments_per_ack: u64,
    /// Largest window W_max for Padhye, e.g. 64K.
    #[arg(long, value_name = "BYTES")]
    pub window: Option<String>,
    /// Also the loss rate Mathis allows at this rate, e.g. 1g.
    #[arg(long, value_name = "RATE")]
    pub target: Option<String>,
    #[command(flatten)]
    pub output: ModelOutput,
}
