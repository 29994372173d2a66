//! What limited a result (DESIGN.md §5 "Diagnosis"; docs/diagnosis.md): a small rule set over
//! the measured facts of a TCP stream, a UDP stream or a request/response test. Pure: no I/O,
//! no clock.
//!
//! * [`facts`]: the numbers of one TCP direction, read out of a [`TestResult`]; unmeasured
//!   figures are `None`, never 0.
//! * [`rules`], [`loss`], [`pacing`], [`saturated`], [`stall`]: one function per cause of a TCP stream's
//!   limit, each returning a [`results::Finding`] when its numbers say so.
//! * [`udp`] and [`rr`]: the facts and rules of UDP streams and of transactions.
//! * [`verdict`]: findings to a [`Diagnosis`]: one per cause, ranked, no bound below the
//!   measured rate, close weights said as "between X and Y".
//! * [`reference`](mod@reference): what "theoretical" means for a result (`--link`, the link
//!   an emulated `--path` emulates, or the loopback baseline).
//! * [`path`]: what an emulated path changes in a result's warnings.
//!
//! [`annotate`] puts the reference, the "% of reference", the path's warnings and the
//! diagnosis into a result.
#![forbid(unsafe_code)]

pub mod facts;
pub mod loss;
pub mod pacing;
pub mod path;
pub mod reference;
pub mod rr;
pub mod rules;
pub mod saturated;
pub mod stall;
pub mod udp;
pub mod verdict;

use results::{
    Cause, Diagnosis, Reference, ReferenceKind, Status, SummaryTable, TestResult, Warning, WarningKind,
};

pub use facts::Facts;
pub use path::Path;
pub use reference::link_reference;
pub use verdict::MIN_CONTRIBUTING_WEIGHT;

/// Sets `reference`, each direction's share of it and the diagnosis of every direction (TCP
/// and UDP streams) or of the transactions (request/response); a test over an emulated
/// `path` gets the path's warnings first. A failed or interrupted test is diagnosed from what
/// it measured, when it measured anything.
pub fn annotate(result: &mut TestResult, reference: Option<Reference>, path: Option<&Path>) {
    if let Some(p) = path {
        path::warnings(result, p);
    }
    let share = |bps: f64| reference.as_ref().filter(|r| r.limit_bps > 0.0).map(|r| bps / r.limit_bps);
    for d in &mut result.summary.directions {
        d.of_reference = share(d.receiver_bps);
    }
    for d in &mut result.summary.udp {
        d.of_reference = share(d.receiver_bps);
    }
    result.reference = reference;
    let measured = result.status == Status::Completed || result.summary.headline_value().is_some();
    let mut found = Vec::new();
    // Each table the test type declares its results rows of has its own rules.
    for table in result.summary.produced().tables.into_iter().filter(|_| measured) {
        found.extend(match table {
            SummaryTable::Streams => tcp(result),
            SummaryTable::Datagrams => udp_directions(result, path),
            SummaryTable::Transactions => transactions(result, path),
        });
    }
    result.diagnosis = found;
}

fn tcp(result: &mut TestResult) -> Vec<Diagnosis> {
    let facts: Vec<Facts> =
        (0..result.summary.directions.len()).filter_map(|i| Facts::of(result, i)).collect();
    let facts = without_exceeded_reference(result, facts);
    facts.iter().map(diagnose).collect()
}

fn udp_directions(result: &TestResult, path: Option<&Path>) -> Vec<Diagnosis> {
    (0..result.summary.udp.len())
        .filter_map(|i| udp::UdpFacts::of(result, i, path))
        .map(|f| {
            let found = udp::ALL.iter().filter_map(|rule| rule(&f)).collect();
            verdict::decide(&f.d.direction, f.d.receiver_bps, found, udp::nothing_found(&f))
        })
        .collect()
}

fn transactions(result: &TestResult, path: Option<&Path>) -> Vec<Diagnosis> {
    let Some(f) = rr::RrFacts::of(result, path) else { return Vec::new() };
    let found = rr::ALL.iter().filter_map(|rule| rule(&f)).collect();
    vec![verdict::decide("transactions", 0.0, found, rr::nothing_found(&f))]
}

/// A link reference a direction exceeds by more than [`rules::ABOVE_LINK_FRAC`] does not
/// describe the path measured (`--link ethernet:1g` on loopback): the result is warned, and
/// the rules run without that reference.
fn without_exceeded_reference(result: &mut TestResult, mut facts: Vec<Facts>) -> Vec<Facts> {
    let link = |f: &Facts| f.reference.as_ref().is_some_and(|r| r.kind == ReferenceKind::Link);
    let over = facts
        .iter()
        .filter(|f| link(f))
        .filter_map(|f| f.of_reference().map(|x| (f.goodput_bps, x)))
        .filter(|(_, x)| *x > rules::ABOVE_LINK_FRAC)
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let (Some((goodput, frac)), Some(r)) = (over, result.reference.as_ref()) else { return facts };
    let warning = Warning {
        kind: WarningKind::ReferenceExceeded,
        message: format!(
            "{} is {:.0}% of the theoretical {} ({}): the traffic did not cross that link, so it is not this result's limit",
            model::human::rate(goodput),
            frac * 100.0,
            model::human::rate(r.limit_bps),
            r.description
        ),
        advice: "give the link the traffic really crosses with --link, or leave --link out (loopback has none)".into(),
    };
    if !result.warnings.iter().any(|w| w.kind == WarningKind::ReferenceExceeded) {
        result.warnings.push(warning);
    }
    for f in facts.iter_mut().filter(|f| link(f)) {
        f.reference = None;
    }
    facts
}

/// Runs every TCP rule over `facts`: the heaviest finding is the primary cause, the others
/// (above [`MIN_CONTRIBUTING_WEIGHT`]) contribute; close weights are split evidence.
pub fn diagnose(facts: &Facts) -> Diagnosis {
    let found = rules::ALL.iter().filter_map(|rule| rule(facts)).collect();
    verdict::decide(&facts.direction, facts.goodput_bps, found, rules::nothing_found(facts))
}

/// Whether a diagnosis names `cause` first.
pub fn is_primary(d: &Diagnosis, cause: Cause) -> bool {
    d.primary.cause == cause
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::{DirectionSummary, Summary, TestKind, TestSpec};

    fn stream(goodput_bps: f64) -> TestResult {
        let d = DirectionSummary {
            direction: "client→server".into(),
            receiver_bps: goodput_bps,
            ..Default::default()
        };
        TestResult {
            summary: Summary { directions: vec![d], ..Default::default() },
            ..TestResult::new("stream", TestSpec::new(TestKind::TcpStream), "127.0.0.1:1", 0)
        }
    }

    fn gige() -> Option<Reference> {
        Some(Reference { kind: ReferenceKind::Link, description: "ethernet:1g".into(), limit_bps: 941.48e6 })
    }

    #[test]
    fn a_link_far_below_the_result_is_warned_and_not_named() {
        let mut r = stream(12.1e9);
        annotate(&mut r, gige(), None);
        let w: Vec<_> = r.warnings.iter().filter(|w| w.kind == WarningKind::ReferenceExceeded).collect();
        assert!(w.len() == 1 && w[0].message.contains("1285% of the theoretical"), "{w:?}");
        assert!(r.diagnosis.iter().all(|d| d.primary.cause != Cause::Link), "{:?}", r.diagnosis);
        assert_eq!(
            r.summary.directions[0].of_reference.map(|x| x > 12.0),
            Some(true),
            "the share stays true"
        );
        let mut near = stream(930e6);
        annotate(&mut near, gige(), None);
        assert!(near.warnings.is_empty());
        assert_eq!(near.diagnosis.first().map(|d| d.primary.cause), Some(Cause::Link));
    }
}
