//! The link model checked element by element against its formulas, in virtual time.
// Test helpers unwrap too: a panic in a test is a test failure, which is what we want.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use emu::{
    BitRate, CellFormat, CellLoss, Departure, Discard, DropCause, Encap, Fate, Framing, GilbertElliott, Link,
    LinkConfig, LossModel, Probability, QueueLimit, Time, Verdict,
};
use std::time::Duration;

fn prob(p: f64) -> Probability {
    Probability::new(p).unwrap()
}

fn rate(bps: u64) -> Option<BitRate> {
    BitRate::positive(bps)
}

fn ethernet(bps: u64) -> LinkConfig {
    LinkConfig {
        rate: rate(bps),
        framing: Framing { overhead_bytes: 38, cells: None },
        ..LinkConfig::default()
    }
}

fn atm(bps: u64, encap: Encap) -> LinkConfig {
    LinkConfig {
        rate: rate(bps),
        framing: Framing { overhead_bytes: 0, cells: Some(CellFormat::Aal5 { encap }) },
        ..LinkConfig::default()
    }
}

fn drain<P>(link: &mut Link<P>) -> Vec<Departure<P>> {
    std::iter::from_fn(|| link.poll_departure(Time::from_nanos(u64::MAX))).collect()
}

/// Offers `n` packets of `len` every `gap_ns` from time 0 and drains the link.
fn run(config: LinkConfig, seed: u64, n: u64, len: u32, gap_ns: u64) -> (Link<u64>, Vec<Departure<u64>>) {
    let mut link = Link::new(config, seed);
    let mut out = Vec::new();
    for i in 0..n {
        let now = Time::from_nanos(i * gap_ns);
        out.extend(std::iter::from_fn(|| link.poll_departure(now)));
        let _ = link.enqueue(now, i, len);
    }
    out.extend(drain(&mut link));
    (link, out)
}

fn delivered(out: &[Departure<u64>]) -> usize {
    out.iter().filter(|d| matches!(d.fate, Fate::Delivered { .. })).count()
}

#[test]
fn serialization_time_is_framed_bits_over_rate() {
    let mut link = Link::new(ethernet(1_000_000_000), 1);
    assert_eq!(link.enqueue(Time::from_nanos(500), (), 1500), Verdict::Queued);
    let d = drain(&mut link).pop().unwrap();
    assert_eq!(d.tx_start, Time::from_nanos(500));
    // (1500 + 38) × 8 / 1 Gbit/s = 12,304 ns.
    assert_eq!(d.tx_end.as_nanos() - d.tx_start.as_nanos(), 12_304);
    assert_eq!(d.release, d.tx_end);
    assert_eq!(link.counters().wire_bytes, 1538);
}

#[test]
fn serialization_time_with_cells_is_cells_times_53_bytes() {
    let mut link = Link::new(atm(149_760_000, Encap::Llc), 1);
    let _ = link.enqueue(Time::ZERO, (), 9180);
    let d = drain(&mut link).pop().unwrap();
    // 192 cells × 53 × 8 / 149.76 Mbit/s = 543,589.7 ns (theory.md §1.5: 544 µs).
    let exact = 192.0 * 53.0 * 8.0 / 149.76e6 * 1e9;
    assert_eq!(d.tx_end.as_nanos(), exact as u64);
    assert_eq!(link.counters().wire_bytes, 192 * 53);
}

#[test]
fn queue_overflows_at_its_packet_bound() {
    let config = LinkConfig { queue: QueueLimit::packets(100), ..ethernet(10_000_000) };
    let mut link = Link::new(config, 1);
    let verdicts: Vec<_> = (0..1000).map(|i| link.enqueue(Time::ZERO, i, 1500)).collect();
    // One packet on the wire plus 100 waiting.
    let queued = verdicts.iter().filter(|v| **v == Verdict::Queued).count();
    assert_eq!(queued, 101);
    assert_eq!(link.queued_packets(), 100);
    assert!(matches!(verdicts[101], Verdict::Dropped { cause: DropCause::QueueOverflow, payload: 101 }));
    assert_eq!(link.counters().drops.queue_overflow.packets, 899);
}

#[test]
fn queue_overflows_at_its_byte_bound_and_drains_with_time() {
    let config = LinkConfig { queue: QueueLimit::bytes(15_000), ..ethernet(10_000_000) };
    let mut link = Link::new(config, 1);
    let queued = (0..100).filter(|&i| link.enqueue(Time::ZERO, i, 1500) == Verdict::Queued).count();
    assert_eq!(queued, 11);
    assert_eq!(link.queued_bytes(), 15_000);
    // After two transmission times (1538 B at 10 Mbit/s = 1,230,400 ns) two have left the queue.
    let _ = link.poll_departure(Time::from_nanos(2 * 1_230_400));
    assert_eq!(link.queued_packets(), 8);
    assert_eq!(link.enqueue(Time::from_nanos(2 * 1_230_400), 0, 1500), Verdict::Queued);
}

#[test]
fn bernoulli_loss_rate_within_statistical_bounds() {
    let (n, p) = (100_000u64, 0.02);
    let config = LinkConfig { loss: LossModel::Bernoulli { p: prob(p) }, ..LinkConfig::default() };
    let (link, out) = run(config, 42, n, 1000, 1_000);
    let lost = link.counters().drops.loss_model.packets;
    let sigma = (n as f64 * p * (1.0 - p)).sqrt();
    assert!((lost as f64 - n as f64 * p).abs() < 4.0 * sigma, "lost {lost}");
    assert_eq!(out.len() as u64 + lost, n);
}

#[test]
fn gilbert_elliott_stationary_loss_matches_formula() {
    let ge =
        GilbertElliott { p: prob(0.005), r: prob(0.25), loss_in_bad: prob(0.8), loss_in_good: prob(0.001) };
    let expected = (0.25 * 0.001 + 0.005 * 0.8) / (0.005 + 0.25);
    let n = 400_000;
    let config = LinkConfig { loss: LossModel::GilbertElliott(ge), ..LinkConfig::default() };
    let (link, _) = run(config, 7, n, 100, 1);
    let rate = link.counters().drops.loss_model.packets as f64 / n as f64;
    assert!((rate - expected).abs() / expected < 0.07, "rate {rate} vs {expected}");
}

#[test]
fn cell_loss_loses_pdus_at_one_minus_survival_power_cells() {
    for discard in [Discard::None, Discard::Partial] {
        let config = LinkConfig {
            cell_loss: Some(CellLoss { probability: prob(0.0005), discard }),
            ..atm(149_760_000, Encap::Llc)
        };
        let n = 20_000u64;
        let (link, out) = run(config, 3, n, 9180, 600_000);
        let expected = 1.0 - (1.0f64 - 0.0005).powi(192);
        let lost = out.iter().filter(|d| matches!(d.fate, Fate::CellLoss { .. })).count();
        let sigma = (n as f64 * expected * (1.0 - expected)).sqrt();
        assert!((lost as f64 - n as f64 * expected).abs() < 4.0 * sigma, "{discard:?} lost {lost}");
        assert_eq!(link.counters().drops.cell_loss.packets, lost as u64);
        assert_eq!(delivered(&out) + lost, n as usize);
    }
}

#[test]
fn partial_packet_discard_saves_link_time() {
    let lossy = |discard| LinkConfig {
        cell_loss: Some(CellLoss { probability: prob(0.01), discard }),
        ..atm(149_760_000, Encap::Llc)
    };
    let (none, _) = run(lossy(Discard::None), 5, 2_000, 9180, 1);
    let (ppd, _) = run(lossy(Discard::Partial), 5, 2_000, 9180, 1);
    assert!(ppd.counters().wire_bytes < none.counters().wire_bytes);
}

#[test]
fn delay_is_constant() {
    let config = LinkConfig { delay: Duration::from_millis(85), ..ethernet(1_000_000_000) };
    let (_, out) = run(config, 1, 1_000, 1500, 20_000);
    for d in &out {
        assert_eq!(d.release.as_nanos() - d.tx_end.as_nanos(), 85_000_000);
    }
}

#[test]
fn jitter_is_bounded_and_does_not_reorder() {
    let config = LinkConfig {
        delay: Duration::from_millis(10),
        jitter: Duration::from_millis(2),
        ..ethernet(100_000_000)
    };
    let (_, out) = run(config, 9, 5_000, 1500, 50_000);
    assert_eq!(out.len(), 5_000);
    for d in &out {
        let extra = d.release.as_nanos() - d.tx_end.as_nanos();
        assert!((8_000_000..=12_000_000).contains(&extra), "{extra}");
    }
    assert!(out.windows(2).all(|w| w[0].payload < w[1].payload));
    assert!(out.windows(2).any(|w| w[0].release.as_nanos() - w[0].tx_end.as_nanos()
        != w[1].release.as_nanos() - w[1].tx_end.as_nanos()));
}

#[test]
fn jitter_reorders_only_when_allowed() {
    let config = LinkConfig {
        delay: Duration::from_millis(10),
        jitter: Duration::from_millis(2),
        reorder: true,
        ..ethernet(100_000_000)
    };
    let (_, out) = run(config, 9, 5_000, 1500, 50_000);
    assert!(out.windows(2).all(|w| w[0].release <= w[1].release));
    assert!(out.windows(2).any(|w| w[0].payload > w[1].payload));
}

#[test]
fn saturated_ethernet_runs_at_rate_times_payload_share() {
    let (n, len) = (10_000u64, 1500u32);
    let config = ethernet(1_000_000_000);
    let (_, out) = run(config, 1, n, len, 0);
    let end = out.last().unwrap().tx_end.as_nanos() as f64;
    let throughput = n as f64 * f64::from(len) * 8.0 / (end / 1e9);
    let expected = 1e9 * 1500.0 / 1538.0;
    assert!((throughput - expected).abs() / expected < 1e-9, "{throughput}");
}

#[test]
fn saturated_oc3_clip_gives_the_textbook_tcp_goodput() {
    // theory.md §1.3: 149.76 × 9140 / (192 × 53) = 134.51 Mbit/s of TCP payload.
    let n = 2_000u64;
    let (_, out) = run(atm(149_760_000, Encap::Llc), 1, n, 9180, 0);
    let end = out.last().unwrap().tx_end.as_nanos() as f64 / 1e9;
    let goodput = n as f64 * 9140.0 * 8.0 / end / 1e6;
    assert!((goodput - 134.51).abs() < 0.005, "{goodput}");
}

#[test]
fn duplication_rate_within_bounds() {
    let n = 50_000u64;
    let config = LinkConfig { duplicate: prob(0.05), ..LinkConfig::default() };
    let (link, out) = run(config, 2, n, 100, 10);
    let dups = out.iter().filter(|d| d.fate == Fate::Delivered { copies: 2 }).count() as f64;
    assert_eq!(link.counters().duplicates.packets as f64, dups);
    let sigma = (n as f64 * 0.05 * 0.95).sqrt();
    assert!((dups - n as f64 * 0.05).abs() < 4.0 * sigma, "{dups}");
}

#[test]
fn same_seed_replays_and_other_seed_differs() {
    let config = LinkConfig {
        loss: LossModel::Bernoulli { p: prob(0.1) },
        jitter: Duration::from_micros(50),
        delay: Duration::from_micros(100),
        ..ethernet(100_000_000)
    };
    let trace = |seed| {
        let (_, out) = run(config, seed, 2_000, 1000, 30_000);
        out.iter().map(|d| (d.payload, d.release)).collect::<Vec<_>>()
    };
    assert_eq!(trace(11), trace(11));
    assert_ne!(trace(11), trace(12));
}

#[test]
fn counters_balance_and_serialize() {
    let config = LinkConfig {
        loss: LossModel::Bernoulli { p: prob(0.1) },
        queue: QueueLimit::packets(5),
        delay: Duration::from_millis(1),
        ..ethernet(10_000_000)
    };
    let mut link = Link::new(config, 4);
    for i in 0..500u64 {
        let _ = link.enqueue(Time::from_nanos(i * 100_000), i, 1500);
    }
    let c = *link.counters();
    assert_eq!(c.offered.packets, c.delivered.packets + c.drops.total().packets + link.in_flight() as u64);
    drain(&mut link);
    let c = *link.counters();
    assert_eq!(c.offered, {
        let mut sum = c.delivered;
        sum.packets += c.drops.total().packets;
        sum.bytes += c.drops.total().bytes;
        sum
    });
    let json = serde_json::to_string(&c).unwrap();
    assert_eq!(serde_json::from_str::<emu::Counters>(&json).unwrap(), c);
}

#[test]
fn next_event_time_tells_when_to_wake() {
    let config = LinkConfig { delay: Duration::from_millis(5), ..ethernet(1_000_000_000) };
    let mut link = Link::new(config, 1);
    assert_eq!(link.next_event_time(), None);
    let _ = link.enqueue(Time::ZERO, 'a', 1500);
    let wake = link.next_event_time().unwrap();
    assert_eq!(wake.as_nanos(), 12_304 + 5_000_000);
    assert!(link.poll_departure(Time::from_nanos(wake.as_nanos() - 1)).is_none());
    assert_eq!(link.poll_departure(wake).map(|d| d.payload), Some('a'));
    assert_eq!(link.next_event_time(), None);
}

#[test]
fn time_going_backwards_is_clamped() {
    let mut link = Link::new(ethernet(1_000_000_000), 1);
    let _ = link.enqueue(Time::from_nanos(1_000_000), 1u8, 1500);
    let _ = link.enqueue(Time::from_nanos(5), 2u8, 1500);
    let out = drain(&mut link);
    assert_eq!(out[1].arrival, Time::from_nanos(1_000_000));
    assert!(out[1].tx_start >= out[0].tx_end);
}

#[test]
fn dropped_payload_is_handed_back() {
    let config = LinkConfig { loss: LossModel::Bernoulli { p: Probability::ONE }, ..LinkConfig::default() };
    let mut link = Link::new(config, 1);
    let verdict = link.enqueue(Time::ZERO, vec![1u8, 2, 3], 3);
    assert_eq!(verdict, Verdict::Dropped { cause: DropCause::LossModel, payload: vec![1, 2, 3] });
}

#[test]
fn link_config_round_trips_through_json() {
    let config = LinkConfig {
        cell_loss: Some(CellLoss { probability: prob(0.001), discard: Discard::Partial }),
        loss: LossModel::GilbertElliott(GilbertElliott::with_defaults(prob(0.01), None, None, None)),
        queue: QueueLimit::packets(100),
        jitter: Duration::from_micros(3),
        ..atm(149_760_000, Encap::Lane)
    };
    let json = serde_json::to_string(&config).unwrap();
    assert_eq!(serde_json::from_str::<LinkConfig>(&json).unwrap(), config);
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn config() -> impl Strategy<Value = LinkConfig> {
        (
            proptest::option::of(1_000u64..10_000_000_000),
            0u64..5_000_000,
            0u64..5_000_000,
            proptest::option::of(0u64..50),
            0.0f64..0.5,
            any::<bool>(),
            proptest::option::of(0u8..3),
        )
            .prop_map(|(bps, delay, jitter, queue, loss, reorder, encap)| LinkConfig {
                rate: bps.and_then(BitRate::positive),
                delay: Duration::from_nanos(delay),
                jitter: Duration::from_nanos(jitter),
                queue: queue.map_or(QueueLimit::UNLIMITED, QueueLimit::packets),
                loss: LossModel::Bernoulli { p: prob(loss) },
                reorder,
                framing: Framing {
                    overhead_bytes: 14,
                    cells: encap.map(|e| CellFormat::Aal5 {
                        encap: [Encap::Llc, Encap::VcMux, Encap::Lane][usize::from(e)],
                    }),
                },
                cell_loss: Some(CellLoss { probability: prob(0.001), discard: Discard::None }),
                duplicate: prob(0.01),
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn timelines_are_causal_ordered_and_counted(
            config in config(),
            seed in any::<u64>(),
            arrivals in proptest::collection::vec((0u64..200_000, 1u32..65_535), 1..300),
        ) {
            let mut link = Link::new(config, seed);
            let mut now = 0u64;
            let mut out = Vec::new();
            for (i, (gap, len)) in arrivals.iter().enumerate() {
                now += gap;
                out.extend(std::iter::from_fn(|| link.poll_departure(Time::from_nanos(now))));
                let _ = link.enqueue(Time::from_nanos(now), i, *len);
            }
            out.extend(drain(&mut link));
            for d in &out {
                prop_assert!(d.arrival <= d.tx_start && d.tx_start <= d.tx_end && d.tx_end <= d.release);
            }
            prop_assert!(out.windows(2).all(|w| w[0].release <= w[1].release));
            if !config.reorder {
                prop_assert!(out.windows(2).all(|w| w[0].payload < w[1].payload));
            }
            let c = link.counters();
            prop_assert_eq!(c.offered.packets, c.delivered.packets + c.drops.total().packets);
            prop_assert_eq!(c.offered.packets, arrivals.len() as u64);
        }
    }
}

#[test]
fn super_packets_are_charged_and_queued_per_segment() {
    // 1 Gbit/s Ethernet, 3-packet queue: a 5-segment super-packet arriving on an idle link
    // has its first segment on the wire at once, three waiting, the fifth refused.
    let config = LinkConfig { queue: QueueLimit::packets(3), ..ethernet(1_000_000_000) };
    let mut link: Link<Vec<u32>> = Link::new(config, 1);
    let lens = [1500u32; 5];
    let kept = link.enqueue_segments(Time::ZERO, vec![0; 5], &lens, |p, k| p.truncate(k));
    assert_eq!(kept, 4);
    let c = *link.counters();
    assert_eq!((c.offered.packets, c.drops.queue_overflow.packets), (5, 1));
    assert_eq!(c.wire_bytes, 4 * 1538);
    let out = drain(&mut link);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].payload.len(), 4, "payload trimmed to the admitted segments");
    assert_eq!((out[0].packets, out[0].len_bytes), (4, 6000));
    // Released when the last admitted segment has been serialized: 4 × 1538 B at 1 Gbit/s.
    assert_eq!(out[0].release.as_nanos(), 4 * 12_304);
    assert_eq!(link.counters().delivered.packets, 4);
}

#[test]
fn only_per_packet_draws_rule_out_super_packets() {
    assert!(!ethernet(1_000_000).needs_single_packets());
    let lossy = LinkConfig { loss: LossModel::Bernoulli { p: prob(0.01) }, ..ethernet(1_000_000) };
    assert!(lossy.needs_single_packets());
}
