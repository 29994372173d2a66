//! Text for repeat-until-confident results: iterations, target, each judged metric's mean with
//! its confidence interval and the per-iteration values.

use std::fmt::Write as _;

use results::{Estimate, Repetition};

use crate::units::{rate, sig3};

/// A metric value in its unit: `941 Mbit/s`, `12.3k tr/s`, `25.0 %`.
pub fn value(metric: &str, v: f64) -> String {
    match metric {
        "goodput_bps" => rate(v),
        "trans_per_s" => format!("{} tr/s", sig3(v)),
        m if m.ends_with("_pct") => format!("{v:.1} %"),
        _ => sig3(v),
    }
}

/// `goodput 941 Mbit/s ± 20.7 Mbit/s (±2.2 %, 99 % CI)`.
pub fn estimate_line(e: &Estimate) -> String {
    let name = e.metric.trim_end_matches("_bps").trim_end_matches("_pct").replace('_', " ");
    format!(
        "{name} {} ± {} (±{:.2} %, {} % CI)",
        value(&e.metric, e.mean),
        value(&e.metric, e.half_width),
        e.width_pct / 2.0,
        e.level_pct
    )
}

/// The block shown under a repeated test's summary.
pub fn block(rep: &Repetition) -> String {
    let mut o = String::new();
    let t = &rep.target;
    let _ = writeln!(
        o,
        "  repeated {} times ({} % confidence, target ±{:.2} %, {}…{} iterations): {}",
        rep.iterations,
        t.level_pct,
        t.width_pct / 2.0,
        t.min_iterations,
        t.max_iterations,
        if rep.met { "target met" } else { "target NOT met" }
    );
    for e in &rep.estimates {
        let values: Vec<String> = e.values.iter().map(|v| value(&e.metric, *v)).collect();
        let _ = writeln!(o, "    {}{}", estimate_line(e), if e.met { "" } else { "  (too wide)" });
        let _ = writeln!(o, "      per iteration: {}", values.join(", "));
    }
    o
}
