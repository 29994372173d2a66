//! `tcplab compare A B` as a text table or one JSON document ([`Comparison`], shown through
//! the live printer): per metric, A, B, the difference in % with its confidence interval,
//! and a verdict.

use std::fmt::Write as _;

use results::setting::{self, Setting};
use results::{ParamValue, TestSpec};

use crate::units::setting_value;

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
    /// What the difference says.
    pub verdict: Verdict,
}

/// What a difference says about B against A.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// A metric where higher is better is significantly higher in B.
    Faster,
    /// … significantly lower in B.
    Slower,
    /// The interval includes no change.
    NoDifference,
    /// One value each: no interval, so no verdict.
    Unknown,
    /// A CPU figure (lower is better) significantly higher in B.
    MoreCpu,
    /// … significantly lower in B.
    LessCpu,
}

impl Verdict {
    /// As the table shows it.
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoDifference => "no significant difference",
            Verdict::Unknown => "unknown (one value each: repeat with -I)",
            Verdict::MoreCpu => "more CPU",
            Verdict::LessCpu => "less CPU",
        }
    }
}

impl Verdict {
    /// Its id in JSON.
    pub fn id(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoDifference => "no-difference",
            Verdict::Unknown => "unknown",
            Verdict::MoreCpu => "more-cpu",
            Verdict::LessCpu => "less-cpu",
        }
    }
}

/// A whole comparison of run `a` with run `b`.
#[derive(Debug, Clone, Copy)]
pub struct Comparison<'a> {
    /// What A is (`run 3`).
    pub a: &'a str,
    /// What B is.
    pub b: &'a str,
    /// Confidence level of the intervals, %.
    pub level_pct: f64,
    /// The compared metrics.
    pub rows: &'a [Row],
    /// What the rows leave out.
    pub notes: &'a Notes,
}

impl crate::live::Shown for Comparison<'_> {
    fn text(&self) -> String {
        table(self.a, self.b, self.level_pct, self.rows, self.notes)
    }

    fn json(&self) -> serde_json::Value {
        let rows: Vec<serde_json::Value> = self
            .rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "test": r.test, "metric": r.metric, "a": r.a, "b": r.b,
                    "diff_pct": r.diff_pct, "ci_pct": r.ci_pct, "verdict": r.verdict.id(),
                })
            })
            .collect();
        serde_json::json!({
            "a": self.a, "b": self.b, "level_pct": self.level_pct, "rows": rows,
            "only_a": self.notes.only_a, "only_b": self.notes.only_b,
            "setting_differences": self.notes.settings,
        })
    }
}

/// What the table does not show: tests or sweep points found in one run only, and settings
/// in which the compared tests differ (so the difference measures them too).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Notes {
    /// Tests or points of A without a counterpart in B.
    pub only_a: Vec<String>,
    /// Tests or points of B without a counterpart in A.
    pub only_b: Vec<String>,
    /// `write size 128K vs 8K`, per differing setting.
    pub settings: Vec<String>,
}

/// The table.
pub fn table(a: &str, b: &str, level_pct: f64, rows: &[Row], notes: &Notes) -> String {
    let mut o = String::new();
    let _ =
        writeln!(o, "A = {a}, B = {b}; difference B − A with its {level_pct} % confidence interval (Welch)");
    if !notes.settings.is_empty() {
        let _ = writeln!(
            o,
            "warning: the tests' settings differ: {} — the difference is not the change alone",
            notes.settings.join(", ")
        );
    }
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
            r.test,
            r.metric,
            r.a,
            r.b,
            r.diff_pct,
            ci,
            r.verdict.text()
        );
    }
    for (run, only) in [(a, &notes.only_a), (b, &notes.only_b)] {
        if !only.is_empty() {
            let _ = writeln!(o, "only in {run} (not compared): {}", only.join("; "));
        }
    }
    o
}

/// The settings in which `a` and `b` differ, named once each: a combined setting (`-l` is
/// `write size`, `-w` is `window`) when each side sets all of its fields alike, else the
/// fields. The report interval is left out: it changes what is printed, not what is measured.
pub fn setting_differences(a: &TestSpec, b: &TestSpec) -> Vec<String> {
    let mut out = Vec::new();
    let mut covered: Vec<&str> = vec![setting::INTERVAL_MS.id];
    for s in setting::ALL.iter().filter(|s| s.is_combined()) {
        let (va, vb) = (uniform(s, a), uniform(s, b));
        if let (Some(va), Some(vb)) = (&va, &vb) {
            if va != vb && s.parts.iter().all(|p| field(p, a) != field(p, b)) {
                out.push(difference(s, va.as_ref(), vb.as_ref()));
                covered.extend(s.parts);
            }
        }
    }
    for s in setting::ALL.iter().filter(|s| !s.is_combined() && !covered.contains(&s.id)) {
        let (va, vb) = ((s.get)(a), (s.get)(b));
        if va != vb {
            out.push(difference(s, va.as_ref(), vb.as_ref()));
        }
    }
    out
}

/// A combined setting's value when its fields agree: `Some(Some(v))`, `Some(None)` when all
/// are unset, `None` when they differ.
fn uniform(s: &Setting, spec: &TestSpec) -> Option<Option<ParamValue>> {
    match (s.get)(spec) {
        Some(v) => Some(Some(v)),
        None => s.parts.iter().all(|p| field(p, spec).is_none()).then_some(None),
    }
}

fn field(id: &str, spec: &TestSpec) -> Option<ParamValue> {
    setting::by_id(id).and_then(|s| (s.get)(spec))
}

fn difference(s: &Setting, a: Option<&ParamValue>, b: Option<&ParamValue>) -> String {
    let show = |v: Option<&ParamValue>| v.map_or_else(|| "default".to_string(), |v| setting_value(s.kind, v));
    format!("{} {} vs {}", s.label, show(a), show(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::TestKind;

    #[test]
    fn differing_settings_are_named_once_with_both_values() {
        let a = TestSpec::new(TestKind::TcpStream);
        let mut b = a.clone();
        assert!(setting_differences(&a, &b).is_empty());
        (b.send_len, b.recv_len, b.interval_ms) = (8192, 8192, 100);
        assert_eq!(setting_differences(&a, &b), vec!["write size 128K vs 8K"]);
        (setting::WINDOW.set)(&mut b, &results::ParamValue::Int(65_536)).unwrap_or_else(|e| panic!("{e}"));
        b.rate_bps = 100_000_000;
        assert_eq!(
            setting_differences(&a, &b),
            vec!["write size 128K vs 8K", "window default vs 64K", "rate 0 vs 100M"]
        );
        let mut c = a.clone();
        c.recv_len = 1024;
        assert_eq!(setting_differences(&a, &c), vec!["read size 128K vs 1K"]);
    }
}
