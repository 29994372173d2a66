//! Waking on time on a host whose idle CPUs are slow to wake. A pump thread sleeps until a
//! packet's release time; on a virtual machine with idle vCPUs the timer fires hundreds of µs
//! late, and every packet would leave that much late. So the thread learns how late its
//! timed sleeps end (a moving average), sleeps that much less, and spins the rest of the way
//! to the release time. On a busy host sleeps end on time, the margin shrinks towards zero and
//! so does the spinning: the cost is paid only where it buys accuracy.

use std::time::Duration;

/// The largest margin learned: beyond it the host is too noisy to spin through.
pub const MAX_MARGIN: Duration = Duration::from_millis(1);

/// The learned wake-up margin.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EarlyWake {
    margin_ns: u64,
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

    /// Learns from a timed sleep of `asked` that ended after `slept`: an exponentially
    /// weighted average (1/8) of the oversleep, capped at [`MAX_MARGIN`].
    pub fn observe(&mut self, asked: Duration, slept: Duration) {
        let over = u64::try_from(slept.saturating_sub(asked).as_nanos()).unwrap_or(u64::MAX);
        let over = over.min(u64::try_from(MAX_MARGIN.as_nanos()).unwrap_or(u64::MAX));
        self.margin_ns = self.margin_ns - self.margin_ns / 8 + over / 8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    #[test]
    fn the_margin_follows_the_oversleep_and_is_capped() {
        let mut w = EarlyWake::default();
        assert_eq!(w.sleep_for(us(500)), us(500));
        for _ in 0..100 {
            w.observe(us(1000), us(1300));
        }
        assert!((us(290)..=us(300)).contains(&w.margin()), "{:?}", w.margin());
        assert_eq!(w.sleep_for(us(1000)), us(1000) - w.margin());
        assert_eq!(w.sleep_for(us(100)), Duration::ZERO, "due sooner than the margin: spin only");
        for _ in 0..100 {
            w.observe(us(1000), us(1000));
        }
        assert!(w.margin() < us(1), "on-time sleeps shrink it: {:?}", w.margin());
        for _ in 0..200 {
            w.observe(us(10), Duration::from_secs(1));
        }
        assert!(w.margin() <= MAX_MARGIN);
    }

    #[test]
    fn waking_early_is_not_an_oversleep() {
        let mut w = EarlyWake::default();
        w.observe(us(1000), us(10));
        assert_eq!(w.margin(), Duration::ZERO);
    }
}
