//! Waking on time on a host whose idle CPUs are slow to wake. A pump thread sleeps until a
//! packet's release time; on a virtual machine with idle vCPUs the timer fires tens to
//! hundreds of µs late, and every packet would leave that much late. So the thread learns how
//! late its timed sleeps end — a high percentile of the recent ones, not their mean, since it
//! is the late tail that shows in a release's lateness — sleeps that much less, and spins the
//! rest of the way to the release time. On a busy host sleeps end on time, the margin
//! shrinks towards zero and so does the spinning: the cost is paid only where it buys
//! accuracy. A budget bounds it: when spinning took more than [`SPIN_BUDGET`] of the thread's
//! recent time (releases closer together than the margin), the thread sleeps plainly until
//! the share falls again, so a dense link never turns a real-time thread into a busy loop.

use std::time::Duration;

/// The largest margin learned: beyond it the host is too noisy to spin through.
pub const MAX_MARGIN: Duration = Duration::from_millis(1);
/// The most of its time a thread may spend spinning, over [`BUDGET_WINDOW`].
pub const SPIN_BUDGET: f64 = 0.35;
/// The span the spinning share is measured over.
pub const BUDGET_WINDOW: Duration = Duration::from_millis(100);
/// Recent oversleeps the margin is taken from.
const RECENT: usize = 256;
/// The percentile of them the margin is (per mille).
const PERCENTILE_PER_MILLE: usize = 990;
/// Oversleeps between recomputations of the margin.
const EVERY: usize = 32;

/// The learned wake-up margin and the spinning budget.
#[derive(Debug, Clone)]
pub struct EarlyWake {
    margin_ns: u64,
    recent: Vec<u64>,
    next: usize,
    seen: usize,
    /// Spinning and total time in the current budget window, ns.
    spun_ns: u64,
    window_ns: u64,
    /// Spinning's share of the last full window.
    last_share: f64,
}

impl Default for EarlyWake {
    fn default() -> Self {
        EarlyWake {
            margin_ns: 0,
            recent: Vec::with_capacity(RECENT),
            next: 0,
            seen: 0,
            spun_ns: 0,
            window_ns: 0,
            last_share: 0.0,
        }
    }
}

impl EarlyWake {
    /// How long to sleep when the next release is `until_due` away: that, less the margin.
    pub fn sleep_for(&self, until_due: Duration) -> Duration {
        until_due.saturating_sub(Duration::from_nanos(self.margin_ns))
    }

    /// The margin now.
    pub fn margin(&self) -> Duration {
        Duration::from_nanos(self.margin_ns)
    }

    /// Learns from a timed sleep of `asked` that ended after `slept`: the margin is the 99th
    /// percentile of the last 256 oversleeps, capped at [`MAX_MARGIN`].
    pub fn observe(&mut self, asked: Duration, slept: Duration) {
        let over = u64::try_from(slept.saturating_sub(asked).as_nanos()).unwrap_or(u64::MAX);
        let over = over.min(u64::try_from(MAX_MARGIN.as_nanos()).unwrap_or(u64::MAX));
        if self.recent.len() < RECENT {
            self.recent.push(over);
        } else {
            self.recent[self.next] = over;
        }
        self.next = (self.next + 1) % RECENT;
        self.seen += 1;
        if self.seen % EVERY == 0 || self.recent.len() < EVERY {
            let mut sorted = self.recent.clone();
            sorted.sort_unstable();
            let at = (sorted.len() * PERCENTILE_PER_MILLE / 1000).min(sorted.len() - 1);
            self.margin_ns = sorted[at];
        }
    }

    /// Whether spinning is within budget now.
    pub fn may_spin(&self) -> bool {
        self.last_share <= SPIN_BUDGET
    }

    /// Accounts `elapsed` of the thread's time, `spun` of it spinning.
    pub fn account(&mut self, elapsed: Duration, spun: Duration) {
        self.window_ns += u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.spun_ns += u64::try_from(spun.as_nanos()).unwrap_or(u64::MAX);
        if self.window_ns >= u64::try_from(BUDGET_WINDOW.as_nanos()).unwrap_or(u64::MAX) {
            self.last_share = self.spun_ns as f64 / self.window_ns as f64;
            (self.spun_ns, self.window_ns) = (0, 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    #[test]
    fn the_margin_is_the_late_tail_and_is_capped() {
        let mut w = EarlyWake::default();
        assert_eq!(w.sleep_for(us(500)), us(500));
        for i in 0..RECENT as u64 {
            // 30 µs late mostly, 1 in 50 sleeps 200 µs late.
            let late = if i % 50 == 0 { 200 } else { 30 };
            w.observe(us(1000), us(1000 + late));
        }
        assert_eq!(w.margin(), us(200), "the tail, not the mean");
        assert_eq!(w.sleep_for(us(1000)), us(800));
        assert_eq!(w.sleep_for(us(100)), Duration::ZERO, "due sooner than the margin: spin only");
        for _ in 0..RECENT {
            w.observe(us(1000), us(1000));
        }
        assert_eq!(w.margin(), Duration::ZERO, "on-time sleeps shrink it");
        for _ in 0..RECENT {
            w.observe(us(10), Duration::from_secs(1));
        }
        assert_eq!(w.margin(), MAX_MARGIN);
    }

    #[test]
    fn waking_early_is_not_an_oversleep() {
        let mut w = EarlyWake::default();
        w.observe(us(1000), us(10));
        assert_eq!(w.margin(), Duration::ZERO);
    }

    #[test]
    fn spinning_stops_over_budget_and_resumes_under_it() {
        let mut w = EarlyWake::default();
        assert!(w.may_spin());
        for _ in 0..20 {
            w.account(us(10_000), us(5_000));
        }
        assert!(!w.may_spin(), "half the time spinning is over budget");
        for _ in 0..20 {
            w.account(us(10_000), us(1_000));
        }
        assert!(w.may_spin());
    }
}
