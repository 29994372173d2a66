//! Processing time per segment against message size (`tcplab segment-cost`, seed 004's
//! Figure 4): per test, the send and receive stack time per segment by both methods on a
//! log-2 size axis, and the table of medians, their 95 % confidence intervals and p99s.
//! Drawn for every test whose summary carries a `segment-cost` section.

use results::segment_cost::{CostSide, Dist, SegmentCost, Way};
use results::TestResult;

use super::page::Page;
use crate::param_grid::distinct_labels;
use crate::plot::{AxisSpec, LineChart, Point, Series};
use crate::tables::Table;

/// The section, if any test measured segment costs.
pub fn section(p: &mut Page, tests: &[&TestResult]) {
    let costed: Vec<(&TestResult, SegmentCost, String)> = tests.iter().flat_map(|t| costs(t)).collect();
    if costed.is_empty() {
        return;
    }
    p.section("segment-cost", "Processing time per segment");
    let only: Vec<&TestResult> = costed.iter().map(|(t, _, _)| *t).collect();
    for ((_, cost, run), label) in costed.iter().zip(distinct_labels(&only)) {
        let label = format!("{label}{run}");
        p.h3(&label);
        p.plot(&chart(&format!("{label}: processing time per segment"), cost).render());
        p.table(&table(cost), true);
        for why in notes(cost) {
            p.para("note", &why);
        }
    }
    p.para(
        "note",
        "Send: from the send call to the last of its bytes reaching the device, shared over the \
         call's segments. Receive: from a segment entering the stack to the return of the read \
         that copied it (it includes waking the reader). Two methods: timestamps are the \
         kernel's SO_TIMESTAMPING software timestamps; tracepoints pair sys_enter → \
         net_dev_start_xmit and netif_receive_skb → skb_copy_datagram_iovec.",
    );
    p.end_section();
}

/// The four curves, titled `title`: each side by each method, µs per segment against
/// segment size.
/// The segment costs of `t`: its own, or, for a repeated test (whose combined summary keeps no
/// one run's section), each iteration's, labelled by run.
fn costs(t: &TestResult) -> Vec<(&TestResult, SegmentCost, String)> {
    if let Some(c) = SegmentCost::of(&t.summary) {
        return vec![(t, c, String::new())];
    }
    let runs = t.repetition.as_ref().map_or(&[][..], |r| &r.runs[..]);
    runs.iter()
        .enumerate()
        .filter_map(|(i, r)| Some((t, SegmentCost::of(&r.summary)?, format!(" · run {}", i + 1))))
        .collect()
}

pub fn chart(title: &str, c: &SegmentCost) -> LineChart {
    let mut chart =
        LineChart::new(title, AxisSpec::sizes("message size"), AxisSpec::linear("µs per segment"));
    chart.legend = "side, method".into();
    for (way, side) in c.sides() {
        let Some(side) = side else { continue };
        for (method, pick) in METHODS {
            let points: Vec<Point> = side
                .rows
                .iter()
                .filter_map(|r| Some(Point::new(f64::from(r.size), pick(r.per_segment_ns(way))? / 1e3)))
                .collect();
            if !points.is_empty() {
                let side = if way == Way::Send { "send" } else { "recv" };
                chart.series.push(Series { name: format!("{side}, {method}"), points });
            }
        }
    }
    chart
}

type Pick = fn((Option<f64>, Option<f64>)) -> Option<f64>;

/// The methods as the legend names them (it has room for 17 characters a curve).
const METHODS: [(&str, Pick); 2] = [("timestamps", |(a, _)| a), ("tracepoints", |(_, b)| b)];

/// One row per size and side: messages, segments, and each method's median [95 % CI] and p99.
fn table(c: &SegmentCost) -> Table {
    let mut t = Table::new(&[
        "size",
        "side",
        "messages",
        "segments",
        "SO_TIMESTAMPING median [95 % CI]",
        "p99",
        "tracepoints median [95 % CI]",
        "p99",
    ]);
    for (way, side) in c.sides() {
        for r in side.iter().flat_map(|s| &s.rows) {
            let per = r.segments_per_sample(way);
            let (a, a99) = cells(r.timestamping.dist, per);
            let (b, b99) = cells(r.tracepoints.dist, per);
            t.rows.push(vec![
                crate::units::bytes(u64::from(r.size)),
                way.name().into(),
                r.messages.to_string(),
                r.segments.to_string(),
                a,
                a99,
                b,
                b99,
            ]);
        }
    }
    t
}

/// `3.05 µs [2.98–3.11]` and the p99, per segment; `–` when the method has no samples.
fn cells(d: Option<Dist>, per: f64) -> (String, String) {
    let us = |ns: f64| model::human::micros(ns / per / 1e3);
    match d {
        Some(d) => (format!("{} [{}–{}]", us(d.median_ns), us(d.ci_lo_ns), us(d.ci_hi_ns)), us(d.p99_ns)),
        None => ("–".into(), "–".into()),
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
        let chart = chart("t", &c);
        let names: Vec<&str> = chart.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["send, timestamps", "send, tracepoints", "recv, timestamps"]);
        assert_eq!(chart.series[0].points[1], Point::new(4096.0, 3.0), "9 µs over 3 segments");
        assert_eq!(chart.series[2].points[1], Point::new(4096.0, 33.0), "receive is per segment already");
        let t = table(&c);
        assert_eq!(t.rows.len(), 4);
        assert_eq!(t.rows[3][6], "–", "no tracepoint samples at the receiver");
        assert_eq!(notes(&c), ["receive side: tracepoints: not root"]);
        assert!(chart.render().contains("<svg"));
    }

    #[test]
    fn a_repeated_test_shows_each_runs_costs() {
        use results::repeat::{ConfidenceTarget, Repetition};
        let c = SegmentCost { send: Some(side(&[(64, 1, 3000.0)], None)), receive: None };
        let mut run = crate::fixture::stream(64, 0, 1.0);
        let value = serde_json::to_value(&c).unwrap_or_default();
        run.summary.sections.insert(results::segment_cost::SECTION.into(), value);
        let mut combined = crate::fixture::stream(64, 0, 1.0);
        let target = ConfidenceTarget {
            level_pct: 99.0,
            width_pct: 5.0,
            min_iterations: 2,
            max_iterations: 2,
            result_only: false,
        };
        let runs = vec![run.clone(), run];
        combined.repetition =
            Some(Repetition { target, iterations: 2, met: true, estimates: Vec::new(), runs });
        let got: Vec<String> = costs(&combined).into_iter().map(|(_, _, label)| label).collect();
        assert_eq!(got, [" · run 1", " · run 2"], "the combined summary keeps no one run's section");
    }
}
