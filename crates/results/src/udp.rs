//! UDP datagram accounting: counts of one flow at one end, and the summary of one direction.

use serde::{Deserialize, Serialize};

/// Datagram counts of one UDP flow at one end: cumulative over the test in
/// [`crate::StreamStats`], one interval's share in [`crate::StreamInterval`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UdpCounts {
    /// Sender: datagrams the kernel accepted (their sequence numbers are 0 … sent − 1).
    pub sent: u64,
    /// Sender: send calls that failed (datagrams not sent, not numbered).
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
    /// Receiver: datagrams the kernel dropped because the socket's receive buffer was full.
    pub socket_drops: u64,
    /// UDP request/response client: requests that got no response within the timeout.
    pub timeouts: u64,
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
    /// Datagrams sent per second over the measured window.
    pub sender_pps: f64,
    /// Datagrams sent (whole test).
    pub sent: u64,
    /// Failed send calls (whole test).
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
    /// Receive-buffer drops counted by the receiver's kernel (part of `lost`).
    pub socket_drops: u64,
    /// Mean over flows of the final RFC 3550 jitter, ms.
    pub jitter_ms: f64,
    /// Received rate over the measured window, bit/s of UDP payload.
    pub receiver_bps: f64,
    /// Datagrams received per second over the measured window.
    pub receiver_pps: f64,
    /// Receiver goodput ÷ the test's reference (`--link`), when there is one.
    #[serde(default)]
    pub of_reference: Option<f64>,
}

#[cfg(test)]
mod tests {
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
    fn udp_kinds_have_stable_ids() {
        assert_eq!(TestKind::UdpStream.id(), "udp-stream");
        assert_eq!(serde_json::to_string(&TestKind::UdpRr).unwrap(), "\"udp-rr\"");
        assert_eq!(TestKind::from_id("udp-rr"), Some(TestKind::UdpRr));
    }
}
