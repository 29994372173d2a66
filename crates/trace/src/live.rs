//! Per-interval segment-flow summaries while a test runs (the live `--json-stream` events
//! and text lines): per direction, the data segments the receiver got (count, mean and
//! largest size), the ACKs the sender got, the most bytes outstanding against the window,
//! and how long the window was full. Fed the probe rows in time order; intervals close when
//! a row's time passes their end.

use results::segment_flow::FlowInterval;

use crate::segment::{Dir, End, Kind, Segment};

/// One direction's counts in the current interval.
#[derive(Debug, Clone, Copy, Default)]
struct Acc {
    segments: u64,
    bytes: u64,
    max_len: u32,
    acks: u64,
    max_out: u64,
    wnd_at_max: u64,
    full_ns: u64,
    /// The last ACK sample: its time and whether the window was full after it.
    last: Option<(u64, bool)>,
    seg_size: u32,
}

/// Closes intervals of `interval_ns` as rows arrive.
#[derive(Debug, Clone)]
pub struct IntervalMeter {
    interval_ns: u64,
    end_ns: u64,
    acc: [Acc; 2],
}

fn i(d: Dir) -> usize {
    match d {
        Dir::Up => 0,
        Dir::Down => 1,
    }
}

impl IntervalMeter {
    /// A meter of intervals `interval_ns` long (at least 1 ms).
    pub fn new(interval_ns: u64) -> IntervalMeter {
        let interval_ns = interval_ns.max(1_000_000);
        IntervalMeter { interval_ns, end_ns: interval_ns, acc: [Acc::default(); 2] }
    }

    /// Takes `row`; returns the summaries of the intervals it closed (none, or one per
    /// direction that moved anything).
    pub fn push(&mut self, row: &Segment) -> Vec<FlowInterval> {
        let mut closed = Vec::new();
        while row.t_ns >= self.end_ns {
            closed.extend(self.close());
        }
        let a = &mut self.acc[i(row.dir)];
        match (row.kind, row.end, row.dir) {
            (Kind::Data, End::Server, Dir::Up) | (Kind::Data, End::Client, Dir::Down) => {
                a.segments += 1;
                a.bytes += u64::from(row.len);
                a.max_len = a.max_len.max(row.len);
                a.seg_size = a.seg_size.max(row.len);
            }
            (Kind::Ack, End::Client, Dir::Down) => ack(&mut self.acc[0], row),
            (Kind::Ack, End::Server, Dir::Up) => ack(&mut self.acc[1], row),
            _ => {}
        }
        closed
    }

    /// Closes the interval under way (also at the end of the test).
    pub fn close(&mut self) -> Vec<FlowInterval> {
        let t_s = self.end_ns as f64 / 1e9;
        let out = [Dir::Up, Dir::Down].into_iter().filter_map(|d| summary(&self.acc[i(d)], d, t_s)).collect();
        for a in &mut self.acc {
            *a = Acc {
                last: a.last.map(|(_, full)| (self.end_ns, full)),
                seg_size: a.seg_size,
                ..Acc::default()
            };
        }
        self.end_ns += self.interval_ns;
        out
    }
}

/// An ACK sample at the sender of the direction `a` counts.
fn ack(a: &mut Acc, row: &Segment) {
    let Some(st) = row.state else { return };
    a.acks += 1;
    let out = u64::from(st.outstanding());
    if out >= a.max_out {
        a.max_out = out;
        a.wnd_at_max = u64::from(st.snd_wnd);
    }
    if let Some((t, true)) = a.last {
        a.full_ns += row.t_ns.saturating_sub(t);
    }
    let seg = if a.seg_size > 0 { a.seg_size } else { crate::analysis::ASSUMED_SEGMENT_BYTES };
    let full = st.snd_wnd > 0 && st.snd_wnd.saturating_sub(st.outstanding()) < seg;
    a.last = Some((row.t_ns, full));
}

fn summary(a: &Acc, d: Dir, t_s: f64) -> Option<FlowInterval> {
    if a.segments == 0 && a.acks == 0 {
        return None;
    }
    Some(FlowInterval {
        t_s,
        direction: d.name().into(),
        segments: a.segments,
        mean_segment_bytes: if a.segments == 0 { 0.0 } else { a.bytes as f64 / a.segments as f64 },
        max_segment_bytes: a.max_len,
        acks: a.acks,
        acks_per_segment: if a.segments == 0 { 0.0 } else { a.acks as f64 / a.segments as f64 },
        max_outstanding_bytes: a.max_out,
        window_bytes: a.wnd_at_max,
        window_full_ms: a.full_ns as f64 / 1e6,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segment::SocketState;

    fn row(t_ms: u64, end: End, kind: Kind, len: u32, out: u32, wnd: u32) -> Segment {
        let dir = if end == End::Server { Dir::Up } else { Dir::Down };
        let state = SocketState { snd_una: 0, snd_nxt: out, snd_wnd: wnd, ..SocketState::default() };
        Segment { t_ns: t_ms * 1_000_000, end, dir, conn: 1, kind, len, state: Some(state) }
    }

    #[test]
    fn an_interval_counts_segments_acks_and_window_full_time() {
        let mut m = IntervalMeter::new(1_000_000_000);
        assert!(m.push(&row(100, End::Server, Kind::Data, 2048, 0, 0)).is_empty());
        m.push(&row(200, End::Server, Kind::Data, 4096, 0, 0));
        // Full at 300 ms (4096 of 4096 outstanding), not at 700 ms: 400 ms full.
        m.push(&row(300, End::Client, Kind::Ack, 0, 4096, 4096));
        m.push(&row(700, End::Client, Kind::Ack, 0, 0, 4096));
        let closed = m.push(&row(1500, End::Server, Kind::Data, 10, 0, 0));
        assert_eq!(closed.len(), 1);
        let c = &closed[0];
        assert_eq!(
            (c.direction.as_str(), c.segments, c.max_segment_bytes, c.acks),
            ("client→server", 2, 4096, 2)
        );
        assert!((c.mean_segment_bytes - 3072.0).abs() < 1e-9 && (c.acks_per_segment - 1.0).abs() < 1e-9);
        assert_eq!((c.max_outstanding_bytes, c.window_bytes), (4096, 4096));
        assert!((c.window_full_ms - 400.0).abs() < 1e-9, "{c:?}");
        let last = m.close();
        assert_eq!((last.len(), last[0].segments, last[0].t_s), (1, 1, 2.0));
    }
}
