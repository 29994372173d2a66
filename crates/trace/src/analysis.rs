//! What a test's segment rows say, per direction the data flowed (seed 004's Figures 9, 10,
//! 13 and 14): the segment sizes, the bytes outstanding against the announced window, how
//! often the window (or cwnd) was what held the sender, and stop-and-go cycles — each
//! finding as an evidence line with its numbers. The time series are bucketed so that the
//! summary of a test holds at most [`POINT_BUDGET`] points whatever its length.

use std::collections::HashMap;

use results::segment_flow::{FlowDirection, SizeBucket, SizeCount, StopAndGo, WindowBucket, WindowSample};

use crate::segment::{Dir, End, Kind, Segment, SocketState};

/// Most points (size and window buckets and zoom samples) of all directions together.
pub const POINT_BUDGET: usize = 4800;
/// Most consecutive ACK samples in the zoomed slice of one direction.
pub const ZOOM_POINTS: usize = 300;
/// Fewest samples the zoomed slice shows when the flow has them (a stalled flow's middle
/// tenth may hold one).
pub const ZOOM_MIN: usize = 24;
/// The segment size assumed when the receiver's end was not traced (Ethernet MSS with
/// timestamps).
pub const ASSUMED_SEGMENT_BYTES: u32 = 1448;
/// A direction that moved fewer bytes than this (hellos) is not analysed.
pub const MIN_DIRECTION_BYTES: u64 = 1024;
/// Share of ACK samples at the window from which the evidence says "window-limited".
pub const LIMITED_SHARE: f64 = 0.5;
/// A gap before an ACK shorter than this is not idle time.
pub const IDLE_FLOOR_NS: u64 = 50_000;
/// Fewest cycles, and smallest share of the ACK samples, that make a flow stop-and-go.
pub const STOP_AND_GO_MIN_CYCLES: u64 = 5;
/// See [`STOP_AND_GO_MIN_CYCLES`].
pub const STOP_AND_GO_SHARE: f64 = 0.25;
/// Most distinct sizes kept in the histogram.
const TOP_SIZES: usize = 8;

/// A sample of the sender: an arrival at its socket.
#[derive(Debug, Clone, Copy)]
struct Sample {
    t_ns: u64,
    conn: u16,
    st: SocketState,
}

/// Each direction that carried data, client→server first.
pub fn directions(rows: &[Segment]) -> Vec<FlowDirection> {
    let present: Vec<Dir> = [Dir::Up, Dir::Down].into_iter().filter(|d| carried(rows, *d)).collect();
    let budget = POINT_BUDGET / present.len().max(1);
    present.into_iter().map(|d| direction(rows, d, budget)).collect()
}

fn sender_of(dir: Dir) -> End {
    match dir {
        Dir::Up => End::Client,
        Dir::Down => End::Server,
    }
}

fn data_rows(rows: &[Segment], dir: Dir) -> impl Iterator<Item = &Segment> {
    rows.iter().filter(move |r| r.kind == Kind::Data && r.dir == dir)
}

fn samples(rows: &[Segment], dir: Dir) -> Vec<Sample> {
    let end = sender_of(dir);
    let mut out: Vec<Sample> = rows
        .iter()
        .filter(|r| r.end == end)
        .filter_map(|r| r.state.map(|st| Sample { t_ns: r.t_ns, conn: r.conn, st }))
        .collect();
    out.sort_by_key(|s| s.t_ns);
    out
}

/// Whether more than the hellos went this way: seen arriving, or acknowledged at the sender.
fn carried(rows: &[Segment], dir: Dir) -> bool {
    let arrived: u64 = data_rows(rows, dir).map(|r| u64::from(r.len)).sum();
    let mut acked: HashMap<u16, u32> = HashMap::new();
    for s in samples(rows, dir) {
        let e = acked.entry(s.conn).or_default();
        *e = (*e).max(s.st.snd_una);
    }
    arrived.max(acked.values().map(|&v| u64::from(v)).sum()) >= MIN_DIRECTION_BYTES
}

fn direction(rows: &[Segment], dir: Dir, budget: usize) -> FlowDirection {
    let data: Vec<&Segment> = data_rows(rows, dir).collect();
    let sent = samples(rows, dir);
    let sizes = histogram(&data);
    let seen = sizes.first().map(|s| s.bytes);
    let seg = seen.unwrap_or(ASSUMED_SEGMENT_BYTES);
    let mut conns: Vec<u16> = data.iter().map(|r| r.conn).chain(sent.iter().map(|s| s.conn)).collect();
    conns.sort_unstable();
    conns.dedup();
    let window_share = share(&sent, |s| at_window(&s.st, seg));
    let cwnd_share = share(&sent, |s| at_cwnd(&s.st, seg));
    let stop = stop_and_go(&sent, seg);
    let retransmissions = rows.iter().filter(|r| r.kind == Kind::Retransmit && r.dir == dir).count() as u64;
    let span = rows.last().map_or(0, |r| r.t_ns).max(1);
    let zoom_n = ZOOM_POINTS.min(budget / 10);
    let buckets = budget.saturating_sub(zoom_n) / 2;
    let mut flow = FlowDirection {
        direction: dir.name().into(),
        connections: u32::try_from(conns.len()).unwrap_or(u32::MAX),
        data_segments: data.len() as u64,
        acks: sent.len() as u64,
        retransmissions,
        sizes,
        segment_bytes: seg,
        window_limited_share: window_share,
        cwnd_limited_share: cwnd_share,
        stop_and_go: stop,
        evidence: Vec::new(),
        size_series: size_series(&data, span, buckets),
        window_series: window_series(&sent, span, buckets),
        zoom: zoom(&sent, zoom_n),
        wire: None,
        wire_connections: Vec::new(),
        time_sequence: None,
    };
    flow.evidence = evidence(&flow, seen.is_some());
    flow
}

/// The most common sizes, most frequent first (ties: larger first).
fn histogram(data: &[&Segment]) -> Vec<SizeCount> {
    let mut counts: HashMap<u32, u64> = HashMap::new();
    for r in data {
        *counts.entry(r.len).or_default() += 1;
    }
    let mut v: Vec<SizeCount> = counts.into_iter().map(|(bytes, count)| SizeCount { bytes, count }).collect();
    v.sort_by(|a, b| b.count.cmp(&a.count).then(b.bytes.cmp(&a.bytes)));
    v.truncate(TOP_SIZES);
    v
}

/// Less than one segment of the announced window left: the sender may not send a full one.
fn at_window(st: &SocketState, seg: u32) -> bool {
    st.snd_wnd > 0 && st.snd_wnd.saturating_sub(st.outstanding()) < seg
}

/// Less than one segment of cwnd (segments × `seg`) left.
fn at_cwnd(st: &SocketState, seg: u32) -> bool {
    let cwnd_bytes = u64::from(st.cwnd) * u64::from(seg);
    st.cwnd > 0 && cwnd_bytes.saturating_sub(u64::from(st.outstanding())) < u64::from(seg)
}

fn share(sent: &[Sample], test: impl Fn(&Sample) -> bool) -> Option<f64> {
    (!sent.is_empty()).then(|| sent.iter().filter(|s| test(s)).count() as f64 / sent.len() as f64)
}

/// ACKs that arrived to a full window after an idle gap and released at least half of it:
/// the sender had stopped, and went on only when the ACK came.
fn stop_and_go(sent: &[Sample], seg: u32) -> Option<StopAndGo> {
    let mut by_conn: HashMap<u16, Vec<&Sample>> = HashMap::new();
    for s in sent {
        by_conn.entry(s.conn).or_default().push(s);
    }
    let mut gaps: Vec<u64> = Vec::new();
    for conn in by_conn.values() {
        for w in conn.windows(3) {
            let (a, b, c) = (w[0], w[1], w[2]);
            let gap = b.t_ns.saturating_sub(a.t_ns);
            let released = c.st.snd_una.wrapping_sub(b.st.snd_una);
            if at_window(&b.st, seg)
                && gap >= IDLE_FLOOR_NS
                && released >= b.st.snd_wnd / 2
                && released < 1 << 31
            {
                gaps.push(gap);
            }
        }
    }
    let cycles = gaps.len() as u64;
    let share = cycles as f64 / sent.len().max(1) as f64;
    if cycles < STOP_AND_GO_MIN_CYCLES || share < STOP_AND_GO_SHARE {
        return None;
    }
    gaps.sort_unstable();
    let median_idle_us = gaps[gaps.len() / 2] as f64 / 1e3;
    Some(StopAndGo { cycles, share, median_idle_us })
}

fn bucket_of(t_ns: u64, span: u64, n: usize) -> usize {
    let i = (u128::from(t_ns) * n as u128 / u128::from(span.max(1))) as usize;
    i.min(n.saturating_sub(1))
}

fn t_ms_of(i: usize, span: u64, n: usize) -> f64 {
    i as f64 * span as f64 / n.max(1) as f64 / 1e6
}

fn size_series(data: &[&Segment], span: u64, n: usize) -> Vec<SizeBucket> {
    let mut b: Vec<Option<SizeBucket>> = vec![None; n];
    for r in data {
        let i = bucket_of(r.t_ns, span, n);
        let Some(slot) = b.get_mut(i) else { continue };
        let e = slot.get_or_insert(SizeBucket {
            t_ms: t_ms_of(i, span, n),
            min_bytes: r.len,
            max_bytes: r.len,
            count: 0,
        });
        e.min_bytes = e.min_bytes.min(r.len);
        e.max_bytes = e.max_bytes.max(r.len);
        e.count += 1;
    }
    b.into_iter().flatten().collect()
}

fn window_series(sent: &[Sample], span: u64, n: usize) -> Vec<WindowBucket> {
    let mut b: Vec<Option<WindowBucket>> = vec![None; n];
    for s in sent {
        let i = bucket_of(s.t_ns, span, n);
        let (out, wnd) = (u64::from(s.st.outstanding()), u64::from(s.st.snd_wnd));
        let Some(slot) = b.get_mut(i) else { continue };
        let e = slot.get_or_insert(WindowBucket {
            t_ms: t_ms_of(i, span, n),
            outstanding_min_bytes: out,
            outstanding_max_bytes: out,
            window_min_bytes: wnd,
            window_max_bytes: wnd,
        });
        e.outstanding_min_bytes = e.outstanding_min_bytes.min(out);
        e.outstanding_max_bytes = e.outstanding_max_bytes.max(out);
        e.window_min_bytes = e.window_min_bytes.min(wnd);
        e.window_max_bytes = e.window_max_bytes.max(wnd);
    }
    b.into_iter().flatten().collect()
}

/// At most `n` consecutive samples of the busiest connection from the middle tenth of its
/// life in time, centred on its middle (or, when that tenth holds fewer than [`ZOOM_MIN`], the
/// [`ZOOM_MIN`] samples nearest the middle). In time, not in samples: a flow that bursts as it
/// opens and then stalls has most of its samples in its first moments, and its middle sample
/// would show the opening, not the stalls.
fn zoom(sent: &[Sample], n: usize) -> Vec<WindowSample> {
    let mut counts: HashMap<u16, usize> = HashMap::new();
    sent.iter().for_each(|s| *counts.entry(s.conn).or_default() += 1);
    let Some((&busiest, _)) = counts.iter().max_by_key(|(c, n)| (**n, **c)) else { return Vec::new() };
    let conn: Vec<&Sample> = sent.iter().filter(|s| s.conn == busiest).collect();
    let (first, last) = (conn.first().map_or(0, |s| s.t_ns), conn.last().map_or(0, |s| s.t_ns));
    let (mid, tenth) = (first + (last - first) / 2, (last - first) / 20);
    let at = |t: u64| conn.partition_point(|s| s.t_ns < t);
    let (mut from, mut to, middle) = (at(mid - tenth), at(mid + tenth + 1), at(mid));
    let want = ZOOM_MIN.min(n).min(conn.len());
    if to - from < want {
        // A sparse middle (a flow stalled on timers): the samples nearest it instead.
        from = middle.saturating_sub(want / 2).min(conn.len() - want);
        to = from + want;
    }
    let start = middle.saturating_sub(n / 2).max(from).min(to - 1);
    let end = (start + n).min(to);
    conn[start..end]
        .iter()
        .map(|s| WindowSample {
            t_ms: s.t_ns as f64 / 1e6,
            outstanding_bytes: u64::from(s.st.outstanding()),
            window_bytes: u64::from(s.st.snd_wnd),
        })
        .collect()
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

fn evidence(f: &FlowDirection, size_seen: bool) -> Vec<String> {
    let mut out = Vec::new();
    match f.sizes.first() {
        Some(top) => out.push(format!(
            "segments: {} data segments, most often {} B ({}), largest {} B",
            f.data_segments,
            top.bytes,
            pct(top.count as f64 / f.data_segments.max(1) as f64),
            f.sizes.iter().map(|s| s.bytes).max().unwrap_or(top.bytes)
        )),
        None => out.push("segment sizes not seen: the receiver's end was not traced".into()),
    }
    let seg =
        if size_seen { format!("{} B", f.segment_bytes) } else { format!("{} B, assumed", f.segment_bytes) };
    if let Some(w) = f.window_limited_share {
        let verdict = if w >= LIMITED_SHARE { "window-limited" } else { "not window-limited" };
        out.push(format!(
            "{verdict}: outstanding = announced window (within one segment, {seg}) in {} of {} ACK samples",
            pct(w),
            f.acks
        ));
    }
    if let Some(c) = f.cwnd_limited_share.filter(|c| *c >= LIMITED_SHARE) {
        out.push(format!(
            "cwnd-limited: outstanding = cwnd (within one segment) in {} of {} ACK samples",
            pct(c),
            f.acks
        ));
    }
    if let Some(s) = f.stop_and_go {
        out.push(format!(
            "stop-and-go: {} ACKs ({} of samples) arrived to a full window after a median {:.0} µs gap and released at least half of it",
            s.cycles,
            pct(s.share),
            s.median_idle_us
        ));
    }
    if f.retransmissions > 0 {
        out.push(retransmission_line(f.retransmissions));
    }
    out
}

/// What the trace's retransmission count counts, beside TCP_INFO's and the capture's.
fn retransmission_line(n: u64) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!(
        "{n} retransmitted skb{s} (tcp:tcp_retransmit_skb events while traced; an skb can hold several \
         segments, while TCP_INFO's retr counts the sender's retransmitted segments over the whole \
         test, and the capture's retx=1 rows the segments resent as seen at the capture point, \
         reordered ones being ooo=1 instead)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_retransmission_count_says_what_it_counts() {
        let f = FlowDirection { retransmissions: 14, ..FlowDirection::default() };
        let lines = evidence(&f, false);
        let line = lines.iter().find(|l| l.starts_with("14 retransmitted skbs")).unwrap();
        assert!(
            line.contains("tcp:tcp_retransmit_skb")
                && line.contains("TCP_INFO's retr counts the sender's retransmitted segments")
                && line.contains("ooo=1"),
            "{line}"
        );
        assert!(retransmission_line(1).starts_with("1 retransmitted skb ("));
    }

    fn ack(t_us: u64, una: u32, nxt: u32, wnd: u32) -> Segment {
        let st = SocketState {
            snd_una: una,
            snd_nxt: nxt,
            snd_wnd: wnd,
            rcv_wnd: 65536,
            cwnd: 100,
            ssthresh: 7,
            srtt_us: 100,
        };
        Segment {
            t_ns: t_us * 1000,
            end: End::Client,
            dir: Dir::Down,
            conn: 40000,
            kind: Kind::Ack,
            len: 0,
            state: Some(st),
        }
    }

    fn data(t_us: u64, len: u32) -> Segment {
        let st = SocketState { rcv_wnd: 4096, ..SocketState::default() };
        Segment {
            t_ns: t_us * 1000,
            end: End::Server,
            dir: Dir::Up,
            conn: 40000,
            kind: Kind::Data,
            len,
            state: Some(st),
        }
    }

    /// A 4 KiB window filled by two 2 KiB segments, then a 300 µs wait for the ACK that
    /// acknowledges all of it: `rounds` times.
    fn stop_and_go_flow(rounds: u32) -> Vec<Segment> {
        let mut rows = Vec::new();
        for k in 0..rounds {
            let t = u64::from(k) * 400;
            rows.push(data(t + 10, 2048));
            rows.push(data(t + 20, 2048));
            rows.push(ack(t + 320, k * 4096, k * 4096 + 4096, 4096));
        }
        rows
    }

    #[test]
    fn a_full_window_and_idle_gaps_are_window_limited_stop_and_go() {
        let f = directions(&stop_and_go_flow(50));
        assert_eq!(f.len(), 1, "only client→server carried data");
        let up = &f[0];
        assert_eq!((up.direction.as_str(), up.data_segments, up.acks), ("client→server", 100, 50));
        assert_eq!(up.sizes, vec![SizeCount { bytes: 2048, count: 100 }]);
        assert_eq!(up.window_limited_share, Some(1.0));
        let s = up.stop_and_go.unwrap_or_default();
        // The first and the last ACK have no neighbour on one side.
        assert_eq!(s.cycles, 48);
        assert!((s.median_idle_us - 400.0).abs() < 1e-9, "{s:?}");
        assert!(
            up.evidence.iter().any(|e| e.starts_with("window-limited: outstanding = announced window")
                && e.contains("100% of 50")),
            "{:?}",
            up.evidence
        );
        assert!(up.evidence.iter().any(|e| e.starts_with("stop-and-go: 48 ACKs")), "{:?}", up.evidence);
    }

    #[test]
    fn a_window_with_room_is_neither() {
        let rows: Vec<Segment> =
            (0..60u32).map(|k| ack(u64::from(k) * 10, k * 1448, k * 1448 + 8 * 1448, 64 * 1448)).collect();
        let f = directions(&rows);
        let up = &f[0];
        assert_eq!(up.window_limited_share, Some(0.0));
        assert_eq!(up.stop_and_go, None);
        assert_eq!(up.segment_bytes, ASSUMED_SEGMENT_BYTES);
        assert!(
            up.evidence[0].contains("not traced") && up.evidence[1].starts_with("not window-limited"),
            "{:?}",
            up.evidence
        );
    }

    #[test]
    fn the_zoom_shows_the_middle_of_the_flow_in_time() {
        // 1000 ACKs in the first 10 ms as the window opens, then one every 200 ms for 20 s
        // (a stall on the persist timer): the middle in time is in the stalls.
        let mut rows: Vec<Segment> = (0..1000u32).map(|k| ack(u64::from(k) * 10, k, k + 1, 65536)).collect();
        rows.extend((0..100u32).map(|k| ack(10_000 + u64::from(k) * 200_000, 1000 + k, 1001 + k, 8192)));
        let f = directions(&rows);
        let z = &f[0].zoom;
        assert_eq!(z.len(), ZOOM_MIN, "the middle tenth holds 10: the 24 nearest the middle");
        let mid = z[z.len() / 2].t_ms;
        assert!((9_000.0..=11_000.0).contains(&mid), "zoom centred at {mid} ms, not in the stalls");
        assert!(z.iter().all(|w| w.window_bytes == 8192), "{z:?}");
    }

    #[test]
    fn hellos_alone_are_no_direction() {
        assert!(directions(&[data(1, 44), ack(2, 0, 44, 65536)]).is_empty());
    }

    #[test]
    fn long_traces_stay_within_the_point_budget() {
        let f = directions(&stop_and_go_flow(20_000));
        let points: usize =
            f.iter().map(|d| d.size_series.len() + d.window_series.len() + d.zoom.len()).sum();
        assert!(points <= POINT_BUDGET, "{points}");
        assert_eq!(f[0].zoom.len(), ZOOM_POINTS);
        assert!(f[0].size_series.iter().all(|b| b.min_bytes == 2048 && b.max_bytes == 2048));
        assert!(f[0].window_series.iter().all(|b| b.outstanding_max_bytes <= b.window_max_bytes));
        let total: u32 = f[0].size_series.iter().map(|b| b.count).sum();
        assert_eq!(u64::from(total), f[0].data_segments, "every segment lands in a bucket");
    }
}
