//! The command line (clap). Only this crate knows clap; [`crate::settings`] turns these into
//! validated engine settings.

use std::net::{IpAddr, SocketAddr};

use clap::{Args, Parser, Subcommand};

use crate::parse;

pub mod archive;
pub mod buffers;
pub mod cc;
pub mod dashboard;
pub mod fleet;
pub mod install;
pub mod link;
pub mod measure;
pub mod mesh;
pub mod model;
pub mod shape;
pub mod study;
pub mod sweep;

pub use archive::{CompareArgs, ConfidenceArgs, ExportArgs, HistoryArgs, ShowArgs, StoreArgs};
pub use sweep::SweepArgs;
pub mod emu;
pub mod report;
pub mod serve;
pub mod udp;

use self::emu::{EmuArgs, PathArgs};

/// tcplab: how fast is this path or host, and why not faster.
#[derive(Debug, Parser)]
#[command(name = "tcplab", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// The long flags of the command given (its innermost subcommand), so that an error
    /// suggests only flags this command has.
    #[arg(skip)]
    pub flags: Vec<String>,
}

impl Cli {
    /// The command line definition, with each test command's usage showing HOST as required
    /// (clap would show `[HOST]`, since `--path` or `-c` can stand in for it).
    pub fn definition() -> clap::Command {
        use clap::CommandFactory;
        let mut cli = Cli::command();
        for t in engine::registry::all() {
            let name = t.command();
            let usage = format!(
                "tcplab {name} [OPTIONS] <HOST>\n       tcplab {name} [OPTIONS] -c <HOST>\n       \
                 tcplab {name} [OPTIONS] --path <SPEC>"
            );
            cli = cli.mut_subcommand(name, |sub| sub.override_usage(usage));
        }
        cli
    }

    /// Parses the process's arguments against [`Cli::definition`].
    pub fn parse_args() -> Result<Cli, clap::Error> {
        use clap::FromArgMatches;
        let mut cli = Cli::definition();
        let matches = cli.try_get_matches_from_mut(std::env::args_os())?;
        let mut parsed = Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cli))?;
        parsed.flags = leaf_flags(&cli, &matches);
        Ok(parsed)
    }

    /// Whether the command given has the long flag `long` (without its dashes).
    pub fn has_flag(&self, long: &str) -> bool {
        self.flags.iter().any(|f| f == long)
    }
}

/// The long flags of the innermost subcommand `matches` chose in `cli`.
fn leaf_flags(cli: &clap::Command, matches: &clap::ArgMatches) -> Vec<String> {
    let (mut command, mut matches) = (cli, matches);
    while let Some((name, sub)) = matches.subcommand() {
        match command.find_subcommand(name) {
            Some(c) => (command, matches) = (c, sub),
            None => break,
        }
    }
    command.get_arguments().filter_map(|a| a.get_long().map(str::to_string)).collect()
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the standard suite (stream both ways, rr at four sizes, crr, udp at 100 Mbit/s); no HOST = embedded loopback server.
    Run(RunArgs),
    /// Serve tests to tcplab clients (control port 9180).
    Server(ServerArgs),
    /// A new pre-shared key: a line for the server's --keys file and the client's --key-file.
    Keygen(serve::KeygenArgs),
    /// One test of a registered test type (stream, rr, crr, udp, udp-rr …).
    #[command(flatten)]
    Test(measure::TestCommand),
    /// Run a test over a grid of parameter values (--vary len=1..64K:x2 --vary window=32K,64K).
    Sweep(SweepArgs),
    /// One test between every sender and receiver of a TOML inventory (third-party tests), plus each host's loop-back baseline: the sender × receiver matrix.
    Mesh(mesh::MeshArgs),
    /// Theoretical limits: link goodput with itemised overhead, message-size curves, window, BDP, loss.
    Model(model::ModelArgs),
    /// Congestion controls compared over a path: one stream each (or --concurrent), RTT probe, windows, fairness.
    CompareCc(cc::CompareCcArgs),
    /// Run commands across an emulated link (rate, delay, loss, queue, ATM cells); --list for presets.
    Emu(EmuArgs),
    /// One command per seed study: `list`, or `NAME [HOST] [--quick] [-o report.html]`.
    Study(study::StudyArgs),
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
    /// The archive a fleet shares: push local results to it, audit hosts that sent none.
    Archive(fleet::ArchiveArgs),
    /// A read-only web dashboard over the archive: mesh grid, history, each run's report, live rounds.
    Dashboard(dashboard::DashboardArgs),
    /// A shell completion script on stdout (bash, zsh, fish, elvish, powershell).
    Completions(install::CompletionsArgs),
    /// The manual page (roff) on stdout: `tcplab man | man -l -`, or all pages with --dir.
    Man(install::ManArgs),
}

impl Command {
    /// The output flags of a command that runs tests.
    pub fn output(&self) -> Option<&OutputArgs> {
        match self {
            Command::Run(a) => Some(&a.output),
            Command::Test(t) => Some(&t.client().output),
            Command::Sweep(a) => Some(&a.output),
            Command::Mesh(a) => Some(&a.output),
            Command::CompareCc(a) => Some(&a.output),
            Command::Server(_)
            | Command::Keygen(_)
            | Command::Model(_)
            | Command::Emu(_)
            | Command::Study(_)
            | Command::History(_)
            | Command::Show(_)
            | Command::Export(_)
            | Command::Compare(_)
            | Command::Report(_)
            | Command::Archive(_)
            | Command::Dashboard(_)
            | Command::Completions(_)
            | Command::Man(_) => None,
        }
    }
}

/// `tcplab server`.
#[derive(Debug, Args)]
pub struct ServerArgs {
    /// Address to listen on; `::` (the default) takes IPv4 and IPv6 clients, and is 0.0.0.0
    /// where IPv6 is unavailable.
    #[arg(short = 'B', long, default_value = "::")]
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
    /// Run third-party tests on request (`tcplab stream B --from THIS`, `tcplab mesh`): this
    /// server as the client end against another tcplab server, within this server's limits.
    #[arg(long)]
    pub allow_third_party: bool,
    /// The key this server shows to server B in third-party tests (a `key ID SECRET` file from
    /// `tcplab keygen`, whose line is in B's --keys; for its own loop-back baseline, in this
    /// server's). Without it, B is reached anonymously. The asking client's key is never
    /// forwarded.
    #[arg(long, value_name = "FILE", requires = "allow_third_party")]
    pub third_party_key: Option<std::path::PathBuf>,
    /// Record this end of a test whose client traces it (`--trace DIR` against this server)
    /// and send the segments back with the results: AF_PACKET on every device and
    /// tcp:tcp_probe, filtered to this server's port (root and tracefs; the files are removed
    /// once sent). With --max-concurrent above 1 the rows can include other clients' tests
    /// (TCP headers only; docs/security.md). Without it such a client is told this end is not
    /// traced.
    #[arg(long)]
    pub allow_trace: bool,
    /// Listen with a Multipath TCP socket, which takes plain TCP clients too, so that
    /// `tcplab stream --mptcp` tests are served (refused otherwise). Needs a kernel with MPTCP
    /// (net.mptcp.enabled=1); extra subflows follow `ip mptcp endpoint` and `limits`.
    #[arg(long)]
    pub mptcp: bool,
    #[command(flatten)]
    pub ops: serve::OpsArgs,
    /// Also serve stock iperf3 3.x clients (TCP and UDP, on --iperf3-port). iperf3 clients are
    /// anonymous (they cannot use tcplab's keys): the --anon-* limits apply, and with --keys
    /// --anon-max-duration, --anon-max-streams, --anon-max-rate and --anon-max-concurrent are
    /// required and iperf3 tests never count in --max-concurrent (the key holders' slots).
    #[arg(long)]
    pub iperf3: bool,
    /// Port for iperf3 clients, TCP and UDP.
    #[arg(long, value_name = "PORT", default_value_t = 5201)]
    pub iperf3_port: u16,
    /// Archive the tests served to iperf3 clients in this SQLite file (then `tcplab history
    /// --db PATH` lists them, labelled as served to an iperf3 client).
    #[arg(long, value_name = "PATH")]
    pub db: Option<std::path::PathBuf>,
}

impl ClientArgs {
    /// The server: HOST or `-c HOST`; empty with `--path`.
    pub fn host(&self) -> &str {
        self.client.as_deref().unwrap_or(&self.host)
    }
}

impl ServerArgs {
    /// The listening address.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::new(self.bind, self.port)
    }

    /// Where iperf3 clients are served, with `--iperf3`.
    pub fn iperf3_addr(&self) -> Option<SocketAddr> {
        self.iperf3.then(|| SocketAddr::new(self.bind, self.iperf3_port))
    }
}

/// Where the server is and how the results are shown: shared by every client command.
#[derive(Debug, Args, Clone)]
pub struct ClientArgs {
    /// Server host name or address (not with --path, which runs its own server).
    #[arg(required_unless_present_any = ["path", "client", "iperf3"], default_value = "", hide_default_value = true)]
    pub host: String,
    /// The server, as iperf3's `-c HOST` (the same as the HOST argument).
    #[arg(short = 'c', long = "client", value_name = "HOST", conflicts_with = "host")]
    pub client: Option<String>,
    /// Drive a stock iperf3 server at `HOST[:PORT]` (port 5201 by default) with iperf3's
    /// protocol instead of a tcplab server (stream tests).
    #[arg(long, value_name = "HOST[:PORT]", conflicts_with_all = ["host", "client"])]
    pub iperf3: Option<String>,
    /// Server control port.
    #[arg(short, long, default_value_t = 9180)]
    pub port: u16,
    /// Third-party test: the tcplab server at `A[:PORT]` (started with --allow-third-party) runs
    /// the client end against HOST, and sends both ends' results here.
    #[arg(long = "from", value_name = "A[:PORT]", value_parser = parse::host_port, conflicts_with_all = ["bind", "ipv4", "ipv6"])]
    pub from: Option<(String, Option<u16>)>,
    /// Local address to bind to.
    #[arg(short = 'B', long)]
    pub bind: Option<IpAddr>,
    /// iperf3's --cport, which tcplab does not have: said plainly instead of clap's
    /// suggestion of --port (the server's port).
    #[arg(long, hide = true, value_name = "PORT", value_parser = parse::no_cport)]
    pub cport: Option<u16>,
    /// IPv4 only.
    #[arg(short = '4', long = "ipv4", conflicts_with = "ipv6")]
    pub ipv4: bool,
    /// IPv6 only.
    #[arg(short = '6', long = "ipv6")]
    pub ipv6: bool,
    /// Authenticate with the pre-shared key in FILE (a `key ID SECRET` line from `tcplab
    /// keygen`); TCPLAB_KEY=ID:SECRET does the same.
    #[arg(long, value_name = "FILE")]
    pub key_file: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub confidence: ConfidenceArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub schedule: mesh::ScheduleArgs,
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
    /// One document at the end in iperf3's `-J` schema (first test of the run).
    #[arg(long, conflicts_with_all = ["json", "json_stream"])]
    pub iperf3_json: bool,
    /// Also write a self-contained HTML report of the results to FILE.
    #[arg(long, value_name = "FILE")]
    pub report: Option<std::path::PathBuf>,
    /// Record each TCP test's segment flow into DIR (root: AF_PACKET or the emulator's pump,
    /// and tracefs): pcap files, a segment table (CSV, NDJSON) per test, a JSON summary,
    /// live per-interval summaries, and segment-flow plots in --report.
    #[arg(long, value_name = "DIR")]
    pub trace: Option<std::path::PathBuf>,
    /// Which trace sources run with --trace: probes (socket state from tcp:tcp_probe only),
    /// wire (packet capture and its segment table only) or both; lighter levels cost less.
    #[arg(long, value_enum, value_name = "LEVEL", default_value_t = TraceLevelArg::Both, requires = "trace")]
    pub trace_level: TraceLevelArg,
}

/// `--trace-level`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum TraceLevelArg {
    /// Socket state only (tcp:tcp_probe, tcp:tcp_retransmit_skb).
    Probes,
    /// Packets only (capture and wire table).
    Wire,
    /// Both.
    #[default]
    Both,
}

impl TraceLevelArg {
    /// The pipeline's level.
    pub fn level(self) -> pipeline::segment_trace::TraceLevel {
        match self {
            TraceLevelArg::Probes => pipeline::segment_trace::TraceLevel::Probes,
            TraceLevelArg::Wire => pipeline::segment_trace::TraceLevel::Wire,
            TraceLevelArg::Both => pipeline::segment_trace::TraceLevel::Both,
        }
    }
}

/// Timing options of every test.
#[derive(Debug, Args, Clone)]
pub struct TimingArgs {
    /// Test length in seconds, or a duration with its unit (500ms, 90s, 2m; the grammar of
    /// every duration flag, README "Units").
    #[arg(short = 't', long = "time", value_name = "SECS", value_parser = parse::seconds_ms, allow_negative_numbers = true, default_value = "10")]
    pub time_ms: u64,
    /// Seconds between interval reports (0 = none).
    #[arg(short = 'i', long = "interval", value_name = "SECS", value_parser = parse::seconds_ms, allow_negative_numbers = true, default_value = "1")]
    pub interval_ms: u64,
    /// Seconds at the start left out of the summary (slow start, warm-up).
    #[arg(short = 'O', long = "omit", value_name = "SECS", value_parser = parse::seconds_ms, allow_negative_numbers = true, default_value = "0")]
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
    #[arg(short = 'w', long = "window", value_parser = parse::buffer_size)]
    pub window: Option<u32>,
    /// Each buffer's own flag, over -w.
    #[command(flatten)]
    pub each: buffers::BufferFlags,
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
    #[arg(short = 'l', long = "len", value_parser = parse::message_size, default_value = "128K")]
    pub len: u32,
    /// Bytes per read (default: -l).
    #[arg(long = "recv-len", value_parser = parse::message_size)]
    pub recv_len: Option<u32>,
    /// Server sends, client receives (TCP_MAERTS).
    #[arg(short = 'R', long, conflicts_with = "bidir")]
    pub reverse: bool,
    /// Both directions at once.
    #[arg(long)]
    pub bidir: bool,
    #[command(flatten)]
    pub copy: measure::copy::CopyArgs,
    /// Receivers announce at most this window (TCP_WINDOW_CLAMP, set again after each read so
    /// that receive-buffer tuning cannot raise it): the window exactly, where --remote-rcvbuf
    /// is doubled by Linux and bounds the window only loosely (seed 004's window axis).
    /// From Linux's floor (1152 bytes on 6.x: it raises a smaller clamp) to 1G; K, M, G are
    /// powers of 1024. Set --sndbuf near it too (as seed 004 set both):
    /// what a large send buffer holds at the end drains at the clamped rate (up to 10 s).
    #[arg(long, value_parser = parse::size_u64, value_name = "SIZE")]
    pub window_clamp: Option<u64>,
    #[command(flatten)]
    pub link: link::LinkArgs,
    /// iperf3's `-u`: refused with a pointer to `tcplab udp`.
    #[arg(short = 'u', long = "udp", hide = true)]
    pub udp: bool,
    /// Pace each sending stream to this rate, bit/s of TCP payload, as iperf3's -b on TCP: the
    /// rate is per stream (-P 4 -b 50M sends 200 Mbit/s; --bidir sends it each way). k, M, G are
    /// powers of 1000 (50M = 5·10⁷ bit/s); writes stay -l bytes; 0 = unlimited (default).
    #[arg(short = 'b', long = "rate", value_parser = parse::rate_bps, default_value = "0", value_name = "RATE")]
    pub rate: u64,
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
    /// Leave Nagle's algorithm on (netperf's TCP_RR default); without it rr sets TCP_NODELAY.
    #[arg(long, conflicts_with = "nodelay")]
    pub nagle: bool,
    /// Write each request and response in N calls (a header, then the rest), as many
    /// applications do: with --nagle each piece waits for the peer's delayed ACK.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub writes_per_message: u32,
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
    /// Leave Nagle's algorithm on (netperf's TCP_CRR default); without it crr sets TCP_NODELAY.
    #[arg(long, conflicts_with = "nodelay")]
    pub nagle: bool,
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
    #[arg(short = 't', long = "time", value_name = "SECS", value_parser = parse::seconds_ms, allow_negative_numbers = true, default_value = "5")]
    pub time_ms: u64,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub link: link::LinkArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub schedule: mesh::ScheduleArgs,
    #[command(flatten)]
    pub path: PathArgs,
}

#[cfg(test)]
mod duration_tests;

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// clap checks the whole command tree (unique flags and group names, valid requires) only
    /// in debug builds when a command is parsed; this test makes it check every subcommand.
    #[test]
    fn the_command_line_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }

    /// `-V` is iperf3's verbose flag: on a test command it must not print the version and
    /// exit 0 without measuring; the version is a top-level flag only.
    #[test]
    fn version_only_at_the_top_level() {
        use clap::Parser;
        let top = super::Cli::try_parse_from(["tcplab", "-V"]).unwrap_err();
        assert_eq!(top.kind(), clap::error::ErrorKind::DisplayVersion);
        for sub in [
            &["tcplab", "stream", "h", "-V"][..],
            &["tcplab", "rr", "h", "--version"],
            &["tcplab", "server", "-V"],
        ] {
            let e = super::Cli::try_parse_from(sub).unwrap_err();
            assert_eq!(e.kind(), clap::error::ErrorKind::UnknownArgument, "{sub:?}");
        }
    }

    #[test]
    fn usage_shows_host_as_required_unless_path() {
        let mut cli = super::Cli::definition();
        let sub = cli.find_subcommand_mut("stream").unwrap();
        let usage = sub.render_usage().to_string();
        assert!(usage.contains("tcplab stream [OPTIONS] <HOST>"), "{usage}");
        assert!(usage.contains("--path <SPEC>") && !usage.contains("[HOST]"), "{usage}");
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

    /// `study --remeasure-stolen`'s help states the share of CPU time the archive's "stolen"
    /// judgement uses (a doc comment cannot take the constant).
    #[test]
    fn the_remeasure_help_names_the_stolen_threshold() {
        let cli = super::Cli::command();
        let study = cli.find_subcommand("study").unwrap();
        let flag = study.get_arguments().find(|a| a.get_id() == "remeasure_stolen").unwrap();
        let help = flag.get_long_help().or(flag.get_help()).map(|h| h.to_string()).unwrap_or_default();
        let pct = format!("{:.0} %", results::cpu::STOLEN_PCT);
        assert!(help.contains(&pct), "{help}");
    }
}
