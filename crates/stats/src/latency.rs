//! Latency histogram (HDR, 3 significant digits, 1 ns … 100 s) with nearest-rank percentiles
//! (measurement-methods.md §7). One per thread, merged at the end; never average percentiles.

use hdrhistogram::Histogram;
use results::LatencySummary;

const LOWEST_NS: u64 = 1;
const HIGHEST_NS: u64 = 100_000_000_000;
const SIGFIG: u8 = 3;
const CDF_POINTS: usize = 64;

/// Latencies in nanoseconds.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    h: Histogram<u64>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram::new()
    }
}

impl LatencyHistogram {
    /// An empty histogram.
    pub fn new() -> LatencyHistogram {
        // The bounds are constants within hdrhistogram's valid range, so this cannot fail;
        // fall back to an auto-resizing histogram rather than panic.
        let h = Histogram::new_with_bounds(LOWEST_NS, HIGHEST_NS, SIGFIG)
            .or_else(|_| Histogram::new(SIGFIG))
            .unwrap_or_else(|_| unreachable_histogram());
        LatencyHistogram { h }
    }

    /// Records one latency; values beyond the range are clamped to it.
    pub fn record_ns(&mut self, ns: u64) {
        let _ = self.h.record(ns.clamp(LOWEST_NS, HIGHEST_NS));
    }

    /// Adds another histogram's samples.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        let _ = self.h.add(&other.h);
    }

    /// Samples recorded.
    pub fn len(&self) -> u64 {
        self.h.len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.h.is_empty()
    }

    /// Nearest-rank percentile `p` (0–100), ns.
    ///
    /// Rank = ⌈p/100 · N⌉ computed in integers (so 99.9 % of 1000 samples is rank 999, not a
    /// floating-point 1000), then the histogram is walked to the bucket holding that rank.
    pub fn percentile_ns(&self, p: f64) -> u64 {
        let n = self.h.len();
        let per_million = (p.clamp(0.0, 100.0) * 10_000.0).round() as u128;
        let rank = ((u128::from(n) * per_million).div_ceil(1_000_000)).max(1) as u64;
        let mut seen = 0u64;
        for v in self.h.iter_recorded() {
            seen += v.count_at_value();
            if seen >= rank {
                return self.h.highest_equivalent(v.value_iterated_to());
            }
        }
        self.h.max()
    }

    /// Summary in µs, with a CDF sampled at up to 64 points.
    pub fn summary(&self) -> LatencySummary {
        if self.is_empty() {
            return LatencySummary::default();
        }
        let us = |ns: u64| ns as f64 / 1000.0;
        LatencySummary {
            count: self.h.len(),
            min_us: us(self.h.min()),
            mean_us: self.h.mean() / 1000.0,
            stddev_us: self.h.stdev() / 1000.0,
            p50_us: us(self.percentile_ns(50.0)),
            p90_us: us(self.percentile_ns(90.0)),
            p99_us: us(self.percentile_ns(99.0)),
            p999_us: us(self.percentile_ns(99.9)),
            max_us: us(self.h.max()),
            cdf: self.cdf(),
        }
    }

    fn cdf(&self) -> Vec<(f64, f64)> {
        let n = self.h.len() as f64;
        let mut out: Vec<(f64, f64)> = Vec::new();
        let mut seen = 0u64;
        for v in self.h.iter_recorded() {
            seen += v.count_at_value();
            out.push((self.h.highest_equivalent(v.value_iterated_to()) as f64 / 1000.0, seen as f64 / n));
        }
        thin(out, CDF_POINTS)
    }
}

/// Keeps at most `max` points, always including the last.
fn thin(points: Vec<(f64, f64)>, max: usize) -> Vec<(f64, f64)> {
    if points.len() <= max {
        return points;
    }
    let step = points.len().div_ceil(max);
    let last = points.last().copied();
    let mut out: Vec<_> = points.into_iter().step_by(step).collect();
    if out.last().copied() != last {
        out.extend(last);
    }
    out
}

fn unreachable_histogram() -> Histogram<u64> {
    // Histogram::new(3) only fails for sigfig > 5; 3 is valid. Keep a defined value anyway.
    Histogram::new_with_max(HIGHEST_NS, 2)
        .unwrap_or_else(|_| Histogram::new(2).unwrap_or_else(|_| std::process::abort()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn nearest_rank_percentiles_of_1_to_1000_us() {
        let mut h = LatencyHistogram::new();
        for us in 1..=1000u64 {
            h.record_ns(us * 1000);
        }
        let s = h.summary();
        assert_eq!(s.count, 1000);
        let close = |a: f64, b: f64| (a - b).abs() <= b * 0.001 + 0.001;
        assert!(close(s.p50_us, 500.0), "{}", s.p50_us);
        assert!(close(s.p90_us, 900.0), "{}", s.p90_us);
        assert!(close(s.p99_us, 990.0));
        assert!(close(s.p999_us, 999.0), "{}", s.p999_us);
        assert!(close(s.max_us, 1000.0));
        assert!(close(s.min_us, 1.0));
        assert_eq!(s.cdf.last().map(|p| p.1), Some(1.0));
        assert!(s.cdf.len() <= CDF_POINTS + 1);
    }

    #[test]
    fn merged_equals_recorded_together() {
        let (mut a, mut b, mut all) =
            (LatencyHistogram::new(), LatencyHistogram::new(), LatencyHistogram::new());
        for i in 0..500u64 {
            a.record_ns(i * 37 + 1);
            all.record_ns(i * 37 + 1);
            b.record_ns(i * 91 + 5);
            all.record_ns(i * 91 + 5);
        }
        a.merge(&b);
        assert_eq!(a.summary(), all.summary());
    }

    #[test]
    fn empty_summary_is_zero() {
        assert_eq!(LatencyHistogram::new().summary().count, 0);
    }

    proptest! {
        #[test]
        fn percentiles_are_ordered(v in proptest::collection::vec(0u64..10_000_000_000, 1..500)) {
            let mut h = LatencyHistogram::new();
            v.iter().for_each(|&x| h.record_ns(x));
            let s = h.summary();
            prop_assert!(s.min_us <= s.p50_us && s.p50_us <= s.p90_us && s.p90_us <= s.p99_us);
            prop_assert!(s.p99_us <= s.p999_us && s.p999_us <= s.max_us);
            prop_assert_eq!(s.count, v.len() as u64);
        }
    }
}
