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
    if !rep.set_aside.is_empty() {
        let runs: Vec<String> = rep
            .set_aside
            .iter()
            .map(|r| {
                let v = r.summary.headline_value().map_or("–".into(), |v| value(metric_id(r), v));
                format!("{v} ({:.0} % stolen)", r.stolen_pct())
            })
            .collect();
        let _ = writeln!(o, "    not counted (hypervisor steal): {}", runs.join(", "));
    }
    o
}

/// The id of `r`'s headline metric (`goodput_bps`), as the estimates name it.
fn metric_id(r: &results::TestResult) -> &'static str {
    r.summary.headline.map_or("", |h| h.metric.id())
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::ConfidenceTarget;

    #[test]
    fn block_names_iterations_target_and_values() {
        let rep = Repetition {
            target: ConfidenceTarget {
                level_pct: 99.0,
                width_pct: 5.0,
                min_iterations: 3,
                max_iterations: 10,
                result_only: false,
            },
            iterations: 3,
            met: true,
            estimates: vec![Estimate {
                metric: "goodput_bps".into(),
                mean: 941e6,
                stddev: 3.6e6,
                half_width: 20.7e6,
                level_pct: 99.0,
                width_pct: 4.39,
                met: true,
                values: vec![940e6, 945e6, 938e6],
            }],
            runs: Vec::new(),
            set_aside: Vec::new(),
        };
        let b = block(&rep);
        assert!(
            b.contains("repeated 3 times (99 % confidence, target ±2.50 %, 3…10 iterations): target met"),
            "{b}"
        );
        assert!(b.contains("goodput 941 Mbit/s ± 20.7 Mbit/s (±2.19 %, 99 % CI)"), "{b}");
        assert!(b.contains("per iteration: 940 Mbit/s, 945 Mbit/s, 938 Mbit/s"), "{b}");
        assert_eq!(value("trans_per_s", 12345.0), "12345 tr/s");
        assert_eq!(value("local_cpu_pct", 12.34), "12.3 %");
    }

    /// What `tcplab stream -I` prints of the iterations a hypervisor's steal set aside: each
    /// one's result and the share of CPU time taken from its host.
    #[test]
    fn the_iterations_set_aside_are_shown_with_their_steal() {
        let stolen = |gbps: f64, steal: f64| {
            let mut r = crate::fixture::stream(8192, 65536, gbps);
            if let Some(c) = r.local.cpu.as_mut() {
                c.steal_pct = steal;
            }
            r
        };
        let mut t = crate::fixture::stream(8192, 65536, 9.41);
        let target = ConfidenceTarget {
            level_pct: 99.0,
            width_pct: 5.0,
            min_iterations: 3,
            max_iterations: 10,
            result_only: false,
        };
        let set_aside = vec![stolen(0.87, 47.0), stolen(1.25, 11.4)];
        assert!(set_aside.iter().all(results::TestResult::stolen_from));
        let runs = vec![t.clone(), t.clone(), t.clone()];
        t.repetition =
            Some(Repetition { target, iterations: 3, met: true, estimates: Vec::new(), runs, set_aside });
        let text = crate::text::test_summary(&t);
        assert!(
            text.contains(
                "not counted (hypervisor steal): 870 Mbit/s (47 % stolen), 1.25 Gbit/s (11 % stolen)"
            ),
            "{text}"
        );
    }
}
