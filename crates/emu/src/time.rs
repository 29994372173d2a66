//! Virtual time: instants in nanoseconds since an epoch chosen by the caller.
//!
//! The link model never reads a clock. The pump passes `Time` values it derived from
//! `CLOCK_MONOTONIC`; tests pass virtual time.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// An instant, in nanoseconds since an arbitrary epoch chosen by the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Time(u64);

impl Time {
    /// The epoch itself.
    pub const ZERO: Time = Time(0);

    /// The instant `nanos` nanoseconds after the epoch.
    pub const fn from_nanos(nanos: u64) -> Self {
        Time(nanos)
    }

    /// Nanoseconds since the epoch.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// This instant plus `nanos` nanoseconds, saturating at the end of time.
    pub const fn add_nanos(self, nanos: u64) -> Self {
        Time(self.0.saturating_add(nanos))
    }

    /// This instant plus `d`, saturating at the end of time.
    pub fn saturating_add(self, d: Duration) -> Self {
        self.add_nanos(duration_nanos(d))
    }

    /// Time elapsed from `earlier` to `self`; zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Time) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
}

/// A duration in whole nanoseconds, saturating at `u64::MAX` (about 584 years).
pub fn duration_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates() {
        let t = Time::from_nanos(u64::MAX - 1);
        assert_eq!(t.saturating_add(Duration::from_secs(1)).as_nanos(), u64::MAX);
        assert_eq!(Time::ZERO.saturating_since(t), Duration::ZERO);
        assert_eq!(Time::from_nanos(1_500).saturating_since(Time::from_nanos(500)), Duration::from_micros(1));
    }
}
