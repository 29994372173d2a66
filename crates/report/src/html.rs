//! The self-contained HTML report (`tcplab report`, `--report FILE`): run metadata and both
//! hosts, summary tables, diagnosis and limits, congestion-control comparisons, sweep and grid plots, latency CDFs and
//! percentiles, CPU / service demand / figure-of-merit bars, throughput and CPU per transfer mode
//! and per-interval timelines.
//! Inline CSS and SVG only: nothing is fetched, the file opens offline.

mod cc;
mod charts;
mod grids;
mod mesh;
mod modes;
mod own;
pub mod page;
mod segment_flow;

use results::{RunRecord, TestResult};

use crate::findings;
use crate::param_grid::distinct_labels;
use crate::tables;
use page::Page;

pub use mesh::heatmap_of as mesh_heatmap;

/// A test type's own plot, titled `label: its title`, as one `<svg>`.
pub fn own_plot(label: &str, plot: &results::OwnPlot) -> String {
    crate::figures::own_chart(label, plot).render()
}

/// Seed 004's segment-flow panels of one traced direction, titled with `label`, one `<svg>`
/// each (segment sizes, outstanding against the announced window, a zoomed slice).
pub fn segment_flow_plots(label: &str, d: &results::segment_flow::FlowDirection) -> Vec<String> {
    segment_flow::plots(label, d)
}

/// Runs with more tests than this get no per-test timelines (a sweep's grid plots say more).
const TIMELINE_MAX_TESTS: usize = 24;

/// The report of `runs` as one HTML document.
pub fn document(runs: &[RunRecord]) -> String {
    let mut p = Page::new();
    let tests: Vec<&TestResult> = runs.iter().flat_map(|r| &r.tests).collect();
    runs_section(&mut p, runs);
    summary_section(&mut p, &tests);
    diagnosis_section(&mut p, &tests);
    cc::section(&mut p, runs);
    grids::section(&mut p, runs);
    mesh::section(&mut p, runs);
    charts::latency_section(&mut p, &tests);
    charts::cpu_section(&mut p, &tests);
    modes::section(&mut p, &tests);
    timelines_section(&mut p, runs);
    segment_flow::section(&mut p, &tests);
    own::section(&mut p, &tests);
    let subtitle =
        format!("{} run{}, {} test{}", runs.len(), plural(runs.len()), tests.len(), plural(tests.len()));
    p.finish("tcplab report", &subtitle)
}

/// The plural ending for `n` of something.
pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn runs_section(p: &mut Page, runs: &[RunRecord]) {
    p.section("runs", "Runs and hosts");
    match runs {
        [run] => {
            p.table(&tables::run_meta(run), false);
            p.table(&tables::hosts(run), false);
        }
        _ => {
            p.table(&tables::runs(runs), false);
            let pairs = tables::host_pairs(runs);
            for (names, hosts) in &pairs {
                if pairs.len() > 1 {
                    p.h3(&format!("Hosts of run {}", names.join(", ")));
                }
                p.table(hosts, false);
            }
        }
    }
    p.end_section();
}

fn summary_section(p: &mut Page, tests: &[&TestResult]) {
    p.section("summary", "Summary");
    let streams = tables::streams(tests);
    if !streams.is_empty() {
        p.h3("Stream tests");
        p.table(&streams, true);
        p.para("note", "goodput = receiver's rate; busy, rwnd-lim and sndbuf-lim from the sender's TCP_INFO (limited shares of busy time).");
    }
    let udp = tables::udp(tests);
    if !udp.is_empty() {
        p.h3("UDP stream tests");
        p.table(&udp, true);
        p.para("note", "sent at = the sender's achieved rate; lost = sent − (received − duplicates), the drained tail included; overrun drops = the receiving socket's drop counter.");
    }
    let rr = tables::rr(tests);
    if !rr.is_empty() {
        p.h3("Request/response tests");
        p.table(&rr, true);
    }
    let figures = tables::figures(tests);
    if !figures.is_empty() {
        p.h3("Figures of each test type");
        p.table(&figures, false);
    }
    let warnings = tables::warnings(tests);
    if !warnings.is_empty() {
        p.h3("Warnings");
        p.table(&warnings, false);
    }
    if tests.is_empty() {
        p.para("note", "No tests in these runs.");
    }
    p.end_section();
}

fn diagnosis_section(p: &mut Page, tests: &[&TestResult]) {
    let parts = [
        ("What limited each result", findings::diagnosis(tests)),
        ("Compared with", findings::references(tests)),
        ("Emulated path", findings::emu(tests)),
    ];
    if parts.iter().all(|(_, t)| t.is_empty()) {
        return;
    }
    p.section("diagnosis", "Diagnosis and limits");
    for (title, table) in parts.iter().filter(|(_, t)| !t.is_empty()) {
        p.h3(title);
        p.table(table, false);
    }
    p.end_section();
}

fn timelines_section(p: &mut Page, runs: &[RunRecord]) {
    let tests: Vec<&TestResult> = runs
        .iter()
        .filter(|r| r.sweep.is_none())
        .flat_map(|r| &r.tests)
        .filter(|t| !t.local.intervals.is_empty())
        .collect();
    if tests.is_empty() || tests.len() > TIMELINE_MAX_TESTS {
        return;
    }
    p.section("timelines", "Timelines");
    for (t, label) in tests.iter().zip(distinct_labels(&tests)) {
        p.open_details(&format!("{label} · {}", t.spec.test.id()), tests.len() <= 6);
        charts::timeline(p, t);
        p.close_details();
    }
    p.end_section();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagnosis_and_limits_render_from_the_typed_fields() {
        use results::{Cause, Diagnosis, Finding, Reference, ReferenceKind};
        let mut r = crate::fixture::stream(8192, 65536, 1.0);
        r.reference = Some(Reference {
            kind: ReferenceKind::Link,
            description: "atm:oc3c · ipv4:tcp".into(),
            limit_bps: 1.345e8,
        });
        r.diagnosis = vec![Diagnosis {
            direction: "client→server".into(),
            primary: Finding {
                cause: Cause::ReceiveWindow,
                weight: 0.93,
                evidence: "rwnd-limited 93% of busy time; 64 KB / 0.3 ms RTT".into(),
                advice: "raise -w".into(),
                bound_bps: None,
            },
            contributing: Vec::new(),
            split: false,
        }];
        let mut p = Page::new();
        diagnosis_section(&mut p, &[&r]);
        let html = p.finish("t", "");
        insta::assert_snapshot!(html.split("<main>").nth(1).unwrap_or_default());
    }

    /// A test type's own figures show in the summary as they are, whatever the type: the
    /// report knows no type's figures by name.
    #[test]
    fn each_tests_own_figures_are_tabled_in_the_summary() {
        use results::{Combine, Figure, FigureValue};
        let mut r = crate::fixture::stream(8192, 65536, 1.0);
        r.summary.figures = vec![
            Figure::new("a type's count", FigureValue::Count(2)).combined(Combine::PerRun),
            Figure::new("a type's bytes", FigureValue::Bytes(3 << 20)),
        ];
        let mut p = Page::new();
        summary_section(&mut p, &[&r]);
        let html = p.finish("t", "");
        assert!(html.contains("Figures of each test type"), "{html}");
        assert!(html.contains("a type&#39;s count") || html.contains("a type's count"), "{html}");
        assert!(html.contains("3.0 MiB") || html.contains("3.00 MiB"), "{html}");
        let plain = crate::fixture::stream(8192, 65536, 1.0);
        let mut p = Page::new();
        summary_section(&mut p, &[&plain]);
        assert!(!p.finish("t", "").contains("Figures of each test type"), "no figures, no table");
    }
}
