//! Segment-flow plots of traced tests (`--trace`, seed 004 Figures 9, 10, 13, 14): per
//! direction, the segment sizes over the test, the bytes outstanding against the announced
//! window over the test, and a zoomed slice of the two; the evidence lines beside them.
//! Drawn for every test that carries a segment-flow summary, whatever its kind.

use results::segment_flow::FlowDirection;
use results::TestResult;

use super::page::Page;
use crate::param_grid::distinct_labels;
use crate::plot::{tseq, AxisSpec, LineChart, Point, Series};

/// The section, if any test was traced.
pub fn section(p: &mut Page, tests: &[&TestResult]) {
    let traced: Vec<&TestResult> = tests.iter().copied().filter(|t| t.segment_flow.is_some()).collect();
    if traced.is_empty() {
        return;
    }
    p.section("segment-flow", "Segment flow");
    for (t, label) in traced.iter().zip(distinct_labels(&traced)) {
        let Some(flow) = &t.segment_flow else { continue };
        p.open_details(&format!("{label} · {}", t.spec.test.id()), traced.len() <= 6);
        let lost = if flow.lost_events > 0 { format!(", {} lost", flow.lost_events) } else { String::new() };
        p.para(
            "note",
            &format!(
                "{}: {} events from the {} end(s){lost}",
                flow.source,
                flow.events,
                flow.ends.join(" and ")
            ),
        );
        for d in &flow.directions {
            direction(p, &label, d);
        }
        if flow.directions.is_empty() {
            p.para("note", "No direction carried data on the traced ports.");
        }
        p.close_details();
    }
    p.end_section();
}

fn direction(p: &mut Page, label: &str, d: &FlowDirection) {
    p.h3(&format!("{label} {}", d.direction));
    for e in &d.evidence {
        p.para("evidence", e);
    }
    p.open_row();
    if !d.size_series.is_empty() {
        p.plot(&sizes(label, d).render());
    }
    if !d.window_series.is_empty() {
        p.plot(&window(label, d).render());
    }
    if !d.zoom.is_empty() {
        p.plot(&zoom(label, d).render());
    }
    p.close_row();
    if let Some(ts) = &d.time_sequence {
        time_sequence(p, label, ts);
    }
}

/// The paper's panels (a)–(d) of one traced direction as `<svg>`s (seed 004 Figures 9, 10,
/// 14): segment sizes, outstanding bytes against the announced window over the test, and a
/// zoomed slice of the two; panels with no data are left out.
pub fn plots(label: &str, d: &FlowDirection) -> Vec<String> {
    let mut out = Vec::new();
    if !d.size_series.is_empty() {
        out.push(sizes(label, d).render());
    }
    if !d.window_series.is_empty() {
        out.push(window(label, d).render());
    }
    if !d.zoom.is_empty() {
        out.push(zoom(label, d).render());
    }
    out
}

/// The tcptrace-style time-sequence graph (and its zoomed slice when decimated), captioned.
fn time_sequence(p: &mut Page, label: &str, ts: &results::segment_flow::TimeSequence) {
    let title = format!("{label} {}: time-sequence", ts.direction);
    p.open_row();
    p.plot(&tseq::render(&title, &ts.overview, false));
    if let Some(z) = &ts.zoom {
        p.plot(&tseq::render(&format!("{title}, zoomed"), z, true));
    }
    p.close_row();
    p.para("note", &tseq::caption(ts));
}

fn chart(title: String, x: &str, y: &str, series: Vec<Series>) -> LineChart {
    let mut c = LineChart::new(&title, AxisSpec::linear(x), AxisSpec::linear(y));
    c.series = series;
    c.markers = false;
    c
}

fn series(name: &str, points: Vec<Point>) -> Series {
    Series { name: name.into(), points }
}

/// Segment size over the test: the largest and smallest segment of each time bucket.
fn sizes(label: &str, d: &FlowDirection) -> LineChart {
    let at = |f: fn(&results::segment_flow::SizeBucket) -> u32| {
        d.size_series.iter().map(|b| Point::new(b.t_ms / 1e3, f64::from(f(b)))).collect()
    };
    chart(
        format!("{label} {}: segment size", d.direction),
        "time (s)",
        "segment size (bytes)",
        vec![series("largest", at(|b| b.max_bytes)), series("smallest", at(|b| b.min_bytes))],
    )
}

/// Outstanding bytes (most per bucket) against the announced window (least per bucket).
fn window(label: &str, d: &FlowDirection) -> LineChart {
    let pts = |f: fn(&results::segment_flow::WindowBucket) -> u64| {
        d.window_series.iter().map(|b| Point::new(b.t_ms / 1e3, f(b) as f64 / 1024.0)).collect()
    };
    chart(
        format!("{label} {}: outstanding vs announced window", d.direction),
        "time (s)",
        "KiB",
        vec![
            series("announced window", pts(|b| b.window_min_bytes)),
            series("outstanding", pts(|b| b.outstanding_max_bytes)),
        ],
    )
}

/// A slice of consecutive ACKs of the busiest connection, every one drawn.
fn zoom(label: &str, d: &FlowDirection) -> LineChart {
    let pts = |f: fn(&results::segment_flow::WindowSample) -> u64| {
        d.zoom.iter().map(|s| Point::new(s.t_ms, f(s) as f64 / 1024.0)).collect()
    };
    let mut c = chart(
        format!("{label} {}: outstanding vs window, zoomed", d.direction),
        "time (ms)",
        "KiB",
        vec![
            series("announced window", pts(|s| s.window_bytes)),
            series("outstanding", pts(|s| s.outstanding_bytes)),
        ],
    );
    c.x.zero = false;
    c.markers = d.zoom.len() <= 120;
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::segment_flow::{SegmentFlow, SizeBucket, WindowBucket, WindowSample};

    fn traced() -> TestResult {
        let mut t = crate::fixture::stream(8192, 65536, 1.0);
        let d = FlowDirection {
            direction: "client→server".into(),
            data_segments: 2,
            acks: 2,
            evidence: vec!["window-limited: outstanding = announced window in 93% of 2 ACK samples".into()],
            size_series: vec![
                SizeBucket { t_ms: 0.0, min_bytes: 1448, max_bytes: 1448, count: 1 },
                SizeBucket { t_ms: 5.0, min_bytes: 512, max_bytes: 1448, count: 1 },
            ],
            window_series: vec![WindowBucket {
                t_ms: 1.0,
                outstanding_max_bytes: 4096,
                window_min_bytes: 4096,
                ..Default::default()
            }],
            zoom: vec![WindowSample { t_ms: 1.0, outstanding_bytes: 4096, window_bytes: 4096 }],
            ..Default::default()
        };
        t.segment_flow = Some(SegmentFlow {
            source: "tracefs tcp:tcp_probe".into(),
            ends: vec!["client".into()],
            events: 4,
            directions: vec![d],
            ..Default::default()
        });
        t
    }

    fn html(tests: &[&TestResult]) -> String {
        let mut p = Page::new();
        section(&mut p, tests);
        p.finish("t", "")
    }

    #[test]
    fn a_traced_test_gets_three_plots_and_its_evidence() {
        let t = traced();
        let out = html(&[&t]);
        for title in [
            "client→server: segment size",
            "client→server: outstanding vs announced window",
            "client→server: outstanding vs window, zoomed",
        ] {
            assert!(out.contains(title), "{title} missing");
        }
        assert!(out.contains("window-limited: outstanding = announced window in 93%"));
        assert_eq!(out.matches("<figure>").count(), 3);
        let d = &t.segment_flow.as_ref().map(|f| f.directions[0].clone()).unwrap_or_default();
        let svgs = plots("w4k", d);
        assert_eq!(svgs.len(), 3);
        assert!(svgs[0].contains("w4k client→server: segment size"));
        assert!(plots("x", &FlowDirection::default()).is_empty());
    }

    #[test]
    fn a_time_sequence_graph_is_drawn_with_its_caption() {
        use results::segment_flow::{SeqBar, SeqView, TimeSequence};
        let mut t = traced();
        let bar = SeqBar { t_ms: 1.0, seq: 1, end: 1449, retx: false };
        let ts = TimeSequence {
            direction: "client→server".into(),
            at: "client".into(),
            connection: 40002,
            data_segments: 1,
            overview: SeqView { bars: vec![bar], segments: 1, ..SeqView::default() },
            ..TimeSequence::default()
        };
        if let Some(f) = t.segment_flow.as_mut() {
            f.directions[0].time_sequence = Some(ts);
        }
        let out = html(&[&t]);
        assert!(out.contains("client→server: time-sequence"));
        assert!(out.contains("1 data segments of connection 40002 as captured at the client"));
        assert_eq!(out.matches("<figure>").count(), 4);
    }

    #[test]
    fn untraced_tests_get_no_section() {
        let plain = crate::fixture::stream(8192, 65536, 1.0);
        assert!(!html(&[&plain]).contains("Segment flow"));
    }
}
