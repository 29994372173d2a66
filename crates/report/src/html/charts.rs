//! Plots of single tests: per-interval timelines, latency CDFs, CPU bars.

use results::{Interval, Metric, Plot, Role, SideMeasurement, StreamInterval, TestResult};

use super::page::Page;
use crate::param_grid::distinct_labels;
use crate::plot::{AxisSpec, BarChart, BarSeries, LineChart, Point, RefLine, ScaleKind, Series, TickFormat};
use crate::tables;
use crate::units::rate;

/// Bar charts show at most this many tests.
const BAR_MAX_TESTS: usize = 24;

/// A unit for rates up to `max_bps`: divisor and name.
pub fn rate_unit(max_bps: f64) -> (f64, &'static str) {
    match max_bps {
        v if v >= 1e9 => (1e9, "Gbit/s"),
        v if v >= 1e6 => (1e6, "Mbit/s"),
        v if v >= 1e3 => (1e3, "kbit/s"),
        _ => (1.0, "bit/s"),
    }
}

/// Theoretical limits of a test as reference lines, in `unit` (bit/s ÷ `div`).
pub fn limit_lines(tests: &[&TestResult], div: f64) -> Vec<RefLine> {
    let mut out: Vec<RefLine> = Vec::new();
    for (label, bps) in tests.iter().filter_map(|t| crate::findings::limit(t)) {
        if !out.iter().any(|r| (r.y - bps / div).abs() < 1e-9) {
            out.push(RefLine { y: bps / div, label: format!("{label}: {}", rate(bps)) });
        }
    }
    out
}

/// A figure of one interval from the streams that count.
type IntervalFigure = dyn Fn(&Interval, &[&StreamInterval]) -> Option<f64>;

/// Per-interval series of one side: `f` over the streams of `role` in each interval.
fn side_series(
    m: &SideMeasurement,
    role: Role,
    f: &dyn Fn(&Interval, &[&StreamInterval]) -> Option<f64>,
) -> Vec<Point> {
    let has_role = |s: &&StreamInterval| m.streams.iter().any(|st| st.index == s.index && st.role == role);
    results::side::without_trailing_stub(&m.intervals)
        .iter()
        .filter_map(|iv| {
            let streams: Vec<&StreamInterval> = iv.streams.iter().filter(has_role).collect();
            if streams.is_empty() {
                return None;
            }
            f(iv, &streams).map(|y| Point::new(iv.end_s, y))
        })
        .collect()
}

/// Series per direction: (name, side that plays `role` for that direction).
fn directions(t: &TestResult, role: Role) -> Vec<(String, &SideMeasurement)> {
    let mut out = Vec::new();
    let sides = [("client", Some(&t.local)), ("server", t.remote.as_ref())];
    for (name, side) in sides {
        let Some(m) = side else { continue };
        if m.streams.iter().any(|s| s.role == role) {
            let dir = match (name, role) {
                ("client", Role::Send) | ("server", Role::Recv) => "client→server",
                _ => "server→client",
            };
            out.push((dir.to_string(), m));
        }
    }
    out
}

fn series_of(
    t: &TestResult,
    role: Role,
    f: &dyn Fn(&Interval, &[&StreamInterval]) -> Option<f64>,
) -> Vec<Series> {
    directions(t, role)
        .into_iter()
        .map(|(name, m)| Series { name, points: side_series(m, role, f) })
        .filter(|s| !s.points.is_empty())
        .collect()
}

/// The timelines of one test, the plots its type declares: TCP and UDP streams plot
/// different figures.
pub fn timeline(p: &mut Page, t: &TestResult) {
    p.open_row();
    let metric = t.summary.headline.map_or(Metric::TransactionRate, |h| h.metric);
    for plot in t.summary.produced().plots {
        match plot {
            Plot::StreamTimeline => stream_timeline(p, t),
            Plot::DatagramTimeline => udp_timeline(p, t),
            Plot::TransactionTimeline => rr_timeline(p, t, metric),
        }
    }
    p.close_row();
}

fn time_axis() -> AxisSpec {
    AxisSpec::linear("time (s)")
}

fn goodput_timeline(p: &mut Page, t: &TestResult) {
    let bps = |iv: &Interval, s: &[&StreamInterval]| {
        Some(s.iter().map(|x| x.bytes).sum::<u64>() as f64 * 8.0 / iv.len_s().max(1e-9))
    };
    let mut thr = series_of(t, Role::Recv, &bps);
    if thr.is_empty() {
        thr = series_of(t, Role::Send, &bps);
    }
    let max = thr.iter().flat_map(|s| &s.points).map(|p| p.y).fold(0.0, f64::max);
    let (div, unit) = rate_unit(max);
    thr.iter_mut().flat_map(|s| &mut s.points).for_each(|p| p.y /= div);
    let mut c = LineChart::new(
        &format!("{}: goodput per interval", t.label),
        time_axis(),
        AxisSpec::linear(&format!("goodput ({unit})")),
    );
    c.series = thr;
    c.refs = limit_lines(&[t], div);
    p.plot(&c.render());
}

fn stream_timeline(p: &mut Page, t: &TestResult) {
    goodput_timeline(p, t);
    let rtt = |_: &Interval, s: &[&StreamInterval]| {
        let v: Vec<f64> = s.iter().filter(|x| x.rtt_us > 0).map(|x| f64::from(x.rtt_us)).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    let cwnd = |_: &Interval, s: &[&StreamInterval]| {
        Some(s.iter().map(|x| x.cwnd_bytes).sum::<u64>() as f64 / 1024.0)
    };
    let retr =
        |_: &Interval, s: &[&StreamInterval]| Some(s.iter().map(|x| x.retransmits).sum::<u64>() as f64);
    for (title, y, f) in [
        ("smoothed RTT", "RTT (µs)", &rtt as &dyn Fn(&Interval, &[&StreamInterval]) -> Option<f64>),
        ("congestion window", "cwnd (KiB)", &cwnd),
        ("retransmits per interval", "segments", &retr),
    ] {
        let mut c = LineChart::new(&format!("{}: {title}", t.label), time_axis(), AxisSpec::linear(y));
        c.series = series_of(t, Role::Send, f);
        p.plot(&c.render());
    }
}

/// The UDP counts of `streams`.
fn counts(streams: &[&StreamInterval]) -> Vec<results::UdpCounts> {
    streams.iter().filter_map(|x| x.udp.clone()).collect()
}

/// Goodput, then per interval at each receiver: datagrams lost (% of those expected),
/// RFC 3550 jitter and datagrams out of order. No congestion window or RTT: UDP has none.
fn udp_timeline(p: &mut Page, t: &TestResult) {
    goodput_timeline(p, t);
    let loss = |_: &Interval, s: &[&StreamInterval]| {
        let c = counts(s);
        let lost: u64 = c.iter().map(|c| c.lost).sum();
        let expected = (c.iter().map(|c| c.received + c.lost).sum::<u64>())
            .saturating_sub(c.iter().map(|c| c.duplicates).sum::<u64>());
        (expected > 0).then(|| 100.0 * lost as f64 / expected as f64)
    };
    // The unit the text summary uses for the same jitter: µs below 1 ms, else ms.
    let jitter_max_ms = t.summary.udp.iter().filter_map(|d| d.jitter_ms).fold(0.0, f64::max);
    let (jitter_unit, per_unit_us) =
        if jitter_max_ms < 1.0 { ("jitter (µs)", 1.0) } else { ("jitter (ms)", 1000.0) };
    let jitter = move |_: &Interval, s: &[&StreamInterval]| {
        let v: Vec<f64> = counts(s).iter().map(|c| c.jitter_us).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64 / per_unit_us)
    };
    let ooo = |_: &Interval, s: &[&StreamInterval]| {
        let c = counts(s);
        (!c.is_empty()).then(|| c.iter().map(|c| c.out_of_order).sum::<u64>() as f64)
    };
    // Over GRO-coalesced trains jitter measures nothing (results::UdpSummary::jitter_ms).
    let jitter_known = t.summary.udp.iter().all(|d| d.jitter_ms.is_some());
    let plots: [(&str, &str, &IntervalFigure); 3] = [
        ("datagrams lost per interval", "lost (% of expected)", &loss),
        ("jitter (RFC 3550)", jitter_unit, &jitter),
        ("reordering per interval", "datagrams out of order", &ooo),
    ];
    for (title, y, f) in
        plots.into_iter().filter(|(title, _, _)| jitter_known || !title.starts_with("jitter"))
    {
        let mut c = LineChart::new(&format!("{}: {title}", t.label), time_axis(), AxisSpec::linear(y));
        c.series = series_of(t, Role::Recv, f);
        p.plot(&c.render());
    }
}

fn rr_timeline(p: &mut Page, t: &TestResult, metric: Metric) {
    let tps = |iv: &Interval, s: &[&StreamInterval]| {
        Some(s.iter().map(|x| x.transactions).sum::<u64>() as f64 / iv.len_s().max(1e-9))
    };
    let unit = metric.unit();
    let mut c =
        LineChart::new(&format!("{}: {unit} per interval", t.label), time_axis(), AxisSpec::linear(unit));
    c.series = series_of(t, Role::Request, &tps);
    if c.series.is_empty() {
        let all = |iv: &Interval| Point::new(iv.end_s, iv.transactions() as f64 / iv.len_s().max(1e-9));
        c.series =
            vec![Series { name: "client".into(), points: t.local.intervals.iter().map(all).collect() }];
    }
    p.plot(&c.render());
}

/// Latency CDFs of every rr/crr test with a distribution, and the percentile table.
pub fn latency_section(p: &mut Page, tests: &[&TestResult]) {
    let with_cdf: Vec<&TestResult> = tests
        .iter()
        .copied()
        .filter(|t| t.summary.rr.as_ref().is_some_and(|r| !r.latency.cdf.is_empty()))
        .collect();
    let table = tables::percentiles(tests);
    if with_cdf.is_empty() && table.is_empty() {
        return;
    }
    p.section("latency", "Latency");
    if !with_cdf.is_empty() {
        let cdfs = with_cdf.iter().filter_map(|t| t.summary.rr.as_ref()).flat_map(|r| &r.latency.cdf);
        let (x, div) = latency_axis(cdfs.map(|(us, _)| *us));
        let y = AxisSpec {
            label: "fraction of transactions ≤ latency".into(),
            kind: ScaleKind::Linear,
            format: TickFormat::Percent,
            zero: true,
        };
        let mut c = LineChart::new("Latency distribution (CDF)", x, y);
        c.markers = false;
        c.legend = "test".into();
        c.series = with_cdf
            .iter()
            .zip(distinct_labels(&with_cdf))
            .filter_map(|(t, name)| {
                let cdf = &t.summary.rr.as_ref()?.latency.cdf;
                Some(Series { name, points: cdf.iter().map(|(x, y)| Point::new(*x / div, *y)).collect() })
            })
            .collect();
        p.plot(&c.render());
    }
    p.table(&table, true);
    p.end_section();
}

/// The latency axis fitted to latencies (µs) and the divisor into its unit: log-10 when they
/// span a decade or more, else linear around them (a 10 ms path's 10.0–10.4 ms would sit on
/// one edge of a 10k–100k µs log axis); in ms when every latency is 1 ms or more.
fn latency_axis(us: impl Iterator<Item = f64>) -> (AxisSpec, f64) {
    let (lo, hi) = us
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (div, unit) = if lo >= 1000.0 && lo.is_finite() { (1000.0, "ms") } else { (1.0, "µs") };
    let log = hi / lo >= 10.0;
    let axis = AxisSpec {
        label: format!("round-trip latency ({unit}{})", if log { ", log scale" } else { "" }),
        kind: if log { ScaleKind::Log10 } else { ScaleKind::Linear },
        format: TickFormat::Number,
        zero: false,
    };
    (axis, div)
}

/// CPU utilisation, service demand and figure-of-merit bars, and the CPU table.
pub fn cpu_section(p: &mut Page, tests: &[&TestResult]) {
    let table = tables::cpu(tests);
    if table.is_empty() {
        return;
    }
    p.section("cpu", "CPU cost");
    let measured: Vec<&TestResult> = tests
        .iter()
        .copied()
        .filter(|t| t.summary.local_cost.is_some() || t.summary.remote_cost.is_some())
        .collect();
    if measured.len() > BAR_MAX_TESTS {
        let note =
            format!("Bars show the first {BAR_MAX_TESTS} of {} tests; the table has all.", measured.len());
        p.para("note", &note);
    }
    p.open_row();
    cost_plots(p, &measured[..measured.len().min(BAR_MAX_TESTS)]);
    p.close_row();
    p.table(&table, true);
    p.para("note", "CPU: system-wide /proc/stat over the measured window. SD: µs of CPU per KB or per transaction. M = goodput in Mbit/s ÷ CPU-cores busy.");
    if measured.iter().any(|t| one_host(t)) {
        p.para("note", "Client and server on one host: each end's system-wide figure counts both ends, so such a test has one bar (\"one host\", or \"client\" beside tests on two hosts).");
    }
    p.end_section();
}

fn cost_plots(p: &mut Page, tests: &[&TestResult]) {
    p.plot(&cost_bars("CPU utilisation", "utilisation (% of all CPUs)", tests, &|c| Some(c.util_pct)));
    let (streams, rr): (Vec<&TestResult>, Vec<&TestResult>) =
        tests.iter().partition(|t| t.summary.headline.is_some_and(|h| h.metric.is_bit_rate()));
    if !streams.is_empty() {
        let sd = |c: &results::CpuCost| Some(c.service_demand_us);
        p.plot(&cost_bars("Service demand, stream tests", "µs of CPU per KB", &streams, &sd));
        let m = |c: &results::CpuCost| c.figure_of_merit;
        p.plot(&cost_bars("Figure of merit M", "M (Mbit/s per CPU-core busy)", &streams, &m));
    }
    if !rr.is_empty() {
        let sd = |c: &results::CpuCost| Some(c.service_demand_us);
        p.plot(&cost_bars("Service demand, request/response", "µs of CPU per transaction", &rr, &sd));
    }
}

/// `a (x)`, `a (y)` → `x`, `y` when every label shares the part before the parenthesis.
fn short_labels(labels: Vec<String>) -> Vec<String> {
    let split = |l: &str| -> Option<(String, String)> {
        let (head, rest) = l.split_once(" (")?;
        Some((head.to_string(), rest.strip_suffix(')')?.to_string()))
    };
    let parts: Option<Vec<(String, String)>> = labels.iter().map(|l| split(l)).collect();
    match parts {
        Some(p) if p.len() > 1 && p.iter().all(|(h, _)| *h == p[0].0) => {
            p.into_iter().map(|(_, v)| v).collect()
        }
        _ => labels,
    }
}

fn cost_bars(
    title: &str,
    y: &str,
    tests: &[&TestResult],
    f: &dyn Fn(&results::CpuCost) -> Option<f64>,
) -> String {
    let side = |name: &str, get: &dyn Fn(&TestResult) -> Option<&results::CpuCost>| BarSeries {
        name: name.into(),
        values: tests.iter().map(|t| get(t).and_then(f)).collect(),
    };
    // With both ends on one host, each end's system-wide figure counts both: one bar, not the
    // same number twice.
    let series = if tests.iter().all(|t| one_host(t)) {
        vec![side("one host", &|t| t.summary.local_cost.as_ref())]
    } else {
        vec![
            side("client", &|t| t.summary.local_cost.as_ref()),
            side("server", &|t| t.summary.remote_cost.as_ref().filter(|_| !one_host(t))),
        ]
    };
    BarChart {
        title: title.into(),
        y_label: y.into(),
        y_format: TickFormat::Number,
        categories: short_labels(distinct_labels(tests)),
        series,
    }
    .render()
}

/// Client and server ran on one host (the result carries the warning that says so).
fn one_host(t: &TestResult) -> bool {
    t.warnings.iter().any(|w| w.kind == results::WarningKind::SameHost)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    fn timelines(t: &TestResult) -> String {
        let mut p = Page::new();
        timeline(&mut p, t);
        p.finish("t", "")
    }

    #[test]
    fn udp_timelines_plot_goodput_loss_jitter_and_reordering_not_tcp_figures() {
        let html = timelines(&fixture::udp(20, Some(0.035)));
        for title in [
            "goodput per interval",
            "datagrams lost per interval",
            "jitter (RFC 3550)",
            "reordering per interval",
        ] {
            assert!(html.contains(&format!("udp: {title}")), "{title} missing");
        }
        for tcp in ["congestion window", "smoothed RTT", "retransmits"] {
            assert!(!html.contains(tcp), "{tcp} is not a UDP figure");
        }
        assert!(html.contains("lost (% of expected)") && html.contains("client→server"));
        // 0.035 ms of jitter: the text says 35.0 µs, and so does the chart's axis.
        assert!(html.contains("jitter (µs)") && !html.contains("jitter (ms)"), "the text's unit");
        let coalesced = timelines(&fixture::udp(20, None));
        assert!(!coalesced.contains("jitter") && coalesced.contains("reordering per interval"));
    }

    #[test]
    fn a_test_on_one_host_gets_one_cpu_bar_not_the_same_number_twice() {
        let here = fixture::stream(128 * 1024, 0, 10.0);
        let apart = fixture::rr(1, 1, 20_000.0);
        let util = |c: &results::CpuCost| Some(c.util_pct);
        let svg = cost_bars("CPU", "%", &[&here], &util);
        assert!(svg.contains("stream · one host: 60") && !svg.contains("· server:"), "{svg}");
        assert!(!svg.contains("class=\"legend\""), "one series needs no legend");
        let svg = cost_bars("CPU", "%", &[&here, &apart], &util);
        assert!(svg.contains("stream · client: 60") && !svg.contains("stream · server"), "{svg}");
        assert!(svg.contains("rr 1/1 · client: 80") && svg.contains("rr 1/1 · server: 70"), "{svg}");
        let mut p = Page::new();
        cpu_section(&mut p, &[&here]);
        assert!(p.finish("t", "").contains("Client and server on one host"));
    }

    #[test]
    fn latency_axis_fits_the_data() {
        use crate::plot::scale::Scale;
        let wan: Vec<f64> = (0..50).map(|i| 10_000.0 + 10.0 * f64::from(i)).collect();
        let (axis, div) = latency_axis(wan.iter().copied());
        assert_eq!(
            (axis.label.as_str(), axis.kind, div),
            ("round-trip latency (ms)", ScaleKind::Linear, 1000.0)
        );
        let ms: Vec<f64> = wan.iter().map(|v| v / div).collect();
        let s = Scale::fit(axis.kind, &ms, axis.zero, axis.format);
        let (first, last) = (s.frac(ms[0]), s.frac(ms[49]));
        assert!(
            last - first > 0.5,
            "data spread over the axis, not on one edge: {first}..{last} of {}–{}",
            s.lo,
            s.hi
        );
        let (axis, div) = latency_axis([20.0, 45.0, 900.0, 5000.0].into_iter());
        assert_eq!(
            (axis.label.as_str(), axis.kind, div),
            ("round-trip latency (µs, log scale)", ScaleKind::Log10, 1.0)
        );
    }

    #[test]
    fn tcp_timelines_keep_their_figures() {
        let html = timelines(&fixture::stream(1024, 65_536, 1.0));
        assert!(html.contains("congestion window") && html.contains("smoothed RTT"));
        assert!(!html.contains("datagrams lost"));
    }
}
