//! From findings to a verdict: the heaviest finding per cause, ranked; a bound below the
//! measured rate is never kept as a bound; and where the two heaviest causes weigh the same
//! to within [`SPLIT_MARGIN`], the verdict says the evidence is split rather than pick one.

use results::{Diagnosis, Finding};

/// A bound may be this share of the measured rate and still stand (the rate's own noise,
/// and a mean RTT that includes queueing); below it a "bound" is not one, and is dropped.
pub const BOUND_SLACK: f64 = 0.9;
/// Weights closer than this are split evidence: "between X and Y".
pub const SPLIT_MARGIN: f64 = 0.02;
/// Findings lighter than this are left out of the contributing causes.
pub const MIN_CONTRIBUTING_WEIGHT: f64 = 0.3;

/// The diagnosis of one direction from its findings; `fallback` (no cause identified) when
/// there are none.
pub fn decide(direction: &str, measured_bps: f64, found: Vec<Finding>, fallback: Finding) -> Diagnosis {
    let mut found: Vec<Finding> = found.into_iter().map(|f| with_true_bound(f, measured_bps)).collect();
    found.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    let mut causes = Vec::new();
    found.retain(|f| {
        let first = !causes.contains(&f.cause);
        causes.push(f.cause);
        first
    });
    let mut found = found.into_iter();
    let primary = found.next().unwrap_or(fallback);
    let contributing: Vec<Finding> = found.filter(|f| f.weight >= MIN_CONTRIBUTING_WEIGHT).collect();
    let split = contributing.first().is_some_and(|c| primary.weight - c.weight <= SPLIT_MARGIN);
    Diagnosis { direction: direction.to_string(), primary, contributing, split }
}

/// `f` without a bound below the measured rate.
fn with_true_bound(mut f: Finding, measured_bps: f64) -> Finding {
    if f.bound_bps.is_some_and(|b| b < BOUND_SLACK * measured_bps) {
        f.bound_bps = None;
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::Cause;

    fn finding(cause: Cause, weight: f64, bound_bps: Option<f64>) -> Finding {
        Finding { cause, weight, evidence: String::new(), advice: String::new(), bound_bps }
    }

    fn unknown() -> Finding {
        finding(Cause::Unknown, 0.0, None)
    }

    #[test]
    fn the_heaviest_cause_wins_once_and_close_weights_split() {
        let found = vec![
            finding(Cause::SenderCpu, 0.5, None),
            finding(Cause::Link, 0.97, None),
            finding(Cause::SenderCpu, 0.9, None),
        ];
        let d = decide("up", 1e6, found, unknown());
        assert_eq!(d.primary.cause, Cause::Link);
        assert_eq!(d.contributing.len(), 1, "one finding per cause: {d:?}");
        assert!(!d.split);
        let found = vec![finding(Cause::StopAndGo, 0.93, None), finding(Cause::ReceiveWindow, 0.92, None)];
        let d = decide("up", 1e6, found, unknown());
        assert!(d.split);
        assert_eq!(d.named(), vec![Cause::StopAndGo, Cause::ReceiveWindow]);
        assert_eq!(decide("up", 1e6, Vec::new(), unknown()).primary.cause, Cause::Unknown);
    }

    #[test]
    fn a_bound_below_the_measurement_is_not_kept() {
        let d = decide("up", 113.7e6, vec![finding(Cause::ReceiveWindow, 0.9, Some(93.4e6))], unknown());
        assert_eq!(d.primary.bound_bps, None);
        let d = decide("up", 113.7e6, vec![finding(Cause::ReceiveWindow, 0.9, Some(186.7e6))], unknown());
        assert_eq!(d.primary.bound_bps, Some(186.7e6));
    }
}
