//! Arguments of the link emulator: `--path` and its companions (flattened into every test
//! command), and `tcplab emu` itself.

use std::net::Ipv4Addr;
use std::path::PathBuf;

use clap::Args;

/// Run over an emulated path: add `#[command(flatten)] pub path: PathArgs` to a command.
#[derive(Debug, Args, Clone, Default)]
pub struct PathArgs {
    /// Run client and server in two network namespaces joined by an emulated link, e.g.
    /// `transatlantic`, `atm-oc3-clip,cellloss=0.01%` or `rate=100mbit,delay=20ms,loss=0.1%`
    /// (`tcplab emu --list` shows the presets). Needs root.
    #[arg(long, value_name = "SPEC")]
    pub path: Option<String>,
    /// A second emulated path between the same two sides (same grammar as --path), client
    /// 198.18.2.1, server 198.18.2.2: MPTCP is readied over the two (the server announces its
    /// second address, so `stream --mptcp` opens a second subflow over it); each path's
    /// counters are reported.
    #[arg(long, value_name = "SPEC", requires = "path")]
    pub path2: Option<String>,
    /// Write what each side's device carries to BASE.client.pcap and BASE.server.pcap
    /// (headers only, nanosecond timestamps).
    #[arg(long, value_name = "BASE", requires = "path")]
    pub pcap: Option<PathBuf>,
    /// Limit a side's or the emulator's CPU with a cgroup quota, e.g. `client=20%,server=50%,emulator=5%`.
    #[arg(long, value_name = "SIDE=PCT,...", requires = "path")]
    pub host_cpu: Option<String>,
    /// Seed of the emulated link's random loss, jitter and duplication.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "path")]
    pub emu_seed: u64,
}

/// `tcplab emu`.
#[derive(Debug, Args)]
pub struct EmuArgs {
    /// List the path presets with their settings.
    #[arg(long, conflicts_with = "command")]
    pub list: bool,
    #[command(flatten)]
    pub path: PathArgs,
    /// Command run on the server side (through `sh -c`), e.g. `iperf3 -s`. Its output goes to
    /// stderr, each line prefixed `server: ` (stdout is the client command's alone), or to
    /// --server-log. When the client-side command ends, every process left on either side
    /// gets SIGTERM, then SIGKILL 2 s later.
    #[arg(long, value_name = "CMD")]
    pub server_cmd: Option<String>,
    /// Write the server-side command's stdout and stderr to FILE instead of stderr.
    #[arg(long, value_name = "FILE", requires = "server_cmd")]
    pub server_log: Option<PathBuf>,
    /// Address of the client side.
    #[arg(long, default_value = "198.18.0.1")]
    pub client_addr: Ipv4Addr,
    /// Address of the server side.
    #[arg(long, default_value = "198.18.0.2")]
    pub server_addr: Ipv4Addr,
    /// Print the link's counters as JSON on stderr at the end.
    #[arg(long)]
    pub stats_json: bool,
    /// Command run on the client side (default: $SHELL). `{peer}` in its words (and in
    /// --server-cmd) is replaced by the other side's address: `-- ping -c 3 {peer}`. Both sides
    /// also find it in TCPLAB_PEER, which your shell expands before tcplab runs unless quoted:
    /// `-- sh -c 'ping -c 3 $TCPLAB_PEER'`. SIGINT, SIGTERM and SIGHUP to tcplab are passed on
    /// to it (`timeout 10 tcplab emu …` stops it at 10 s); the exit code is its own.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}
