//! CSV for spreadsheets and pandas: one row per test (sweep points included, with their point
//! index), every spec parameter and headline number as a column; and the per-interval samples.
//! RFC 4180 quoting. A headline that was not measured (a failed test) is an empty field,
//! never 0; `goodput_bps` and `trans_per_s` are the headline under its metric's column.

use results::{setting, Interval, RunRecord, Setting, TestResult};

/// Columns of [`tests`] before the settings: where the row comes from.
const LEAD_COLUMNS: &[&str] =
    &["run_id", "point", "seq", "label", "test", "status", "server", "started_unix_ms"];

/// The settings with a column of [`tests`], in column order: each column is named by the
/// setting's id and holds its value as the table reads it (empty when unset).
const SETTING_COLUMNS: &[&Setting] = &[
    &setting::DURATION_MS,
    &setting::PARALLEL,
    &setting::DIRECTION,
    &setting::SEND_LEN,
    &setting::RECV_LEN,
    &setting::REQUEST_LEN,
    &setting::RESPONSE_LEN,
    &setting::BURST,
    &setting::NODELAY,
    &setting::MSS,
    &setting::CONGESTION,
    &setting::SNDBUF,
    &setting::RCVBUF,
    &setting::REMOTE_SNDBUF,
    &setting::REMOTE_RCVBUF,
];

/// Columns of [`tests`] after the settings: what was measured.
const MEASURED_COLUMNS: &[&str] = &[
    "headline_metric",
    "headline_value",
    "goodput_bps",
    "sender_bps",
    "retransmits",
    "trans_per_s",
    "latency_p50_us",
    "latency_p99_us",
    "local_cpu_pct",
    "remote_cpu_pct",
    "local_sd_us",
    "remote_sd_us",
    "iterations",
    "ci_level_pct",
    "ci_half_width",
    "ci_width_pct",
    "confidence_met",
    "warnings",
];

/// The last column of [`tests`]: `yes` for a sweep's test that no point holds any more (its
/// case was measured again, `study --remeasure-stolen`; the run keeps the first measurement).
const SUPERSEDED_COLUMN: &str = "superseded";

/// Columns of [`tests`].
pub fn test_columns() -> Vec<&'static str> {
    let settings = SETTING_COLUMNS.iter().map(|s| s.id);
    let measured = MEASURED_COLUMNS.iter().copied();
    LEAD_COLUMNS.iter().copied().chain(settings).chain(measured).chain([SUPERSEDED_COLUMN]).collect()
}

/// Quotes a field when it needs it.
pub fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// The header and one row per test of every run in `runs`.
pub fn tests(runs: &[RunRecord]) -> String {
    let mut o = test_columns().join(",");
    o.push('\n');
    for run in runs {
        for (seq, t) in run.tests.iter().enumerate() {
            let point =
                run.sweep.as_ref().and_then(|s| s.points.iter().find(|p| p.test_index as usize == seq));
            let mut row = test_row(run.id, point.map(|p| p.index), seq, t);
            row.push(if run.sweep.is_some() && point.is_none() { "yes" } else { "" }.to_string());
            o.push_str(&row.iter().map(|f| field(f)).collect::<Vec<_>>().join(","));
            o.push('\n');
        }
    }
    o
}

fn test_row(run_id: Option<i64>, point: Option<u32>, seq: usize, t: &TestResult) -> Vec<String> {
    let s = &t.spec;
    let sm = &t.summary;
    let lat = sm.rr.as_ref().map(|r| &r.latency).filter(|l| l.count > 0);
    let rep = t.repetition.as_ref();
    let head = rep.and_then(|r| r.estimates.first());
    let headline = sm.headline.map(|h| h.metric);
    let in_column = |bit_rate: bool| {
        sm.headline_value().filter(|_| headline.is_some_and(|m| m.is_bit_rate() == bit_rate))
    };
    let status = serde_json::to_value(t.status).ok().and_then(|v| v.as_str().map(String::from));
    let warnings: Vec<String> = t
        .warnings
        .iter()
        .filter_map(|w| serde_json::to_value(w.kind).ok().and_then(|v| v.as_str().map(String::from)))
        .collect();
    let lead = [
        opt(run_id),
        opt(point),
        seq.to_string(),
        t.label.clone(),
        s.test.id().to_string(),
        status.unwrap_or_default(),
        t.server.clone(),
        t.started_unix_ms.to_string(),
    ];
    let settings = SETTING_COLUMNS.iter().map(|c| opt((c.get)(s)));
    let measured = [
        opt(headline.map(|m| m.id())),
        opt(sm.headline_value()),
        opt(in_column(true)),
        opt((!sm.directions.is_empty() && sm.headline_value().is_some())
            .then(|| sm.directions.iter().map(|d| d.sender_bps).sum::<f64>())),
        opt(sm
            .directions
            .iter()
            .map(|d| d.retransmits)
            .sum::<Option<u64>>()
            .filter(|_| !sm.directions.is_empty())),
        opt(in_column(false)),
        opt(lat.map(|l| l.p50_us)),
        opt(lat.map(|l| l.p99_us)),
        opt(sm.local_cost.as_ref().map(|c| c.util_pct)),
        opt(sm.remote_cost.as_ref().map(|c| c.util_pct)),
        opt(sm.local_cost.as_ref().map(|c| c.service_demand_us)),
        opt(sm.remote_cost.as_ref().map(|c| c.service_demand_us)),
        rep.map(|r| r.iterations).unwrap_or(1).to_string(),
        opt(head.map(|e| e.level_pct)),
        opt(head.map(|e| e.half_width)),
        opt(head.map(|e| e.width_pct)),
        opt(rep.map(|r| r.met)),
        warnings.join(" "),
    ];
    lead.into_iter().chain(settings).chain(measured).collect()
}

/// Columns of [`intervals`].
pub const INTERVAL_COLUMNS: &[&str] =
    &["run_id", "seq", "label", "side", "start_s", "end_s", "omitted", "bytes", "transactions", "bps"];

/// The header and one row per interval per side of every test of every run.
pub fn intervals(runs: &[RunRecord]) -> String {
    let mut o = INTERVAL_COLUMNS.join(",");
    o.push('\n');
    for run in runs {
        for (seq, t) in run.tests.iter().enumerate() {
            let sides = std::iter::once(("client", &t.local)).chain(t.remote.as_ref().map(|m| ("server", m)));
            for (side, m) in sides {
                for iv in &m.intervals {
                    o.push_str(&interval_row(run.id, seq, &t.label, side, iv));
                    o.push('\n');
                }
            }
        }
    }
    o
}

fn interval_row(run_id: Option<i64>, seq: usize, label: &str, side: &str, iv: &Interval) -> String {
    let bps = if iv.len_s() > 0.0 { iv.bytes() as f64 * 8.0 / iv.len_s() } else { 0.0 };
    [
        opt(run_id),
        seq.to_string(),
        field(label),
        side.to_string(),
        iv.start_s.to_string(),
        iv.end_s.to_string(),
        iv.omitted.to_string(),
        iv.bytes().to_string(),
        iv.transactions().to_string(),
        bps.to_string(),
    ]
    .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }

    #[test]
    fn empty_runs_give_the_header_only() {
        let h = tests(&[]);
        assert_eq!(h.lines().count(), 1);
        assert_eq!(h.trim_end().split(',').count(), test_columns().len());
        assert_eq!(intervals(&[]).lines().count(), 1);
    }

    /// A sweep's test that no point holds (its case was measured again) says so in the last
    /// column; the tests the points hold, and a suite's tests, leave it empty.
    #[test]
    fn a_superseded_test_is_marked() {
        let mut sweep = crate::fixture::sweep_run();
        let first = sweep.tests[2].clone();
        sweep.tests.push(first);
        let sw = sweep.sweep.as_mut().map(|s| &mut s.points[2]);
        sw.into_iter().for_each(|p| p.test_index = 6);
        let suite = crate::fixture::run(vec![crate::fixture::rr(64, 64, 3e4)]);
        let text = tests(&[sweep, suite]);
        let last: Vec<&str> = text.lines().map(|l| l.rsplit(',').next().unwrap_or("?")).collect();
        assert_eq!(last, ["superseded", "", "", "yes", "", "", "", "", ""]);
    }

    /// A setting's column holds the spec field as the record stores it (a number, a name,
    /// `true`/`false`), empty when unset: the table's reading changes no cell.
    #[test]
    fn a_setting_column_holds_the_recorded_value() {
        let mut spec = results::TestSpec::new(results::TestKind::TcpStream);
        spec.set_buffers(results::End::Server, results::BufferSizes { send: None, receive: Some(8192) });
        (spec.mss, spec.congestion, spec.nodelay) = (Some(1200), Some("bbr".into()), true);
        spec.direction = results::Direction::Bidir;
        let recorded = serde_json::to_value(&spec).unwrap_or_default();
        for c in SETTING_COLUMNS {
            let cell = opt((c.get)(&spec));
            let want = match &recorded[c.id] {
                serde_json::Value::Null => String::new(),
                serde_json::Value::String(v) => v.clone(),
                v => v.to_string(),
            };
            assert_eq!(cell, want, "{}", c.id);
        }
    }
}
