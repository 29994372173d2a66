//! Captured packets → rows of the wire segment table: per segment its direction, relative
//! sequence and ack, the window it announces (scaled by the factor its SYN negotiated), the
//! bytes the flow has outstanding at the capture point, flags, whether it is a
//! retransmission or arrived out of order (below), and the GSO size when it is a super-packet (longer than the MSS the
//! peer announced). Then [`join`] adds what the sending socket's `tcp:tcp_probe` said just
//! before (cwnd, srtt, snd_wnd).
//!
//! One [`WireFlow`] per capture point: every packet a point saw, in capture order.
//!
//! A data segment that starts below the highest sequence its direction has sent is, as
//! tshark's analysis classifies it, *out of order* when it falls into a gap this capture
//! point has not seen filled and that gap opened less than [`OUT_OF_ORDER_NS`] before
//! (tshark's threshold when it has no RTT): the segment was overtaken on the way
//! (reordering between cores on loopback and veth). It is a *retransmission* when it carries
//! sequence space this point has seen already, or fills a gap older than that (the first copy
//! was lost before the capture point). Only the second is resent data.

use std::collections::HashMap;

use wire::tcpip::{flags, TcpSegment};

use crate::segment::{Dir, End, Segment};

/// A segment filling a gap younger than this is out of order, not a retransmission
/// (tshark's default when the RTT is not known: 3 ms).
pub const OUT_OF_ORDER_NS: u64 = 3_000_000;
/// Gaps remembered per direction; the oldest is forgotten (later data filling it then counts
/// as a retransmission, as it would once old).
const MAX_GAPS: usize = 64;

/// Where a packet was captured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Point {
    /// The client's device (the emulator's client side, or this host against a remote server).
    Client,
    /// The server's device (the emulator's server side).
    Server,
    /// The one device both ends share (loopback).
    Host,
}

impl Point {
    /// `client` / `server` / `host`.
    pub fn name(self) -> &'static str {
        match self {
            Point::Client => "client",
            Point::Server => "server",
            Point::Host => "host",
        }
    }
}

/// What the sending socket's last `tcp:tcp_probe` before a segment said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeState {
    /// Congestion window, segments.
    pub cwnd: u32,
    /// Smoothed RTT, µs.
    pub srtt_us: u32,
    /// The window the peer had announced, bytes.
    pub snd_wnd: u32,
}

/// One row of the wire table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WireRow {
    /// Capture time, ns since 1970.
    pub unix_ns: u64,
    /// Where it was captured.
    pub at: Point,
    /// Which way it went.
    pub dir: Dir,
    /// The connection: the client's port.
    pub conn: u16,
    /// Sequence number relative to the direction's SYN (or first segment seen).
    pub seq: u32,
    /// Payload bytes.
    pub len: u32,
    /// Acknowledgement number relative to the other direction's SYN, when ACK is set.
    pub ack: Option<u32>,
    /// The window this segment announces, bytes (scaled).
    pub wnd: u32,
    /// The window last announced to this segment's sender, bytes (scaled).
    pub peer_wnd: Option<u32>,
    /// Bytes of the flow this row is about sent and not yet acknowledged, as seen at the
    /// capture point: for a segment with payload its own direction after it; for one without,
    /// the direction it acknowledges.
    pub outstanding: Option<u32>,
    /// TCP flag bits.
    pub flags: u8,
    /// A retransmission: it carries sequence space this capture point has seen already, or
    /// fills a gap older than [`OUT_OF_ORDER_NS`].
    pub retransmission: bool,
    /// Out of order: below the highest sequence sent, filling a gap younger than
    /// [`OUT_OF_ORDER_NS`] (overtaken on the way, not resent).
    pub out_of_order: bool,
    /// The segment size GSO/TSO will cut it to, when it is longer than that.
    pub gso_size: Option<u32>,
    /// The sending socket's state, from `tcp:tcp_probe` (filled by [`join`]).
    pub probe: Option<ProbeState>,
}

/// One direction of one connection at one capture point.
#[derive(Debug, Clone, Default)]
struct Half {
    base: Option<u32>,
    scale: Option<u8>,
    mss: Option<u16>,
    timestamps: bool,
    syn_seen: bool,
    /// Highest relative sequence end sent.
    snd_max: Option<u32>,
    /// Last ack sent this way (relative to the other half's base).
    acked: Option<u32>,
    /// Last window announced this way, scaled.
    wnd: Option<u32>,
    /// Sequence ranges below `snd_max` not seen yet (start, end, when the gap opened, ns).
    gaps: Vec<(u32, u32, u64)>,
}

/// How a data segment relates to what its direction sent before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    New,
    Retransmission,
    Overtaken,
}

impl Half {
    /// Classifies the data segment `[seq, end)` seen at `now_ns` and records it.
    fn order(&mut self, seq: u32, end: u32, now_ns: u64) -> Seen {
        let Some(max) = self.snd_max else {
            self.snd_max = Some(end);
            return Seen::New;
        };
        if seq_le(max, seq) {
            if seq != max {
                if self.gaps.len() >= MAX_GAPS {
                    self.gaps.remove(0);
                }
                self.gaps.push((max, seq, now_ns));
            }
            self.snd_max = Some(end);
            return Seen::New;
        }
        // Below the highest sequence: the part up to `max` is in a gap, or was seen.
        let upto = if seq_le(end, max) { end } else { max };
        let gap = self.gaps.iter().position(|&(a, b, _)| seq_le(a, seq) && seq_le(upto, b));
        if !seq_le(end, max) {
            self.snd_max = Some(end);
        }
        let Some(i) = gap else { return Seen::Retransmission };
        let (a, b, opened) = self.gaps.remove(i);
        if seq != a {
            self.gaps.push((a, seq, opened));
        }
        if upto != b {
            self.gaps.push((upto, b, opened));
        }
        if now_ns.saturating_sub(opened) < OUT_OF_ORDER_NS {
            Seen::Overtaken
        } else {
            Seen::Retransmission
        }
    }
}

/// Turns one capture point's packets into rows.
#[derive(Debug, Clone)]
pub struct WireFlow {
    at: Point,
    server_port: u16,
    conns: HashMap<u16, [Half; 2]>,
    /// Packets not to or from the server's port.
    pub foreign: u64,
}

fn idx(d: Dir) -> usize {
    match d {
        Dir::Up => 0,
        Dir::Down => 1,
    }
}

/// `a` at or before `b` in sequence space (RFC 9293 comparison).
fn seq_le(a: u32, b: u32) -> bool {
    b.wrapping_sub(a) < 1 << 31
}

impl WireFlow {
    /// A flow of a test against `server_port` captured at `at`.
    pub fn new(at: Point, server_port: u16) -> WireFlow {
        WireFlow { at, server_port, conns: HashMap::new(), foreign: 0 }
    }

    /// The row of one captured segment.
    pub fn push(&mut self, unix_ns: u64, s: &TcpSegment) -> Option<WireRow> {
        let (dir, conn) = match (s.src_port == self.server_port, s.dst_port == self.server_port) {
            (false, true) => (Dir::Up, s.src_port),
            (true, false) => (Dir::Down, s.dst_port),
            _ => {
                self.foreign += 1;
                return None;
            }
        };
        let halves = self.conns.entry(conn).or_default();
        let (me, other) = (idx(dir), 1 - idx(dir));
        learn(&mut halves[me], s);
        let base = halves[me].base.unwrap_or(s.seq);
        let seq = s.seq.wrapping_sub(base);
        let end = seq.wrapping_add(s.seq_len());
        let ack = halves[other].base.filter(|_| s.has(flags::ACK)).map(|b| s.ack.wrapping_sub(b));
        let wnd = scaled_window(&halves[me], &halves[other], s);
        let order = if s.seq_len() > 0 { halves[me].order(seq, end, unix_ns) } else { Seen::New };
        halves[me].acked = ack.or(halves[me].acked);
        halves[me].wnd = Some(wnd);
        let outstanding = if s.payload_len > 0 {
            in_flight(&halves[me], &halves[other])
        } else {
            in_flight(&halves[other], &halves[me])
        };
        let gso = halves[other].mss.map(|m| u32::from(m) - if halves[me].timestamps { 12 } else { 0 });
        Some(WireRow {
            unix_ns,
            at: self.at,
            dir,
            conn,
            seq,
            len: s.payload_len,
            ack,
            wnd,
            peer_wnd: halves[other].wnd,
            outstanding,
            flags: s.flags,
            retransmission: order == Seen::Retransmission,
            out_of_order: order == Seen::Overtaken,
            gso_size: gso.filter(|g| *g > 0 && s.payload_len > *g),
            probe: None,
        })
    }
}

/// Takes what a SYN says (base, scale, MSS, timestamps), or the first sequence seen.
fn learn(h: &mut Half, s: &TcpSegment) {
    if s.has(flags::SYN) && !h.syn_seen {
        h.base = Some(s.seq);
        h.scale = s.window_scale;
        h.mss = s.mss;
        h.timestamps = s.timestamps;
        h.syn_seen = true;
    } else if h.base.is_none() {
        h.base = Some(s.seq);
    }
}

/// The window `s` announces: unscaled on a SYN, scaled by the sender's factor when both
/// SYNs carried the option.
fn scaled_window(me: &Half, other: &Half, s: &TcpSegment) -> u32 {
    let raw = u32::from(s.window);
    if s.has(flags::SYN) {
        return raw;
    }
    match (me.scale, other.scale) {
        (Some(shift), Some(_)) => raw << shift.min(14),
        _ => raw,
    }
}

/// Bytes `sender` sent that `receiver` has not acknowledged.
fn in_flight(sender: &Half, receiver: &Half) -> Option<u32> {
    let (max, acked) = (sender.snd_max?, receiver.acked?);
    let out = max.wrapping_sub(acked);
    (out < 1 << 31).then_some(out)
}

/// The socket that sends in `dir`.
fn sender(dir: Dir) -> End {
    match dir {
        Dir::Up => End::Client,
        Dir::Down => End::Server,
    }
}

/// The sending sockets' probe samples, indexed for [`Probes::at`].
#[derive(Debug, Default)]
pub struct Probes {
    by_socket: HashMap<(End, u16), Vec<(u64, ProbeState)>>,
}

impl Probes {
    /// Indexes `rows` (the probe table) whose times are relative to `origin_unix_ns`.
    pub fn new(rows: &[Segment], origin_unix_ns: u64) -> Probes {
        let mut by_socket: HashMap<(End, u16), Vec<(u64, ProbeState)>> = HashMap::new();
        for r in rows {
            let Some(st) = r.state else { continue };
            let p = ProbeState { cwnd: st.cwnd, srtt_us: st.srtt_us, snd_wnd: st.snd_wnd };
            by_socket.entry((r.end, r.conn)).or_default().push((origin_unix_ns + r.t_ns, p));
        }
        by_socket.values_mut().for_each(|v| v.sort_by_key(|(t, _)| *t));
        Probes { by_socket }
    }

    /// The last sample of the socket that sends `row`, at or before it.
    pub fn at(&self, row: &WireRow) -> Option<ProbeState> {
        let v = self.by_socket.get(&(sender(row.dir), row.conn))?;
        let n = v.partition_point(|(t, _)| *t <= row.unix_ns);
        n.checked_sub(1).and_then(|i| v.get(i)).map(|(_, p)| *p)
    }
}

/// Adds the sending socket's probe state to `row`.
pub fn join(row: &mut WireRow, probes: &Probes) {
    row.probe = probes.at(row);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segment::{Kind, SocketState};

    fn seg(src: u16, dst: u16, seq: u32, ack: u32, f: u8, window: u16, len: u32) -> TcpSegment {
        TcpSegment {
            src_port: src,
            dst_port: dst,
            seq,
            ack,
            flags: f,
            window,
            payload_len: len,
            ..TcpSegment::default()
        }
    }

    /// A handshake with scale 7 both ways and MSS 1460, timestamps on.
    fn handshake(w: &mut WireFlow) {
        let syn = TcpSegment {
            mss: Some(1460),
            window_scale: Some(7),
            timestamps: true,
            ..seg(40000, 5201, 1000, 0, flags::SYN, 64240, 0)
        };
        let synack = TcpSegment {
            mss: Some(1460),
            window_scale: Some(7),
            timestamps: true,
            ..seg(5201, 40000, 9000, 1001, flags::SYN | flags::ACK, 65160, 0)
        };
        assert!(w.push(1, &syn).is_some());
        assert!(w.push(2, &synack).is_some());
    }

    #[test]
    fn sequence_window_outstanding_and_retransmissions() {
        let mut w = WireFlow::new(Point::Client, 5201);
        handshake(&mut w);
        let a = flags::ACK;
        let d1 = w.push(3, &seg(40000, 5201, 1001, 9001, a, 502, 1448)).unwrap_or_else(|| unreachable!());
        assert_eq!((d1.seq, d1.len, d1.ack, d1.wnd), (1, 1448, Some(1), 502 << 7));
        assert_eq!((d1.peer_wnd, d1.outstanding, d1.retransmission), (Some(65160), Some(1448), false));
        let d2 = w.push(4, &seg(40000, 5201, 2449, 9001, a, 502, 2896)).unwrap_or_else(|| unreachable!());
        assert_eq!((d2.outstanding, d2.gso_size), (Some(4344), Some(1448)));
        let ack = w.push(5, &seg(5201, 40000, 9001, 2449, a, 100, 0)).unwrap_or_else(|| unreachable!());
        assert_eq!((ack.dir, ack.ack, ack.wnd, ack.outstanding), (Dir::Down, Some(1449), 12800, Some(2896)));
        let re = w.push(6, &seg(40000, 5201, 2449, 9001, a, 502, 1448)).unwrap_or_else(|| unreachable!());
        assert!(re.retransmission);
        assert_eq!((re.outstanding, re.peer_wnd), (Some(2896), Some(12800)));
        assert_eq!(w.push(7, &seg(1, 2, 0, 0, a, 0, 0)), None);
        assert_eq!(w.foreign, 1);
    }

    #[test]
    fn a_segment_filling_a_young_gap_is_out_of_order_and_an_old_gap_or_seen_data_a_retransmission() {
        let mut w = WireFlow::new(Point::Host, 5201);
        handshake(&mut w);
        let a = flags::ACK;
        let ms = 1_000_000;
        let mut push =
            |t: u64, seq: u32| w.push(t, &seg(40000, 5201, 1001 + seq, 9001, a, 502, 1000)).unwrap();
        let flags = |r: WireRow| (r.retransmission, r.out_of_order);
        assert_eq!(flags(push(10 * ms, 0)), (false, false));
        // 2000.. overtakes 1000..: a gap opens, filled 1 ms later: reordering.
        assert_eq!(flags(push(11 * ms, 2000)), (false, false));
        assert_eq!(flags(push(12 * ms, 1000)), (false, true));
        // The same bytes again: a retransmission.
        assert_eq!(flags(push(13 * ms, 1000)), (true, false));
        // A gap filled 50 ms later: the first copy was lost before this point.
        assert_eq!(flags(push(14 * ms, 4000)), (false, false));
        assert_eq!(flags(push(64 * ms, 3000)), (true, false));
        // Part of a gap, then the rest: each part fills what it finds.
        assert_eq!(flags(push(65 * ms, 7000)), (false, false));
        assert_eq!(flags(push(66 * ms, 5000)), (false, true));
        assert_eq!(flags(push(66 * ms, 6000)), (false, true));
        assert_eq!(flags(push(67 * ms, 6000)), (true, false));
    }

    #[test]
    fn without_a_handshake_windows_stay_unscaled_and_sequence_starts_at_zero() {
        let mut w = WireFlow::new(Point::Host, 5201);
        let d = w.push(1, &seg(40000, 5201, 77, 5, flags::ACK, 100, 10)).unwrap_or_else(|| unreachable!());
        assert_eq!((d.seq, d.ack, d.wnd, d.outstanding), (0, None, 100, None));
    }

    #[test]
    fn the_sending_sockets_last_probe_joins() {
        let st = |cwnd| SocketState { cwnd, srtt_us: 50, snd_wnd: 4096, ..SocketState::default() };
        let probe = |t_ns, end, cwnd| Segment {
            t_ns,
            end,
            dir: Dir::Down,
            conn: 40000,
            kind: Kind::Ack,
            len: 0,
            state: Some(st(cwnd)),
        };
        let probes = Probes::new(
            &[probe(10, End::Client, 10), probe(20, End::Client, 11), probe(15, End::Server, 99)],
            1000,
        );
        let mut w = WireFlow::new(Point::Host, 5201);
        let mut row = w.push(1015, &seg(40000, 5201, 0, 0, 0, 0, 100)).unwrap_or_else(|| unreachable!());
        join(&mut row, &probes);
        assert_eq!(row.probe, Some(ProbeState { cwnd: 10, srtt_us: 50, snd_wnd: 4096 }));
        row.unix_ns = 1005;
        join(&mut row, &probes);
        assert_eq!(row.probe, None);
    }
}
