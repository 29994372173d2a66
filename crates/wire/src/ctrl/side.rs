//! What the server measured, sent in `results` (protocol version 2).
//!
//! These mirror the archive's `results::SideMeasurement` field for field today, but they are
//! the protocol's own: the archive may grow or rename fields without changing these bytes.
//! Unknown fields are refused at every level. Values are plain numbers; the client checks
//! the invariants (non-negative times, duplicates within received …) when it converts them.

use serde::{Deserialize, Serialize};

/// Everything the server's end measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SideReport {
    /// Length of the measured window (after `omit`), seconds.
    pub measured_s: f64,
    /// Per data connection.
    pub streams: Vec<StreamReport>,
    /// Interval reports.
    pub intervals: Vec<IntervalReport>,
    /// CPU over the measured window.
    pub cpu: Option<CpuReport>,
    /// Request/response latency seen at this end.
    pub latency: Option<LatencyReport>,
    /// The test type's own sections of this end's measurement, by name (a file transfer's
    /// `file`), each in that type's shape; the type checks them when it reads them back.
    /// Absent when empty.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub sections: std::collections::BTreeMap<String, serde_json::Value>,
}

/// What a data connection did at the reporting end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// `send`: wrote bulk data.
    Send,
    /// `recv`: read bulk data.
    Recv,
    /// `request`: sent requests, read responses.
    Request,
    /// `respond`: read requests, sent responses.
    Respond,
}

/// One data connection's totals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamReport {
    /// Stream number (0-based, as in the data hello).
    pub index: u32,
    /// What it did at this end.
    pub role: Role,
    /// Bytes moved in the measured window.
    pub bytes: u64,
    /// Bytes moved in all, omitted time included.
    pub bytes_total: u64,
    /// Syscalls in the measured window.
    pub calls: u64,
    /// Transactions completed in the measured window.
    pub transactions: u64,
    /// Socket options.
    pub socket: SocketReport,
    /// TCP_INFO summary, where the socket could be read.
    pub tcp: Option<TcpInfoReport>,
    /// Where the stream's worker thread ran.
    pub placement: Placement,
    /// UDP tests: datagram counts over the whole test; left out otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp: Option<UdpCounts>,
}

/// One socket buffer as asked for and as the kernel reported it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BufferGrant {
    /// The size asked for, if one was.
    pub requested: Option<u32>,
    /// The size getsockopt reported.
    pub actual: u32,
}

/// Socket options as requested and as the kernel reported them.
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

/// A [`SocketReport`] as protocol 2 sends it: each buffer's two figures by name.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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

/// TCP_INFO over a whole stream.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpInfoReport {
    /// Retransmitted segments.
    pub retransmits: u64,
    /// Smallest smoothed RTT sampled, µs.
    pub rtt_min_us: u32,
    /// Mean of sampled smoothed RTTs, µs.
    pub rtt_mean_us: u32,
    /// Largest smoothed RTT sampled, µs.
    pub rtt_max_us: u32,
    /// Kernel's windowed minimum RTT at the end, µs.
    pub min_rtt_us: u32,
    /// Time with data to send, µs.
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
    /// Reordering events seen.
    pub reord_seen: u32,
    /// Retransmissions the peer reported as spurious.
    pub dsack_dups: u32,
    /// Data segments sent.
    pub data_segs_out: u64,
    /// Last delivery-rate sample, bytes/s.
    pub delivery_rate_bytes_per_s: u64,
}

/// Where a worker thread ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Placement {
    /// CPU the thread was pinned to.
    pub pinned_cpu: Option<u32>,
    /// CPUs seen and how many samples each, most frequent first.
    pub cpus_seen: Vec<CpuSeen>,
    /// Thread CPU time ÷ its lifetime, % of one core.
    pub thread_busy_pct: Option<f64>,
}

/// One CPU a thread was seen running on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuSeen {
    /// CPU number.
    pub cpu: u32,
    /// Samples that found the thread there.
    pub samples: u32,
}

/// Datagram counts of one UDP flow (cumulative in [`StreamReport`], one interval's share in
/// [`StreamInterval`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UdpCounts {
    /// Sender: datagrams the kernel accepted.
    pub sent: u64,
    /// Sender: send calls that failed.
    pub send_errors: u64,
    /// Sender: the part of `send_errors` that was ENOBUFS.
    pub enobufs: u64,
    /// Receiver: datagrams counted, duplicates included.
    pub received: u64,
    /// Receiver: sequence numbers missing.
    pub lost: u64,
    /// Receiver: datagrams that arrived after a higher sequence number.
    pub out_of_order: u64,
    /// Receiver: second and later copies of a sequence number (part of `received`).
    pub duplicates: u64,
    /// Receiver: out-of-order datagrams that filled a gap reported in an earlier interval.
    pub late: u64,
    /// Receiver: datagrams older than the reorder window.
    pub stale: u64,
    /// Receiver: RFC 3550 interarrival jitter, µs.
    pub jitter_us: f64,
    /// Receiver: datagrams the kernel dropped for a full receive buffer.
    pub socket_drops: u64,
    /// UDP request/response client: requests without a response in time.
    pub timeouts: u64,
    /// UDP stream: the interface and UDP counters at the start and end of the flow's
    /// window (absent from older peers and where they could not be read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathWindow>,
}

/// The kernel's packet counters at one end around one flow's window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathWindow {
    /// The interface read.
    pub interface: String,
    /// At the window's start.
    pub start: PathReading,
    /// At the window's end.
    pub end: PathReading,
}

/// One reading of the counters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathReading {
    /// Seconds since the test started (negative during the flow's setup).
    pub at_s: f64,
    /// The flow's datagrams so far.
    pub datagrams: u64,
    /// The interface's packet counter (skbs).
    pub if_skbs: u64,
    /// The interface's byte counter.
    pub if_bytes: u64,
    /// The namespace's UDP datagram counter (skbs).
    pub udp_mib_skbs: u64,
    /// The namespace's UDP receive-buffer errors.
    #[serde(rename = "udp_mib_rcvbuf_errors")]
    pub udp_mib_receive_buffer_errors: u64,
}

impl PathReading {
    /// Its counters (every figure but the time), each under its name on the wire: all of them
    /// only grow.
    pub fn counters(&self) -> [(&'static str, u64); 5] {
        [
            ("datagrams", self.datagrams),
            ("if_skbs", self.if_skbs),
            ("if_bytes", self.if_bytes),
            ("udp_mib_skbs", self.udp_mib_skbs),
            ("udp_mib_rcvbuf_errors", self.udp_mib_receive_buffer_errors),
        ]
    }
}

/// One reporting interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntervalReport {
    /// Start, seconds since the test started.
    pub start_s: f64,
    /// End, seconds since the test started.
    pub end_s: f64,
    /// Inside the `omit` period.
    pub omitted: bool,
    /// Per stream.
    pub streams: Vec<StreamInterval>,
}

/// One stream's share of an interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamInterval {
    /// Stream number.
    pub index: u32,
    /// Bytes moved in the interval.
    pub bytes: u64,
    /// Transactions completed in the interval.
    pub transactions: u64,
    /// Retransmits in the interval.
    pub retransmits: u64,
    /// Congestion window at the end of the interval, bytes.
    pub cwnd_bytes: u64,
    /// Smoothed RTT at the end of the interval, µs.
    pub rtt_us: u32,
    /// UDP tests: datagram counts in the interval; left out otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp: Option<UdpCounts>,
}

/// System-wide and per-process CPU over the measured window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuReport {
    /// CPUs counted.
    pub cpus: u32,
    /// Length of the window, seconds.
    pub window_s: f64,
    /// Average utilisation over all CPUs, %.
    pub util_pct: f64,
    /// CPU-cores busy.
    pub cores_busy: f64,
    /// Utilisation of each CPU, %.
    pub per_cpu_pct: Vec<f64>,
    /// The busiest CPU's id.
    pub busiest_cpu: u32,
    /// The busiest CPU's utilisation, %.
    pub busiest_pct: f64,
    /// User time share of all CPU time, %.
    pub user_pct: f64,
    /// System time share, %.
    pub system_pct: f64,
    /// Hard interrupt share, %.
    pub irq_pct: f64,
    /// Soft interrupt share, %.
    pub softirq_pct: f64,
    /// Stolen share, %.
    pub steal_pct: f64,
    /// The tcplab process's own time.
    pub process: ProcessCpu,
}

/// CPU charged to the tcplab process.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProcessCpu {
    /// User time, seconds.
    pub user_s: f64,
    /// System time, seconds.
    pub system_s: f64,
    /// (user + system) / window, % of one core.
    pub pct_of_core: f64,
    /// Time held back by a cgroup CPU quota, seconds.
    pub throttled_s: f64,
}

/// Latency distribution (nearest-rank percentiles).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LatencyReport {
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
    /// Points of the distribution function, `[latency µs, fraction ≤]`.
    pub cdf: Vec<(f64, f64)>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ctrl::Message;

    /// A `results` frame body exactly as protocol 2 sends it: one UDP flow received by the
    /// server, one interval, CPU and (for the fixture's sake) latency.
    const RESULTS: &str = concat!(
        r#"{"type":"results","side":{"measured_s":1.5,"streams":[{"index":0,"role":"recv","#,
        r#""bytes":1200000,"bytes_total":1300000,"calls":1000,"transactions":0,"socket":{"#,
        r#""sndbuf_requested":null,"sndbuf_actual":212992,"rcvbuf_requested":131072,"#,
        r#""rcvbuf_actual":262144,"mss":0,"congestion":"","nodelay":false},"tcp":null,"#,
        r#""placement":{"pinned_cpu":1,"cpus_seen":[{"cpu":1,"samples":15}],"thread_busy_pct":42.5},"#,
        r#""udp":{"sent":0,"send_errors":0,"enobufs":0,"received":1000,"lost":3,"out_of_order":2,"#,
        r#""duplicates":1,"late":0,"stale":0,"jitter_us":12.25,"socket_drops":0,"timeouts":0}}],"#,
        r#""intervals":[{"start_s":0.0,"end_s":1.0,"omitted":false,"streams":[{"index":0,"#,
        r#""bytes":800000,"transactions":0,"retransmits":0,"cwnd_bytes":0,"rtt_us":0}]}],"#,
        r#""cpu":{"cpus":2,"window_s":1.5,"util_pct":30.0,"cores_busy":0.6,"per_cpu_pct":[50.0,10.0],"#,
        r#""busiest_cpu":0,"busiest_pct":50.0,"user_pct":5.0,"system_pct":15.0,"irq_pct":0.0,"#,
        r#""softirq_pct":10.0,"steal_pct":0.0,"process":{"user_s":0.1,"system_s":0.2,"#,
        r#""pct_of_core":20.0,"throttled_s":0.0}},"latency":{"count":2,"min_us":10.0,"mean_us":15.0,"#,
        r#""stddev_us":5.0,"p50_us":10.0,"p90_us":20.0,"p99_us":20.0,"p999_us":20.0,"max_us":20.0,"#,
        r#""cdf":[[10.0,0.5],[20.0,1.0]]}}}"#,
    );

    fn report() -> SideReport {
        let udp = UdpCounts {
            received: 1000,
            lost: 3,
            out_of_order: 2,
            duplicates: 1,
            jitter_us: 12.25,
            ..UdpCounts::default()
        };
        let stream = StreamReport {
            index: 0,
            role: Role::Recv,
            bytes: 1_200_000,
            bytes_total: 1_300_000,
            calls: 1000,
            transactions: 0,
            socket: SocketReport {
                send: BufferGrant { requested: None, actual: 212_992 },
                receive: BufferGrant { requested: Some(131_072), actual: 262_144 },
                ..SocketReport::default()
            },
            tcp: None,
            placement: Placement {
                pinned_cpu: Some(1),
                cpus_seen: vec![CpuSeen { cpu: 1, samples: 15 }],
                thread_busy_pct: Some(42.5),
            },
            udp: Some(udp),
        };
        let interval = IntervalReport {
            start_s: 0.0,
            end_s: 1.0,
            omitted: false,
            streams: vec![StreamInterval { index: 0, bytes: 800_000, ..StreamInterval::default() }],
        };
        let cpu = CpuReport {
            cpus: 2,
            window_s: 1.5,
            util_pct: 30.0,
            cores_busy: 0.6,
            per_cpu_pct: vec![50.0, 10.0],
            busiest_cpu: 0,
            busiest_pct: 50.0,
            user_pct: 5.0,
            system_pct: 15.0,
            irq_pct: 0.0,
            softirq_pct: 10.0,
            steal_pct: 0.0,
            process: ProcessCpu { user_s: 0.1, system_s: 0.2, pct_of_core: 20.0, throttled_s: 0.0 },
        };
        let latency = LatencyReport {
            count: 2,
            min_us: 10.0,
            mean_us: 15.0,
            stddev_us: 5.0,
            p50_us: 10.0,
            p90_us: 20.0,
            p99_us: 20.0,
            p999_us: 20.0,
            max_us: 20.0,
            cdf: vec![(10.0, 0.5), (20.0, 1.0)],
        };
        SideReport {
            measured_s: 1.5,
            streams: vec![stream],
            intervals: vec![interval],
            cpu: Some(cpu),
            latency: Some(latency),
            sections: Default::default(),
        }
    }

    #[test]
    fn results_parse_from_and_emit_the_fixture() {
        let parsed = Message::decode(RESULTS.as_bytes()).unwrap();
        assert_eq!(parsed, Message::Results { side: Box::new(report()) });
        let bytes = Message::Results { side: Box::new(report()) }.encode().unwrap();
        assert_eq!(std::str::from_utf8(&bytes[4..]).unwrap(), RESULTS);
    }

    /// A path reading as protocol 2 sends it, names and order, byte for byte.
    #[test]
    fn a_path_reading_keeps_its_wire_names() {
        let text = concat!(
            r#"{"at_s":-0.5,"datagrams":1,"if_skbs":2,"if_bytes":3,"udp_mib_skbs":4,"#,
            r#""udp_mib_rcvbuf_errors":5}"#
        );
        let r: PathReading = serde_json::from_str(text).unwrap();
        assert_eq!(r.udp_mib_receive_buffer_errors, 5);
        assert_eq!(serde_json::to_string(&r).unwrap(), text);
        let v = serde_json::to_value(&r).unwrap();
        for (name, n) in r.counters() {
            assert_eq!(v[name], n, "{name} is the counter's wire name");
        }
        assert_eq!(v.as_object().map(|o| o.len()), Some(r.counters().len() + 1), "every counter but at_s");
    }

    #[test]
    fn unknown_fields_are_refused_at_every_level() {
        for (at, with) in [
            (r#""measured_s":1.5"#, r#""measured_s":1.5,"headline":1"#),
            (r#""calls":1000"#, r#""calls":1000,"zerocopy_calls":1"#),
            (r#""nodelay":false}"#, r#""nodelay":false,"tos":0}"#),
            (r#""timeouts":0"#, r#""timeouts":0,"ecn_ce":0"#),
            (r#""rtt_us":0"#, r#""rtt_us":0,"pacing_rate":0"#),
            (r#""throttled_s":0.0"#, r#""throttled_s":0.0,"waited_s":0.0"#),
            (r#""max_us":20.0"#, r#""max_us":20.0,"p9999_us":20.0"#),
        ] {
            assert!(RESULTS.contains(at), "{at}");
            let body = RESULTS.replacen(at, with, 1);
            assert!(Message::decode(body.as_bytes()).is_err(), "accepted an unknown field at {at}");
        }
    }

    #[test]
    fn a_missing_measurement_is_refused() {
        let body = RESULTS.replacen(r#""bytes_total":1300000,"#, "", 1);
        let err = Message::decode(body.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("bytes_total"), "{err}");
    }
}
