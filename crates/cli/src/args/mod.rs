//! The command line (clap). Only this crate knows clap; [`crate::settings`] turns these into
//! validated engine settings.

use std::net::{IpAddr, SocketAddr};

use clap::{Args, Parser, Subcommand};

use crate::parse;

pub mod archive;
pub mod cc;
pub mod link;
pub mod measure;
pub mod model;
pub mod sweep;

pub use archive::{CompareArgs, ConfidenceArgs, ExportArgs, HistoryArgs, ShowArgs, StoreArgs};
pub use sweep::SweepArgs;
pub mod emu;
pub mod report;
pub mod udp;

use self::emu::{EmuArgs, PathArgs};

/// tcplab: how fast is this path or host, and why not faster.
#[derive(Debug, Parser)]
#[command(name = "tcplab", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the standard suite (stream both ways, rr at four sizes, crr, udp at 100 Mbit/s); no HOST = embedded loopback server.
    Run(RunArgs),
    /// Serve tests to tcplab clients (control port 9180).
    Server(ServerArgs),
    /// One test of a registered test type (stream, rr, crr, udp, udp-rr …).
    #[command(flatten)]
    Test(measure::TestCommand),
    /// Run a test over a grid of parameter values (--vary len=1..64K:x2 --vary rcvbuf=32K,64K).
    Sweep(SweepArgs),
    /// Theoretical limits: link goodput with itemised overhead, message-size curves, window, BDP, loss.
    Model(model::ModelArgs),
    /// Congestion controls compared over a path: one stream each (or --concurrent), RTT probe, windows, fairness.
    CompareCc(cc::CompareCcArgs),
    /// Run commands across an emulated link (rate, delay, loss, queue, ATM cells); --list for presets.
    Emu(EmuArgs),
    /// Recent runs in the archive.
    History(HistoryArgs),
    /// One stored run in full (table, JSON, CSV or markdown).
    Show(ShowArgs),
    /// Stored runs as CSV, JSON or markdown.
    Export(ExportArgs),
    /// Two stored runs side by side: differences, confidence intervals, verdicts.
    Compare(CompareArgs),
    /// A self-contained HTML report (or markdown) of archived runs or saved --json output.
    Report(report::ReportArgs),
}

impl Command {
    /// The output flags of a command that runs tests.
    pub fn output(&self) -> Option<&OutputArgs> {
        match self {
            Command::Run(a) => Some(&a.output),
            Command::Test(t) => Some(&t.client().output),
            Command::Sweep(a) => Some(&a.output),
            Command::CompareCc(a) => Some(&a.output),
            Command::Server(_)
            | Command::Model(_)
            | Command::Emu(_)
            | Command::History(_)
            | Command::Show(_)
            | Command::Export(_)
            | Command::Compare(_)
            | Command::Report(_) => None,
        }
    }
}

/// `tcplab server`.
#[derive(Debug, Args)]
pub struct ServerArgs {
    /// Address to listen on.
    #[arg(long, default_value = "0.0.0.0")]
    pub bind: IpAddr,
    /// Control port (data connections use it too).
    #[arg(short, long, default_value_t = 9180)]
    pub port: u16,
    /// Serve one test, then exit.
    #[arg(short = '1', long)]
    pub one_off: bool,
    /// Tests allowed at once; further clients get a "busy" error.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub max_concurrent: u32,
}

impl ServerArgs {
    /// The listening address.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::new(self.bind, self.port)
    }
}

/// Where the server is and how the results are shown: shared by every client command.
#[derive(Debug, Args, Clone)]
pub struct ClientArgs {
    /// Server host name or address (not with --path, which runs its own server).
    #[arg(required_unless_present = "path", default_value = "")]
    pub host: String,
    /// Server control port.
    #[arg(short, long, default_value_t = 9180)]
    pub port: u16,
    /// Local address to bind to.
    #[arg(short = 'B', long)]
    pub bind: Option<IpAddr>,
    /// IPv4 only.
    #[arg(short = '4', long = "ipv4", conflicts_with = "ipv6")]
    pub ipv4: bool,
    /// IPv6 only.
    #[arg(short = '6', long = "ipv6")]
    pub ipv6: bool,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub confidence: ConfidenceArgs,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Output selection.
#[derive(Debug, Args, Clone, Default)]
pub struct OutputArgs {
    /// One JSON document at the end (also on failure).
    #[arg(short = 'J', long, conflicts_with = "json_stream")]
    pub json: bool,
    /// NDJSON events (start / interval / end / error) as they happen.
    #[arg(long)]
    pub json_stream: bool,
    /// Also write a self-contained HTML report of the results to FILE.
    #[arg(long, value_name = "FILE")]
    pub report: Option<std::path::PathBuf>,
}

/// Timing options of every test.
#[derive(Debug, Args, Clone)]
pub struct TimingArgs {
    /// Test length in seconds.
    #[arg(short = 't', long = "time", value_name = "SECS", value_parser = parse::seconds_ms, default_value = "10")]
    pub time_ms: u64,
    /// Seconds between interval reports (0 = none).
    #[arg(short = 'i', long = "interval", value_name = "SECS", value_parser = parse::seconds_ms, default_value = "1")]
    pub interval_ms: u64,
    /// Seconds at the start left out of the summary (slow start, warm-up).
    #[arg(short = 'O', long = "omit", value_name = "SECS", value_parser = parse::seconds_ms, default_value = "0")]
    pub omit_ms: u64,
    /// Parallel streams or flows (a thread each).
    #[arg(short = 'P', long, default_value_t = 1)]
    pub parallel: u32,
}

/// Socket buffers of every test, TCP and UDP.
#[derive(Debug, Args, Clone)]
pub struct BufferArgs {
    /// Both socket buffers on both ends (SO_SNDBUF and SO_RCVBUF), e.g. 64K (sizes: K, M, G
    /// are powers of 1024, 64K = 65536 bytes).
    #[arg(short = 'w', long = "window", value_parser = parse::size_u32)]
    pub window: Option<u32>,
    /// Client SO_SNDBUF.
    #[arg(long, value_parser = parse::size_u32)]
    pub sndbuf: Option<u32>,
    /// Client SO_RCVBUF (the receiver with -R).
    #[arg(long, value_parser = parse::size_u32)]
    pub rcvbuf: Option<u32>,
    /// Server SO_SNDBUF.
    #[arg(long, value_parser = parse::size_u32)]
    pub remote_sndbuf: Option<u32>,
    /// Server SO_RCVBUF (the receiver by default).
    #[arg(long, value_parser = parse::size_u32)]
    pub remote_rcvbuf: Option<u32>,
    /// Pin the client's worker threads to CPU N, and the server's to M (iperf3's `-A N[,M]`).
    #[arg(short = 'A', long = "affinity", value_name = "N[,M]", value_parser = parse::affinity)]
    pub affinity: Option<(Option<u32>, Option<u32>)>,
}

/// Socket options of every TCP test.
#[derive(Debug, Args, Clone)]
pub struct SocketArgs {
    #[command(flatten)]
    pub buffers: BufferArgs,
    /// TCP_NODELAY (disable Nagle) on every data socket.
    #[arg(short = 'N', long)]
    pub nodelay: bool,
    /// TCP maximum segment size (TCP_MAXSEG).
    #[arg(short = 'M', long = "mss", value_parser = parse::size_u32)]
    pub mss: Option<u32>,
    /// Congestion control on both ends (e.g. cubic, bbr, reno).
    #[arg(short = 'C', long = "congestion")]
    pub congestion: Option<String>,
}

/// `tcplab stream`.
#[derive(Debug, Args)]
pub struct StreamArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    #[command(flatten)]
    pub path: PathArgs,
    #[command(flatten)]
    pub timing: TimingArgs,
    #[command(flatten)]
    pub socket: SocketArgs,
    /// Bytes to send in all (instead of -t), e.g. 1G.
    #[arg(short = 'n', long = "bytes", value_parser = parse::size_u64, conflicts_with = "blocks")]
    pub bytes: Option<u64>,
    /// Number of writes of -l bytes to send (ttcp's -n; instead of -t).
    #[arg(short = 'k', long = "blocks")]
    pub blocks: Option<u64>,
    /// Bytes per write (K, M = powers of 1024: 128K = 131072).
    #[arg(short = 'l', long = "len", value_parser = parse::size_u32, default_value = "128K")]
    pub len: u32,
    /// Bytes per read (default: -l).
    #[arg(long = "recv-len", value_parser = parse::size_u32)]
    pub recv_len: Option<u32>,
    /// Server sends, client receives (TCP_MAERTS).
    #[arg(short = 'R', long, conflicts_with = "bidir")]
    pub reverse: bool,
    /// Both directions at once.
    #[arg(long)]
    pub bidir: bool,
    #[command(flatten)]
    pub link: link::LinkArgs,
}

/// `tcplab rr`.
#[derive(Debug, Args)]
pub struct RrArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    #[command(flatten)]
    pub path: PathArgs,
    #[command(flatten)]
    pub timing: TimingArgs,
    #[command(flatten)]
    pub socket: SocketArgs,
    /// Request and response sizes, REQ,RESP (e.g. 64,64 or 128,8K).
    #[arg(short = 'r', long = "size", value_parser = parse::rr_sizes, default_value = "1,1")]
    pub size: (u32, u32),
    /// Transactions kept in flight per flow.
    #[arg(long, default_value_t = 1)]
    pub burst: u32,
    /// Spin on non-blocking reads at both ends instead of sleeping (no wake-up latency; costs
    /// a busy core per flow at each end).
    #[arg(long)]
    pub busy_poll: bool,
}

/// `tcplab crr`.
#[derive(Debug, Args)]
pub struct CrrArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    #[command(flatten)]
    pub path: PathArgs,
    #[command(flatten)]
    pub timing: TimingArgs,
    #[command(flatten)]
    pub socket: SocketArgs,
    /// Request and response sizes, REQ,RESP.
    #[arg(short = 'r', long = "size", value_parser = parse::rr_sizes, default_value = "1,1")]
    pub size: (u32, u32),
}

/// `tcplab run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Server to test against; without it, an embedded server on 127.0.0.1.
    pub host: Option<String>,
    /// Server control port (with HOST only: the embedded server takes a free port).
    #[arg(short, long, default_value_t = 9180)]
    pub port: u16,
    /// Seconds per test.
    #[arg(short = 't', long = "time", value_name = "SECS", value_parser = parse::seconds_ms, default_value = "5")]
    pub time_ms: u64,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub link: link::LinkArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub path: PathArgs,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// clap checks the whole command tree (unique flags and group names, valid requires) only
    /// in debug builds when a command is parsed; this test makes it check every subcommand.
    #[test]
    fn the_command_line_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }

    /// Every registered test type has its command, helped by its registry line: a type
    /// registered without one fails here.
    #[test]
    fn every_registered_test_type_has_its_command() {
        let cli = super::Cli::command();
        for t in engine::registry::all() {
            let sub = cli
                .find_subcommand(t.command())
                .unwrap_or_else(|| panic!("no `tcplab {}` for {}", t.command(), t.kind().id()));
            assert_eq!(sub.get_about().map(|a| a.to_string()), Some(t.about().to_string()));
        }
    }
}
