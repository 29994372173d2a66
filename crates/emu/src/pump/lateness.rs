//! The distribution of release lateness: a fixed log-linear histogram (8 buckets per
//! octave of microseconds, so a percentile is within 12.5 %), `Copy` so that a pump thread
//! publishes it with its other counters, and small enough to do so at every wake-up.

/// Exact buckets below this many µs; 8 per octave above.
const LINEAR: u64 = 8;
/// Octaves above [`LINEAR`] µs: up to 2³⁵ µs (9.5 hours).
const OCTAVES: usize = 32;
/// Number of buckets.
const BUCKETS: usize = LINEAR as usize + OCTAVES * 8;

/// Counts of lateness values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Histogram {
    counts: [u64; BUCKETS],
    total: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { counts: [0; BUCKETS], total: 0 }
    }
}

fn bucket(us: u64) -> usize {
    if us < LINEAR {
        return us as usize;
    }
    let octave = 63 - u64::from(us.leading_zeros()); // ≥ 3
    let sub = (us >> (octave - 3)) & 7;
    (LINEAR as usize + (octave as usize - 3) * 8 + sub as usize).min(BUCKETS - 1)
}

/// The largest value (µs) bucket `i` holds.
fn upper(i: usize) -> u64 {
    if (i as u64) < LINEAR {
        return i as u64;
    }
    let k = i - LINEAR as usize;
    let (octave, sub) = ((k / 8) as u64 + 3, (k % 8) as u64);
    ((8 + sub + 1) << (octave - 3)) - 1
}

impl Histogram {
    /// Counts one value of `ns` nanoseconds.
    pub fn record_ns(&mut self, ns: u64) {
        self.counts[bucket(ns / 1000)] += 1;
        self.total += 1;
    }

    /// Values counted.
    pub fn len(&self) -> u64 {
        self.total
    }

    /// Whether nothing was counted.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The `p`-th percentile (nearest rank) in µs, as the upper end of its bucket: never
    /// below the true value, at most 12.5 % above it (1 µs below 8 µs). `None` when empty.
    pub fn percentile_us(&self, p: f64) -> Option<f64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((p / 100.0) * self.total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(upper(i) as f64);
            }
        }
        Some(upper(BUCKETS - 1) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_values_in_order_and_contain_them() {
        let mut last = 0;
        for us in [0, 1, 7, 8, 9, 15, 16, 17, 100, 1000, 65_535, 10_000_000] {
            let b = bucket(us);
            assert!(b >= last, "{us}");
            assert!(
                upper(b) >= us && (us < 8 || upper(b) as f64 <= us as f64 * 1.125 + 1.0),
                "{us}: {}",
                upper(b)
            );
            last = b;
        }
    }

    #[test]
    fn percentiles_known_answer() {
        let mut h = Histogram::default();
        assert_eq!(h.percentile_us(50.0), None);
        // 98 values of 5 µs, one of 100 µs, one of 20 ms.
        (0..98).for_each(|_| h.record_ns(5_000));
        h.record_ns(100_000);
        h.record_ns(20_000_000);
        assert_eq!(h.len(), 100);
        assert_eq!(h.percentile_us(50.0), Some(5.0));
        assert_eq!(h.percentile_us(98.0), Some(5.0));
        let p99 = h.percentile_us(99.0).unwrap();
        assert!((100.0..=112.5).contains(&p99), "{p99}");
        let max = h.percentile_us(100.0).unwrap();
        assert!((20_000.0..=22_500.0).contains(&max), "{max}");
    }
}
