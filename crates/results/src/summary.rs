//! What a test sums to: throughput per direction or transaction rate, and CPU cost.

use serde::{Deserialize, Serialize};

use crate::headline::Headline;
use crate::side::LatencySummary;
use crate::udp::UdpSummary;

/// Bulk data one way.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DirectionSummary {
    /// `client→server` or `server→client`.
    pub direction: String,
    /// Streams that way.
    pub streams: u32,
    /// Bytes written by the sender in the measured window.
    pub sender_bytes: u64,
    /// Sender's rate, bit/s.
    pub sender_bps: f64,
    /// Bytes read by the receiver in the measured window.
    pub receiver_bytes: u64,
    /// Receiver's rate (goodput), bit/s.
    pub receiver_bps: f64,
    /// Retransmitted segments (sum over streams); `None` when a sending end did not report
    /// them (a stock iperf3 peer that sent no count).
    pub retransmits: Option<u64>,
    /// Smallest sampled RTT, µs; `None` when no end sampled TCP_INFO that way.
    pub rtt_min_us: Option<u32>,
    /// Mean sampled RTT, µs; `None` when unknown.
    pub rtt_mean_us: Option<u32>,
    /// Largest sampled RTT, µs; `None` when unknown.
    pub rtt_max_us: Option<u32>,
    /// Busy time ÷ measured time (TCP_INFO chrono), 0–1; `None` when the sender's TCP_INFO
    /// was not sampled (the sender was a stock iperf3).
    pub busy_frac: Option<f64>,
    /// Receive-window-limited time ÷ busy time, 0–1; `None` when unknown.
    pub rwnd_limited_frac: Option<f64>,
    /// Send-buffer-limited time ÷ busy time, 0–1; `None` when unknown.
    pub sndbuf_limited_frac: Option<f64>,
    /// Sender's writes per MB moved (small writes show here); `None` when the sender did not
    /// count its calls.
    pub writes_per_mb: Option<f64>,
    /// Goodput ÷ the result's reference (`TestResult::reference`), when there is one.
    #[serde(default)]
    pub of_reference: Option<f64>,
}

/// Request/response totals.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RrSummary {
    /// Flows.
    pub flows: u32,
    /// Transactions in the measured window.
    pub transactions: u64,
    /// Transactions per second.
    pub trans_per_s: f64,
    /// Mean round trip from the rate, as netperf reports it: 10⁶ / rate × burst, µs.
    pub rtt_from_rate_us: f64,
    /// Measured latency distribution.
    pub latency: LatencySummary,
    /// UDP request/response: requests that timed out (lost request or response), retried;
    /// `None` where requests cannot be lost (TCP).
    #[serde(default)]
    pub lost: Option<u64>,
}

/// CPU cost at one end, derived from its utilisation and the test's throughput.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuCost {
    /// System-wide utilisation, 0–100 %.
    pub util_pct: f64,
    /// CPU-cores busy.
    pub cores_busy: f64,
    /// µs of CPU per KB (stream) or per transaction (rr), netperf's service demand.
    pub service_demand_us: f64,
    /// Unit of the service demand: `us/KB` or `us/tran`.
    pub service_demand_unit: String,
    /// Figure of merit M_core = Mbit/s ÷ CPU-cores busy (stream tests only).
    pub figure_of_merit: Option<f64>,
}

/// Which parts of a [`Summary`] and of its intervals a test type fills. Live interval lines
/// are laid out by shape (known from the registry before any result exists); finished results
/// are rendered from what their summary holds. Never by test kind, so a new test type of an
/// existing shape needs no renderer change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    /// TCP bulk data: `directions`, intervals with bytes, retransmits, cwnd and RTT.
    TcpBulk,
    /// UDP datagrams: `udp`, intervals with datagram accounting.
    UdpBulk,
    /// Request/response: `rr`, intervals with transactions.
    Transactions,
}

/// The numbers of a test.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The number the test type is judged by (set by the test type's summary; `None` only in
    /// records written before headlines existed and not read through the archive).
    #[serde(default)]
    pub headline: Option<Headline>,
    /// How the summary is laid out (set with the headline; `None` in older records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<Shape>,
    /// What its test type declares it produces (set with the headline; empty in older
    /// records, which the reports read by what the summary holds).
    #[serde(default, skip_serializing_if = "crate::produces::Produces::is_empty")]
    pub produces: crate::produces::Produces,
    /// Stream tests: one entry per direction.
    pub directions: Vec<DirectionSummary>,
    /// rr / crr tests.
    pub rr: Option<RrSummary>,
    /// CPU cost on the client.
    pub local_cost: Option<CpuCost>,
    /// CPU cost on the server.
    pub remote_cost: Option<CpuCost>,
    /// UDP stream tests: one entry per direction.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub udp: Vec<UdpSummary>,
    /// The test type's own figures, shown by every renderer as they are.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<crate::extra::Figure>,
    /// The test type's own tables, shown by every renderer as they are.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub own_tables: Vec<crate::extra::OwnTable>,
    /// The test type's own plots, drawn by the HTML report and listed by the text report.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub own_plots: Vec<crate::extra::OwnPlot>,
    /// The test type's own sections of the summary (a file transfer's `file`), serialized
    /// beside the fields above and read back only by that type.
    #[serde(flatten)]
    pub sections: crate::extra::Sections,
}

impl Summary {
    /// What the summary's test type declared it produces; for a record written before
    /// declarations, what the summary holds says it.
    pub fn produced(&self) -> crate::produces::Produces {
        if self.produces.is_empty() {
            crate::produces::Produces::held_by(self)
        } else {
            self.produces.clone()
        }
    }

    /// The headline's value, when measured.
    pub fn headline_value(&self) -> Option<f64> {
        self.headline.and_then(|h| h.value)
    }

    /// Goodput over all directions, bit/s (bytes the receiving applications read; for test
    /// types whose headline is goodput, the headline is this).
    pub fn goodput_bps(&self) -> f64 {
        self.directions.iter().map(|d| d.receiver_bps).sum::<f64>()
            + self.udp.iter().map(|d| d.receiver_bps).sum::<f64>()
    }
}
