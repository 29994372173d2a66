//! What `segment-cost` shows of its section (seed 004's Figure 4), as a plot and a table of
//! its own that every renderer draws as it is: each side's time per segment by each method
//! on a log-2 size axis, and per size the medians, their 95 % confidence intervals and p99s.

use results::segment_cost::{CostSide, Dist, SegmentCost, Way};
use results::{AxisScale, FigureValue, OwnPlot, OwnTable, PlotAxis, PlotSeries};

/// How each method is picked from a row's (timestamps, tracepoints) pair, as the legend names
/// it (it has room for 17 characters a curve).
type Pick = fn((Option<f64>, Option<f64>)) -> Option<f64>;
const METHODS: [(&str, Pick); 2] = [("timestamps", |(a, _)| a), ("tracepoints", |(_, b)| b)];

/// How both methods measure, under the table.
const ABOUT: &str = "Send: from the send call to the last of its bytes reaching the device, shared over the \
     call's segments. Receive: from a segment entering the stack to the return of the read \
     that copied it (it includes waking the reader). Two methods: timestamps are the \
     kernel's SO_TIMESTAMPING software timestamps; tracepoints pair sys_enter → \
     net_dev_start_xmit and netif_receive_skb → skb_copy_datagram_iovec.";

/// The four curves, titled `title`: each side by each method, µs per segment against
/// message size.
pub fn plot(title: &str, c: &SegmentCost) -> OwnPlot {
    let mut series = Vec::new();
    for (way, side) in c.sides() {
        let Some(side) = side else { continue };
        for (method, pick) in METHODS {
            let points: Vec<[f64; 2]> = side
                .rows
                .iter()
                .filter_map(|r| Some([f64::from(r.size), pick(r.per_segment_ns(way))? / 1e3]))
                .collect();
            if !points.is_empty() {
                let side = if way == Way::Send { "send" } else { "recv" };
                series.push(PlotSeries { name: format!("{side}, {method}"), points });
            }
        }
    }
    OwnPlot {
        title: title.into(),
        x: PlotAxis { label: "message size".into(), scale: AxisScale::Log2Bytes },
        y: PlotAxis { label: "µs per segment".into(), scale: AxisScale::Fitted },
        legend: "side, method".into(),
        series,
    }
}

/// One row per size and side: messages, segments, and each method's median [95 % CI] and
/// p99 per segment; notes on why a method did not run, and how both measure.
pub fn table(c: &SegmentCost) -> OwnTable {
    let head = ["size", "side", "messages", "segments", "SO_TIMESTAMPING median [95 % CI]", "p99"];
    let mut head: Vec<String> = head.iter().map(|h| h.to_string()).collect();
    head.extend(["tracepoints median [95 % CI]".to_string(), "p99".to_string()]);
    let mut rows = Vec::new();
    for (way, side) in c.sides() {
        for r in side.iter().flat_map(|s| &s.rows) {
            let per = r.segments_per_sample(way);
            let (a, a99) = cells(r.timestamping.dist, per);
            let (b, b99) = cells(r.tracepoints.dist, per);
            rows.push(vec![
                FigureValue::Bytes(u64::from(r.size)),
                FigureValue::Text(way.name().into()),
                FigureValue::Count(r.messages),
                FigureValue::Count(u64::from(r.segments)),
                a,
                a99,
                b,
                b99,
            ]);
        }
    }
    let mut notes = notes(c);
    notes.push(ABOUT.into());
    OwnTable { title: "Processing time per segment".into(), head, rows, notes }
}

/// `3.05 µs [2.98–3.11]` and the p99 (in seconds), per segment; `–` when the method has no
/// samples.
fn cells(d: Option<Dist>, per: f64) -> (FigureValue, FigureValue) {
    let us = |ns: f64| model::human::micros(ns / per / 1e3);
    match d {
        Some(d) => (
            FigureValue::Text(format!("{} [{}–{}]", us(d.median_ns), us(d.ci_lo_ns), us(d.ci_hi_ns))),
            FigureValue::Seconds(d.p99_ns / per / 1e9),
        ),
        None => (FigureValue::Text("–".into()), FigureValue::Text("–".into())),
    }
}

/// Why a method did not run, at either end.
fn notes(c: &SegmentCost) -> Vec<String> {
    let mut out = Vec::new();
    for (way, side) in c.sides() {
        let way = way.name();
        match side {
            None => out.push(format!("The {way} side reported no figures.")),
            Some(CostSide { timestamping_off, tracepoints_off, .. }) => {
                for why in [timestamping_off, tracepoints_off].into_iter().flatten() {
                    out.push(format!("{way} side: {why}"));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::segment_cost::{MethodRow, SizeRow};

    fn dist(median_ns: f64) -> Option<Dist> {
        Some(Dist {
            n: 100,
            median_ns,
            p99_ns: median_ns * 2.0,
            ci_lo_ns: median_ns - 10.0,
            ci_hi_ns: median_ns + 10.0,
        })
    }

    fn side(rows: &[(u32, u32, f64)], tracepoints_off: Option<&str>) -> CostSide {
        let rows = rows
            .iter()
            .map(|&(size, segments, ns)| SizeRow {
                size,
                messages: 100,
                segments,
                timestamping: MethodRow { dist: dist(ns), ..MethodRow::default() },
                tracepoints: MethodRow {
                    dist: tracepoints_off.is_none().then(|| dist(ns * 0.9)).flatten(),
                    ..MethodRow::default()
                },
            })
            .collect();
        CostSide {
            mss: 1448,
            rows,
            tracepoints_off: tracepoints_off.map(String::from),
            ..CostSide::default()
        }
    }

    #[test]
    fn curves_per_side_and_method_with_send_shared_over_segments() {
        let c = SegmentCost {
            send: Some(side(&[(64, 1, 3000.0), (4096, 3, 9000.0)], None)),
            receive: Some(side(&[(64, 1, 30_000.0), (4096, 3, 33_000.0)], Some("tracepoints: not root"))),
        };
        let p = plot("t", &c);
        let names: Vec<&str> = p.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["send, timestamps", "send, tracepoints", "recv, timestamps"]);
        assert_eq!(p.series[0].points[1], [4096.0, 3.0], "9 µs over 3 segments");
        assert_eq!(p.series[2].points[1], [4096.0, 33.0], "receive is per segment already");
        let t = table(&c);
        assert_eq!(t.rows.len(), 4);
        assert_eq!(t.rows[3][6], FigureValue::Text("–".into()), "no tracepoint samples at the receiver");
        assert_eq!(t.rows[1][5], FigureValue::Seconds(6e-6), "p99 18 µs over 3 segments");
        assert_eq!(t.notes[0], "receive side: tracepoints: not root");
    }
}
