//! What limited a stream result (DESIGN.md §5 "Diagnosis"): a small rule set over the
//! measured facts. Pure: no I/O, no clock.
//!
//! * [`facts`]: the numbers of one direction, read out of a [`TestResult`].
//! * [`rules`]: one function per cause, each returning a [`Finding`] when its numbers say so.
//! * [`reference`](mod@reference): what "theoretical" means for a result (`--link` or the loopback baseline).
//!
//! [`annotate`] puts the reference, the "% of reference" and the diagnosis into a result.
#![forbid(unsafe_code)]

pub mod facts;
pub mod reference;
pub mod rules;

use results::{Cause, Diagnosis, Finding, Reference, Shape, Status, TestResult};

pub use facts::Facts;
pub use reference::link_reference;

/// Findings lighter than this are left out of the contributing causes.
pub const MIN_CONTRIBUTING_WEIGHT: f64 = 0.3;

/// Sets `reference`, each direction's share of it and the diagnosis of every direction of a
/// stream result. Other tests are left as they are (they have no throughput to explain).
pub fn annotate(result: &mut TestResult, reference: Option<Reference>) {
    match result.summary.shape {
        Some(Shape::UdpBulk) => {
            if let Some(r) = reference.as_ref().filter(|r| r.limit_bps > 0.0) {
                result
                    .summary
                    .udp
                    .iter_mut()
                    .for_each(|d| d.of_reference = Some(d.receiver_bps / r.limit_bps));
            }
            result.reference = reference;
            return;
        }
        Some(Shape::TcpBulk) => {}
        Some(Shape::Transactions) | None => return,
    }
    if let Some(r) = &reference {
        for d in &mut result.summary.directions {
            d.of_reference = (r.limit_bps > 0.0).then(|| d.receiver_bps / r.limit_bps);
        }
    }
    result.reference = reference;
    result.diagnosis = if result.status == Status::Failed && result.summary.headline_value().is_none() {
        Vec::new()
    } else {
        (0..result.summary.directions.len())
            .filter_map(|i| Facts::of(result, i))
            .map(|f| diagnose(&f))
            .collect()
    };
}

/// Runs every rule over `facts`: the heaviest finding is the primary cause, the others (above
/// [`MIN_CONTRIBUTING_WEIGHT`]) contribute.
pub fn diagnose(facts: &Facts) -> Diagnosis {
    let mut found: Vec<Finding> = rules::ALL.iter().filter_map(|rule| rule(facts)).collect();
    found.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    let mut found = found.into_iter();
    let primary = found.next().unwrap_or_else(|| rules::nothing_found(facts));
    Diagnosis {
        direction: facts.direction.clone(),
        primary,
        contributing: found.filter(|f| f.weight >= MIN_CONTRIBUTING_WEIGHT).collect(),
    }
}

/// Whether a diagnosis names `cause` first.
pub fn is_primary(d: &Diagnosis, cause: Cause) -> bool {
    d.primary.cause == cause
}
