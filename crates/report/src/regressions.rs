//! `tcplab archive regressions`: one line per path and test — the history's mean, the newest
//! value(s), the change with its interval, the verdict — or one JSON document for alerting.

use std::fmt::Write as _;

use results::regression::{Judgement, Verdict};

use crate::confidence::value;

/// What the report was asked, shown with it.
#[derive(Debug, Clone, PartialEq)]
pub struct Asked {
    /// Results since this time, ms since the Unix epoch.
    pub since_unix_ms: u64,
    /// Threshold, % of the history's mean.
    pub threshold_pct: f64,
    /// Confidence level, %.
    pub level_pct: f64,
}

fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Regressed => "REGRESSED",
        Verdict::Failed => "failed",
        Verdict::Unknown => "unknown",
        Verdict::Improved => "improved",
        Verdict::Steady => "steady",
    }
}

fn change(j: &Judgement) -> String {
    match (j.verdict, j.interval_pct) {
        (Verdict::Failed, _) => "–".into(),
        (_, Some(ci)) => format!("{:+.1} % ± {ci:.1} %", j.change_pct),
        (_, None) if j.history.is_empty() => "no history".into(),
        (_, None) => format!("{:+.1} % (no interval)", j.change_pct),
    }
}

/// The table, then one line saying how many paths regressed.
pub fn text(rows: &[Judgement], asked: &Asked) -> String {
    let path = |j: &Judgement| format!("{} → {}", j.series.sender, j.series.receiver);
    let test = |j: &Judgement| match j.series.label == j.series.test {
        true => j.series.test.clone(),
        false => format!("{} ({})", j.series.label, j.series.test),
    };
    let pw = rows.iter().map(|j| path(j).chars().count()).max().unwrap_or(4).max(4);
    let tw = rows.iter().map(|j| test(j).chars().count()).max().unwrap_or(4).max(4);
    let mut out = format!(
        "{:<pw$}  {:<tw$}  {:>16}  {:>14}  {:>22}  verdict\n",
        "path", "test", "history (n)", "latest", "change"
    );
    for j in rows {
        let m = &j.series.metric;
        // No results, no mean: "–", never a measured-looking zero.
        let mean = |empty: bool, v: f64| if empty { "–".to_string() } else { value(m, v) };
        let hist = format!("{} ({})", mean(j.history.is_empty(), j.history_mean), j.history.len());
        let latest = mean(j.latest.is_empty(), j.latest_mean);
        let mut line = format!(
            "{:<pw$}  {:<tw$}  {hist:>16}  {latest:>14}  {:>22}  {}",
            path(j),
            test(j),
            change(j),
            verdict_word(j.verdict)
        );
        if let Some(f) = &j.failure {
            let _ = write!(line, ": {f}");
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    let regressed = rows.iter().filter(|j| j.verdict == Verdict::Regressed).count();
    let _ = write!(
        out,
        "{regressed} of {} path/test series regressed (more than {} % slower, {} % interval) since {}",
        rows.len(),
        asked.threshold_pct,
        asked.level_pct,
        crate::tables::utc(asked.since_unix_ms)
    );
    out
}

/// One JSON document: what was asked, the series that regressed, and every row.
pub fn json(rows: &[Judgement], asked: &Asked) -> String {
    let regressed: Vec<_> =
        rows.iter().filter(|j| j.verdict == Verdict::Regressed).map(|j| &j.series).collect();
    let doc = serde_json::json!({
        "since_unix_ms": asked.since_unix_ms,
        "threshold_pct": asked.threshold_pct,
        "level_pct": asked.level_pct,
        "regressed": regressed,
        "series": rows,
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use results::regression::Series;

    use super::*;

    fn row(receiver: &str, verdict: Verdict, change_pct: f64, failure: Option<&str>) -> Judgement {
        Judgement {
            series: Series {
                sender: "a".into(),
                receiver: receiver.into(),
                test: "tcp-stream".into(),
                label: "stream".into(),
                metric: "goodput_bps".into(),
            },
            verdict,
            history: vec![9.4e8, 9.5e8, 9.3e8],
            latest: if failure.is_some() { Vec::new() } else { vec![9.4e8 * (1.0 + change_pct / 100.0)] },
            latest_unix_ms: 0,
            history_mean: 9.4e8,
            latest_mean: 9.4e8 * (1.0 + change_pct / 100.0),
            change_pct,
            interval_pct: failure.is_none().then_some(4.2),
            failure: failure.map(String::from),
        }
    }

    #[test]
    fn table_and_json() {
        let rows = [
            row("b", Verdict::Regressed, -30.0, None),
            row("c", Verdict::Failed, 0.0, Some("connect: refused")),
            row("d", Verdict::Steady, 1.0, None),
        ];
        let asked = Asked { since_unix_ms: 0, threshold_pct: 10.0, level_pct: 95.0 };
        let t = text(&rows, &asked);
        assert!(t.contains("a → b  stream (tcp-stream)") && t.contains("-30.0 % ± 4.2 %  REGRESSED"), "{t}");
        assert!(t.contains("failed: connect: refused"), "{t}");
        assert!(t.ends_with("1 of 3 path/test series regressed (more than 10 % slower, 95 % interval) since 1970-01-01 00:00:00 UTC"), "{t}");
        let v: serde_json::Value = serde_json::from_str(&json(&rows, &asked)).unwrap_or_default();
        assert_eq!(v["regressed"][0]["receiver"], "b");
        assert_eq!(v["series"][1]["verdict"], "failed");
        assert_eq!(v["series"].as_array().map(Vec::len), Some(3));
    }

    #[test]
    fn no_results_print_a_dash_not_a_zero() {
        let mut failed = row("c", Verdict::Failed, 0.0, Some("connect: refused"));
        (failed.history, failed.history_mean) = (Vec::new(), 0.0);
        let asked = Asked { since_unix_ms: 0, threshold_pct: 10.0, level_pct: 95.0 };
        let t = text(&[failed], &asked);
        let line = t.lines().nth(1).unwrap_or_default();
        assert!(line.contains("– (0)") && !line.contains("0.00"), "{line}");
    }
}
