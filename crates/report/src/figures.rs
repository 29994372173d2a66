//! A test type's own figures (`Summary::figures`), shown as they are — labelled values in
//! tcplab's units — for whatever test type has them; no renderer knows which.

use std::fmt::Write;

use results::{Figure, FigureValue};

use crate::units::{bytes, micros, rate};

/// A figure's value in words and units: `11.0 MiB`, `40.0 ms`, `75%`.
pub fn value(v: &FigureValue) -> String {
    match v {
        FigureValue::Bytes(n) => bytes(*n),
        FigureValue::Count(n) => crate::units::count(*n),
        FigureValue::Seconds(s) => micros(s * 1e6),
        FigureValue::BitRate(bps) => rate(*bps),
        FigureValue::Share(f) => format!("{:.0}%", f * 100.0),
        FigureValue::Text(t) => t.clone(),
    }
}

/// The figures block of a text summary: one line each.
pub fn block(o: &mut String, figures: &[Figure]) {
    for f in figures {
        let _ = writeln!(o, "    {}: {}", f.label, shown(f));
    }
}

/// A figure's value as shown: after repeats, a mean with its spread
/// (`3.00 s ± 2.65 s (1.00 s–6.00 s, 3 runs)`) or each run's value (`run 1: a · run 2: b`).
pub fn shown(f: &Figure) -> String {
    if !f.per_run.is_empty() {
        let runs: Vec<String> =
            f.per_run.iter().enumerate().map(|(i, v)| format!("run {}: {}", i + 1, value(v))).collect();
        return runs.join(" · ");
    }
    match f.spread {
        Some(p) if p.runs > 1 => {
            let [sd, lo, hi] = [p.stddev, p.min, p.max].map(|x| value(&f.value.with_number(x)));
            format!("{} ± {sd} ({lo}–{hi}, {} runs)", value(&f.value), p.runs)
        }
        _ => value(&f.value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_reads_in_its_unit() {
        let figures = vec![
            Figure::new("file size", FigureValue::Bytes(11 << 20)),
            Figure::new("receiver sync time (part of disk)", FigureValue::Seconds(0.04)),
            Figure::new("truly zero-copy", FigureValue::Share(0.75)),
            Figure::new("MSG_ZEROCOPY sends", FigureValue::Count(1234)),
            Figure::new("verification", FigureValue::Text("SHA-256 verified".into())),
        ];
        let mut o = String::new();
        block(&mut o, &figures);
        for needle in [
            "file size: 11.0 MiB",
            "receiver sync time (part of disk): 40.0 ms",
            "truly zero-copy: 75%",
            "MSG_ZEROCOPY sends: 1,234",
            "verification: SHA-256 verified",
        ] {
            assert!(o.contains(needle), "{needle} in {o}");
        }
    }

    #[test]
    fn repeats_show_their_spread_or_each_run() {
        let mut disk = Figure::new("receiver disk time", FigureValue::Seconds(0.003));
        disk.spread = Some(results::Spread { runs: 3, stddev: 0.002, min: 0.001, max: 0.006 });
        let mut verdict = Figure::new("verification", FigureValue::Text("a".into()));
        verdict.per_run = vec![FigureValue::Text("a".into()), FigureValue::Text("b".into())];
        assert_eq!(shown(&disk), "3.00 ms ± 2.00 ms (1.00 ms–6.00 ms, 3 runs)");
        assert_eq!(shown(&verdict), "run 1: a · run 2: b");
    }
}
