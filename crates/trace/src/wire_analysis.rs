//! What the wire segment table says about one direction of data (seed 004's questions):
//! how the sender's time split between window-limited (less than a segment of the window
//! the receiver announced left), cwnd-limited (less than a segment of cwnd left) and neither
//! (the window and cwnd had room: the application, or the sending host, did not fill them);
//! how many segments each ACK acknowledged; how many ACKs the receiver's delayed-ACK timer
//! sent; and how often the receiver announced a new window without acknowledging data.
//!
//! The sender's side is read at the capture point nearest the sender (its own device, or the
//! one loopback device), the receiver's side at the point nearest the receiver.

use std::collections::HashMap;

use results::segment_flow::WireFindings;

use crate::segment::Dir;
use crate::wire::{Point, WireRow};
use wire::tcpip::flags;

/// Gap after the last data segment from which an ACK of less than two segments counts as
/// sent by the delayed-ACK timer (Linux's shortest delayed-ACK timeout is 40 ms).
pub const DELAYED_ACK_NS: u64 = 20_000_000;
/// Segment size assumed before the MSS is known.
const FALLBACK_SEGMENT: u32 = 1448;

/// The sender's state at a capture point, after the last segment seen.
#[derive(Debug, Clone, Copy, Default)]
struct SenderState {
    outstanding: u32,
    peer_wnd: Option<u32>,
    cwnd: Option<u32>,
}

/// Which limit held the sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    Window,
    Cwnd,
    Neither,
}

fn held(st: &SenderState, seg: u32) -> Held {
    let out = u64::from(st.outstanding);
    let seg64 = u64::from(seg);
    if st.peer_wnd.is_some_and(|w| u64::from(w) < out + seg64) {
        return Held::Window;
    }
    if st.cwnd.is_some_and(|c| u64::from(c) * seg64 < out + seg64) {
        return Held::Cwnd;
    }
    Held::Neither
}

pub(crate) fn sender_point(dir: Dir, points: &[Point]) -> Option<Point> {
    let own = match dir {
        Dir::Up => Point::Client,
        Dir::Down => Point::Server,
    };
    [own, Point::Host, Point::Client].into_iter().find(|p| points.contains(p))
}

fn receiver_point(dir: Dir, points: &[Point]) -> Option<Point> {
    sender_point(if dir == Dir::Up { Dir::Down } else { Dir::Up }, points)
}

/// The findings of direction `dir`, or `None` when it carried no data.
pub fn findings(rows: &[WireRow], dir: Dir) -> Option<WireFindings> {
    findings_of(rows, dir, busiest_conn(rows, dir)?)
}

/// The findings of each data connection of direction `dir`, in the order they opened: one
/// per run when a repeated test was traced. A data connection carried at least
/// [`DATA_SHARE`] of the busiest one's payload, which leaves out the control connections
/// of later runs.
pub fn per_connection(rows: &[WireRow], dir: Dir) -> Vec<WireFindings> {
    let bytes = payload_by_conn(rows, dir);
    let most = bytes.iter().map(|&(_, b)| b).max().unwrap_or(0);
    let floor = (most as f64 * DATA_SHARE) as u64;
    let data = bytes.iter().filter(|&&(_, b)| b >= floor.max(crate::analysis::MIN_DIRECTION_BYTES));
    data.filter_map(|&(c, _)| findings_of(rows, dir, c)).collect()
}

/// The share of the busiest connection's payload that makes a connection a data connection
/// in [`per_connection`].
pub const DATA_SHARE: f64 = 0.1;

fn findings_of(rows: &[WireRow], dir: Dir, busiest: u16) -> Option<WireFindings> {
    let mut points: Vec<Point> = rows.iter().map(|r| r.at).collect();
    points.dedup();
    let at_sender = sender_point(dir, &points)?;
    let at_receiver = receiver_point(dir, &points)?;
    let conn: Vec<&WireRow> = rows.iter().filter(|r| r.conn == busiest).collect();
    let mut f = WireFindings { direction: dir.name().into(), connection: busiest, ..WireFindings::default() };
    time_split(&conn, dir, at_sender, &mut f);
    acks(&conn, dir, at_receiver, &mut f);
    let data = || conn.iter().filter(|r| r.at == at_receiver && r.dir == dir && r.len > 0);
    f.data_rows = data().count() as u64;
    f.retransmitted_rows = data().filter(|r| r.retransmission).count() as u64;
    f.out_of_order_rows = data().filter(|r| r.out_of_order).count() as u64;
    Some(f)
}

/// The connection that carried most payload in `dir`, leaving out the test's control
/// connection (the first one seen).
pub(crate) fn busiest_conn(rows: &[WireRow], dir: Dir) -> Option<u16> {
    let (conn, b) = payload_by_conn(rows, dir).into_iter().max_by_key(|(c, b)| (*b, *c))?;
    (b >= crate::analysis::MIN_DIRECTION_BYTES).then_some(conn)
}

/// Payload bytes of each connection in `dir`, in the order the connections were first seen,
/// leaving out the test's control connection (the first one seen).
fn payload_by_conn(rows: &[WireRow], dir: Dir) -> Vec<(u16, u64)> {
    let control = rows.iter().min_by_key(|r| r.unix_ns).map(|r| r.conn);
    let mut first: HashMap<u16, u64> = HashMap::new();
    let mut bytes: HashMap<u16, u64> = HashMap::new();
    for r in rows.iter().filter(|r| r.dir == dir && Some(r.conn) != control) {
        *bytes.entry(r.conn).or_default() += u64::from(r.len);
        let t = first.entry(r.conn).or_insert(r.unix_ns);
        *t = (*t).min(r.unix_ns);
    }
    let mut out: Vec<(u16, u64)> = bytes.into_iter().collect();
    out.sort_by_key(|&(c, _)| (first.get(&c).copied(), c));
    out
}

/// Splits the time from the first data segment to the last between the three limits.
fn time_split(conn: &[&WireRow], dir: Dir, at: Point, f: &mut WireFindings) {
    let mut st = SenderState::default();
    let mut seg = FALLBACK_SEGMENT;
    let mut last: Option<(u64, Held)> = None;
    let (mut window, mut cwnd, mut neither) = (0u64, 0u64, 0u64);
    let last_data = conn.iter().filter(|r| r.at == at && r.dir == dir && r.len > 0).map(|r| r.unix_ns).max();
    for r in conn.iter().filter(|r| r.at == at) {
        if last_data.is_some_and(|t| r.unix_ns > t) {
            break;
        }
        if let Some((t, h)) = last {
            let gap = r.unix_ns.saturating_sub(t);
            match h {
                Held::Window => window += gap,
                Held::Cwnd => cwnd += gap,
                Held::Neither => neither += gap,
            }
        }
        if r.dir == dir && r.len > 0 {
            seg = r.gso_size.unwrap_or(seg.max(r.len.min(u32::from(u16::MAX))));
            st.cwnd = r.probe.map(|p| p.cwnd).or(st.cwnd);
            st.peer_wnd = r.peer_wnd.or(st.peer_wnd);
            st.outstanding = r.outstanding.unwrap_or(st.outstanding);
        } else if r.dir != dir && r.len == 0 {
            st.peer_wnd = Some(r.wnd);
            st.outstanding = r.outstanding.unwrap_or(st.outstanding);
        }
        if r.dir == dir && r.len > 0 || last.is_some() {
            last = Some((r.unix_ns, held(&st, seg)));
        }
    }
    let total = (window + cwnd + neither) as f64;
    if total > 0.0 {
        f.window_limited_time = window as f64 / total;
        f.cwnd_limited_time = cwnd as f64 / total;
        f.unlimited_time = neither as f64 / total;
        f.traced_ms = total / 1e6;
    }
    f.segment_bytes = seg;
}

/// ACKs seen at the receiver: segments per ACK, timer-sent ACKs, window updates.
fn acks(conn: &[&WireRow], dir: Dir, at: Point, f: &mut WireFindings) {
    let mut last_data: Option<u64> = None;
    let mut last_ack: Option<(u32, u32)> = None;
    let mut acked_seq: Option<u32> = None;
    let (mut segments, mut acks) = (0u64, 0u64);
    for r in conn.iter().filter(|r| r.at == at) {
        if r.dir == dir && r.len > 0 {
            let per = r.gso_size.map_or(1, |g| u64::from(r.len.div_ceil(g.max(1))));
            segments += per;
            last_data = Some(r.unix_ns);
            continue;
        }
        if r.dir == dir || r.len > 0 || r.flags & (flags::SYN | flags::FIN | flags::RST) != 0 {
            continue;
        }
        let Some(ack) = r.ack else { continue };
        let advanced = ack.wrapping_sub(acked_seq.unwrap_or(1));
        if advanced == 0 || advanced >= 1 << 31 {
            if last_ack.is_some_and(|(a, w)| a == ack && w != r.wnd) {
                f.window_updates += 1;
            }
        } else {
            acks += 1;
            let late = last_data.is_some_and(|t| r.unix_ns.saturating_sub(t) >= DELAYED_ACK_NS);
            if late && advanced < 2 * f.segment_bytes.max(1) {
                f.delayed_acks += 1;
            }
        }
        acked_seq = Some(ack);
        last_ack = Some((ack, r.wnd));
    }
    f.segments = segments;
    f.acks = acks;
    f.segments_per_ack = (acks > 0).then(|| segments as f64 / acks as f64);
}

/// Evidence lines of `f`.
pub fn evidence(f: &WireFindings) -> Vec<String> {
    let pct = |x: f64| format!("{:.0}%", x * 100.0);
    let mut out = Vec::new();
    if f.traced_ms > 0.0 {
        out.push(format!(
            "wire: over {:.0} ms of sending, window-limited {} of the time, cwnd-limited {}, neither (window and cwnd had room: the sender did not fill them) {}",
            f.traced_ms,
            pct(f.window_limited_time),
            pct(f.cwnd_limited_time),
            pct(f.unlimited_time)
        ));
    }
    if let Some(r) = f.segments_per_ack {
        out.push(format!(
            "ACKs: {} segments of {} B acknowledged by {} ACKs ({r:.2} segments per ACK), {} sent by the delayed-ACK timer, {} window updates",
            f.segments, f.segment_bytes, f.acks, f.delayed_acks, f.window_updates
        ));
    }
    if f.data_rows > 0 {
        out.push(order_line(f));
    }
    out
}

/// The capture's two counts of segments below the highest sequence, named apart.
pub fn order_line(f: &WireFindings) -> String {
    format!(
        "capture: of {} data rows, {} retransmitted (retx=1: sequence space seen before at the capture point, or a gap older than 3 ms filled, as tshark classifies them) and {} out of order (ooo=1: a gap younger than 3 ms filled — reordering, not loss)",
        f.data_rows, f.retransmitted_rows, f.out_of_order_rows
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ProbeState;

    fn row(t_us: u64, dir: Dir, len: u32, out: u32, wnd: u32, ack: u32) -> WireRow {
        WireRow {
            unix_ns: t_us * 1000,
            at: Point::Host,
            dir,
            conn: 40000,
            seq: 0,
            len,
            ack: Some(ack),
            wnd,
            peer_wnd: Some(4096),
            outstanding: Some(out),
            flags: flags::ACK,
            retransmission: false,
            out_of_order: false,
            gso_size: None,
            probe: Some(ProbeState { cwnd: 100, srtt_us: 10, snd_wnd: 4096 }),
        }
    }

    /// The control connection's hello, first.
    fn control() -> WireRow {
        WireRow { conn: 1, unix_ns: 0, ..row(0, Dir::Up, 44, 44, 65536, 1) }
    }

    /// Two 2 KiB segments fill a 4 KiB window; the ACK of both comes 300 µs later.
    fn stop_and_go(rounds: u32) -> Vec<WireRow> {
        let mut rows = vec![control()];
        for k in 0..rounds {
            let t = u64::from(k) * 400;
            rows.push(row(t, Dir::Up, 2048, 2048, 65536, 1));
            rows.push(row(t + 10, Dir::Up, 2048, 4096, 65536, 1));
            rows.push(row(t + 310, Dir::Down, 0, 0, 4096, 1 + (k + 1) * 4096));
        }
        rows
    }

    #[test]
    fn a_full_window_waiting_for_acks_is_window_limited_time() {
        let f = findings(&stop_and_go(20), Dir::Up).unwrap_or_default();
        // Per round: 10 µs with room, 300 µs full, 90 µs with room after the ACK.
        assert!((f.window_limited_time - 300.0 / 400.0).abs() < 0.01, "{f:?}");
        assert_eq!(f.cwnd_limited_time, 0.0);
        assert_eq!((f.segments, f.acks, f.delayed_acks), (40, 20, 0));
        assert_eq!(f.segments_per_ack, Some(2.0));
        assert!(evidence(&f)[0].contains("window-limited 75%"), "{:?}", evidence(&f));
    }

    #[test]
    fn a_lone_late_ack_is_the_timer_and_a_bare_window_change_is_an_update() {
        let mut rows =
            vec![control(), row(0, Dir::Up, 1448, 1448, 65536, 1), row(1, Dir::Down, 0, 1448, 4096, 1)];
        rows.push(row(50_000, Dir::Down, 0, 0, 4096, 1449));
        rows.push(row(50_100, Dir::Down, 0, 0, 8192, 1449));
        let f = findings(&rows, Dir::Up).unwrap_or_default();
        assert_eq!((f.acks, f.delayed_acks, f.window_updates), (1, 1, 1), "{f:?}");
    }

    #[test]
    fn each_data_connection_gets_its_findings_in_the_order_they_opened() {
        let mut rows = stop_and_go(20);
        let later = stop_and_go(10).into_iter().skip(1).map(|r| WireRow {
            conn: 40001,
            unix_ns: r.unix_ns + 10_000_000,
            ..r
        });
        rows.extend(later);
        // A later run's control connection: 2000 bytes, above the floor of a direction but
        // not a tenth of a data connection.
        rows.push(WireRow { conn: 2, unix_ns: 9_000_000, ..row(0, Dir::Up, 2000, 2000, 65536, 1) });
        let all = per_connection(&rows, Dir::Up);
        let seen: Vec<(u16, u64)> = all.iter().map(|f| (f.connection, f.segments)).collect();
        assert_eq!(seen, vec![(40000, 40), (40001, 20)]);
        assert_eq!(findings(&rows, Dir::Up).map(|f| f.connection), Some(40000), "the busiest");
    }

    #[test]
    fn no_data_no_findings() {
        assert_eq!(findings(&[row(0, Dir::Down, 0, 0, 10, 1)], Dir::Up), None);
        let mut control = row(0, Dir::Up, 4000, 0, 0, 1);
        control.conn = 1;
        let rows = [control, row(1, Dir::Up, 100, 100, 4096, 1)];
        assert_eq!(findings(&rows, Dir::Up), None, "the control connection is left out");
    }
}
