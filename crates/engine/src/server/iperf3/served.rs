//! A test served to an iperf3 client, as a tcplab result for the archive: the spec the
//! client asked for, the client's side rebuilt from the results it sent (bytes per stream,
//! retransmits, CPU), the server's own full measurement, and the summary tcplab computes from
//! both, labelled and sectioned as served to an iperf3 client.

use std::net::SocketAddr;
use std::sync::Arc;

use results::{Role, SideMeasurement, SocketReport, StreamStats, TcpInfoSummary, TestResult, UdpCounts};
use wire::iperf3::{stream_id, Cookie, Results};

use super::plan::Plan;

/// The name of the section that marks a test as served to an iperf3 client.
pub const SECTION: &str = "iperf3_client";

/// One test served to an iperf3 client.
#[derive(Debug, Clone)]
pub struct Served {
    /// The client's control connection.
    pub client: SocketAddr,
    /// The test, as the archive stores it.
    pub result: TestResult,
}

/// Receives every test served to an iperf3 client (the CLI archives them).
#[derive(Clone)]
pub struct ServedSink(pub Arc<dyn Fn(Served) + Send + Sync>);

impl std::fmt::Debug for ServedSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServedSink")
    }
}

/// What a finished session knows.
#[derive(Debug)]
pub struct Finished<'a> {
    /// The plan it ran.
    pub plan: &'a Plan,
    /// The client's address.
    pub client: SocketAddr,
    /// The client's cookie.
    pub cookie: &'a Cookie,
    /// When TEST_RUNNING went out, ms since the Unix epoch.
    pub started_unix_ms: u64,
    /// The server's measurement.
    pub server: SideMeasurement,
    /// The client's results document.
    pub client_results: &'a Results,
    /// Where the server listens, `host:port`.
    pub listen: String,
}

/// The archive's record of a finished session.
pub fn record(f: Finished<'_>) -> Served {
    let spec = f.plan.spec.clone();
    let mut local = client_side(&f.server, f.client_results);
    let version = f.plan.client_version.clone().unwrap_or_else(|| "unknown".into());
    let marker = serde_json::json!({
        "served_to": "iperf3 client",
        "client_version": version,
        "cookie": f.cookie.as_str(),
        "client_address": f.client.to_string(),
        "client_process_cpu_pct": {
            "total": f.client_results.cpu_util_total,
            "user": f.client_results.cpu_util_user,
            "system": f.client_results.cpu_util_system,
        },
    });
    local.sections.insert(SECTION.to_string(), marker);
    let label = format!("{} (iperf3 {version} client)", crate::registry::label(&spec));
    let mut result = TestResult::new(label, spec.clone(), f.listen, f.started_unix_ms);
    result.summary = crate::registry::summarize(&spec, &local, Some(&f.server));
    result.local = local;
    result.remote = Some(f.server);
    Served { client: f.client, result }
}

/// The client's side as its results document tells it: each stream in the opposite role of
/// the server's stream with the same id. iperf3 reports its process's CPU, not the host's
/// that tcplab's `cpu` means, so that stays in the section.
fn client_side(server: &SideMeasurement, client: &Results) -> SideMeasurement {
    let streams = server
        .streams
        .iter()
        .filter_map(|ours| {
            let theirs = client.stream(stream_id(ours.index))?;
            let role = if ours.role == Role::Send { Role::Recv } else { Role::Send };
            let tcp = (theirs.retransmits >= 0).then(|| TcpInfoSummary {
                retransmits: theirs.retransmits as u64,
                sampled: false,
                ..TcpInfoSummary::default()
            });
            Some(StreamStats {
                index: ours.index,
                role,
                bytes: theirs.bytes,
                bytes_total: theirs.bytes,
                calls: 0,
                transactions: 0,
                socket: SocketReport::default(),
                tcp,
                placement: Default::default(),
                udp: ours.udp.as_ref().map(|_| udp_counts(role, theirs)),
            })
        })
        .collect();
    SideMeasurement { measured_s: server.measured_s, streams, ..SideMeasurement::default() }
}

/// A UDP stream's counts as iperf3 reports them: a sender its datagrams, a receiver the
/// highest sequence number seen, the gaps and the jitter (in seconds).
fn udp_counts(role: Role, theirs: &wire::iperf3::StreamResults) -> UdpCounts {
    let packets = u64::try_from(theirs.packets).unwrap_or(0);
    let lost = u64::try_from(theirs.errors).unwrap_or(0);
    match role {
        Role::Send => UdpCounts { sent: packets, ..UdpCounts::default() },
        _ => UdpCounts {
            received: packets.saturating_sub(lost),
            lost,
            jitter_us: theirs.jitter * 1e6,
            ..UdpCounts::default()
        },
    }
}
