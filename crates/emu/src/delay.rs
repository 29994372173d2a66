//! The delay line: holds packets for the one-way delay, plus optional jitter.
//!
//! Jitter is drawn uniformly from `[−jitter, +jitter]` around the delay and never makes a
//! packet leave before its last bit was sent. Unless reordering is allowed, a packet's
//! release is also held back to its predecessor's, so order is kept and every packet still
//! stays within `delay ± jitter` of the end of its transmission (the predecessor ended its
//! transmission earlier). With reordering allowed, packets leave in release-time order.

use crate::rng::Rng;
use crate::time::{duration_nanos, Time};
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::time::Duration;

/// A held packet, ordered so that the heap's top is the earliest release (FIFO on ties).
#[derive(Debug)]
struct Held<T> {
    release: Time,
    seq: u64,
    item: T,
}

impl<T> PartialEq for Held<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.release, self.seq) == (other.release, other.seq)
    }
}

impl<T> Eq for Held<T> {}

impl<T> PartialOrd for Held<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> Ord for Held<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap, we want the earliest release on top.
        (other.release, other.seq).cmp(&(self.release, self.seq))
    }
}

/// Packets in flight between the end of transmission and delivery.
#[derive(Debug)]
pub struct DelayLine<T> {
    delay_ns: u64,
    jitter_ns: u64,
    reorder: bool,
    rng: Rng,
    last_release: Time,
    seq: u64,
    held: BinaryHeap<Held<T>>,
}

impl<T> DelayLine<T> {
    /// A delay line; `seed` drives the jitter.
    pub fn new(delay: Duration, jitter: Duration, reorder: bool, seed: u64) -> Self {
        DelayLine {
            delay_ns: duration_nanos(delay),
            jitter_ns: duration_nanos(jitter),
            reorder,
            rng: Rng::new(seed),
            last_release: Time::ZERO,
            seq: 0,
            held: BinaryHeap::new(),
        }
    }

    /// Release time of a packet whose transmission ended at `sent`.
    fn release_time(&mut self, sent: Time) -> Time {
        let base = sent.add_nanos(self.delay_ns);
        let mut release = if self.jitter_ns == 0 {
            base
        } else {
            let draw = self.rng.up_to(self.jitter_ns.saturating_mul(2));
            match draw.checked_sub(self.jitter_ns) {
                Some(later) => base.add_nanos(later),
                None => Time::from_nanos(base.as_nanos().saturating_sub(self.jitter_ns - draw)),
            }
        };
        release = release.max(sent);
        if !self.reorder {
            release = release.max(self.last_release);
        }
        self.last_release = self.last_release.max(release);
        release
    }

    /// Takes a packet whose transmission ended at `sent`; returns its release time.
    pub fn push(&mut self, sent: Time, item: T) -> Time {
        let release = self.release_time(sent);
        self.held.push(Held { release, seq: self.seq, item });
        self.seq += 1;
        release
    }

    /// The earliest release time of a held packet.
    pub fn next_release(&self) -> Option<Time> {
        self.held.peek().map(|h| h.release)
    }

    /// Removes and returns the next packet due by `now`, with its release time.
    pub fn pop_due(&mut self, now: Time) -> Option<(Time, T)> {
        if self.next_release()? > now {
            return None;
        }
        self.held.pop().map(|h| (h.release, h.item))
    }

    /// Packets held.
    pub fn len(&self) -> usize {
        self.held.len()
    }

    /// True if no packet is held.
    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(line: &mut DelayLine<u32>) -> Vec<(Time, u32)> {
        std::iter::from_fn(|| line.pop_due(Time::from_nanos(u64::MAX))).collect()
    }

    #[test]
    fn constant_delay() {
        let mut line = DelayLine::new(Duration::from_millis(85), Duration::ZERO, false, 1);
        assert_eq!(line.push(Time::from_nanos(1_000), 7), Time::from_nanos(85_001_000));
        assert_eq!(line.pop_due(Time::from_nanos(85_000_999)), None);
        assert_eq!(line.pop_due(Time::from_nanos(85_001_000)), Some((Time::from_nanos(85_001_000), 7)));
        assert!(line.is_empty());
    }

    #[test]
    fn jitter_is_bounded_and_keeps_order() {
        let (delay, jitter) = (1_000_000u64, 400_000u64);
        let mut line = DelayLine::new(Duration::from_nanos(delay), Duration::from_nanos(jitter), false, 3);
        let mut distinct = std::collections::HashSet::new();
        for i in 0..5_000u32 {
            let sent = Time::from_nanos(u64::from(i) * 10_000);
            let release = line.push(sent, i);
            let extra = release.as_nanos() - sent.as_nanos();
            assert!((delay - jitter..=delay + jitter).contains(&extra), "{extra}");
            distinct.insert(extra);
        }
        assert!(distinct.len() > 100, "jitter had no effect");
        let out = drain(&mut line);
        assert!(out.windows(2).all(|w| w[0].1 < w[1].1), "reordered");
    }

    #[test]
    fn reordering_only_when_allowed() {
        let mut line = DelayLine::new(Duration::from_millis(1), Duration::from_micros(900), true, 3);
        for i in 0..1_000u32 {
            line.push(Time::from_nanos(u64::from(i) * 10_000), i);
        }
        let out = drain(&mut line);
        assert_eq!(out.len(), 1_000);
        assert!(out.windows(2).all(|w| w[0].0 <= w[1].0));
        assert!(out.windows(2).any(|w| w[0].1 > w[1].1), "never reordered");
    }

    #[test]
    fn never_released_before_sent() {
        let mut line = DelayLine::new(Duration::ZERO, Duration::from_millis(5), true, 9);
        for i in 0..1_000u32 {
            let sent = Time::from_nanos(u64::from(i));
            assert!(line.push(sent, i) >= sent);
        }
    }
}
