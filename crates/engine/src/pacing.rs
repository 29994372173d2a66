//! When a paced sender may send: a schedule anchored at the start, so the long-run rate is exact
//! whatever each sleep overshoots. A UDP sender counts datagrams; a TCP sender counts bytes
//! ([`Pacer::bytes`]), since a write may take only part of its buffer. Time is passed in (ns since
//! the sender's start).

/// A send schedule for one flow.
#[derive(Debug, Clone)]
pub struct Pacer {
    /// ns between datagrams; 0 = as fast as possible.
    gap_ns: f64,
    /// Smallest number of datagrams sent at once (`--burst`).
    burst: u64,
    /// Most datagrams one call may carry.
    max_batch: u64,
    /// Schedule origin, ns (moves forward when the sender falls far behind).
    origin_ns: u64,
    /// Datagrams counted against the schedule.
    sent: u64,
    /// Backlog made up after a stall; beyond it the schedule moves on instead of flooding.
    max_backlog: u64,
    /// Datagrams skipped because the sender fell behind by more than `max_backlog`.
    skipped: u64,
}

/// A stall of up to this long is made up by sending faster afterwards.
const CATCH_UP_NS: f64 = 250e6;

impl Pacer {
    /// A schedule for `rate_bps` bits of `len`-byte datagrams per second (0 = unlimited).
    pub fn new(rate_bps: u64, len: u32, burst: u32, max_batch: usize) -> Pacer {
        let gap_ns = if rate_bps == 0 { 0.0 } else { f64::from(len) * 8.0 * 1e9 / rate_bps as f64 };
        let max_batch = (max_batch as u64).max(1);
        let backlog = if gap_ns > 0.0 { (CATCH_UP_NS / gap_ns) as u64 } else { 0 };
        Pacer {
            gap_ns,
            burst: u64::from(burst).clamp(1, max_batch),
            max_batch,
            origin_ns: 0,
            sent: 0,
            max_backlog: backlog.max(4 * max_batch),
            skipped: 0,
        }
    }

    /// A byte schedule for a TCP sender writing `write_len` bytes per call (`-b` on a stream):
    /// a write goes once the schedule has earned all of its bytes, so the bytes written by any
    /// time never exceed the rate × the time since the start by more than one byte; [`Pacer::due`]
    /// answers in bytes (0 or up to `write_len`) and [`Pacer::sent`] takes the bytes a write
    /// took. A sender held up (a full socket buffer) makes up to 250 ms of the schedule.
    pub fn bytes(rate_bps: u64, write_len: u32) -> Pacer {
        Pacer::new(rate_bps, 1, write_len, write_len as usize)
    }

    /// How many datagrams may go now (0: wait until [`Pacer::next_ns`]).
    pub fn due(&mut self, now_ns: u64) -> u64 {
        if self.gap_ns == 0.0 {
            return self.max_batch;
        }
        let allowed = self.allowed_by(now_ns);
        let behind = allowed.saturating_sub(self.sent);
        if behind > self.max_backlog {
            // Too far behind to catch up without a flood: drop the backlog from the schedule.
            let drop = behind - self.max_batch;
            self.skipped += drop;
            self.sent += drop;
        }
        let due = allowed.saturating_sub(self.sent);
        if due < self.burst {
            return 0;
        }
        due.min(self.max_batch)
    }

    fn allowed_by(&self, now_ns: u64) -> u64 {
        let t = now_ns.saturating_sub(self.origin_ns) as f64;
        (t / self.gap_ns) as u64 + 1
    }

    /// When the next `burst` datagrams are due, ns.
    pub fn next_ns(&self) -> u64 {
        if self.gap_ns == 0.0 {
            return 0;
        }
        let k = (self.sent + self.burst).saturating_sub(1);
        self.origin_ns + (k as f64 * self.gap_ns).ceil() as u64
    }

    /// Records `n` datagrams sent.
    pub fn sent(&mut self, n: u64) {
        self.sent += n;
    }

    /// Datagrams the schedule skipped because the sender could not keep up.
    pub fn skipped(&self) -> u64 {
        self.skipped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a sender that wakes exactly when told, for `secs`; returns send times.
    fn simulate(rate: u64, len: u32, burst: u32, secs: u64) -> Vec<u64> {
        let mut p = Pacer::new(rate, len, burst, 64);
        let mut times = Vec::new();
        let mut now = 0;
        while now < secs * 1_000_000_000 {
            let n = p.due(now);
            if n == 0 {
                now = p.next_ns().max(now + 1);
                continue;
            }
            times.extend(std::iter::repeat_n(now, n as usize));
            p.sent(n);
        }
        times
    }

    #[test]
    fn one_megabit_of_64_byte_datagrams_is_evenly_spaced() {
        let t = simulate(1_000_000, 64, 1, 2);
        // 1e6 / 512 bits = 1953.125 datagrams/s.
        assert!((3906..=3907).contains(&t.len()), "{}", t.len());
        let gaps: Vec<u64> = t.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.iter().all(|&g| (511_999..=512_001).contains(&g)), "{:?}", &gaps[..5]);
    }

    #[test]
    fn burst_sends_groups_at_the_same_average_rate() {
        let t = simulate(1_000_000, 64, 8, 2);
        assert!((3900..=3907).contains(&t.len()));
        assert!(t.chunks(8).all(|c| c.iter().all(|&x| x == c[0])));
    }

    /// A TCP writer that wakes exactly when told and whose writes take `took(i)` of the bytes
    /// offered; returns (time, bytes) of each write.
    fn simulate_bytes(rate: u64, len: u32, secs: u64, took: impl Fn(usize) -> u64) -> Vec<(u64, u64)> {
        let mut p = Pacer::bytes(rate, len);
        let mut writes = Vec::new();
        let mut now = 0;
        while now < secs * 1_000_000_000 {
            let n = p.due(now);
            if n == 0 {
                now = p.next_ns().max(now + 1);
                continue;
            }
            let n = n.min(took(writes.len()));
            writes.push((now, n));
            p.sent(n);
        }
        writes
    }

    #[test]
    fn a_byte_schedule_writes_whole_blocks_at_the_exact_rate() {
        // 20 Mbit/s = 2.5 MB/s in 128 KiB writes: one every 52.4288 ms.
        let w = simulate_bytes(20_000_000, 131_072, 10, |_| 131_072);
        assert!(w.iter().all(|&(_, n)| n == 131_072));
        // 25 MB in 10 s = 190.7 writes; a write goes only once earned.
        assert_eq!(w.len(), 190);
        for (k, &(t, _)) in w.iter().enumerate() {
            let earned_ns = ((k as u64 + 1) * 131_072 - 1) * 400;
            assert!(t.abs_diff(earned_ns) <= 1, "write {k} at {t} ns, earned at {earned_ns} ns");
        }
        // Never ahead of the rate: bytes written by t ≤ rate × t + 1 byte.
        let mut total = 0;
        for &(t, n) in &w {
            total += n;
            assert!(total as f64 <= t as f64 * 20e6 / 8e9 + 1.0 + 1e-6, "{total} B by {t} ns");
        }
    }

    #[test]
    fn partial_writes_count_what_they_took() {
        // Every other write takes only 1000 bytes: the rest is owed, the rate stays exact.
        let w = simulate_bytes(8_000_000, 10_000, 5, |i| if i % 2 == 1 { 1000 } else { 10_000 });
        let total: u64 = w.iter().map(|&(_, n)| n).sum();
        // 1 MB/s for 5 s, less at most one write still being earned.
        assert!((4_990_000..=5_000_000).contains(&total), "{total}");
        assert!(w.iter().any(|&(_, n)| n == 1000));
    }

    #[test]
    fn a_byte_schedule_makes_up_a_short_stall_and_skips_a_long_one() {
        let mut p = Pacer::bytes(80_000_000, 100_000);
        // 100 ms stalled from the start: 1 MB owed, written in 10 full writes at once.
        let mut writes = 0;
        while p.due(100_000_000) == 100_000 {
            p.sent(100_000);
            writes += 1;
        }
        assert_eq!((writes, p.skipped()), (10, 0));
        // Then 2 s stalled: more than 250 ms behind; the schedule moves on.
        assert_eq!(p.due(2_100_000_000), 100_000);
        assert!(p.skipped() > 15_000_000, "{}", p.skipped());
    }

    #[test]
    fn unlimited_always_allows_a_full_batch() {
        let mut p = Pacer::new(0, 64, 1, 64);
        assert_eq!(p.due(0), 64);
        p.sent(64);
        assert_eq!(p.due(1), 64);
    }

    #[test]
    fn a_long_stall_is_not_flooded_but_a_short_one_is_made_up() {
        let mut p = Pacer::new(100_000_000, 1000, 1, 64);
        assert_eq!(p.due(0), 1);
        p.sent(1);
        // One second asleep: 12 500 datagrams behind, more than 250 ms' worth.
        assert_eq!(p.due(1_000_000_000), 64);
        assert!(p.skipped() > 12_000);
        let mut q = Pacer::new(100_000_000, 1000, 1, 64);
        q.sent(1);
        // 100 ms asleep: 1250 behind, sent in full batches until caught up.
        let mut now = 100_000_000;
        let mut batches = 0;
        while q.due(now) == 64 {
            q.sent(64);
            batches += 1;
            now += 1000;
        }
        assert_eq!(q.skipped(), 0);
        assert!(batches >= 19, "{batches}");
    }
}
