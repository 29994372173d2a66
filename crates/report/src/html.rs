//! The self-contained HTML report (`tcplab report`, `--report FILE`): run metadata and both
//! hosts, summary tables, diagnosis and limits, sweep and grid plots, latency CDFs and
//! percentiles, CPU / service demand / figure-of-merit bars and per-interval timelines.
//! Inline CSS and SVG only: nothing is fetched, the file opens offline.

mod charts;
mod grids;
mod page;

use results::{RunRecord, TestResult};

use crate::extras;
use crate::param_grid::distinct_labels;
use crate::tables;
use page::Page;

/// Runs with more tests than this get no per-test timelines (a sweep's grid plots say more).
const TIMELINE_MAX_TESTS: usize = 24;

/// The report of `runs` as one HTML document.
pub fn document(runs: &[RunRecord]) -> String {
    let mut p = Page::new();
    let tests: Vec<&TestResult> = runs.iter().flat_map(|r| &r.tests).collect();
    runs_section(&mut p, runs);
    summary_section(&mut p, &tests);
    diagnosis_section(&mut p, &tests);
    grids::section(&mut p, runs);
    charts::latency_section(&mut p, &tests);
    charts::cpu_section(&mut p, &tests);
    timelines_section(&mut p, runs);
    let subtitle =
        format!("{} run{}, {} test{}", runs.len(), plural(runs.len()), tests.len(), plural(tests.len()));
    p.finish("tcplab report", &subtitle)
}

fn plural(n: usize) -> &'static str {
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
    let rr = tables::rr(tests);
    if !rr.is_empty() {
        p.h3("Request/response tests");
        p.table(&rr, true);
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
    let labels = distinct_labels(tests);
    let found: Vec<(&TestResult, &String, extras::Sections)> = tests
        .iter()
        .zip(&labels)
        .map(|(t, l)| (*t, l, extras::sections(t)))
        .filter(|(_, _, s)| !s.is_empty())
        .collect();
    if found.is_empty() {
        return;
    }
    p.section("diagnosis", "Diagnosis and limits");
    for (t, label, sections) in found {
        p.h3(label);
        if let Some(text) = extras::diagnosis_text(t) {
            p.para("diagnosis", &text);
        }
        for (name, entries) in sections {
            let rows = entries.into_iter().map(|e| vec![format!("{name}.{}", e.key), e.value]).collect();
            p.table(&tables::Table { head: vec![String::new(), String::new()], rows }, false);
        }
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
