//! Format-neutral tables (a header and rows of text) shared by the HTML and markdown
//! reports, so both show the same numbers with the same units.

use std::fmt::Write;

use results::{HostInfo, Metric, RunRecord, Status, SummaryTable, TestResult};

use crate::param_grid::{distinct_labels, Grid};
use crate::units::{count, known, micros, rate, sig3};

/// A header and rows of cells.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    /// Column titles.
    pub head: Vec<String>,
    /// Rows; each as long as `head`.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub(crate) fn new(head: &[&str]) -> Table {
        Table { head: head.iter().map(|s| s.to_string()).collect(), rows: Vec::new() }
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

/// A table in columns: the first left-aligned, the rest right-aligned.
pub fn aligned(t: &Table) -> String {
    let width = |i: usize| {
        std::iter::once(&t.head[i]).chain(t.rows.iter().map(|r| &r[i])).map(|c| c.chars().count()).max()
    };
    let widths: Vec<usize> = (0..t.head.len()).map(|i| width(i).unwrap_or(0)).collect();
    let line = |cells: &[String]| {
        let mut s = String::new();
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            let pad = " ".repeat(w.saturating_sub(c.chars().count()));
            if i == 0 {
                let _ = write!(s, "{c}{pad}");
            } else {
                let _ = write!(s, "  {pad}{c}");
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut o = line(&t.head);
    t.rows.iter().for_each(|r| o.push_str(&line(r)));
    o
}

/// `2026-11-22 00:18:33 UTC` from milliseconds since the Unix epoch.
pub fn utc(ms: u64) -> String {
    format!("{} UTC", crate::units::utc_datetime(ms))
}

/// Key/value rows describing a run.
pub fn run_meta(run: &RunRecord) -> Table {
    let mut t = Table::new(&["", ""]);
    let mut row = |k: &str, v: String| t.rows.push(vec![k.to_string(), v]);
    if let Some(id) = run.id {
        row("run id", id.to_string());
    }
    row("started", utc(run.started_unix_ms));
    row("command", run.command_line.join(" "));
    row("tcplab", run.tool_version.clone());
    row("tests", run.tests.len().to_string());
    if let Some(e) = &run.error {
        row("error", format!("{} ({})", e.message, e.code));
    }
    t
}

/// One row per run (for reports of several runs).
pub fn runs(runs: &[RunRecord]) -> Table {
    let mut t = Table::new(&["run", "started", "command", "tests", "error"]);
    for (i, r) in runs.iter().enumerate() {
        t.rows.push(vec![
            run_name(r, i),
            utc(r.started_unix_ms),
            r.command_line.join(" "),
            r.tests.len().to_string(),
            r.error.as_ref().map_or_else(|| "–".into(), |e| format!("{} ({})", e.message, e.code)),
        ]);
    }
    t
}

/// A run's name: its archive id, else its position.
pub fn run_name(r: &RunRecord, i: usize) -> String {
    r.id.map_or_else(|| (i + 1).to_string(), |id| format!("#{id}"))
}

/// Distinct client/server host pairs of `runs`, each with the names of the runs on it.
pub fn host_pairs(runs: &[RunRecord]) -> Vec<(Vec<String>, Table)> {
    let mut out: Vec<(Vec<String>, Table)> = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        let t = hosts(r);
        match out.iter_mut().find(|(_, seen)| *seen == t) {
            Some((names, _)) => names.push(run_name(r, i)),
            None => out.push((vec![run_name(r, i)], t)),
        }
    }
    out
}

/// Both hosts side by side.
pub fn hosts(run: &RunRecord) -> Table {
    let mut t = Table::new(&["", "client", "server"]);
    let none = HostInfo::default();
    let (c, s) = (&run.local_host, run.remote_host.as_ref().unwrap_or(&none));
    let both = |f: &dyn Fn(&HostInfo) -> String| vec![f(c), f(s)];
    let rows: [(&str, Vec<String>); 7] = [
        ("host", both(&|h| h.hostname.clone())),
        ("kernel", both(&|h| h.kernel.clone())),
        ("CPU", both(&|h| h.cpu_model.clone())),
        ("CPUs", both(&|h| if h.cpus > 0 { h.cpus.to_string() } else { String::new() })),
        ("congestion control", both(&|h| cc(h))),
        (
            "virtual machine",
            both(&|h| if h.hostname.is_empty() { String::new() } else { yes(h.virtualized) }),
        ),
        ("tcplab", both(&|h| h.tool_version.clone())),
    ];
    for (k, v) in rows {
        let mut r = vec![k.to_string()];
        r.extend(v.into_iter().map(|x| if x.is_empty() { "–".into() } else { x }));
        t.rows.push(r);
    }
    t
}

fn cc(h: &HostInfo) -> String {
    if h.congestion_default.is_empty() {
        return String::new();
    }
    format!("{} (available: {})", h.congestion_default, h.congestion_available.join(", "))
}

fn yes(b: bool) -> String {
    if b { "yes" } else { "no" }.into()
}

/// One row per stream direction of every stream test.
pub fn streams(tests: &[&TestResult]) -> Table {
    let mut t = Table::new(&[
        "test",
        "direction",
        "goodput",
        "sender",
        "retr",
        "RTT min/mean/max",
        "busy",
        "rwnd-lim",
        "sndbuf-lim",
        "writes/MB",
    ]);
    let labels = distinct_labels(tests);
    for (r, label) in
        tests.iter().zip(&labels).filter(|(r, _)| r.summary.produced().has_table(SummaryTable::Streams))
    {
        if !measured(r) {
            t.rows.push(failed_row(r, label, 10));
            continue;
        }
        for d in &r.summary.directions {
            t.rows.push(vec![
                label.clone(),
                d.direction.clone(),
                rate(d.receiver_bps) + &ci(r, "goodput_bps", rate),
                rate(d.sender_bps),
                known(d.retransmits, |n| n.to_string()),
                crate::text::rtt_range(d),
                known(d.busy_frac, pct),
                known(d.rwnd_limited_frac, pct),
                known(d.sndbuf_limited_frac, pct),
                known(d.writes_per_mb, sig3),
            ]);
        }
    }
    t
}

/// One row per direction of every UDP stream test: the target and achieved rates, the
/// datagram accounting and jitter.
pub fn udp(tests: &[&TestResult]) -> Table {
    let mut t = Table::new(&[
        "test",
        "direction",
        "datagram",
        "target",
        "sent at",
        "received",
        "lost",
        "loss",
        "out of order",
        "dups",
        "overrun drops",
        "jitter",
    ]);
    let labels = distinct_labels(tests);
    for (r, label) in
        tests.iter().zip(&labels).filter(|(r, _)| r.summary.produced().has_table(SummaryTable::Datagrams))
    {
        if !measured(r) {
            t.rows.push(failed_row(r, label, 12));
            continue;
        }
        for d in &r.summary.udp {
            t.rows.push(vec![
                label.clone(),
                d.direction.clone(),
                format!("{} B", d.datagram_len),
                if d.target_bps == 0 { "unlimited".into() } else { rate(d.target_bps as f64) },
                rate(d.sender_bps),
                rate(d.receiver_bps),
                count(d.lost),
                format!("{:.3}%", d.loss_pct),
                count(d.out_of_order),
                count(d.duplicates),
                d.socket_drops.map_or("–".into(), count),
                crate::udp::jitter(d),
            ]);
        }
    }
    t
}

/// One row per rr / crr test.
pub fn rr(tests: &[&TestResult]) -> Table {
    let mut t =
        Table::new(&["test", "sizes", "flows", "transactions", "rate", "RTT from rate", "mean", "p99"]);
    let labels = distinct_labels(tests);
    for (r, label) in
        tests.iter().zip(&labels).filter(|(r, _)| r.summary.produced().has_table(SummaryTable::Transactions))
    {
        let Some(s) = r.summary.rr.as_ref().filter(|_| measured(r)) else {
            t.rows.push(failed_row(r, label, 8));
            continue;
        };
        let metric = r.summary.headline.map(|h| h.metric).unwrap_or(Metric::TransactionRate);
        t.rows.push(vec![
            label.clone(),
            format!("{}/{} B", r.spec.request_len, r.spec.response_len),
            s.flows.to_string(),
            count(s.transactions),
            crate::units::metric(metric, s.trans_per_s) + &ci(r, metric.id(), sig3),
            micros(s.rtt_from_rate_us),
            micros(s.latency.mean_us),
            micros(s.latency.p99_us),
        ]);
    }
    t
}

/// Latency percentiles of every rr / crr test.
pub fn percentiles(tests: &[&TestResult]) -> Table {
    let mut t = Table::new(&["test", "samples", "min", "p50", "p90", "p99", "p99.9", "max", "mean ± sd"]);
    for (r, label) in tests.iter().zip(distinct_labels(tests)) {
        let Some(l) = r.summary.rr.as_ref().map(|s| &s.latency).filter(|l| l.count > 0) else { continue };
        t.rows.push(vec![
            label,
            count(l.count),
            micros(l.min_us),
            micros(l.p50_us),
            micros(l.p90_us),
            micros(l.p99_us),
            micros(l.p999_us),
            micros(l.max_us),
            format!("{} ± {}", micros(l.mean_us), micros(l.stddev_us)),
        ]);
    }
    t
}

/// CPU on both ends of every test that measured it.
pub fn cpu(tests: &[&TestResult]) -> Table {
    let mut t =
        Table::new(&["test", "client CPU", "server CPU", "client SD", "server SD", "client M", "server M"]);
    for (r, label) in tests.iter().zip(distinct_labels(tests)) {
        let (l, s) = (r.summary.local_cost.as_ref(), r.summary.remote_cost.as_ref());
        if l.is_none() && s.is_none() {
            continue;
        }
        let util = |c: Option<&results::CpuCost>| {
            c.map_or("–".into(), |c| format!("{:.1}% ({:.2} cores)", c.util_pct, c.cores_busy))
        };
        let sd = |c: Option<&results::CpuCost>| c.map_or("–".into(), crate::text::service_demand);
        let m = |c: Option<&results::CpuCost>| c.and_then(|c| c.figure_of_merit).map_or("–".into(), sig3);
        t.rows.push(vec![label, util(l), util(s), sd(l), sd(s), m(l), m(s)]);
    }
    t
}

/// Each test's own figures (`Summary::figures`, whatever its type), one row per figure, as
/// the text summary shows them.
pub fn figures(tests: &[&TestResult]) -> Table {
    let mut t = Table::new(&["test", "figure", "value"]);
    for (r, label) in tests.iter().zip(distinct_labels(tests)) {
        for f in &r.summary.figures {
            t.rows.push(vec![label.clone(), f.label.clone(), crate::figures::shown(f)]);
        }
    }
    t
}

/// Warnings, one row per kind of warning with the tests that carry it; failures one row each.
pub fn warnings(tests: &[&TestResult]) -> Table {
    let mut t = Table::new(&["warning", "tests", "example", "advice"]);
    let labels = distinct_labels(tests);
    let mut kinds: Vec<(results::WarningKind, Vec<&str>, &results::Warning)> = Vec::new();
    for (r, label) in tests.iter().zip(&labels) {
        for w in &r.warnings {
            match kinds.iter_mut().find(|(k, _, _)| *k == w.kind) {
                Some((_, names, _)) if !names.contains(&label.as_str()) => names.push(label),
                Some(_) => {}
                None => kinds.push((w.kind, vec![label], w)),
            }
        }
    }
    for (kind, names, w) in kinds {
        let kind =
            serde_json::to_value(kind).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default();
        let shown = if names.len() > 3 {
            format!("{} and {} more", names[..3].join("; "), names.len() - 3)
        } else {
            names.join("; ")
        };
        t.rows.push(vec![kind, shown, w.message.clone(), w.advice.clone()]);
    }
    for (r, label) in tests.iter().zip(&labels) {
        if let (Status::Failed | Status::Interrupted, Some(e)) = (r.status, &r.error) {
            t.rows.push(vec![
                format!("{:?}", r.status).to_lowercase(),
                label.clone(),
                e.message.clone(),
                e.code.clone(),
            ]);
        }
    }
    t
}

/// A grid as a table: rows are the values of all axes but x, columns the x values.
pub fn grid(g: &Grid) -> Table {
    let Some(x) = g.x_axis().or(g.axes.len().checked_sub(1)) else { return Table::default() };
    let others: Vec<usize> = (0..g.axes.len()).filter(|i| *i != x).collect();
    let corner = others.iter().map(|i| g.axes[*i].name.clone()).collect::<Vec<_>>().join(", ");
    let mut head = vec![if corner.is_empty() {
        g.axes[x].name.clone()
    } else {
        format!("{corner} \\ {}", g.axes[x].name)
    }];
    head.extend(g.axes[x].values.iter().map(|v| v.label.clone()));
    let label = |key: &[usize]| -> String {
        let parts: Vec<String> = others
            .iter()
            .zip(key)
            .filter_map(|(a, v)| g.axes[*a].values.get(*v).map(|v| v.label.clone()))
            .collect();
        parts.join(", ")
    };
    let metric = g.metric.name();
    let rows = grid_cells(g, x, &others)
        .into_iter()
        .map(|(k, cells)| {
            let mut r = vec![if k.is_empty() { metric.to_string() } else { label(&k) }];
            r.extend(cells);
            r
        })
        .collect();
    Table { head, rows }
}

/// Rows of a grid's table keyed by the coordinates on the `others` axes, in order; one
/// cell per value of axis `x`.
fn grid_cells(g: &Grid, x: usize, others: &[usize]) -> Vec<(Vec<usize>, Vec<String>)> {
    let columns = g.axes[x].values.len();
    let mut rows: Vec<(Vec<usize>, Vec<String>)> = Vec::new();
    for p in &g.points {
        let key: Vec<usize> = others.iter().filter_map(|i| p.coords.get(*i).copied()).collect();
        let Some(col) = p.coords.get(x).copied().filter(|c| *c < columns) else { continue };
        let idx = match rows.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                rows.push((key, vec!["–".to_string(); columns]));
                rows.len() - 1
            }
        };
        rows[idx].1[col] = metric_text(g.metric, p.mean, p.half_width);
    }
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    rows
}

/// A metric value with its unit and, when repeated, ± the CI half-width.
pub fn metric_text(m: Metric, v: f64, hw: Option<f64>) -> String {
    let f = |x: f64| crate::units::metric(m, x);
    match hw {
        Some(h) => format!("{} ± {}", f(v), f(h)),
        None => f(v),
    }
}

fn ci(r: &TestResult, metric: &str, f: fn(f64) -> String) -> String {
    let Some(e) = r.repetition.as_ref().and_then(|rep| rep.estimate(metric)) else { return String::new() };
    format!(" ± {} ({}×, {:.0}%)", f(e.half_width), e.values.len(), e.level_pct)
}

fn pct(f: f64) -> String {
    format!("{:.1}%", f * 100.0)
}

/// Whether the test measured its headline: a test that did not (it failed first) gets a
/// [`failed_row`], not the zeros its counters hold.
fn measured(r: &TestResult) -> bool {
    r.summary.headline_value().is_some()
}

/// The test's label, why it has no numbers, and `–` in every other column.
fn failed_row(r: &TestResult, label: &str, width: usize) -> Vec<String> {
    let mut row = vec![label.to_string()];
    let why =
        r.error.as_ref().map_or_else(|| format!("{:?}", r.status), |e| format!("failed: {}", e.message));
    row.push(why);
    row.resize(width, "–".into());
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(1_795_306_713_000), "2026-11-22 00:18:33 UTC");
        assert_eq!(utc(951_782_400_000), "2000-02-29 00:00:00 UTC");
    }

    /// A result is a row of the tables its type declares, even when it holds none of their
    /// numbers (it failed), and of no other; an undeclared record is read by what it holds.
    #[test]
    fn results_are_rows_of_the_tables_their_type_declares() {
        use results::{Produces, Status, TestKind, TestSpec};
        let mut failed = TestResult::new("u", TestSpec::new(TestKind::UdpStream), "h:1", 0);
        failed.status = Status::Failed;
        failed.summary.produces = Produces { tables: vec![SummaryTable::Datagrams], ..Produces::default() };
        let tests = [&failed];
        assert_eq!(udp(&tests).rows.len(), 1, "declared: a failed row");
        assert!(streams(&tests).is_empty() && rr(&tests).is_empty());
        failed.summary.produces.tables = vec![SummaryTable::Transactions];
        let tests = [&failed];
        assert!(udp(&tests).is_empty());
        assert_eq!(rr(&tests).rows.len(), 1);
        let old = crate::fixture::stream(8192, 65536, 1.0);
        assert!(old.summary.produces.is_empty());
        assert_eq!(streams(&[&old]).rows.len(), 1, "read by its directions");
    }
}
