//! What the reports say about why a result is what it is: the diagnosis of every stream, the
//! reference it is compared with (a link's theoretical goodput or the loopback baseline) and
//! the emulated path's counters — as tables for the HTML and markdown renderers.

use results::{EmuTally, TestResult};

use crate::param_grid::distinct_labels;
use crate::tables::Table;
use crate::units::{micros, rate};

/// One row per diagnosed direction: the primary cause, its evidence and advice, and the
/// contributing causes.
pub fn diagnosis(tests: &[&TestResult]) -> Table {
    let mut t = Table::new(&["test", "direction", "verdict", "evidence", "advice", "also"]);
    for (r, label) in tests.iter().zip(distinct_labels(tests)) {
        for d in &r.diagnosis {
            let also: Vec<&str> = d.contributing.iter().map(|f| f.cause.label()).collect();
            t.rows.push(vec![
                label.clone(),
                d.direction.clone(),
                d.verdict(),
                d.primary.evidence.clone(),
                d.primary.advice.clone(),
                if also.is_empty() { "–".into() } else { also.join(", ") },
            ]);
        }
    }
    t
}

/// One row per test compared with a reference: what it is, its rate, and the share reached.
pub fn references(tests: &[&TestResult]) -> Table {
    let mut t = Table::new(&["test", "compared with", "limit", "share"]);
    for (r, label) in tests.iter().zip(distinct_labels(tests)) {
        let Some(reference) = &r.reference else { continue };
        let shares: Vec<String> = (r.summary.directions.iter().filter_map(|d| d.of_reference))
            .chain(r.summary.udp.iter().filter_map(|d| d.of_reference))
            .map(|f| format!("{:.1}%", f * 100.0))
            .collect();
        t.rows.push(vec![
            label,
            reference.description.clone(),
            rate(reference.limit_bps),
            if shares.is_empty() { "–".into() } else { shares.join(" / ") },
        ]);
    }
    t
}

/// One row per direction of every test run across the emulated link.
pub fn emu(tests: &[&TestResult]) -> Table {
    let mut t = Table::new(&[
        "test",
        "path",
        "direction",
        "offered",
        "delivered",
        "loss model",
        "queue overflow",
        "cell loss",
        "release lateness mean / max",
    ]);
    for (r, label) in tests.iter().zip(distinct_labels(tests)) {
        let Some(first) = &r.emu else { continue };
        for (e, d) in std::iter::once(first)
            .chain(first.second_path.as_deref())
            .flat_map(|e| e.directions.iter().map(move |d| (e, d)))
        {
            t.rows.push(vec![
                label.clone(),
                e.path.clone(),
                d.direction.clone(),
                tally(d.offered),
                tally(d.delivered),
                tally(d.drops_loss_model),
                tally(d.drops_queue_overflow),
                format!("{} ({} cells)", tally(d.drops_cell_loss), d.lost_cells),
                format!("{} / {}", micros(d.lateness_mean_us), micros(d.lateness_max_us)),
            ]);
        }
    }
    t
}

fn tally(t: EmuTally) -> String {
    format!("{} pkts", t.packets)
}

/// A test's theoretical limit or baseline, for reference lines on goodput plots.
pub fn limit(r: &TestResult) -> Option<(String, f64)> {
    r.reference.as_ref().filter(|x| x.limit_bps > 0.0).map(|x| (x.description.clone(), x.limit_bps))
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::{Cause, Diagnosis, Finding, Reference, ReferenceKind};

    #[test]
    fn tables_come_from_the_typed_fields() {
        let mut r = crate::fixture::stream(8192, 65536, 1.0);
        let finding = |cause, evidence: &str| Finding {
            cause,
            weight: 0.9,
            evidence: evidence.into(),
            advice: "do this".into(),
            bound_bps: None,
        };
        r.diagnosis = vec![Diagnosis {
            direction: "client→server".into(),
            primary: finding(Cause::ReceiveWindow, "rwnd-limited 80%"),
            contributing: vec![finding(Cause::SenderCpu, "busy")],
            split: false,
        }];
        r.reference = Some(Reference {
            kind: ReferenceKind::Link,
            description: "ethernet:1g".into(),
            limit_bps: 941.48e6,
        });
        r.summary.directions[0].of_reference = Some(0.5);
        let tests = [&r];
        let d = diagnosis(&tests);
        assert_eq!(d.rows[0][2], "limited by receive window");
        assert_eq!(d.rows[0][5], "sender CPU");
        let x = references(&tests);
        assert_eq!((x.rows[0][1].as_str(), x.rows[0][3].as_str()), ("ethernet:1g", "50.0%"));
        assert!(emu(&tests).is_empty());
        assert_eq!(limit(&r).map(|l| l.1), Some(941.48e6));
    }
}
