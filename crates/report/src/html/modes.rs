//! Throughput and CPU per transfer mode. A test whose own figures name how its ends moved the
//! data — text figures labelled `… mode`, such as a file transfer's `sender mode` (`sendfile`)
//! and `receiver mode` (`read → null`) — gets one bar group per test, named by those modes,
//! with its goodput and both ends' service demand. Built from the generic figures and the
//! common summary only, so whichever test type names its modes this way is charted.

use results::{FigureValue, TestResult};

use super::page::Page;
use crate::plot::{BarChart, BarSeries, TickFormat};

use super::charts::rate_unit;

/// Bar groups at most; the tests past it are named in a note.
const MAX_GROUPS: usize = 24;

/// The modes a test's figures name, in their order, joined: `sendfile / read → null`.
fn modes(t: &TestResult) -> Option<String> {
    let named: Vec<&str> = t
        .summary
        .figures
        .iter()
        .filter(|f| f.label.ends_with(" mode"))
        .filter_map(|f| match &f.value {
            FigureValue::Text(v) => Some(v.as_str()),
            _ => None,
        })
        .collect();
    (!named.is_empty()).then(|| named.join(" / "))
}

/// What the mode figures are called (`sender mode / receiver mode`), from the first test.
fn mode_names(t: &TestResult) -> String {
    let names: Vec<&str> =
        t.summary.figures.iter().map(|f| f.label.as_str()).filter(|l| l.ends_with(" mode")).collect();
    names.join(" / ")
}

/// Group names: the modes, with the test's label added where two tests share them.
fn categories(tests: &[(&TestResult, String)]) -> Vec<String> {
    tests
        .iter()
        .map(|(t, m)| {
            let shared = tests.iter().filter(|(_, other)| other == m).count() > 1;
            if shared {
                format!("{m} ({})", t.label)
            } else {
                m.clone()
            }
        })
        .collect()
}

/// The section, when any test names its modes.
pub fn section(p: &mut Page, tests: &[&TestResult]) {
    let named: Vec<(&TestResult, String)> = tests.iter().filter_map(|t| Some((*t, modes(t)?))).collect();
    let Some((first, _)) = named.first() else { return };
    p.section("modes", "Throughput and CPU per transfer mode");
    if named.len() > MAX_GROUPS {
        p.para("note", &format!("Bars show the first {MAX_GROUPS} of {} tests.", named.len()));
    }
    let shown = &named[..named.len().min(MAX_GROUPS)];
    p.open_row();
    p.plot(&throughput_bars(shown));
    if shown.iter().any(|(t, _)| service_demand(t, true).or(service_demand(t, false)).is_some()) {
        p.plot(&cpu_bars(shown));
    }
    p.close_row();
    let note = format!(
        "Groups: {}. Goodput = the receiver's rate. CPU: service demand, µs of system-wide CPU per KB moved at each end (with client and server on one host, each counts both).",
        mode_names(first)
    );
    p.para("note", &note);
    p.end_section();
}

fn service_demand(t: &TestResult, client: bool) -> Option<f64> {
    let cost = if client { t.summary.local_cost.as_ref() } else { t.summary.remote_cost.as_ref() };
    cost.filter(|c| c.service_demand_unit == "us/KB").map(|c| c.service_demand_us)
}

fn throughput_bars(tests: &[(&TestResult, String)]) -> String {
    let bps: Vec<Option<f64>> =
        tests.iter().map(|(t, _)| Some(t.summary.goodput_bps()).filter(|v| *v > 0.0)).collect();
    let (div, unit) = rate_unit(bps.iter().flatten().copied().fold(0.0, f64::max));
    BarChart {
        title: "Goodput per mode".into(),
        y_label: format!("goodput ({unit})"),
        y_format: TickFormat::Number,
        categories: categories(tests),
        series: vec![BarSeries {
            name: "goodput".into(),
            values: bps.iter().map(|v| v.map(|v| v / div)).collect(),
        }],
    }
    .render()
}

fn cpu_bars(tests: &[(&TestResult, String)]) -> String {
    let side = |name: &str, client: bool| BarSeries {
        name: name.into(),
        values: tests.iter().map(|(t, _)| service_demand(t, client)).collect(),
    };
    BarChart {
        title: "CPU per mode (service demand)".into(),
        y_label: "µs of CPU per KB".into(),
        y_format: TickFormat::Number,
        categories: categories(tests),
        series: vec![side("client", true), side("server", false)],
    }
    .render()
}

#[cfg(test)]
mod tests {
    use results::Figure;

    use super::*;
    use crate::fixture;

    fn transfer(label: &str, send: &str, recv: &str, gbps: f64) -> TestResult {
        let mut t = fixture::stream(128 * 1024, 256 * 1024, gbps);
        t.label = label.into();
        t.summary.figures = vec![
            Figure::new("file size", FigureValue::Bytes(11 << 20)),
            Figure::new("sender mode", FigureValue::Text(send.into())),
            Figure::new("receiver mode", FigureValue::Text(recv.into())),
        ];
        t
    }

    fn page(tests: &[&TestResult]) -> String {
        let mut p = Page::new();
        section(&mut p, tests);
        p.finish("t", "")
    }

    #[test]
    fn a_group_per_test_named_by_its_modes_with_goodput_and_both_ends_cpu() {
        let (w, s) = (
            transfer("file", "write", "read → null", 20.0),
            transfer("file", "sendfile", "read → null", 25.0),
        );
        let html = page(&[&w, &s]);
        assert!(html.contains("data-plots=\"2\""), "goodput and CPU bars");
        for needle in [
            "Throughput and CPU per transfer mode",
            "write / read → null",
            "sendfile / read → null",
            "goodput (Gbit/s)",
            "µs of CPU per KB",
            "Groups: sender mode / receiver mode.",
        ] {
            assert!(html.contains(&crate::plot::svg::esc(needle)), "{needle} missing");
        }
    }

    #[test]
    fn tests_sharing_modes_are_told_apart_by_label_and_tests_without_modes_get_nothing() {
        let (a, b) = (transfer("put", "write", "read", 1.0), transfer("get", "write", "read", 2.0));
        let html = page(&[&a, &b]);
        assert!(html.contains("write / read (put)") && html.contains("write / read (get)"));
        let plain = fixture::stream(1024, 65_536, 1.0);
        assert!(!page(&[&plain]).contains("<section"), "a test naming no modes has no mode chart");
    }

    #[test]
    fn mode_bars_svg() {
        let (w, s) =
            (transfer("file", "write", "read → null", 20.0), transfer("file", "sendfile", "skip-copy", 30.0));
        let named = vec![(&w, modes(&w).unwrap_or_default()), (&s, modes(&s).unwrap_or_default())];
        insta::assert_snapshot!(format!("{}\n{}", throughput_bars(&named), cpu_bars(&named)));
    }
}
