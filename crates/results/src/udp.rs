//! UDP datagram accounting: counts of one flow at one end, and the summary of one direction.
//!
//! Two kinds of count, never mixed: *datagrams* are what tcplab sent and received (one
//! sequence number each); *skbs* are the packets a network interface counted while the test ran
//! ([`PathWindow`], [`PathPackets`]). With UDP GSO/GRO one skb carries up to 64 datagrams, and
//! on loopback or veth it is never split into per-datagram packets.

use serde::{Deserialize, Serialize};

/// Datagram counts of one UDP flow at one end: cumulative over the test in
/// [`crate::StreamStats`], one interval's share in [`crate::StreamInterval`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UdpCounts {
    /// Sender: datagrams the kernel accepted (their sequence numbers are 0 … sent − 1).
    pub sent: u64,
    /// Sender: datagrams whose send call failed (not sent, not numbered; a failed GSO send
    /// counts each datagram it carried). Runs stored before 2026-11-26 counted calls.
    pub send_errors: u64,
    /// Sender: the part of `send_errors` that was ENOBUFS (a full queue on this host).
    pub enobufs: u64,
    /// Receiver: datagrams counted, duplicates included.
    pub received: u64,
    /// Receiver: sequence numbers missing so far (gaps; the tail is only known with `sent`).
    /// In an interval: gaps opened in it and not filled within it.
    pub lost: u64,
    /// Receiver: datagrams that arrived after a higher sequence number.
    pub out_of_order: u64,
    /// Receiver: second and later copies of a sequence number.
    pub duplicates: u64,
    /// Receiver: out-of-order datagrams that filled a gap already reported lost in an
    /// earlier interval.
    pub late: u64,
    /// Receiver: datagrams older than the reorder window, not classified (counted as lost).
    pub stale: u64,
    /// Receiver: RFC 3550 interarrival jitter, µs (at the end of the test or interval).
    pub jitter_us: f64,
    /// Receiver: datagrams the kernel dropped because the socket's receive buffer was full;
    /// `None` where the receiver does not report it (a stock iperf3 server).
    #[serde(default)]
    pub socket_drops: Option<u64>,
    /// UDP request/response client: requests that got no response within the timeout.
    pub timeouts: u64,
    /// Stream tests, whole-test counts only: what the interface and the namespace's UDP
    /// counters saw over this flow's measured window at this end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathWindow>,
}

/// What the path carried at one end while one flow ran: readings at the start of its
/// measured window (the flow's setup when nothing is omitted, before any data) and at its end
/// (after the last datagram sent, or after the receiver's drain).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PathWindow {
    /// The interface whose counters were read: the one the flow's route uses (`lo` on
    /// loopback, the veth or TUN device in a namespace).
    pub interface: String,
    /// At the start of the window.
    pub start: PathReading,
    /// At the end of the window.
    pub end: PathReading,
}

/// One reading at one end: the flow's datagram count and the kernel's counters at one moment.
/// Interface counters are `tx_*` at a sender and `rx_*` at a receiver; the UDP counters are
/// `OutDatagrams` at a sender and `InDatagrams` at a receiver.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PathReading {
    /// Seconds since the test started (negative: during the flow's setup).
    pub at_s: f64,
    /// This flow's datagrams so far: sent (sender) or received (receiver).
    pub datagrams: u64,
    /// The interface's packet counter: skbs, of every program using the interface.
    pub if_skbs: u64,
    /// The interface's byte counter (IP and UDP headers included, one set per skb).
    pub if_bytes: u64,
    /// The network namespace's `Udp: OutDatagrams` / `InDatagrams` (skbs, every UDP socket).
    pub udp_mib_skbs: u64,
    /// The namespace's `Udp: RcvbufErrors` (skbs dropped at full receive buffers; receiver).
    #[serde(rename = "udp_mib_rcvbuf_errors")]
    pub udp_mib_receive_buffer_errors: u64,
}

/// What the path carried at one end over a direction's measured window, all flows together.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PathPackets {
    /// The interface whose counters were read.
    pub interface: String,
    /// From the earliest flow's start reading to the latest flow's end reading, s.
    pub window_s: f64,
    /// This test's datagrams in the window (sent at a sender, received at a receiver).
    pub datagrams: u64,
    /// Packets the interface counted in the window (`tx_packets` at a sender, `rx_packets` at a
    /// receiver): skbs, a GSO/GRO train counted once, and everything else on the interface in
    /// that window (the control connection, other programs) included.
    pub skbs: u64,
    /// Bytes the interface counted in the window (headers included).
    pub bytes: u64,
    /// `skbs ÷ window_s`.
    pub skbs_per_s: f64,
    /// `datagrams ÷ skbs`: the GSO/GRO batching factor (≈ 1 without offload; lower than the
    /// batching when other traffic shares the interface).
    pub datagrams_per_skb: f64,
    /// The namespace's UDP counter in the window (`OutDatagrams` at a sender, `InDatagrams`
    /// at a receiver): UDP skbs of every socket, a GSO send or a GRO train counted once.
    pub udp_mib_skbs: u64,
    /// The namespace's `RcvbufErrors` in the window (receiver): skbs dropped at full
    /// receive buffers, this test's and any other socket's.
    #[serde(rename = "udp_mib_rcvbuf_errors")]
    pub udp_mib_receive_buffer_errors: u64,
}

impl PathPackets {
    /// Whether skbs carried several of this test's datagrams each (GSO/GRO trains): more
    /// datagrams than skbs, which other traffic on the interface can only hide, never fake.
    pub fn coalesced(&self) -> bool {
        self.datagrams > self.skbs
    }

    /// Skbs that neither this test's datagrams nor the namespace's receive-buffer drops (skbs
    /// that reached the interface but not the socket) account for, even if each datagram had
    /// been an skb of its own: traffic of something else on the interface. 0 does not mean
    /// there was none — with GSO/GRO trains other traffic hides below the datagram count.
    pub fn other_traffic(&self) -> u64 {
        self.skbs.saturating_sub(self.datagrams.saturating_add(self.udp_mib_receive_buffer_errors))
    }
}

/// One direction of a UDP stream test, both ends combined.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UdpSummary {
    /// `client→server` or `server→client`.
    pub direction: String,
    /// Flows that way.
    pub streams: u32,
    /// Datagram size, bytes (UDP payload).
    pub datagram_len: u32,
    /// Target rate over all flows, bit/s of UDP payload (0 = as fast as possible).
    pub target_bps: u64,
    /// Achieved send rate over the measured window, bit/s of UDP payload.
    pub sender_bps: f64,
    /// *Datagrams* sent per second over the measured window (not packets: see `sender_path`).
    #[serde(alias = "sender_pps")]
    pub sender_datagrams_per_s: f64,
    /// Datagrams sent (whole test).
    pub sent: u64,
    /// Datagrams whose send failed (whole test).
    pub send_errors: u64,
    /// ENOBUFS among them.
    pub enobufs: u64,
    /// Datagrams received, duplicates included (whole test).
    pub received: u64,
    /// Duplicates among them.
    pub duplicates: u64,
    /// `sent − (received − duplicates)`: exact, the tail of the test included.
    pub lost: u64,
    /// `lost ÷ sent`, %.
    pub loss_pct: f64,
    /// Out-of-order arrivals.
    pub out_of_order: u64,
    /// Late arrivals (filled a gap reported in an earlier interval).
    pub late: u64,
    /// Arrivals older than the reorder window.
    pub stale: u64,
    /// Receive-buffer drops counted by the receiver's kernel (part of `lost`); `None` when
    /// a receiver did not report them (a stock iperf3 server does not).
    #[serde(default)]
    pub socket_drops: Option<u64>,
    /// Mean over flows of the final RFC 3550 jitter, ms; `None` when it measures nothing:
    /// the receiver's interface carried several datagrams per skb (GRO-coalesced trains, see
    /// [`PathPackets::coalesced`]), and a train's datagrams share one arrival time, so their
    /// interarrival differences are the sender's spacing, not the path's. Stored as `null`
    /// then; a number stored before reads as a value.
    #[serde(default)]
    pub jitter_ms: Option<f64>,
    /// Received rate over the measured window, bit/s of UDP payload.
    pub receiver_bps: f64,
    /// *Datagrams* received per second over the measured window (not packets: see
    /// `receiver_path`).
    #[serde(alias = "receiver_pps")]
    pub receiver_datagrams_per_s: f64,
    /// Receiver goodput ÷ the test's reference (`--link`), when there is one.
    #[serde(default)]
    pub of_reference: Option<f64>,
    /// Skbs on the sender's interface over the measured window, when it could be read.
    #[serde(default)]
    pub sender_path: Option<PathPackets>,
    /// Skbs on the receiver's interface over the measured window, when it could be read.
    #[serde(default)]
    pub receiver_path: Option<PathPackets>,
}

#[cfg(test)]
mod tests {
    use super::{PathPackets, PathReading};
    use crate::{StreamStats, Summary, TestKind, TestSpec};

    #[test]
    fn records_from_before_udp_still_parse() {
        let spec = r#"{"test":"tcp-stream","duration_ms":10000,"bytes_limit":null,"parallel":1,
            "direction":"forward","send_len":131072,"recv_len":131072,"request_len":1,"response_len":1,
            "burst":1,"nodelay":false,"mss":null,"congestion":null,"sndbuf":null,"rcvbuf":null,
            "remote_sndbuf":null,"remote_rcvbuf":null,"interval_ms":1000,"omit_ms":0}"#;
        let spec: TestSpec = serde_json::from_str(spec).unwrap();
        assert_eq!((spec.rate_bps, spec.no_checksum, spec.no_offload), (0, false, false));
        let stats = r#"{"index":0,"role":"send","bytes":1,"bytes_total":1,"calls":1,"transactions":0,
            "socket":{"sndbuf_requested":null,"sndbuf_actual":0,"rcvbuf_requested":null,"rcvbuf_actual":0,
            "mss":0,"congestion":"","nodelay":false},"tcp":null}"#;
        assert!(serde_json::from_str::<StreamStats>(stats).unwrap().udp.is_none());
        let summary = r#"{"directions":[],"rr":null,"local_cost":null,"remote_cost":null}"#;
        assert!(serde_json::from_str::<Summary>(summary).unwrap().udp.is_empty());
    }

    #[test]
    fn summaries_from_before_skb_counts_still_parse() {
        let old = r#"{"direction":"client→server","streams":1,"datagram_len":1400,"target_bps":0,
            "sender_bps":8.0,"sender_pps":1000.0,"sent":5,"send_errors":0,"enobufs":0,"received":5,
            "duplicates":0,"lost":0,"loss_pct":0.0,"out_of_order":0,"late":0,"stale":0,"socket_drops":0,
            "jitter_ms":0.0,"receiver_bps":8.0,"receiver_pps":900.0}"#;
        let d: crate::UdpSummary = serde_json::from_str(old).unwrap();
        assert_eq!((d.sender_datagrams_per_s, d.receiver_datagrams_per_s), (1000.0, 900.0));
        assert_eq!(d.jitter_ms, Some(0.0), "a stored number stays a value");
        let unknown: crate::UdpSummary = serde_json::from_str(
            r#"{"direction":"x","streams":1,"datagram_len":1,
            "target_bps":0,"sender_bps":0.0,"sender_datagrams_per_s":0.0,"sent":0,"send_errors":0,"enobufs":0,
            "received":0,"duplicates":0,"lost":0,"loss_pct":0.0,"out_of_order":0,"late":0,"stale":0,
            "socket_drops":0,"jitter_ms":null,"receiver_bps":0.0,"receiver_datagrams_per_s":0.0}"#,
        )
        .unwrap();
        assert_eq!(unknown.jitter_ms, None);
        assert!(d.sender_path.is_none() && d.receiver_path.is_none());
        let json = serde_json::to_string(&d).unwrap();
        assert!(json.contains("\"receiver_datagrams_per_s\":900.0") && !json.contains("pps"), "{json}");
        let counts: crate::UdpCounts = serde_json::from_str(
            r#"{"sent":1,"send_errors":0,"enobufs":0,
            "received":0,"lost":0,"out_of_order":0,"duplicates":0,"late":0,"stale":0,"jitter_us":0.0,
            "socket_drops":0,"timeouts":0}"#,
        )
        .unwrap();
        assert!(counts.path.is_none());
        assert!(!serde_json::to_string(&counts).unwrap().contains("path"), "absent, not null");
    }

    /// Path readings and windows keep the names records have always stored.
    #[test]
    fn path_counters_keep_their_recorded_names() {
        let reading = r#"{"at_s":1.0,"datagrams":1,"if_skbs":2,"if_bytes":3,"udp_mib_skbs":4,"udp_mib_rcvbuf_errors":5}"#;
        let r: PathReading = serde_json::from_str(reading).unwrap();
        assert_eq!(
            (r.udp_mib_receive_buffer_errors, serde_json::to_string(&r).unwrap()),
            (5, reading.to_string())
        );
        let packets = PathPackets { udp_mib_receive_buffer_errors: 7, ..PathPackets::default() };
        let v = serde_json::to_value(&packets).unwrap();
        assert_eq!(v["udp_mib_rcvbuf_errors"], 7);
        assert_eq!(serde_json::from_value::<PathPackets>(v).unwrap(), packets);
    }

    #[test]
    fn other_traffic_is_what_datagrams_and_receive_drops_cannot_explain() {
        let p = |datagrams, skbs, drops| super::PathPackets {
            datagrams,
            skbs,
            udp_mib_receive_buffer_errors: drops,
            ..Default::default()
        };
        assert_eq!(p(100, 101, 0).other_traffic(), 1);
        assert_eq!(p(100, 100, 0).other_traffic() + p(4400, 100, 0).other_traffic(), 0);
        assert_eq!(p(47_757, 50_014, 2_243).other_traffic(), 14, "dropped skbs are not other traffic");
    }

    #[test]
    fn udp_kinds_have_stable_ids() {
        assert_eq!(TestKind::UdpStream.id(), "udp-stream");
        assert_eq!(serde_json::to_string(&TestKind::UdpRr).unwrap(), "\"udp-rr\"");
        assert_eq!(TestKind::from_id("udp-rr"), Some(TestKind::UdpRr));
    }
}
