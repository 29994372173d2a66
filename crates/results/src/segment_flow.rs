//! What `--trace DIR` saw of a TCP test's segment flow (seed 004): per direction, the sizes
//! of the segments, the bytes outstanding against the window the receiver announced, and
//! what the flow says limited it, each with its evidence. Bounded: the time series are
//! downsampled; the full per-segment table stays in the trace directory.

use serde::{Deserialize, Serialize};

/// The segment-flow summary of one traced test.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SegmentFlow {
    /// Where the events came from, e.g. `tracefs tcp:tcp_probe + tcp:tcp_retransmit_skb`.
    pub source: String,
    /// The ends whose sockets were traced (`client`, `server`).
    pub ends: Vec<String>,
    /// Events read.
    pub events: u64,
    /// Events the kernel could not hand over (ring-buffer overruns and drops); counted, never
    /// silent.
    pub lost_events: u64,
    /// Lines that did not parse (kept out of the table).
    #[serde(default)]
    pub malformed_lines: u64,
    /// The per-segment table (CSV) and this summary (JSON), as written.
    #[serde(default)]
    pub files: Vec<String>,
    /// Each source asked for: whether it worked, what it saw, what it lost, or why not.
    #[serde(default)]
    pub sources: Vec<TraceSource>,
    /// Each direction data flowed in.
    pub directions: Vec<FlowDirection>,
    /// Per-interval summaries, as shown live (`--json-stream` events, text lines).
    #[serde(default)]
    pub intervals: Vec<FlowInterval>,
}

/// The segment flow of one direction over one interval, from the probe events: what the
/// receiver got and what the sender's ACK arrivals said.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FlowInterval {
    /// End of the interval, s from the first traced event.
    pub t_s: f64,
    /// `client→server` or `server→client`.
    pub direction: String,
    /// Data segments that arrived at the receiver.
    pub segments: u64,
    /// Their mean payload, bytes.
    pub mean_segment_bytes: f64,
    /// Their largest payload, bytes.
    pub max_segment_bytes: u32,
    /// ACKs that arrived at the sender.
    pub acks: u64,
    /// ACKs per data segment (0 when no segment arrived).
    pub acks_per_segment: f64,
    /// Most bytes outstanding at an ACK's arrival.
    pub max_outstanding_bytes: u64,
    /// The announced window at that moment.
    pub window_bytes: u64,
    /// Time the sender spent with less than one segment of window left, ms.
    pub window_full_ms: f64,
}

/// One source of a trace: tracefs, AF_PACKET capture, or the emulator's pump.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceSource {
    /// What it is, e.g. `AF_PACKET lo port 5201` or `emulator pump`.
    pub name: String,
    /// Whether it recorded.
    pub ok: bool,
    /// Events (packets or tracepoint events) it recorded.
    pub events: u64,
    /// Events it lost (ring full): counted, never silent.
    pub lost: u64,
    /// CPU time its reader thread ran, ns: the trace's own cost on this host (`None`: not
    /// measured, as for the emulator's pump, whose capture runs in the pump's own thread).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ns: Option<u64>,
    /// Why it did not work, or what it wrote.
    pub detail: String,
}

/// The segment flow of one direction (`client→server` or `server→client`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FlowDirection {
    /// `client→server` or `server→client`, as in the result's summary.
    pub direction: String,
    /// Data connections seen in this direction.
    pub connections: u32,
    /// Data segments seen arriving at the receiver (0 when the receiver was not traced).
    pub data_segments: u64,
    /// ACKs seen arriving at the sender (0 when the sender was not traced).
    pub acks: u64,
    /// Retransmissions the sender made: `tcp:tcp_retransmit_skb` events while traced (skbs,
    /// not segments: TCP_INFO's `retr` counts segments, over the whole test).
    pub retransmissions: u64,
    /// The most common segment sizes, largest count first.
    pub sizes: Vec<SizeCount>,
    /// The segment size taken as "one segment" in the window tests, bytes.
    pub segment_bytes: u32,
    /// Share of the sender's ACK samples with outstanding bytes within one segment of the
    /// announced window.
    pub window_limited_share: Option<f64>,
    /// Share of the sender's ACK samples with outstanding bytes within one segment of cwnd.
    pub cwnd_limited_share: Option<f64>,
    /// Stop-and-go: the window filled and the connection went idle until the ACK.
    pub stop_and_go: Option<StopAndGo>,
    /// One line per finding, with its numbers.
    pub evidence: Vec<String>,
    /// Segment sizes over time, per time bucket.
    pub size_series: Vec<SizeBucket>,
    /// Outstanding bytes and announced window over time, per time bucket.
    pub window_series: Vec<WindowBucket>,
    /// A short slice of the busiest connection at full resolution (the seed's zoomed graph).
    pub zoom: Vec<WindowSample>,
    /// What the captured packets say (when a packet source worked).
    #[serde(default)]
    pub wire: Option<WireFindings>,
    /// What the captured packets say of each data connection, in the order they opened (a
    /// traced test repeated until confident has one per run; `wire` is the busiest of them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wire_connections: Vec<WireFindings>,
    /// The tcptrace-style time-sequence graph of the busiest connection (from the wire table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_sequence: Option<TimeSequence>,
}

/// A tcptrace-style time-sequence graph of one direction's busiest data connection, as seen
/// at one capture point: data segments as bars from `seq` to `seq + len`, the ACK stairs
/// and the window line (ACK + announced window) of the other direction, SYN/FIN/RST marks.
/// Bounded: a long flow is bucketed in time for the overview and shown in full detail only
/// in a zoomed slice.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TimeSequence {
    /// `client→server` or `server→client`.
    pub direction: String,
    /// The capture point the rows were read at (`client`, `server`, `host`).
    pub at: String,
    /// The connection (client port).
    pub connection: u16,
    /// Data segments of the connection in this direction at that point.
    pub data_segments: u64,
    /// Of them, retransmissions.
    pub retransmissions: u64,
    /// The whole connection (bucketed when long).
    pub overview: SeqView,
    /// A slice of consecutive segments in full detail, when the overview is bucketed.
    #[serde(default)]
    pub zoom: Option<SeqView>,
}

/// One time-sequence view: bars, ACK and window stairs, marks; times in ms from the start of
/// the trace, sequence numbers relative to the direction's SYN and unwrapped past 4 GiB.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SeqView {
    /// Time bucket, ms, when segments were merged per bucket; `None`: every segment drawn.
    pub bucket_ms: Option<f64>,
    /// Data segments this view covers.
    pub segments: u64,
    /// The data bars.
    pub bars: Vec<SeqBar>,
    /// The ACKs of the other direction (per bucket: the last one).
    pub acks: Vec<SeqAck>,
    /// SYN, FIN and RST segments of this direction.
    pub marks: Vec<SeqMark>,
}

/// A data segment, or the span of a bucket's segments.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SeqBar {
    /// ms from the start of the trace.
    pub t_ms: f64,
    /// First sequence number.
    pub seq: u64,
    /// Sequence number after the last byte.
    pub end: u64,
    /// It re-sends sequence space already sent.
    pub retx: bool,
}

/// An ACK and the window edge it announced.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SeqAck {
    /// ms from the start of the trace.
    pub t_ms: f64,
    /// Acknowledged sequence number (in this direction's space).
    pub ack: u64,
    /// `ack` + the announced window.
    pub window_end: u64,
}

/// A SYN, FIN or RST.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SeqMark {
    /// ms from the start of the trace.
    pub t_ms: f64,
    /// Its sequence number.
    pub seq: u64,
    /// `SYN`, `FIN` or `RST`.
    pub flag: String,
}

/// One direction's findings from the wire segment table (its busiest connection).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WireFindings {
    /// `client→server` or `server→client`.
    pub direction: String,
    /// The connection (client port) analysed.
    pub connection: u16,
    /// The sending time analysed (first data segment to last), ms.
    pub traced_ms: f64,
    /// Share of it with less than one segment of the announced window left.
    pub window_limited_time: f64,
    /// Share of it with less than one segment of cwnd left (window not full).
    pub cwnd_limited_time: f64,
    /// Share of it with room in both: the sender (application or host) did not fill them.
    pub unlimited_time: f64,
    /// Segment size used, bytes (the GSO size, else the largest segment seen).
    pub segment_bytes: u32,
    /// Data segments at the receiver (a super-packet counts as the segments it holds).
    pub segments: u64,
    /// ACKs that acknowledged new data.
    pub acks: u64,
    /// Segments per ACK.
    pub segments_per_ack: Option<f64>,
    /// ACKs of less than two segments sent ≥ 20 ms after the last data: the delayed-ACK timer's.
    pub delayed_acks: u64,
    /// ACKs that changed only the window.
    pub window_updates: u64,
    /// Data segments (rows, a super-packet counting once) at the capture point nearest the
    /// receiver flagged `retx`: sequence space seen before there, or a gap older than 3 ms
    /// filled (tshark's retransmission).
    #[serde(default)]
    pub retransmitted_rows: u64,
    /// Rows there flagged `ooo`: a gap younger than 3 ms filled, reordering, not loss.
    #[serde(default)]
    pub out_of_order_rows: u64,
    /// Data rows there.
    #[serde(default)]
    pub data_rows: u64,
}

/// How many segments had one size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SizeCount {
    /// Payload bytes.
    pub bytes: u32,
    /// Segments of that size.
    pub count: u64,
}

/// Segment sizes in one time bucket.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SizeBucket {
    /// Start of the bucket, ms from the first event.
    pub t_ms: f64,
    /// Smallest segment, bytes.
    pub min_bytes: u32,
    /// Largest segment, bytes.
    pub max_bytes: u32,
    /// Segments in the bucket.
    pub count: u32,
}

/// Outstanding bytes against the announced window in one time bucket.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct WindowBucket {
    /// Start of the bucket, ms from the first event.
    pub t_ms: f64,
    /// Fewest bytes outstanding at an ACK's arrival.
    pub outstanding_min_bytes: u64,
    /// Most bytes outstanding at an ACK's arrival.
    pub outstanding_max_bytes: u64,
    /// Smallest window the receiver announced.
    pub window_min_bytes: u64,
    /// Largest window the receiver announced.
    pub window_max_bytes: u64,
}

/// One ACK's arrival at the sender.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct WindowSample {
    /// ms from the first event.
    pub t_ms: f64,
    /// Bytes sent and not yet acknowledged when the ACK arrived.
    pub outstanding_bytes: u64,
    /// The window the receiver had announced.
    pub window_bytes: u64,
}

/// Stop-and-go cycles found in the flow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct StopAndGo {
    /// ACKs that arrived with the window full after an idle gap.
    pub cycles: u64,
    /// Share of the sender's ACK samples that were such cycles.
    pub share: f64,
    /// Median idle gap before those ACKs, µs.
    pub median_idle_us: f64,
}
