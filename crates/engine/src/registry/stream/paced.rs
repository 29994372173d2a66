//! `-b` on a TCP stream (iperf3's `-b` for TCP): each sending stream's writes are held to a
//! byte schedule ([`Pacer::bytes`]) anchored at the test's start, so the long-run rate is exact
//! whatever each sleep overshoots. The stream is then application-limited by construction
//! whenever the path could carry more.

use std::time::{Duration, Instant};

use super::CALL_SLICE;
use crate::meter::{Budget, Timeline, WorkerCtx};
use crate::pacing::Pacer;

/// Holds one sending stream to its rate.
#[derive(Debug)]
pub(crate) struct Throttle {
    pacer: Pacer,
    start: Instant,
    /// The senders' deadline: a wait for the next write ends there, so that a sender stops
    /// on time instead of sleeping past the end of the test (its rate would read low).
    deadline: Option<Instant>,
}

impl Throttle {
    /// A throttle of `rate_bps` for writes of `write_len` bytes from the start of `timeline`;
    /// `None` when the rate is 0 (unlimited).
    pub(crate) fn new(rate_bps: u64, write_len: usize, timeline: &Timeline) -> Option<Throttle> {
        let len = u32::try_from(write_len).unwrap_or(u32::MAX);
        (rate_bps > 0).then(|| Throttle {
            pacer: Pacer::bytes(rate_bps, len),
            start: timeline.start,
            deadline: timeline.deadline,
        })
    }

    /// Whether a write may go at `now`; if not, sleeps toward the time it may (at most one
    /// [`CALL_SLICE`] and not past the deadline, so that the caller still checks its stop and
    /// deadline in time).
    pub(crate) fn ready(&mut self, now: Instant) -> bool {
        if self.pacer.due(self.ns(now)) > 0 {
            return true;
        }
        let mut next = self.start + Duration::from_nanos(self.pacer.next_ns());
        if let Some(deadline) = self.deadline {
            next = next.min(deadline);
        }
        std::thread::sleep(next.saturating_duration_since(now).min(CALL_SLICE));
        false
    }

    /// Records a write that took `n` bytes.
    pub(crate) fn took(&mut self, n: usize) {
        self.pacer.sent(n as u64);
    }

    fn ns(&self, now: Instant) -> u64 {
        u64::try_from(now.saturating_duration_since(self.start).as_nanos()).unwrap_or(u64::MAX)
    }
}

/// Whether a stream with an optional throttle may write at `now` (always, without one). A
/// stream whose byte budget is spent does not wait for its next write: its claim gets nothing
/// and it ends at once, so that idle time after the last byte is not counted as sending time.
pub(crate) fn ready(throttle: &mut Option<Throttle>, ctx: &WorkerCtx, now: Instant) -> bool {
    match throttle {
        None => true,
        Some(_) if ctx.budget.as_ref().is_some_and(Budget::is_spent) => true,
        Some(t) => t.ready(now),
    }
}

/// Records `n` bytes written on a stream with an optional throttle.
pub(crate) fn took(throttle: &mut Option<Throttle>, n: usize) {
    if let Some(t) = throttle {
        t.took(n);
    }
}
