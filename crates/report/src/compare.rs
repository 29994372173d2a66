//! `tcplab compare A B` as a text table: per metric, A, B, the difference in % with its
//! confidence interval, and a verdict.

use std::fmt::Write as _;

/// One compared metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Test label.
    pub test: String,
    /// Metric name.
    pub metric: String,
    /// A's value, formatted.
    pub a: String,
    /// B's value, formatted.
    pub b: String,
    /// (B − A) / A in %.
    pub diff_pct: f64,
    /// Half-width of the difference's interval, in % of A; `None` when unknown.
    pub ci_pct: Option<f64>,
    /// `faster`, `slower`, `no significant difference`, …
    pub verdict: String,
}

/// The table.
pub fn table(a: &str, b: &str, level_pct: f64, rows: &[Row]) -> String {
    let mut o = String::new();
    let _ =
        writeln!(o, "A = {a}, B = {b}; difference B − A with its {level_pct} % confidence interval (Welch)");
    let _ = writeln!(
        o,
        "{:<16}{:<16}{:>16}{:>16}{:>10}{:>11}  verdict",
        "test", "metric", "A", "B", "diff", "± CI"
    );
    for r in rows {
        let ci = r.ci_pct.map(|c| format!("±{c:.1}%")).unwrap_or_else(|| "n/a".into());
        let _ = writeln!(
            o,
            "{:<16}{:<16}{:>16}{:>16}{:>+9.1}%{:>11}  {}",
            r.test, r.metric, r.a, r.b, r.diff_pct, ci, r.verdict
        );
    }
    o
}
