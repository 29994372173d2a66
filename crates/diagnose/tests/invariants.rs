//! Invariants every diagnosis keeps, over arbitrary measured facts (issue 25): no bound below
//! the measured rate, no share of a link above 100 %, no rule firing on an unmeasured figure,
//! "no limit identified" as a sentence, and a verdict named from the findings it prints.
#![allow(clippy::unwrap_used, reason = "tests fail loudly")]

use diagnose::facts::{BufferFact, Facts, PathDrops, SideCpu};
use diagnose::verdict::BOUND_SLACK;
use proptest::prelude::*;
use results::{Buffer, Cause, Diagnosis, Reference, ReferenceKind};

fn opt<T: std::fmt::Debug + Clone + 'static>(
    s: impl Strategy<Value = T> + 'static,
) -> BoxedStrategy<Option<T>> {
    prop_oneof![Just(None), s.prop_map(Some)].boxed()
}

fn cpu() -> impl Strategy<Value = SideCpu> {
    (0.0..200.0f64, 0.0..100.0f64, 0.0..100.0f64, opt(0.0..100.0f64), 1u32..4).prop_map(
        |(process_pct, throttled_pct, busiest_pct, thread_busy_pct, threads)| SideCpu {
            process_pct,
            throttled_pct,
            busiest_pct,
            thread_busy_pct,
            threads,
            ..SideCpu::default()
        },
    )
}

prop_compose! {
    fn facts()(
        goodput_bps in 1e3..5e10f64,
        link in opt(1e6..2e10f64),
        rtt_us in opt(10.0..300_000.0f64),
        rwnd in opt(0.0..1.0f64),
        sndbuf_frac in opt(0.0..1.0f64),
        bufs in (opt(1024u64..64 << 20), opt(1024u64..64 << 20), opt(1024u64..32 << 20), opt(1024u64..32 << 20)),
        mss in opt(536u64..65_483),
        calls in (1u32..1 << 20, opt(1.0..131_072.0f64), opt(1.0..131_072.0f64)),
        loss in (opt(0u64..100_000), opt(1u64..10_000_000), opt((0u64..50_000, 0u64..50_000))),
        paced in opt(1e5..1e10f64),
        flags in (any::<bool>(), any::<bool>(), any::<bool>()),
        cpus in (opt(cpu()), opt(cpu())),
    ) -> Facts {
        let (receive_granted, send_granted, receive_requested, send_requested) = bufs;
        let (send_len, avg_write_bytes, avg_read_bytes) = calls;
        let (retransmits, segments_out, drops) = loss;
        let (nodelay, same_host, client_sends) = flags;
        Facts {
            direction: "client→server".into(),
            client_sends,
            goodput_bps,
            reference: link.map(|l| Reference { kind: ReferenceKind::Link, description: "link".into(), limit_bps: l }),
            rtt_us,
            rwnd_limited_frac: rwnd,
            sndbuf_limited_frac: sndbuf_frac,
            receive_buffer: BufferFact { granted: receive_granted, requested: receive_requested },
            send_buffer: BufferFact { granted: send_granted, requested: send_requested },
            mss_bytes: mss,
            nodelay,
            send_len,
            recv_len: send_len,
            avg_write_bytes,
            avg_read_bytes,
            retransmits,
            segments_out,
            paced_bps: paced,
            streams: 1,
            same_host,
            path_drops: drops.map(|(queue_overflow, random)| PathDrops { queue_overflow, random }),
            sender_cpu: cpus.0,
            receiver_cpu: cpus.1,
            ..Facts::default()
        }
    }
}

/// Every `N%` directly before `of the theoretical` / `of the link`.
fn link_shares(text: &str) -> Vec<f64> {
    ["% of the theoretical", "% of the link"]
        .iter()
        .flat_map(|pat| text.match_indices(pat).map(|(i, _)| i))
        .filter_map(|i| {
            let digits: String =
                text[..i].chars().rev().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
            let before = &text[..i - digits.len()];
            // Load beyond the link is allowed when said as offered.
            if before.ends_with("offered ") {
                return None;
            }
            digits.chars().rev().collect::<String>().parse().ok()
        })
        .collect()
}

fn check(f: &Facts, d: &Diagnosis) {
    for x in std::iter::once(&d.primary).chain(&d.contributing) {
        if let Some(b) = x.bound_bps {
            assert!(b >= BOUND_SLACK * f.goodput_bps, "bound {b} below {}: {x:?}", f.goodput_bps);
        }
        if x.evidence.contains(" allows ") {
            assert!(x.bound_bps.is_some(), "an 'allows' without its bound: {x:?}");
        }
        for share in link_shares(&x.evidence) {
            assert!(share <= 100.0, "a link share above 100 %: {}", x.evidence);
        }
    }
    let causes: Vec<Cause> = std::iter::once(&d.primary).chain(&d.contributing).map(|x| x.cause).collect();
    if f.rwnd_limited_frac.is_none() && f.buffer(Buffer::Receive).requested.is_none() {
        assert!(!causes.contains(&Cause::ReceiveWindow), "window from nothing: {d:?}");
    }
    if f.sndbuf_limited_frac.is_none() {
        assert!(!causes.contains(&Cause::SendBuffer), "send buffer from nothing: {d:?}");
    }
    if f.retransmits.is_none() || f.segments_out.is_none() {
        let loss = [Cause::Congestion, Cause::QueueOverflow, Cause::RandomLoss];
        assert!(!causes.iter().any(|c| loss.contains(c)), "loss from nothing: {d:?}");
    }
    if d.primary.cause == Cause::Unknown {
        let e = &d.primary.evidence;
        assert!(e.starts_with("No limit was found") && e.ends_with('.'), "{e}");
    }
    assert!(d.verdict().contains(d.primary.cause.label()) || d.primary.cause == Cause::Unknown);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn every_diagnosis_keeps_the_invariants(f in facts()) {
        let d = diagnose::diagnose(&f);
        check(&f, &d);
    }
}

#[test]
fn a_link_share_is_read_from_the_text() {
    assert_eq!(link_shares("9.05 Mbit/s is 96% of the theoretical 9.41"), vec![96.0]);
    assert_eq!(link_shares("the sender offered 108% of the link's goodput"), Vec::<f64>::new());
}
