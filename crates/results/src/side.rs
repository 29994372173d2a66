//! What one end (client or server) measured during a test.

use serde::{Deserialize, Serialize};

use crate::cpu::CpuUsage;
use crate::spec::Buffer;
use crate::udp::UdpCounts;

/// What a data connection did at this end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// Wrote bulk data.
    Send,
    /// Read bulk data.
    Recv,
    /// Sent requests, read responses (client of rr/crr).
    Request,
    /// Read requests, sent responses (server of rr/crr).
    Respond,
}

/// One socket buffer as asked for and as the kernel granted it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BufferGrant {
    /// The size asked for; `None` left the OS default (and autotuning).
    pub requested: Option<u32>,
    /// The size getsockopt reported (Linux doubles a request for bookkeeping overhead); 0
    /// when it was not read.
    pub actual: u32,
}

/// Socket options as requested and as the kernel reports them afterwards.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "SocketFields", into = "SocketFields")]
pub struct SocketReport {
    /// SO_SNDBUF.
    pub send: BufferGrant,
    /// SO_RCVBUF.
    pub receive: BufferGrant,
    /// TCP_MAXSEG from getsockopt.
    pub mss: u32,
    /// TCP_CONGESTION in use.
    pub congestion: String,
    /// TCP_NODELAY set.
    pub nodelay: bool,
}

impl SocketReport {
    /// Buffer `b` as asked for and granted.
    pub fn buffer(&self, b: Buffer) -> BufferGrant {
        match b {
            Buffer::Send => self.send,
            Buffer::Receive => self.receive,
        }
    }
}

/// A [`SocketReport`] as records store it: each buffer's two figures under the names records
/// have always used (the one place they are spelled).
#[derive(Serialize, Deserialize)]
struct SocketFields {
    sndbuf_requested: Option<u32>,
    sndbuf_actual: u32,
    rcvbuf_requested: Option<u32>,
    rcvbuf_actual: u32,
    mss: u32,
    congestion: String,
    nodelay: bool,
}

impl From<SocketFields> for SocketReport {
    fn from(f: SocketFields) -> SocketReport {
        SocketReport {
            send: BufferGrant { requested: f.sndbuf_requested, actual: f.sndbuf_actual },
            receive: BufferGrant { requested: f.rcvbuf_requested, actual: f.rcvbuf_actual },
            mss: f.mss,
            congestion: f.congestion,
            nodelay: f.nodelay,
        }
    }
}

impl From<SocketReport> for SocketFields {
    fn from(s: SocketReport) -> SocketFields {
        SocketFields {
            sndbuf_requested: s.send.requested,
            sndbuf_actual: s.send.actual,
            rcvbuf_requested: s.receive.requested,
            rcvbuf_actual: s.receive.actual,
            mss: s.mss,
            congestion: s.congestion,
            nodelay: s.nodelay,
        }
    }
}

/// TCP_INFO over a whole stream: final counters plus RTT seen across samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TcpInfoSummary {
    /// Retransmitted segments over the connection's life.
    pub retransmits: u64,
    /// Smallest smoothed RTT sampled, µs.
    pub rtt_min_us: u32,
    /// Mean of sampled smoothed RTTs, µs.
    pub rtt_mean_us: u32,
    /// Largest smoothed RTT sampled, µs.
    pub rtt_max_us: u32,
    /// Kernel's windowed minimum RTT at the end, µs.
    pub min_rtt_us: u32,
    /// Time with data to send, µs (tcpi_busy_time).
    pub busy_us: u64,
    /// Part of busy time limited by the peer's receive window, µs.
    pub rwnd_limited_us: u64,
    /// Part of busy time limited by the send buffer, µs.
    pub sndbuf_limited_us: u64,
    /// Congestion window at the end, bytes.
    pub cwnd_bytes: u64,
    /// Peer's advertised window at the end, bytes.
    pub snd_wnd_bytes: u32,
    /// Segment size used for sending.
    pub snd_mss: u32,
    /// Reordering events seen (loopback and veth retransmits are mostly these).
    pub reord_seen: u32,
    /// Retransmissions the peer reported as spurious (DSACK).
    pub dsack_dups: u32,
    /// Data segments sent.
    pub data_segs_out: u64,
    /// Last delivery-rate sample, bytes/s.
    pub delivery_rate_bytes_per_s: u64,
    /// Whether the figures above were sampled from TCP_INFO; `false` when a peer reported
    /// only its retransmits (a stock iperf3's results document) and the rest is unknown.
    #[serde(default = "sampled_by_default")]
    pub sampled: bool,
}

/// Records stored before `sampled` existed came from TCP_INFO.
fn sampled_by_default() -> bool {
    true
}

impl Default for TcpInfoSummary {
    /// All zeros, as sampled (a connection that moved nothing yet).
    fn default() -> Self {
        TcpInfoSummary {
            retransmits: 0,
            rtt_min_us: 0,
            rtt_mean_us: 0,
            rtt_max_us: 0,
            min_rtt_us: 0,
            busy_us: 0,
            rwnd_limited_us: 0,
            sndbuf_limited_us: 0,
            cwnd_bytes: 0,
            snd_wnd_bytes: 0,
            snd_mss: 0,
            reord_seen: 0,
            dsack_dups: 0,
            data_segs_out: 0,
            delivery_rate_bytes_per_s: 0,
            sampled: true,
        }
    }
}

/// Latency distribution from an HDR histogram (nearest-rank percentiles).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Samples.
    pub count: u64,
    /// Smallest, µs.
    pub min_us: f64,
    /// Mean, µs.
    pub mean_us: f64,
    /// Standard deviation, µs.
    pub stddev_us: f64,
    /// Median, µs.
    pub p50_us: f64,
    /// 90th percentile, µs.
    pub p90_us: f64,
    /// 99th percentile, µs.
    pub p99_us: f64,
    /// 99.9th percentile, µs.
    pub p999_us: f64,
    /// Largest, µs.
    pub max_us: f64,
    /// Points of the distribution function, `(latency µs, fraction ≤)`, for plots.
    pub cdf: Vec<(f64, f64)>,
}

/// One data connection's totals at this end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamStats {
    /// Stream number (0-based, as in the data hello).
    pub index: u32,
    /// What it did here.
    pub role: Role,
    /// Bytes moved in the measured window (after `omit`).
    pub bytes: u64,
    /// Bytes moved in all, omitted time included.
    pub bytes_total: u64,
    /// Syscalls (writes or reads) in the measured window.
    pub calls: u64,
    /// Transactions completed in the measured window (rr, crr).
    pub transactions: u64,
    /// Socket options.
    pub socket: SocketReport,
    /// TCP_INFO summary, where the socket could be read.
    pub tcp: Option<TcpInfoSummary>,
    /// Where the stream's worker thread ran.
    #[serde(default)]
    pub placement: Placement,
    /// UDP tests: datagram counts over the whole test (omitted time included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp: Option<UdpCounts>,
}

/// Where a worker thread ran: the CPU it was pinned to, if any, the CPUs it was seen on
/// (sampled about every 100 ms, most frequent first), and how busy it was.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    /// CPU the thread was pinned to (`-A`).
    pub pinned_cpu: Option<u32>,
    /// CPUs seen and how many samples each, most frequent first.
    pub cpus_seen: Vec<CpuSeen>,
    /// CPU time of the worker thread ÷ its lifetime, % of one core (user + system, including
    /// the kernel's network work done in its context). 100% means this thread was the limit.
    #[serde(default)]
    pub thread_busy_pct: Option<f64>,
}

impl Placement {
    /// The CPU seen most often, if any sample was taken.
    pub fn main_cpu(&self) -> Option<u32> {
        self.cpus_seen.first().map(|c| c.cpu)
    }
}

/// One CPU a thread was seen running on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuSeen {
    /// CPU number.
    pub cpu: u32,
    /// Samples that found the thread there.
    pub samples: u32,
}

/// One stream's share of an interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamInterval {
    /// Stream number.
    pub index: u32,
    /// Bytes moved in the interval.
    pub bytes: u64,
    /// Transactions completed in the interval.
    pub transactions: u64,
    /// Retransmits in the interval (sender).
    pub retransmits: u64,
    /// Congestion window at the end of the interval, bytes (sender).
    pub cwnd_bytes: u64,
    /// Smoothed RTT at the end of the interval, µs.
    pub rtt_us: u32,
    /// UDP tests: datagram counts in the interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp: Option<UdpCounts>,
}

/// One reporting interval at one end.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Start, seconds since the test started.
    pub start_s: f64,
    /// End, seconds since the test started.
    pub end_s: f64,
    /// Inside the `omit` period: excluded from summaries.
    pub omitted: bool,
    /// Per stream.
    pub streams: Vec<StreamInterval>,
}

/// `intervals` without a last one that is a stub: shorter than a tenth of the one before
/// (the few datagrams or bytes that arrived after the last full interval closed). Its counts
/// are in the totals; as a rate over a few milliseconds it would read as a spike or a drop.
pub fn without_trailing_stub(intervals: &[Interval]) -> &[Interval] {
    match intervals {
        [.., before, last] if last.len_s() < 0.1 * before.len_s() => &intervals[..intervals.len() - 1],
        _ => intervals,
    }
}

impl Interval {
    /// Bytes of all streams.
    pub fn bytes(&self) -> u64 {
        self.streams.iter().map(|s| s.bytes).sum()
    }

    /// Transactions of all streams.
    pub fn transactions(&self) -> u64 {
        self.streams.iter().map(|s| s.transactions).sum()
    }

    /// Length in seconds.
    pub fn len_s(&self) -> f64 {
        self.end_s - self.start_s
    }
}

/// Everything one end measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SideMeasurement {
    /// Length of the measured window (after `omit`), seconds.
    pub measured_s: f64,
    /// Per data connection.
    pub streams: Vec<StreamStats>,
    /// Interval reports.
    pub intervals: Vec<Interval>,
    /// CPU over the measured window.
    pub cpu: Option<CpuUsage>,
    /// Request/response latency seen here (client of rr/crr).
    pub latency: Option<LatencySummary>,
    /// The test type's own sections of this end's measurement (a file transfer's `file`),
    /// serialized beside the fields above.
    #[serde(flatten)]
    pub sections: crate::extra::Sections,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records keep their socket fields byte for byte: names, order and `null`s.
    #[test]
    fn a_socket_report_keeps_the_recorded_names_byte_for_byte() {
        let text = concat!(
            r#"{"sndbuf_requested":null,"sndbuf_actual":212992,"rcvbuf_requested":131072,"#,
            r#""rcvbuf_actual":262144,"mss":1448,"congestion":"cubic","nodelay":true}"#
        );
        let s: SocketReport = serde_json::from_str(text).unwrap();
        assert_eq!(s.buffer(Buffer::Send), BufferGrant { requested: None, actual: 212_992 });
        assert_eq!(s.buffer(Buffer::Receive), BufferGrant { requested: Some(131_072), actual: 262_144 });
        assert_eq!(serde_json::to_string(&s).unwrap(), text);
    }
}
