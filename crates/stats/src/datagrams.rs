//! Receiver-side accounting of numbered datagrams: received, lost (gaps), out-of-order,
//! duplicates, late and RFC 3550 jitter, exactly, from `(sequence, send time, arrival time)`.
//!
//! The sender numbers datagrams 0, 1, 2 … without gaps. A sliding bitmap of the last
//! [`WINDOW`] sequence numbers below the highest one seen tells a duplicate from a datagram
//! that fills a gap; anything older is *stale* (not classified, so it stays lost). Hence, with
//! the sender's count `sent`, `sent = (received − duplicates) + lost_total` holds exactly, the
//! tail of the test included ([`Account::lost_given_sent`]).
//!
//! Intervals: [`Account::mark_interval`] records how far the sequence had got; a datagram that
//! later fills a gap below that mark is *late* — its loss was already reported in an earlier
//! interval. An interval's loss is the gaps opened in it minus those filled within it, so the
//! sum of interval losses minus the sum of late arrivals is the total loss.

use results::UdpCounts;

/// Sequence numbers below the highest seen that are still classified.
pub const WINDOW: u64 = 1 << 18;
const WORDS: usize = (WINDOW / 64) as usize;

/// What one arrival was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// The next expected or a higher one; `skipped` sequence numbers were jumped over.
    InOrder {
        /// Gap opened by this arrival.
        skipped: u64,
    },
    /// Filled a gap; `late` if the gap was reported lost in an earlier interval.
    Reordered {
        /// Belongs to an interval already closed.
        late: bool,
    },
    /// A sequence number already counted.
    Duplicate,
    /// Older than the window: not classified.
    Stale,
}

/// The running account of one flow's receiver.
#[derive(Debug, Clone, Default)]
pub struct Account {
    next: u64,
    seen: Vec<u64>,
    mark: u64,
    received: u64,
    duplicates: u64,
    gaps: u64,
    fills: u64,
    late: u64,
    stale: u64,
    jitter_ns: f64,
    last_transit_ns: Option<i128>,
}

impl Account {
    /// An empty account.
    pub fn new() -> Account {
        Account::default()
    }

    /// Counts one data datagram with sequence `seq`, sent at `sent_ns` on the sender's clock and
    /// received at `arrival_ns` on the receiver's clock (the clocks' offset cancels out).
    pub fn record(&mut self, seq: u64, sent_ns: u64, arrival_ns: u64) -> Arrival {
        if self.seen.is_empty() {
            self.seen = vec![0; WORDS];
        }
        let arrival = if seq >= self.next {
            let skipped = seq - self.next;
            self.advance_to(seq);
            self.gaps = self.gaps.saturating_add(skipped);
            Arrival::InOrder { skipped }
        } else if self.next - seq > WINDOW {
            self.stale += 1;
            return Arrival::Stale;
        } else if self.test_and_set(seq) {
            self.duplicates += 1;
            self.received += 1;
            return Arrival::Duplicate;
        } else {
            self.fills += 1;
            let late = seq < self.mark;
            self.late += u64::from(late);
            Arrival::Reordered { late }
        };
        self.received += 1;
        self.jitter(sent_ns, arrival_ns);
        arrival
    }

    /// Clears the bits between the old and the new highest, then sets `seq`'s.
    fn advance_to(&mut self, seq: u64) {
        let span = seq - self.next;
        if span >= WINDOW {
            self.seen.iter_mut().for_each(|w| *w = 0);
        } else {
            self.clear_range(self.next, seq);
        }
        self.clear(seq);
        self.test_and_set(seq);
        self.next = seq.saturating_add(1);
    }

    /// Clears the bits of `from..to` (fewer than [`WINDOW`]), whole words at a time where the
    /// range covers them: a sender that jumps its sequence number far ahead costs the receiver
    /// at most a few thousand word writes, not one per sequence number skipped.
    fn clear_range(&mut self, from: u64, to: u64) {
        let mut s = from;
        while s < to {
            let (w, _) = Self::slot(s);
            if s % 64 == 0 && to - s >= 64 {
                if let Some(word) = self.seen.get_mut(w) {
                    *word = 0;
                }
                s += 64;
            } else {
                self.clear(s);
                s += 1;
            }
        }
    }

    fn slot(seq: u64) -> (usize, u64) {
        let i = seq % WINDOW;
        ((i / 64) as usize, 1u64 << (i % 64))
    }

    fn clear(&mut self, seq: u64) {
        let (w, bit) = Self::slot(seq);
        if let Some(word) = self.seen.get_mut(w) {
            *word &= !bit;
        }
    }

    /// Sets the bit; returns whether it was already set.
    fn test_and_set(&mut self, seq: u64) -> bool {
        let (w, bit) = Self::slot(seq);
        match self.seen.get_mut(w) {
            Some(word) => {
                let was = *word & bit != 0;
                *word |= bit;
                was
            }
            None => false,
        }
    }

    /// RFC 3550 §6.4.1: J += (|D| − J) / 16 over consecutive arrivals, starting at the first.
    fn jitter(&mut self, sent_ns: u64, arrival_ns: u64) {
        let transit = i128::from(arrival_ns) - i128::from(sent_ns);
        if let Some(last) = self.last_transit_ns {
            let d = (transit - last).abs() as f64;
            self.jitter_ns += (d - self.jitter_ns) / 16.0;
        }
        self.last_transit_ns = Some(transit);
    }

    /// Closes an interval: gaps below the current highest are from now on reported as late
    /// when filled.
    pub fn mark_interval(&mut self) {
        self.mark = self.next;
    }

    /// Distinct sequence numbers received.
    pub fn unique(&self) -> u64 {
        self.received - self.duplicates
    }

    /// One past the highest sequence number seen (0 before any).
    pub fn next_expected(&self) -> u64 {
        self.next
    }

    /// Loss over the whole test once the sender's count is known: the tail after the highest
    /// sequence seen included, stale arrivals counted as lost.
    pub fn lost_given_sent(&self, sent: u64) -> u64 {
        sent.saturating_sub(self.unique())
    }

    /// Cumulative counts (receiver fields only).
    pub fn counts(&self) -> UdpCounts {
        UdpCounts {
            received: self.received,
            lost: self.gaps.saturating_sub(self.fills),
            out_of_order: self.fills,
            duplicates: self.duplicates,
            late: self.late,
            stale: self.stale,
            jitter_us: self.jitter_ns / 1000.0,
            ..UdpCounts::default()
        }
    }
}

/// One interval's counts from two cumulative readings: differences of the counters, the
/// jitter as it stood at the end, and the interval's loss as defined in the module docs.
pub fn interval(now: &UdpCounts, before: &UdpCounts) -> UdpCounts {
    let d = |a: u64, b: u64| a.saturating_sub(b);
    let late = d(now.late, before.late);
    UdpCounts {
        sent: d(now.sent, before.sent),
        send_errors: d(now.send_errors, before.send_errors),
        enobufs: d(now.enobufs, before.enobufs),
        received: d(now.received, before.received),
        lost: (now.lost + late).saturating_sub(before.lost),
        out_of_order: d(now.out_of_order, before.out_of_order),
        duplicates: d(now.duplicates, before.duplicates),
        late,
        stale: d(now.stale, before.stale),
        jitter_us: now.jitter_us,
        socket_drops: now.socket_drops.map(|n| d(n, before.socket_drops.unwrap_or(0))),
        timeouts: d(now.timeouts, before.timeouts),
        path: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn feed(seqs: &[u64]) -> Account {
        let mut a = Account::new();
        for &s in seqs {
            a.record(s, s * 1000, s * 1000 + 50);
        }
        a
    }

    #[test]
    fn in_order_stream_has_no_loss_and_no_jitter() {
        let a = feed(&[0, 1, 2, 3, 4]);
        let c = a.counts();
        assert_eq!((c.received, c.lost, c.out_of_order, c.duplicates), (5, 0, 0, 0));
        assert_eq!(c.jitter_us, 0.0);
        assert_eq!(a.lost_given_sent(5), 0);
        assert_eq!(a.lost_given_sent(8), 3, "the tail after the last arrival is lost");
    }

    #[test]
    fn gaps_reordering_and_duplicates_are_counted_separately() {
        let mut a = Account::new();
        let arrivals: Vec<Arrival> = [0, 1, 3, 2, 2, 6, 5, 9, 0].iter().map(|&s| a.record(s, 0, 0)).collect();
        assert_eq!(
            arrivals,
            vec![
                Arrival::InOrder { skipped: 0 },
                Arrival::InOrder { skipped: 0 },
                Arrival::InOrder { skipped: 1 },
                Arrival::Reordered { late: false },
                Arrival::Duplicate,
                Arrival::InOrder { skipped: 2 },
                Arrival::Reordered { late: false },
                Arrival::InOrder { skipped: 2 },
                Arrival::Duplicate,
            ]
        );
        let c = a.counts();
        // Missing: 4, 7, 8.
        assert_eq!((c.received, c.duplicates, c.out_of_order, c.lost), (9, 2, 2, 3));
        assert_eq!(a.unique(), 7);
        assert_eq!(a.lost_given_sent(10), 3);
        assert_eq!(a.lost_given_sent(12), 5);
    }

    #[test]
    fn a_gap_filled_after_its_interval_closed_is_late() {
        let mut a = feed(&[0, 1, 3]);
        let first = a.counts();
        assert_eq!(first.lost, 1);
        a.mark_interval();
        assert_eq!(a.record(2, 0, 0), Arrival::Reordered { late: true });
        a.record(4, 0, 0);
        let second = interval(&a.counts(), &first);
        assert_eq!((second.received, second.late, second.lost), (2, 1, 0));
        assert_eq!(a.counts().lost, 0);
        // Sum of interval losses minus late arrivals equals the total loss.
        assert_eq!(first.lost + second.lost - second.late, a.counts().lost);
    }

    #[test]
    fn older_than_the_window_is_stale_not_a_duplicate() {
        let mut a = feed(&[0]);
        a.record(WINDOW + 5, 0, 0);
        assert_eq!(a.record(1, 0, 0), Arrival::Stale);
        assert_eq!(a.record(0, 0, 0), Arrival::Stale);
        assert_eq!(a.record(6, 0, 0), Arrival::Reordered { late: false });
        assert_eq!(a.record(6, 0, 0), Arrival::Duplicate);
        assert_eq!(a.counts().stale, 2);
        assert_eq!(a.unique(), 3);
    }

    #[test]
    fn a_huge_jump_saturates_instead_of_overflowing() {
        let mut a = feed(&[0]);
        a.record((1 << 63) - 1, 0, 0);
        assert_eq!(a.counts().lost, (1 << 63) - 2);
        assert_eq!(a.record(5, 0, 0), Arrival::Stale);
    }

    #[test]
    fn jitter_follows_rfc_3550() {
        // Transit times 100, 200, 100 ns: |D| = 100, 100 → J = 100/16, then J += (100 − J)/16.
        let mut a = Account::new();
        a.record(0, 0, 100);
        a.record(1, 1000, 1200);
        a.record(2, 2000, 2100);
        let j1 = 100.0 / 16.0;
        let j2 = j1 + (100.0 - j1) / 16.0;
        assert!((a.counts().jitter_us * 1000.0 - j2).abs() < 1e-9);
    }

    #[test]
    fn jitter_ignores_a_constant_clock_offset() {
        let mut a = Account::new();
        let offset = 100_000 * 1_000_000_000u64;
        for s in 0..100u64 {
            a.record(s, s * 1_000_000, offset + s * 1_000_000 + 20_000);
        }
        assert!(a.counts().jitter_us.abs() < 1e-6);
    }

    fn permuted_with_dups_and_drops() -> impl Strategy<Value = (u64, Vec<u64>)> {
        (1u64..2000).prop_flat_map(|sent| {
            let seqs: Vec<u64> = (0..sent).collect();
            (Just(sent), proptest::collection::vec(any::<(bool, bool, u8)>(), sent as usize), Just(seqs))
                .prop_map(|(sent, ops, seqs)| {
                    let mut out = Vec::new();
                    for (s, (drop, dup, shift)) in seqs.into_iter().zip(ops) {
                        if !drop {
                            out.push(s);
                            if dup {
                                out.push(s);
                            }
                        }
                        // Local reordering: swap with an earlier element.
                        let k = out.len();
                        let j = k.saturating_sub(1 + usize::from(shift % 8));
                        if k > 0 {
                            out.swap(k - 1, j);
                        }
                    }
                    (sent, out)
                })
        })
    }

    #[test]
    fn a_jump_over_whole_words_forgets_what_was_seen_a_window_ago() {
        let mut a = Account::new();
        // Two jumps below the window each: the second clears the slot of 0 as a whole word.
        for seq in [0, 200_000, WINDOW + 100] {
            a.record(seq, 0, 0);
        }
        assert_eq!(a.record(WINDOW, 0, 0), Arrival::Reordered { late: false }, "not a duplicate of 0");
        assert_eq!(a.record(WINDOW + 63, 0, 0), Arrival::Reordered { late: false });
        assert_eq!(a.record(WINDOW, 0, 0), Arrival::Duplicate);
    }

    proptest! {
        #[test]
        fn sent_equals_unique_plus_lost_exactly((sent, arrivals) in permuted_with_dups_and_drops()) {
            let a = feed(&arrivals);
            let c = a.counts();
            let distinct: std::collections::BTreeSet<u64> = arrivals.iter().copied().collect();
            prop_assert_eq!(a.unique(), distinct.len() as u64);
            prop_assert_eq!(c.duplicates, (arrivals.len() - distinct.len()) as u64);
            prop_assert_eq!(c.received - c.duplicates + a.lost_given_sent(sent), sent);
            // Gap-based loss never exceeds the total loss.
            prop_assert!(c.lost <= a.lost_given_sent(sent));
        }

        #[test]
        fn interval_losses_minus_late_sum_to_the_total(arrivals in proptest::collection::vec(0u64..300, 1..400), cuts in proptest::collection::vec(0usize..400, 0..6)) {
            let mut a = Account::new();
            let mut before = a.counts();
            let (mut lost, mut late) = (0u64, 0u64);
            for (i, &s) in arrivals.iter().enumerate() {
                a.record(s, 0, 0);
                if cuts.contains(&i) {
                    let iv = interval(&a.counts(), &before);
                    lost += iv.lost;
                    late += iv.late;
                    before = a.counts();
                    a.mark_interval();
                }
            }
            let iv = interval(&a.counts(), &before);
            prop_assert_eq!(lost + iv.lost - late - iv.late, a.counts().lost);
        }

        /// Jumps of any length, across word boundaries and around the window: each arrival is
        /// classified as a plain set of the sequence numbers seen would classify it (the
        /// bitmap is cleared word by word when a jump skips whole words).
        #[test]
        fn jumps_classify_as_a_set_of_seen_numbers_would(
            steps in prop::collection::vec(
                (
                    prop_oneof![
                        (0u64..24).prop_map(|k| k * 16),
                        (WINDOW / 16 - 12..WINDOW / 16 + 12).prop_map(|k| k * 16),
                        0..3 * WINDOW,
                    ],
                    any::<bool>(),
                ),
                1..60,
            ),
        ) {
            let mut a = Account::new();
            let (mut seen, mut next) = (std::collections::BTreeSet::new(), 0u64);
            for (step, back) in steps {
                let seq = if back { next.saturating_sub(step) } else { next + step };
                let want = if seq >= next {
                    Arrival::InOrder { skipped: seq - next }
                } else if next - seq > WINDOW {
                    Arrival::Stale
                } else if seen.contains(&seq) {
                    Arrival::Duplicate
                } else {
                    Arrival::Reordered { late: false }
                };
                prop_assert_eq!(a.record(seq, 0, 0), want, "seq {} next {}", seq, next);
                if want != Arrival::Stale {
                    seen.insert(seq);
                    next = next.max(seq + 1);
                }
            }
        }
    }
}
