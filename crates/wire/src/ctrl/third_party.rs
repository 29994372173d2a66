//! Third-party tests: a client asks server A to run a test against server B and send back
//! both ends' measurements. A is the test's client end, B its server end; B sees an ordinary
//! test from A. Servers accept the request only when started with `--allow-third-party`.

use serde::{Deserialize, Serialize};

use super::{Host, SideReport, TestRequest};

/// Client → server A: run `spec` against the tcplab server at `to_host:to_port`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThirdPartyRequest {
    /// The test, as a `setup` would carry it; A's limits apply.
    pub spec: TestRequest,
    /// Host name or address of server B, as A resolves it.
    pub to_host: String,
    /// B's control port.
    pub to_port: u16,
}

/// How a third-party test ended on A.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ThirdPartyStatus {
    /// Measured to the end.
    Completed,
    /// Failed; `error` says why.
    Failed,
    /// Stopped early on request.
    Interrupted,
}

/// Server A → client: what A (client end) and B (server end) measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThirdPartyReport {
    /// How the test ended.
    pub status: ThirdPartyStatus,
    /// Why it failed: the engine's error code (`connect`, `busy`, …) and one line.
    pub error: Option<(String, String)>,
    /// B's address as A reached it, `host:port`.
    pub server: String,
    /// Start on A's clock, ms since the Unix epoch.
    pub started_unix_ms: u64,
    /// A's description of itself.
    pub client_host: Host,
    /// B's description of itself, once B accepted.
    pub server_host: Option<Host>,
    /// A's end of the test.
    pub client: SideReport,
    /// B's end, when it arrived.
    pub server_side: Option<SideReport>,
    /// Whether A and B are the same host (A reached B over loop-back or its own address).
    pub same_host: bool,
}
