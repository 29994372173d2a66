//! The bounded drop-tail queue in front of the serializer.
//!
//! The serializer's schedule is computed when a packet is admitted, so the queue only has
//! to know which admitted packets have not yet started transmission at a given instant:
//! those are the packets waiting. The packet being transmitted is not in the queue (as with
//! a qdisc and the device's transmit ring), so a link with a 100-packet limit holds at most
//! 101 packets between admission and the end of transmission. Byte limits count packet
//! bytes as offered (the IP packet), not wire bytes.

use crate::time::Time;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Limits of the queue; a packet is refused if admitting it would exceed either.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct QueueLimit {
    /// Maximum packets waiting, if limited.
    pub packets: Option<u64>,
    /// Maximum bytes waiting, if limited.
    pub bytes: Option<u64>,
}

impl QueueLimit {
    /// No limit at all.
    pub const UNLIMITED: QueueLimit = QueueLimit { packets: None, bytes: None };

    /// A limit of `n` packets.
    pub const fn packets(n: u64) -> Self {
        QueueLimit { packets: Some(n), bytes: None }
    }

    /// A limit of `n` bytes.
    pub const fn bytes(n: u64) -> Self {
        QueueLimit { packets: None, bytes: Some(n) }
    }
}

/// Packets admitted but not yet started on the wire.
#[derive(Debug, Clone)]
pub struct Backlog {
    limit: QueueLimit,
    waiting: VecDeque<(Time, u64)>,
    bytes: u64,
}

impl Backlog {
    /// An empty queue with `limit`.
    pub fn new(limit: QueueLimit) -> Self {
        Backlog { limit, waiting: VecDeque::new(), bytes: 0 }
    }

    /// Forgets the packets whose transmission has started by `now`.
    pub fn drain(&mut self, now: Time) {
        while let Some(&(start, len)) = self.waiting.front() {
            if start > now {
                break;
            }
            self.bytes -= len;
            self.waiting.pop_front();
        }
    }

    /// Whether a packet of `len_bytes` fits in the queue now.
    pub fn admits(&self, len_bytes: u64) -> bool {
        let packets_ok = self.limit.packets.is_none_or(|max| (self.waiting.len() as u64) < max);
        let bytes_ok = self.limit.bytes.is_none_or(|max| self.bytes.saturating_add(len_bytes) <= max);
        packets_ok && bytes_ok
    }

    /// Records an admitted packet that will start transmission at `start`.
    pub fn push(&mut self, start: Time, len_bytes: u64) {
        self.waiting.push_back((start, len_bytes));
        self.bytes += len_bytes;
    }

    /// Packets waiting.
    pub fn packets(&self) -> u64 {
        self.waiting.len() as u64
    }

    /// Bytes waiting.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_limit() {
        let mut q = Backlog::new(QueueLimit::packets(2));
        assert!(q.admits(1500));
        q.push(Time::from_nanos(10), 1500);
        q.push(Time::from_nanos(20), 1500);
        assert!(!q.admits(1));
        q.drain(Time::from_nanos(10));
        assert_eq!((q.packets(), q.bytes()), (1, 1500));
        assert!(q.admits(1500));
    }

    #[test]
    fn byte_limit() {
        let mut q = Backlog::new(QueueLimit::bytes(3000));
        q.push(Time::from_nanos(10), 2000);
        assert!(q.admits(1000));
        assert!(!q.admits(1001));
        q.drain(Time::from_nanos(100));
        assert_eq!(q.bytes(), 0);
    }
}
