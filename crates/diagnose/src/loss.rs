//! Loss as a TCP stream's limit. Over an emulated path the emulator says where packets
//! dropped, so the two mechanisms are told apart: drops at the bottleneck's full drop-tail
//! queue (the sender's window overran the queue, seed 003's 100-packet queue) and random
//! drops of the path's loss model (TCP's window follows the loss rate: Mathis's regime).
//! Without an emulator the location is unknown: "congestion/loss". A Reno-like bound far
//! from the measured rate shows the loss did not set the rate: no finding. The advice never
//! names the congestion control already in use.

use std::time::Duration;

use model::human::{micros, rate};
use model::loss::{mathis_bps, LossPath, MathisConstant};
use results::{Cause, Finding};

use crate::facts::Facts;
use crate::rules::{link, pct};

/// Resent share from which loss contributes, and from which it is a strong suspect.
pub const LOSS_RATE: (f64, f64) = (1e-4, 1e-3);
/// How far below the measured goodput a model bound may fall and still count as evidence
/// (bbr, or drops in bursts counted one by one, run far above it; a short test's slow start
/// and its few loss events put a loss-based control up to about 2× above it).
pub const MATHIS_FAR_BELOW: f64 = 3.0;
/// How far above the measured goodput a model bound may be and still be the limit: a loss
/// rate that allows many times the rate measured did not hold it back.
pub const MATHIS_FAR_ABOVE: f64 = 3.0;

/// Drops at the emulated bottleneck's full queue, below the link's rate. Not when the
/// emulator ran late: its queue then filled because it did not release on time.
pub fn queue_overflow(f: &Facts) -> Option<Finding> {
    let d = f.path_drops?;
    let p = f.loss_rate().filter(|&p| p >= LOSS_RATE.0)?;
    if d.queue_overflow == 0 || d.queue_overflow < d.random || link(f).is_some() {
        return None;
    }
    if crate::pacing::lateness_that_limits(f).is_some() {
        return None;
    }
    let share = f
        .of_reference()
        .filter(|&x| x <= 1.0)
        .map(|x| format!("; {} is {} of the link", rate(f.goodput_bps), pct(x)));
    Some(Finding {
        cause: Cause::QueueOverflow,
        weight: strength(p, (0.86, 0.6)),
        evidence: format!(
            "the emulator's full queue dropped {} packets ({} at random); {}: {}{}",
            d.queue_overflow,
            d.random,
            resent(f, p),
            backed_off(f),
            share.unwrap_or_default()
        ),
        advice: advice(
            f,
            "a queue near the bandwidth-delay product (queue=) keeps the link busy through a back-off",
        ),
        bound_bps: None,
    })
}

/// Random drops of the emulated path's loss model, in Mathis's regime.
pub fn random_loss(f: &Facts) -> Option<Finding> {
    let d = f.path_drops?;
    let p = f.loss_rate().filter(|&p| p >= LOSS_RATE.0)?;
    if d.random == 0 || d.random <= d.queue_overflow {
        return None;
    }
    let (bound_text, bound_bps) = mathis_evidence(f, p)?;
    Some(Finding {
        cause: Cause::RandomLoss,
        weight: strength(p, (0.86, 0.6)),
        evidence: format!(
            "the path's loss model dropped {} packets ({} at the full queue); {}{bound_text}",
            d.random,
            d.queue_overflow,
            resent(f, p)
        ),
        advice: advice(f, "the drops are the path's own loss (see the emulator's counters)"),
        bound_bps,
    })
}

/// Loss whose location is unknown (not over an emulated path; not on loopback, where
/// retransmits are reordering).
pub fn congestion(f: &Facts) -> Option<Finding> {
    if f.path_drops.is_some() || f.same_host {
        return None;
    }
    let p = f.loss_rate().filter(|&p| p >= LOSS_RATE.0)?;
    let (bound_text, bound_bps) = mathis_evidence(f, p)?;
    Some(Finding {
        cause: Cause::Congestion,
        weight: strength(p, (0.7, 0.45)),
        evidence: format!("{}{bound_text}", resent(f, p)),
        advice: advice(f, "find where packets drop (ip -s link, nstat, the switches' counters)"),
        bound_bps,
    })
}

/// The loss model's bound at loss rate `p` as evidence (CUBIC's response function for cubic,
/// Mathis's Reno-like one otherwise), or `None` when it is far from the measured rate (then
/// the loss did not set it). Printed as a bound only when it is not below the measured rate.
fn mathis_evidence(f: &Facts, p: f64) -> Option<(String, Option<f64>)> {
    let Some((bound, model)) = model_bound(f, p) else { return Some((String::new(), None)) };
    if bound * MATHIS_FAR_BELOW < f.goodput_bps || bound > MATHIS_FAR_ABOVE * f.goodput_bps {
        return None;
    }
    let rtt = micros(f.rtt_us.unwrap_or(0.0));
    if bound >= crate::verdict::BOUND_SLACK * f.goodput_bps {
        let text = format!("; {model} at RTT {rtt} allows {}", rate(bound));
        return Some((text, Some(bound)));
    }
    let text = format!(
        "; {model} at RTT {rtt} estimates {}, within {MATHIS_FAR_BELOW:.0}× of the rate measured",
        rate(bound)
    );
    Some((text, None))
}

/// The rate a loss-based control reaches at loss rate `p`, and the model's name: CUBIC runs at
/// the larger of its own response function and its Reno-friendly estimate.
fn model_bound(f: &Facts, p: f64) -> Option<(f64, &'static str)> {
    let rtt = f.rtt_us.filter(|&r| r > 0.0)?;
    let path = LossPath::new(f.mss_bytes?, Duration::from_micros(rtt as u64), p.min(1.0));
    if f.congestion_control == "cubic" {
        let c = model::cubic::loss_limit(&path).ok()?;
        return Some((c.rate_bps.max(c.reno_rate_bps), "CUBIC's response function (RFC 9438)"));
    }
    let reno = mathis_bps(&path, MathisConstant::AckEverySegment).ok()?;
    Some((reno, "the Reno-like bound (Mathis, C = 1.22)"))
}

/// The weight of a loss finding: `(strong, weak)` from the strong loss rate on, and below it.
fn strength(p: f64, (strong, weak): (f64, f64)) -> f64 {
    if p >= LOSS_RATE.1 {
        strong
    } else {
        weak
    }
}

/// `40 retransmits in 1916 segments (p = 2.1e-2)`.
fn resent(f: &Facts, p: f64) -> String {
    format!(
        "{} retransmits in {} segments (p = {p:.1e})",
        f.retransmits.unwrap_or(0),
        f.segments_out.unwrap_or(0)
    )
}

/// What the sender's control did at the overflowing queue: a loss-based control cut its
/// window; bbr does not cut on loss, it resent what the queue dropped.
fn backed_off(f: &Facts) -> String {
    match f.congestion_control.as_str() {
        "bbr" => "the sender overran the queue; bbr does not cut its rate on loss, so its resends took part of the link".into(),
        "" => "the sender's window overran the queue and its congestion control cut it".into(),
        cc => format!("the sender's window overran the queue and {cc} cut it"),
    }
}

fn advice(f: &Facts, find: &str) -> String {
    match f.congestion_control.as_str() {
        "bbr" => format!("{find}; bbr, in use, already does not back off on each loss"),
        _ => format!("{find}; or try -C bbr, which does not back off on each loss"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::PathDrops;
    use results::{Reference, ReferenceKind};

    fn lossy() -> Facts {
        Facts {
            goodput_bps: 29e6,
            rtt_us: Some(170_000.0),
            mss_bytes: Some(1448),
            retransmits: Some(614),
            segments_out: Some(50_000),
            congestion_control: "reno".into(),
            reference: Some(Reference {
                kind: ReferenceKind::Link,
                description: "1g".into(),
                limit_bps: 941e6,
            }),
            path_drops: Some(PathDrops { queue_overflow: 614, random: 0 }),
            ..Facts::default()
        }
    }

    #[test]
    fn seed_003s_queue_overflow_is_named_though_mathis_is_far_below() {
        let f = lossy();
        let x = queue_overflow(&f);
        assert!(x.as_ref().is_some_and(|x| x.cause == Cause::QueueOverflow && x.weight > 0.8), "{x:?}");
        assert!(
            x.is_some_and(|x| x.evidence.contains("reno cut it") && x.evidence.contains("3% of the link"))
        );
        assert!(random_loss(&f).is_none() && congestion(&f).is_none());
    }

    #[test]
    fn a_late_emulators_full_queue_is_its_lateness() {
        let mut f = lossy();
        // A throttled emulator: on time while it runs, every packet tens of ms late while it
        // waits; its queue overflowed meanwhile.
        f.path_lateness =
            Some(crate::facts::PathLateness { p99_us: 290_000.0, p50_us: 40.0, mean_us: 15_000.0 });
        assert!(queue_overflow(&f).is_none());
        assert!(crate::pacing::emulator_late(&f).is_some());
        // An emulator late only now and then leaves the queue's drops their own.
        f.path_lateness = Some(crate::facts::PathLateness { p99_us: 3_000.0, p50_us: 5.0, mean_us: 60.0 });
        assert!(queue_overflow(&f).is_some());
    }

    #[test]
    fn random_drops_are_random_loss_with_a_bound_not_below_the_rate() {
        let mut f = lossy();
        f.path_drops = Some(PathDrops { queue_overflow: 0, random: 614 });
        // p = 1.2e-2 at 170 ms: Mathis allows ~0.76 Mbit/s, far below 29 Mbit/s: not the limit.
        assert!(random_loss(&f).is_none());
        f.goodput_bps = 0.8e6;
        let x = random_loss(&f);
        assert!(x.as_ref().is_some_and(|x| x.bound_bps.is_none_or(|b| b >= 0.9 * 0.8e6)), "{x:?}");
        f.goodput_bps = 0.1e6;
        assert!(random_loss(&f).is_none(), "a bound 7× the rate did not hold it back");
    }

    #[test]
    fn unknown_figures_claim_no_loss() {
        let mut f = lossy();
        f.segments_out = None;
        assert!(queue_overflow(&f).is_none() && random_loss(&f).is_none());
        let mut f = lossy();
        f.path_drops = None;
        f.retransmits = None;
        assert!(congestion(&f).is_none());
    }
}
