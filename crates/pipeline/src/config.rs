//! What a command that runs tests hands the pipeline: where the tests run, how results are
//! shown, where they are kept. Validated values only; the CLI builds them from its flags.

use std::path::PathBuf;

use engine::client::ClientOptions;
use report::Format;

/// Where the tests of a run go.
#[derive(Debug, Clone)]
pub enum Target {
    /// A `tcplab server` at these options.
    Remote(ClientOptions),
    /// An embedded server on 127.0.0.1 (ephemeral port) in this process.
    Loopback,
    /// Client and server on the two sides of an emulated path, with a server of its own.
    Path(PathOptions),
    /// A third-party test: one `tcplab server --allow-third-party` runs the client end
    /// against another server (`--from`).
    ThirdParty(engine::third_party::Ends),
    /// A mesh (`tcplab mesh`): third-party tests between the hosts of this inventory, each
    /// measured with [`crate::repeat::third_party`].
    Mesh {
        /// The inventory file as given.
        inventory: String,
        /// The key the asking client shows each host (`--key-file`, `TCPLAB_KEY`).
        key: Option<engine::auth::ClientKey>,
    },
    /// A stock iperf3 server (`--iperf3 HOST[:PORT]`), driven with iperf3's protocol.
    Iperf3(ClientOptions),
}

/// An emulated path (`--path` and its companions).
#[derive(Debug, Clone, Default)]
pub struct PathOptions {
    /// The path spec or preset (`transatlantic`, `rate=100mbit,delay=20ms`).
    pub spec: String,
    /// Write each side's packets to BASE.client.pcap and BASE.server.pcap.
    pub pcap: Option<PathBuf>,
    /// CPU quotas of the two sides (`client=20%,server=50%`).
    pub host_cpu: Option<String>,
    /// Seed of the link's random loss, jitter and duplication.
    pub seed: u64,
    /// A second path between the same two sides (`--path2`), same grammar; MPTCP is readied
    /// over the two and the server listens for it.
    pub path2: Option<String>,
    /// The test asks for MPTCP (`stream --mptcp`): the server listens with an MPTCP socket
    /// (over one path too: MPTCP with one subflow). Set from the test by [`Config::serving`].
    pub mptcp: bool,
}

/// The archive a run is written to.
#[derive(Debug, Clone, Default)]
pub struct Storage {
    /// Database file; `None` = the default under the user's data directory.
    pub db: Option<PathBuf>,
    /// `--no-store`: keep nothing.
    pub disabled: bool,
    /// `--spool-dir`: where results wait when the archive cannot take them; `None` = the
    /// data directory, beside the default archive.
    pub spool_dir: Option<PathBuf>,
}

/// How a run's results are shown and kept.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where the tests run.
    pub target: Target,
    /// Live output and the final document.
    pub format: Format,
    /// Also write an HTML report of the run here (checked for writability before any test).
    pub report: Option<PathBuf>,
    /// The archive.
    pub storage: Storage,
    /// `--trace DIR`: record each TCP test's segment flow into DIR.
    pub trace: Option<PathBuf>,
    /// `--trace-level`: which of the trace's sources run.
    pub trace_level: crate::segment_trace::TraceLevel,
}

impl Config {
    /// This configuration for running `spec`: over an emulated path, the server listens for
    /// MPTCP when `spec` asks for it (a plain TCP test keeps a plain TCP server).
    pub fn serving(&self, spec: &results::TestSpec) -> Config {
        let mut cfg = self.clone();
        if let Target::Path(p) = &mut cfg.target {
            p.mptcp = engine::registry::mptcp::asks(spec);
        }
        cfg
    }
}
