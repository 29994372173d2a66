//! The wire segment table → a tcptrace-style time-sequence graph of one direction's busiest
//! data connection, read at the capture point nearest the sender: each data segment a bar
//! from its sequence number to the end of its payload (retransmissions marked), the ACKs of
//! the other direction as stairs, the window edge (ACK + announced window) as stairs, and
//! the SYN, FIN and RST segments. Sequence numbers are unwrapped past 4 GiB.
//!
//! Bounded: up to [`FULL_DETAIL`] segments every one is kept; past that the overview merges
//! segments into [`BUCKETS`] time buckets (per bucket one bar of the new data and one of the
//! retransmitted data, the last ACK and the farthest window edge) and a zoomed slice of
//! [`ZOOM_SEGMENTS`] consecutive segments keeps full detail — around the first
//! retransmission when there is one, else in the middle of the flow.

use results::segment_flow::{SeqAck, SeqBar, SeqMark, SeqView, TimeSequence};
use wire::tcpip::flags;

use crate::segment::Dir;
use crate::wire::{Point, WireRow};
use crate::wire_analysis::{busiest_conn, sender_point};

/// Most data segments drawn one by one.
pub const FULL_DETAIL: usize = 1500;
/// Time buckets of a merged overview.
pub const BUCKETS: usize = 1200;
/// Consecutive segments in the zoomed slice.
pub const ZOOM_SEGMENTS: usize = 300;
/// Most ACKs kept in a view drawn one by one.
const MAX_ACKS: usize = FULL_DETAIL;
/// Most SYN/FIN/RST marks kept.
const MAX_MARKS: usize = 16;

/// Turns wrapping 32-bit sequence numbers into a 64-bit line, each value placed nearest the
/// one before it.
#[derive(Debug, Default, Clone, Copy)]
struct Unwrap {
    last: Option<u64>,
}

impl Unwrap {
    fn at(&mut self, v: u32) -> u64 {
        const WRAP: u64 = 1 << 32;
        let Some(last) = self.last else {
            self.last = Some(u64::from(v));
            return u64::from(v);
        };
        let base = (last & !(WRAP - 1)) + u64::from(v);
        let near = [base.checked_sub(WRAP), Some(base), Some(base + WRAP)]
            .into_iter()
            .flatten()
            .min_by_key(|c| c.abs_diff(last))
            .unwrap_or(base);
        self.last = Some(near);
        near
    }
}

/// One direction's segments and ACKs at full detail, unwrapped.
#[derive(Debug, Default)]
struct Detail {
    bars: Vec<SeqBar>,
    acks: Vec<SeqAck>,
    marks: Vec<SeqMark>,
}

fn ms(unix_ns: u64, origin_unix_ns: u64) -> f64 {
    unix_ns.saturating_sub(origin_unix_ns) as f64 / 1e6
}

/// Reads the rows of one connection at one point.
fn detail(rows: &[&WireRow], dir: Dir, origin_unix_ns: u64) -> Detail {
    let (mut seq, mut ack) = (Unwrap::default(), Unwrap::default());
    let mut d = Detail::default();
    for r in rows {
        let t_ms = ms(r.unix_ns, origin_unix_ns);
        if r.dir == dir {
            let s = seq.at(r.seq);
            if r.len > 0 {
                d.bars.push(SeqBar { t_ms, seq: s, end: s + u64::from(r.len), retx: r.retransmission });
            }
            mark(&mut d.marks, r, t_ms, s);
        } else if let Some(a) = r.ack {
            let a = ack.at(a);
            d.acks.push(SeqAck { t_ms, ack: a, window_end: a + u64::from(r.wnd) });
        }
    }
    d
}

fn mark(marks: &mut Vec<SeqMark>, r: &WireRow, t_ms: f64, seq: u64) {
    let flag = if r.flags & flags::SYN != 0 {
        "SYN"
    } else if r.flags & flags::FIN != 0 {
        "FIN"
    } else if r.flags & flags::RST != 0 {
        "RST"
    } else {
        return;
    };
    if marks.len() < MAX_MARKS {
        let at = if flag == "SYN" { seq } else { seq + u64::from(r.len) };
        marks.push(SeqMark { t_ms, seq: at, flag: flag.into() });
    }
}

/// The graph of direction `dir`, or `None` when it carried no data; times in ms from
/// `origin_unix_ns` (the wire table's origin).
pub fn build(rows: &[WireRow], dir: Dir, origin_unix_ns: u64) -> Option<TimeSequence> {
    let conn = busiest_conn(rows, dir)?;
    let mut points: Vec<Point> = Vec::new();
    for r in rows {
        if !points.contains(&r.at) {
            points.push(r.at);
        }
    }
    let at = sender_point(dir, &points)?;
    let mine: Vec<&WireRow> = rows.iter().filter(|r| r.conn == conn && r.at == at).collect();
    let d = detail(&mine, dir, origin_unix_ns);
    if d.bars.is_empty() {
        return None;
    }
    let (overview, zoom) = if d.bars.len() <= FULL_DETAIL && d.acks.len() <= MAX_ACKS {
        (full(&d.bars, &d.acks, d.marks.clone()), None)
    } else {
        (bucketed(&d), Some(zoomed(&d)))
    };
    Some(TimeSequence {
        direction: dir.name().into(),
        at: at.name().into(),
        connection: conn,
        data_segments: d.bars.len() as u64,
        retransmissions: d.bars.iter().filter(|b| b.retx).count() as u64,
        overview,
        zoom,
    })
}

fn full(bars: &[SeqBar], acks: &[SeqAck], marks: Vec<SeqMark>) -> SeqView {
    SeqView { bucket_ms: None, segments: bars.len() as u64, bars: bars.to_vec(), acks: acks.to_vec(), marks }
}

/// The slice of consecutive segments shown in full detail.
fn zoomed(d: &Detail) -> SeqView {
    let n = d.bars.len();
    let centre = d.bars.iter().position(|b| b.retx).unwrap_or(n / 2);
    let start = centre.saturating_sub(ZOOM_SEGMENTS / 6).min(n.saturating_sub(ZOOM_SEGMENTS));
    let bars = &d.bars[start..(start + ZOOM_SEGMENTS).min(n)];
    let (t0, t1) = (bars.first().map_or(0.0, |b| b.t_ms), bars.last().map_or(0.0, |b| b.t_ms));
    let from = d.acks.partition_point(|a| a.t_ms < t0).saturating_sub(1);
    let acks: Vec<SeqAck> =
        d.acks[from..].iter().take_while(|a| a.t_ms <= t1).take(2 * ZOOM_SEGMENTS).copied().collect();
    let marks = d.marks.iter().filter(|m| m.t_ms >= t0 && m.t_ms <= t1).cloned().collect();
    full(bars, &acks, marks)
}

/// Per bucket: the span of new data, the span of retransmitted data, the last ACK with the
/// farthest window edge.
#[derive(Debug, Clone, Copy, Default)]
struct Bucket {
    new: Option<(u64, u64)>,
    retx: Option<(u64, u64)>,
    ack: Option<SeqAck>,
}

fn widen(span: &mut Option<(u64, u64)>, b: &SeqBar) {
    *span = Some(match *span {
        Some((lo, hi)) => (lo.min(b.seq), hi.max(b.end)),
        None => (b.seq, b.end),
    });
}

/// The whole flow merged into [`BUCKETS`] time buckets.
fn bucketed(d: &Detail) -> SeqView {
    let t0 = d.bars.iter().map(|b| b.t_ms).chain(d.acks.iter().map(|a| a.t_ms)).fold(f64::INFINITY, f64::min);
    let t1 = d.bars.iter().map(|b| b.t_ms).chain(d.acks.iter().map(|a| a.t_ms)).fold(0.0, f64::max);
    let width = ((t1 - t0) / BUCKETS as f64).max(1e-3);
    let index = |t: f64| (((t - t0) / width) as usize).min(BUCKETS - 1);
    let mut buckets = vec![Bucket::default(); BUCKETS];
    for b in &d.bars {
        let k = &mut buckets[index(b.t_ms)];
        widen(if b.retx { &mut k.retx } else { &mut k.new }, b);
    }
    for a in &d.acks {
        let k = &mut buckets[index(a.t_ms)];
        let edge = k.ack.map_or(a.window_end, |p| p.window_end.max(a.window_end));
        k.ack = Some(SeqAck { window_end: edge, ..*a });
    }
    let mut view = SeqView { bucket_ms: Some(width), segments: d.bars.len() as u64, ..SeqView::default() };
    for (i, k) in buckets.iter().enumerate() {
        let t_ms = t0 + i as f64 * width;
        for (span, retx) in [(k.new, false), (k.retx, true)] {
            if let Some((seq, end)) = span {
                view.bars.push(SeqBar { t_ms, seq, end, retx });
            }
        }
        if let Some(a) = k.ack {
            view.acks.push(SeqAck { t_ms: t_ms + width, ..a });
        }
    }
    view.marks = d.marks.clone();
    view
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(
        t_us: u64,
        dir: Dir,
        conn: u16,
        (seq, len): (u32, u32),
        ack: Option<u32>,
        wnd: u32,
        f: u8,
    ) -> WireRow {
        WireRow {
            unix_ns: 1_000_000_000 + t_us * 1000,
            at: Point::Client,
            dir,
            conn,
            seq,
            len,
            ack,
            wnd,
            peer_wnd: None,
            outstanding: None,
            flags: f,
            retransmission: false,
            out_of_order: false,
            gso_size: None,
            probe: None,
        }
    }

    /// A control connection, then a data connection: SYN, three data segments (the third a
    /// retransmission of the second), two ACKs, a FIN.
    fn recorded() -> Vec<WireRow> {
        let (up, down, a) = (Dir::Up, Dir::Down, flags::ACK);
        let mut rows = vec![
            row(0, up, 40000, (0, 10), None, 100, flags::SYN),
            row(10, up, 40002, (0, 0), None, 64000, flags::SYN),
            row(20, down, 40002, (0, 0), Some(1), 65000, flags::SYN | a),
            row(30, up, 40002, (1, 30000), Some(1), 64000, a),
            row(40, up, 40002, (30001, 30000), Some(1), 64000, a),
            row(50, down, 40002, (1, 0), Some(30001), 60000, a),
            row(60, up, 40002, (30001, 30000), Some(1), 64000, a),
            row(70, down, 40002, (1, 0), Some(60001), 65000, a),
            row(80, up, 40002, (60001, 0), Some(1), 64000, flags::FIN | a),
        ];
        rows[6].retransmission = true;
        rows
    }

    #[test]
    fn a_recorded_table_gives_its_bars_stairs_and_marks() {
        let ts = build(&recorded(), Dir::Up, 1_000_000_000).unwrap_or_else(|| unreachable!());
        assert_eq!(
            (ts.connection, ts.at.as_str(), ts.data_segments, ts.retransmissions),
            (40002, "client", 3, 1)
        );
        let v = &ts.overview;
        assert_eq!(v.bucket_ms, None);
        assert!(ts.zoom.is_none());
        let bars: Vec<(f64, u64, u64, bool)> =
            v.bars.iter().map(|b| (b.t_ms, b.seq, b.end, b.retx)).collect();
        assert_eq!(
            bars,
            vec![(0.03, 1, 30001, false), (0.04, 30001, 60001, false), (0.06, 30001, 60001, true)]
        );
        let acks: Vec<(f64, u64, u64)> = v.acks.iter().map(|a| (a.t_ms, a.ack, a.window_end)).collect();
        assert_eq!(acks, vec![(0.02, 1, 65001), (0.05, 30001, 90001), (0.07, 60001, 125001)]);
        let marks: Vec<(u64, &str)> = v.marks.iter().map(|m| (m.seq, m.flag.as_str())).collect();
        assert_eq!(marks, vec![(0, "SYN"), (60001, "FIN")]);
        assert!(build(&recorded(), Dir::Down, 0).is_none(), "no data the other way");
    }

    #[test]
    fn a_long_flow_is_bucketed_with_a_zoomed_slice_and_unwrapped() {
        let mut rows = vec![row(0, Dir::Up, 40000, (0, 10), None, 100, flags::SYN)];
        let n = 100_000u32;
        for i in 0..n {
            let seq = i.wrapping_mul(65536);
            rows.push(row(10 + u64::from(i) * 100, Dir::Up, 40002, (seq, 65536), Some(1), 64000, flags::ACK));
            let ack = Some(seq.wrapping_add(65536));
            rows.push(row(60 + u64::from(i) * 100, Dir::Down, 40002, (1, 0), ack, 1 << 20, flags::ACK));
        }
        let ts = build(&rows, Dir::Up, 1_000_000_000).unwrap_or_else(|| unreachable!());
        assert_eq!(ts.data_segments, u64::from(n));
        let v = &ts.overview;
        assert!(v.bucket_ms.is_some_and(|w| w > 8.0 && w < 8.4), "{:?}", v.bucket_ms);
        assert!(v.bars.len() <= BUCKETS && v.acks.len() <= BUCKETS);
        let top = v.bars.iter().map(|b| b.end).max().unwrap_or(0);
        assert_eq!(top, u64::from(n) * 65536, "6.1 GiB of sequence space, unwrapped");
        assert!(v.bars.windows(2).all(|w| w[0].end == w[1].seq), "buckets join without a gap");
        let z = ts.zoom.unwrap_or_else(|| unreachable!());
        assert_eq!((z.bucket_ms, z.bars.len()), (None, ZOOM_SEGMENTS));
        assert!(z.bars.windows(2).all(|w| w[1].seq == w[0].end));
        assert!(!z.acks.is_empty() && z.acks.len() <= ZOOM_SEGMENTS + 1);
    }

    #[test]
    fn unwrap_follows_the_nearest_value() {
        let mut u = Unwrap::default();
        let max = u64::from(u32::MAX);
        assert_eq!(
            [u.at(10), u.at(u32::MAX - 5), u.at(3), u.at(u32::MAX)],
            [10, max - 5, (1 << 32) + 3, max]
        );
    }
}
