//! Limits the sender or the test bench set on purpose or by accident: the sender's own
//! pacing (`-b`), and an emulator that released packets later than the link it models.

use model::human::rate;
use results::{Cause, Finding};

use crate::facts::{Facts, PathLateness};
use crate::rules::{pct, NEAR_LINK_FRAC};

/// Share of the pacing target from which the target is the limit.
pub const PACED_FRAC: f64 = 0.9;
/// Share of the target above which the result was not held to it (pacing did not bind).
pub const ABOVE_TARGET_FRAC: f64 = 1.1;
/// Release lateness p99 from which the emulator counts as the limit, µs (twice the level of
/// the "late" warning: a 64 KB super-packet's time at 500 Mbit/s).
pub const EMULATOR_LATE_P99_US: f64 = 2.0 * results::emu::LATE_P99_US;
/// Median release lateness from which the emulator was behind most of the time, not only in
/// the occasional stall of a busy host, µs.
pub const EMULATOR_LATE_P50_US: f64 = 50.0;
/// Mean release lateness from which the emulator held the path back even when most packets
/// left on time, µs: a CPU quota's stop-and-go (on time while it runs, every packet waiting
/// while it is throttled). An occasional stall of a busy host adds tens of µs to the mean.
pub const EMULATOR_LATE_MEAN_US: f64 = 1000.0;

/// The sender paced itself (`-b`) and reached its target: it sent no faster than asked.
pub fn paced(f: &Facts) -> Option<Finding> {
    let per_stream = f.paced_bps?;
    let target = per_stream * f64::from(f.streams.max(1));
    let share = f.goodput_bps / target;
    if !(PACED_FRAC..=ABOVE_TARGET_FRAC).contains(&share) {
        return None;
    }
    Some(Finding {
        cause: Cause::Pacing,
        weight: 0.98,
        evidence: format!(
            "the sender paced itself at -b {} per stream × {}: {} received, {} of the target",
            rate(per_stream),
            f.streams.max(1),
            rate(f.goodput_bps),
            pct(share)
        ),
        advice: "the application's rate target is the limit: raise -b, or -b 0 for as fast as possible"
            .into(),
        bound_bps: Some(target.max(f.goodput_bps)),
    })
}

/// The emulator released packets late (p99 above [`EMULATOR_LATE_P99_US`], and late most of
/// the time or by a millisecond on average) while the result stayed below the link: the
/// emulated link sat idle while packets waited for a thread.
pub fn emulator_late(f: &Facts) -> Option<Finding> {
    let late = lateness_that_limits(f)?;
    Some(Finding {
        cause: Cause::Emulator,
        // Below the mechanisms a configuration fixes (window, buffer, loss, quota): a late
        // emulator delays their packets, it does not replace their limit.
        weight: 0.8,
        evidence: format!(
            "the emulator released packets late: p99 {:.0} µs, median {:.0} µs, mean {:.0} µs behind the link's schedule",
            late.p99_us, late.p50_us, late.mean_us
        ),
        advice: "the emulator's threads did not keep up on this host (they share its CPUs with both ends): repeat on an idle host, or emulate a slower link".into(),
        bound_bps: None,
    })
}

/// The emulator's lateness when it was late enough to hold the result below the link:
/// p99 above [`EMULATOR_LATE_P99_US`], and late most of the time or by a millisecond on
/// average. Its own queue then fills while it waits, so its queue drops are its lateness's.
pub(crate) fn lateness_that_limits(f: &Facts) -> Option<PathLateness> {
    let late = f.path_lateness.filter(|l| {
        l.p99_us >= EMULATOR_LATE_P99_US
            && (l.p50_us >= EMULATOR_LATE_P50_US || l.mean_us >= EMULATOR_LATE_MEAN_US)
    })?;
    (!f.of_reference().is_some_and(|x| x >= NEAR_LINK_FRAC)).then_some(late)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reached_target_is_the_pacing_and_a_missed_one_is_not() {
        let mut f = Facts { goodput_bps: 49.8e6, paced_bps: Some(25e6), streams: 2, ..Facts::default() };
        let x = paced(&f);
        assert!(
            x.as_ref().is_some_and(|x| x.evidence.contains("× 2") && x.evidence.contains("100%")),
            "{x:?}"
        );
        f.goodput_bps = 20e6;
        assert!(paced(&f).is_none(), "40% of the target: something else held it");
        f.paced_bps = None;
        assert!(paced(&f).is_none());
    }

    #[test]
    fn late_releases_below_the_link_name_the_emulator() {
        let mut f = Facts {
            goodput_bps: 3e9,
            path_lateness: Some(PathLateness { p99_us: 4000.0, p50_us: 300.0, mean_us: 400.0 }),
            ..Facts::default()
        };
        assert!(emulator_late(&f).is_some_and(|x| x.evidence.contains("p99 4000 µs")));
        f.path_lateness = Some(PathLateness { p99_us: 100.0, p50_us: 10.0, mean_us: 12.0 });
        assert!(emulator_late(&f).is_none());
        f.path_lateness = Some(PathLateness { p99_us: 3000.0, p50_us: 5.0, mean_us: 40.0 });
        assert!(emulator_late(&f).is_none(), "an occasional stall of a busy host is not the limit");
        // A quota's stop-and-go: most packets on time, every one queued behind a throttled
        // period tens of ms late.
        f.path_lateness = Some(PathLateness { p99_us: 98_000.0, p50_us: 25.0, mean_us: 30_000.0 });
        assert!(emulator_late(&f).is_some_and(|x| x.evidence.contains("mean 30000 µs")));
    }
}
