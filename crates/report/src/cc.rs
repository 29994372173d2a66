//! A congestion-control comparison (`compare-cc`, seed 003) as tables: the seed's table
//! (throughput mean ± sd over the whole run and over the short windows, per control) with
//! the RTT probe beside it, and how concurrent flows shared the path. The HTML plots are in
//! `html::cc`; markdown and text take these tables.

use std::fmt::Write;

use results::cc::{CcRun, MeanSd, RttProbe};
use results::{CcStudy, TestResult};

use crate::tables::Table;
use crate::units::{micros, sig3};

/// `929 ± 53` in Mbit/s, or `–`.
fn mbit(m: Option<MeanSd>) -> String {
    m.map_or_else(|| "–".into(), |m| format!("{} ± {}", sig3(m.mean / 1e6), sig3(m.sd / 1e6)))
}

fn us(v: Option<f64>) -> String {
    v.map_or_else(|| "–".into(), micros)
}

/// The rise of the probe's median above idle, signed.
fn rise(v: Option<f64>) -> String {
    match v {
        Some(r) if r < 0.0 => format!("−{}", micros(-r)),
        Some(r) => format!("+{}", micros(r)),
        None => "–".into(),
    }
}

/// The seed's table: one row per stream.
pub fn table(study: &CcStudy, tests: &[TestResult]) -> Table {
    let window = format!("over {} s windows (Mbit/s)", sig3(study.window_ms as f64 / 1000.0));
    let mut t = Table::new(&[
        "control",
        "round",
        "over the run (Mbit/s)",
        &window,
        "windows",
        "σ/μ",
        "retrans",
        "probe idle",
        "probe p50",
        "p95",
        "max",
        "rise p50",
        "lost",
    ]);
    for r in &study.runs {
        let probe = study.probes.get(r.probe);
        let status = tests.get(r.test).map(status_note).unwrap_or_default();
        t.rows.push(vec![
            format!("{}{status}", r.congestion),
            r.round.to_string(),
            mbit(r.throughput_bps),
            mbit(r.windowed_bps),
            r.windows.len().to_string(),
            r.stability.map_or_else(|| "–".into(), |s| format!("{s:.3}")),
            r.retransmits.to_string(),
            us(probe.and_then(|p| p.idle_rtt_us)),
            us(probe.and_then(|p| p.p50_us)),
            us(probe.and_then(|p| p.p95_us)),
            us(probe.and_then(|p| p.max_us)),
            rise(probe.and_then(|p| p.rise_p50_us)),
            probe.map_or_else(|| "–".into(), |p| format!("{}/{}", p.lost, p.samples.len())),
        ]);
    }
    t
}

fn status_note(r: &TestResult) -> String {
    match (&r.status, &r.error) {
        (results::Status::Completed, _) => String::new(),
        (_, Some(e)) => format!(" ({})", e.code),
        (s, None) => format!(" ({s:?})").to_lowercase(),
    }
}

/// Per concurrent round: each flow's throughput and share, Jain's index, convergence.
pub fn fairness_table(study: &CcStudy) -> Table {
    let mut t =
        Table::new(&["round", "control", "throughput (Mbit/s)", "share", "Jain's index", "converged"]);
    for f in &study.fairness {
        for (i, s) in f.shares.iter().enumerate() {
            let first = |text: String| if i == 0 { text } else { String::new() };
            t.rows.push(vec![
                first(f.round.to_string()),
                s.congestion.clone(),
                sig3(s.bps / 1e6),
                format!("{:.3}", s.share),
                first(f.jain.map_or_else(|| "–".into(), |j| format!("{j:.3}"))),
                first(f.convergence_s.map_or_else(|| "never".into(), |c| format!("after {} s", sig3(c)))),
            ]);
        }
    }
    t
}

/// Controls asked for and not available, with what is: one line, or empty.
pub fn unavailable_line(study: &CcStudy) -> String {
    if study.unavailable.is_empty() {
        return String::new();
    }
    format!(
        "not available in this kernel, left out: {} (available: {})",
        study.unavailable.join(", "),
        study.available.join(", ")
    )
}

/// What the probe is and how the columns are computed: one line.
pub fn method_note(study: &CcStudy) -> String {
    format!(
        "throughput = receiver's goodput per interval, mean ± sd; windows = consecutive full {} s windows, mean ± sd of their means; \
         RTT probe = {} every {} ms (lost after {} ms), idle = median of {} probes just before",
        sig3(study.window_ms as f64 / 1000.0),
        study.probe.method,
        study.probe.interval_ms,
        study.probe.timeout_ms,
        study.probe.idle_probes
    )
}

/// The comparison for a terminal: the seed's table, fairness when concurrent, notes.
pub fn text(study: &CcStudy, tests: &[TestResult]) -> String {
    let mut o = String::from("\ncongestion controls compared\n");
    o.push_str(&crate::tables::aligned(&table(study, tests)));
    if !study.fairness.is_empty() {
        let _ = writeln!(
            o,
            "\nconcurrent flows (converged: per-interval Jain's index ≥ {} from then on)",
            threshold(study)
        );
        o.push_str(&crate::tables::aligned(&fairness_table(study)));
    }
    let line = unavailable_line(study);
    if !line.is_empty() {
        let _ = writeln!(o, "{line}");
    }
    let _ = writeln!(o, "{}", method_note(study));
    o
}

fn threshold(study: &CcStudy) -> String {
    study.fairness.first().map_or_else(String::new, |f| format!("{}", f.threshold))
}

/// The probe series of `run`, if stored.
pub fn probe_of<'a>(study: &'a CcStudy, run: &CcRun) -> Option<&'a RttProbe> {
    study.probes.get(run.probe)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use results::cc::{CcFairness, CcShare, CcWindow, ProbeMethod, ProbeSample};

    /// A study of cubic and bbr (one round) with highspeed asked for and unavailable.
    pub(crate) fn study() -> CcStudy {
        let ms = |mean: f64, sd: f64, n: u32| Some(MeanSd { mean, sd, n });
        let window = |start_s: f64, mean: f64| CcWindow {
            start_s,
            end_s: start_s + 2.0,
            bps: MeanSd { mean, sd: 1e6, n: 2 },
        };
        let run = |congestion: &str, test: usize, mean: f64| CcRun {
            congestion: congestion.into(),
            round: 1,
            test,
            probe: test,
            throughput_bps: ms(mean, 3e6, 6),
            windowed_bps: ms(mean, 2e6, 3),
            windows: vec![window(0.0, mean - 2e6), window(2.0, mean), window(4.0, mean + 2e6)],
            stability: Some(3e6 / mean),
            retransmits: 12,
            series: (1..=6).map(|i| (f64::from(i), mean + f64::from(i % 2) * 1e6)).collect(),
        };
        let probe = |beside: &str, base: f64| RttProbe {
            round: 1,
            beside: vec![beside.into()],
            idle_rtt_us: Some(20_000.0),
            samples: (0..4)
                .map(|i| ProbeSample { at_s: f64::from(i) * 0.2, rtt_us: Some(base + f64::from(i) * 100.0) })
                .collect(),
            lost: 0,
            rtt_us: ms(base + 150.0, 129.0, 4),
            p50_us: Some(base + 100.0),
            p95_us: Some(base + 300.0),
            max_us: Some(base + 300.0),
            rise_p50_us: Some(base + 100.0 - 20_000.0),
        };
        CcStudy {
            asked: vec!["cubic".into(), "highspeed".into(), "bbr".into()],
            available: vec!["reno".into(), "cubic".into(), "bbr".into()],
            unavailable: vec!["highspeed".into()],
            concurrent: false,
            rounds: 1,
            window_ms: 2000,
            probe: ProbeMethod {
                method: "tcp-connect".into(),
                interval_ms: 200,
                timeout_ms: 1000,
                idle_probes: 5,
            },
            runs: vec![run("cubic", 0, 94e6), run("bbr", 1, 91e6)],
            probes: vec![probe("cubic", 31_000.0), probe("bbr", 22_000.0)],
            fairness: Vec::new(),
        }
    }

    #[test]
    fn the_seed_table_names_the_unavailable_control() {
        let out = text(&study(), &[]);
        insta::assert_snapshot!(out);
        assert!(out.contains("94.0 ± 3.00") && out.contains("highspeed (available: reno, cubic, bbr)"));
    }

    #[test]
    fn fairness_rows_per_flow_with_the_index_once() {
        let mut s = study();
        s.concurrent = true;
        s.fairness = vec![CcFairness {
            round: 1,
            shares: vec![
                CcShare { congestion: "cubic".into(), bps: 6e7, share: 0.6 },
                CcShare { congestion: "bbr".into(), bps: 4e7, share: 0.4 },
            ],
            jain: Some(0.96),
            threshold: 0.9,
            convergence_s: Some(3.0),
        }];
        let t = fairness_table(&s);
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[0][4], "0.960");
        assert_eq!(t.rows[1][4], "");
        assert_eq!(t.rows[0][5], "after 3.00 s");
        assert!(text(&s, &[]).contains("Jain's index ≥ 0.9"));
    }
}
