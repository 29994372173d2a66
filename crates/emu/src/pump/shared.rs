//! State shared between the pump threads and the [`super::Emulator`] handle: the stop flag,
//! the first failure, and each direction's latest statistics.

use std::sync::atomic::AtomicBool;
use std::sync::Mutex;
use std::time::Duration;

use super::lateness::Histogram;
use crate::counters::Counters;
use crate::spec::Direction;

/// Statistics of one direction, published by its thread after each wake-up.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stats {
    /// The link model's counters.
    pub counters: Counters,
    /// Packets written (copies included).
    pub written: u64,
    /// Sum of release lateness (actual write − scheduled release), nanoseconds.
    pub late_sum_ns: u64,
    /// Largest release lateness, nanoseconds.
    pub late_max_ns: u64,
    /// Distribution of release lateness.
    pub lateness: Histogram,
    /// Reads that failed.
    pub read_errors: u64,
    /// Writes the kernel refused.
    pub write_errors: u64,
}

impl Stats {
    /// Records one release `late` after its scheduled time.
    pub fn note_lateness(&mut self, late: Duration) {
        let ns = u64::try_from(late.as_nanos()).unwrap_or(u64::MAX);
        self.written += 1;
        self.late_sum_ns = self.late_sum_ns.saturating_add(ns);
        self.late_max_ns = self.late_max_ns.max(ns);
        self.lateness.record_ns(ns);
    }

    /// Mean lateness of the packets written so far.
    pub fn mean_lateness(&self) -> Duration {
        Duration::from_nanos(self.late_sum_ns.checked_div(self.written).unwrap_or(0))
    }
}

/// Shared between the threads and the handle.
#[derive(Debug, Default)]
pub struct Shared {
    /// Set to stop both threads.
    pub stop: AtomicBool,
    /// One lock per direction, so that the two threads never wait for each other.
    stats: [Mutex<Stats>; 2],
    failure: Mutex<Option<String>>,
}

impl Shared {
    /// Replaces `direction`'s published statistics.
    pub fn publish(&self, direction: Direction, stats: &Stats) {
        if let Ok(mut mine) = self.stats[index(direction)].lock() {
            *mine = *stats;
        }
    }

    /// The latest statistics of `direction`.
    pub fn stats(&self, direction: Direction) -> Stats {
        self.stats[index(direction)].lock().map(|s| *s).unwrap_or_default()
    }

    /// Records a failure that stopped a thread (the first one wins).
    pub fn fail(&self, message: String) {
        if let Ok(mut f) = self.failure.lock() {
            f.get_or_insert(message);
        }
    }

    /// The first failure, if any.
    pub fn failure(&self) -> Option<String> {
        self.failure.lock().ok().and_then(|f| f.clone())
    }
}

fn index(direction: Direction) -> usize {
    match direction {
        Direction::Up => 0,
        Direction::Down => 1,
    }
}
