//! The serializer: puts packets on the wire one after another at the link rate.
//!
//! Transmission time is `wire_bytes × 8 / rate`. Back-to-back packets carry the
//! sub-nanosecond remainder from one to the next, so a saturated link runs at exactly the
//! configured rate over any number of packets, not at a rate distorted by rounding.

use crate::time::Time;
use crate::units::BitRate;

const NANOS_PER_SEC: u128 = 1_000_000_000;

/// When one packet occupies the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// First bit on the wire.
    pub start: Time,
    /// Last bit on the wire.
    pub end: Time,
}

/// A work-conserving FIFO serializer.
#[derive(Debug, Clone)]
pub struct Serializer {
    rate: Option<BitRate>,
    free_at: Time,
    /// Remainder of `bits × 10⁹ / rate` not yet turned into whole nanoseconds.
    carry: u128,
}

impl Serializer {
    /// A serializer at `rate`; `None` (or a zero rate) transmits in zero time.
    pub fn new(rate: Option<BitRate>) -> Self {
        Serializer { rate: rate.filter(|r| r.bits_per_sec() > 0), free_at: Time::ZERO, carry: 0 }
    }

    /// When a packet handed over at `now` would start transmission.
    pub fn next_start(&self, now: Time) -> Time {
        now.max(self.free_at)
    }

    /// Schedules `wire_bytes` handed over at `now` and returns its slot.
    pub fn transmit(&mut self, now: Time, wire_bytes: u64) -> Slot {
        let start = self.next_start(now);
        let Some(rate) = self.rate else {
            return Slot { start, end: start };
        };
        if start > self.free_at {
            self.carry = 0; // the link was idle: no partial nanosecond to carry over
        }
        let rate = u128::from(rate.bits_per_sec());
        let numerator = u128::from(wire_bytes) * 8 * NANOS_PER_SEC + self.carry;
        let nanos = u64::try_from(numerator / rate).unwrap_or(u64::MAX);
        self.carry = numerator % rate;
        let end = start.add_nanos(nanos);
        self.free_at = end;
        Slot { start, end }
    }
}

/// Transmission time of `wire_bytes` at `rate`, rounded down to whole nanoseconds (zero at a
/// zero rate, which is no limit).
pub fn wire_time_nanos(wire_bytes: u64, rate: BitRate) -> u64 {
    let ns = (u128::from(wire_bytes) * 8 * NANOS_PER_SEC).checked_div(u128::from(rate.bits_per_sec()));
    u64::try_from(ns.unwrap_or(0)).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(bps: u64) -> Option<BitRate> {
        BitRate::positive(bps)
    }

    #[test]
    fn one_packet_takes_bits_over_rate() {
        let mut s = Serializer::new(rate(1_000_000_000));
        let slot = s.transmit(Time::from_nanos(100), 1538);
        assert_eq!(slot.start, Time::from_nanos(100));
        assert_eq!(slot.end, Time::from_nanos(100 + 12_304));
    }

    #[test]
    fn back_to_back_packets_queue_behind_each_other() {
        let mut s = Serializer::new(rate(8_000_000)); // 1 byte per µs
        let a = s.transmit(Time::ZERO, 1000);
        let b = s.transmit(Time::from_nanos(10), 500);
        assert_eq!(a.end, Time::from_nanos(1_000_000));
        assert_eq!(b.start, a.end);
        assert_eq!(b.end, Time::from_nanos(1_500_000));
        // Idle gap: the next packet starts when it arrives.
        let c = s.transmit(Time::from_nanos(2_000_000), 1);
        assert_eq!(c.start, Time::from_nanos(2_000_000));
    }

    #[test]
    fn remainders_carry_so_long_runs_are_exact() {
        // One OC-3c cell: 53 × 8 / 149.76e6 s = 2831.196… ns.
        let r = BitRate::positive(149_760_000).unwrap();
        let mut s = Serializer::new(Some(r));
        let mut last = Time::ZERO;
        let n = 353_207u64; // about one second of cells
        for _ in 0..n {
            last = s.transmit(Time::ZERO, 53).end;
        }
        let exact = n as f64 * 53.0 * 8.0 / 149.76e6 * 1e9;
        assert!((last.as_nanos() as f64 - exact).abs() < 1.0);
        assert_eq!(wire_time_nanos(53, r), 2_831);
    }

    #[test]
    fn unlimited_rate_takes_no_time() {
        let mut s = Serializer::new(None);
        let slot = s.transmit(Time::from_nanos(5), 65_000);
        assert_eq!(slot.start, slot.end);
    }
}
