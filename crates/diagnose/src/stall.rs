//! Nagle and delayed ACKs waiting on each other (theory.md §7): a buffer of under
//! [`STOP_AND_GO_SEGMENTS`] segments with Nagle on can make a sender hold a short segment
//! until the receiver's delayed-ACK timer releases it. The configuration only makes the stall
//! possible; the rule names it when the measured rate leaves the waits room to have set it.

use results::{Cause, Finding, ReferenceKind};

use crate::facts::Facts;
use crate::rules::STOP_AND_GO_SEGMENTS;
use model::human::{micros, rate, size};

/// Windows a second above which a flow did not stop and go, however few segments its buffer
/// holds: stop-and-go waits out a delayed ACK (40 ms or more on Linux) per window or so, and
/// a flow moving a window a millisecond waited out none (seed 000's loop-back: 19 Gbit/s
/// through a 64K buffer of one 64K segment). The test for a flow with neither a link nor an
/// RTT to weigh it against.
pub const STOP_AND_GO_MAX_WINDOWS_PER_S: f64 = 1000.0;
/// Linux's shortest delayed-ACK timeout (TCP_DELACK_MIN, 40 ms), µs. A round trip measured
/// below it holds no delayed-ACK wait.
pub const DELAYED_ACK_MIN_US: f64 = 40_000.0;
/// Share of the time the delayed-ACK waits must have had room to take for stop-and-go to be
/// named: a flow that moved at least four fifths of what its link, or its window over a round
/// trip that held no wait, allows spent at most a fifth waiting, and the window or the link,
/// not the waits, set its rate (seed 004's 16K to 24K windows over TAXI 140: 117–120 Mbit/s,
/// 93–96 % of the link; its 8K window of one 8192-byte segment at 82 % of what the window
/// allows over 615 µs). A 2K receive buffer on a 2-ms path (corpus `stop-and-go-2K`) ran at
/// 68–74 % of its window's: stop-and-go. A 4K window of 2.8 segments there ran at 77–87 %,
/// either side of the line: the evidence names both.
pub const STOP_AND_GO_MIN_SHARE: f64 = 0.2;

/// Nagle on with buffers of only a few segments, when the flow ran slowly enough to have
/// stalled: under [`STOP_AND_GO_MAX_WINDOWS_PER_S`] windows a second, and (where its link or
/// an RTT below a delayed ACK bounds it) below four fifths of that bound.
pub fn stop_and_go(f: &Facts) -> Option<Finding> {
    let mss = f.mss_bytes.filter(|_| !f.nodelay)? as f64;
    let (name, bytes, granted) = [results::Buffer::Receive, results::Buffer::Send]
        .into_iter()
        .filter_map(|b| f.buffer(b).requested.map(|n| (b.name(), n, f.buffer(b).granted.unwrap_or(2 * n))))
        .min_by_key(|(_, n, _)| *n)?;
    let segments = bytes as f64 / mss;
    let windows_per_s = f.goodput_bps / (granted.max(1) as f64 * 8.0);
    if segments >= STOP_AND_GO_SEGMENTS || windows_per_s > STOP_AND_GO_MAX_WINDOWS_PER_S {
        return None;
    }
    let bound = unstalled(f);
    if bound.as_ref().is_some_and(|(b, _)| f.goodput_bps >= (1.0 - STOP_AND_GO_MIN_SHARE) * b) {
        return None;
    }
    let room = bound.map_or_else(String::new, |(b, what)| {
        format!("; {} is {} of {what}", rate(f.goodput_bps), crate::rules::pct(f.goodput_bps / b))
    });
    Some(Finding {
        cause: Cause::StopAndGo,
        // A buffer the user fixed under three segments comes before the CPU it keeps busy
        // (the sender spins on a window that opens a segment at a time) and before the
        // window it makes: stop-and-go is the window's mechanism here, said specifically.
        weight: 0.99,
        evidence: format!(
            "{name} asked {} = {segments:.1} segments of {mss:.0} B with Nagle on{room}",
            size(bytes as f64)
        ),
        advice: format!(
            "give the {name} at least {STOP_AND_GO_SEGMENTS:.0} segments ({} B), or set -N",
            (mss * STOP_AND_GO_SEGMENTS).ceil()
        ),
        bound_bps: None,
    })
}

/// The fastest the flow could have moved without a stall, bit/s, and what sets it: the
/// link's goodput, or the window in force over the smallest RTT measured when that RTT is
/// below a delayed ACK (an RTT that held the waits would hide them), whichever is lower.
fn unstalled(f: &Facts) -> Option<(f64, String)> {
    let link = f
        .reference
        .as_ref()
        .filter(|r| r.kind == ReferenceKind::Link && r.limit_bps > 0.0)
        .map(|r| (r.limit_bps, format!("the link's {}", rate(r.limit_bps))));
    let window = [f.window_clamp, f.granted_window()].into_iter().flatten().filter(|&w| w > 0).min();
    let by_window =
        f.rtt_min_us.filter(|&r| r > 0.0 && r < DELAYED_ACK_MIN_US).zip(window).map(|(rtt, w)| {
            let bps = w as f64 * 8.0 / (rtt / 1e6);
            (
                bps,
                format!(
                    "what {} allows over its smallest RTT {} ({})",
                    size(w as f64),
                    micros(rtt),
                    rate(bps)
                ),
            )
        });
    [link, by_window].into_iter().flatten().min_by(|a, b| a.0.total_cmp(&b.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::BufferFact;
    use results::Reference;

    /// A 4K receive buffer asked (8K granted), Nagle on, at a stall's pace.
    fn tiny() -> Facts {
        Facts {
            direction: "client→server".into(),
            client_sends: true,
            goodput_bps: 0.9e6,
            mss_bytes: Some(1448),
            receive_buffer: BufferFact { granted: Some(8192), requested: Some(4096) },
            send_buffer: BufferFact { granted: Some(16_384), requested: None },
            ..Facts::default()
        }
    }

    #[test]
    fn stop_and_go_needs_nagle_and_tiny_buffers() {
        let mut f = tiny();
        assert!(stop_and_go(&f).is_some_and(|x| x.evidence.contains("2.8 segments")));
        f.nodelay = true;
        assert!(stop_and_go(&f).is_none());
        f.nodelay = false;
        f.receive_buffer.requested = Some(65_536);
        assert!(stop_and_go(&f).is_none());
    }

    /// Seed 000's loop-back baseline: `-s 64K -S 64K` holds one 65483-byte segment, yet it
    /// moved 19.3 Gbit/s, 18,000 granted windows a second: it never waited on a delayed ACK.
    #[test]
    fn a_flow_moving_a_window_a_millisecond_did_not_stop_and_go() {
        let mut f = tiny();
        (f.goodput_bps, f.mss_bytes) = (19.3e9, Some(65_483));
        (f.receive_buffer.requested, f.receive_buffer.granted) = (Some(65_536), Some(131_072));
        assert!(stop_and_go(&f).is_none());
        // The same buffer at a stall's pace (a window per delayed ACK) is stop-and-go.
        f.goodput_bps = 131_072.0 * 8.0 / 0.04;
        assert!(stop_and_go(&f).is_some_and(|x| x.evidence.contains("1.0 segments of 65483 B")));
    }

    /// Seed 004's full run: an 8192-byte window of one 8192-byte segment (and an 8K send
    /// buffer) over TAXI 140 moved 87.9 Mbit/s with RTTs of 615–739 µs, 670 granted windows a
    /// second. It was named stop-and-go from its buffer alone.
    fn one_segment_window() -> Facts {
        let mut f = tiny();
        (f.goodput_bps, f.mss_bytes, f.window_clamp) = (87.9e6, Some(8192), Some(8192));
        f.receive_buffer = BufferFact { granted: Some(131_072), requested: None };
        f.send_buffer = BufferFact { granted: Some(16_384), requested: Some(8192) };
        f
    }

    /// The window over the RTT (107 Mbit/s) accounts for 82 % of the 87.9 Mbit/s: delayed-ACK
    /// waits had at most 18 % of the time.
    #[test]
    fn a_window_that_accounts_for_the_rate_leaves_no_room_for_stalls() {
        let mut f = one_segment_window();
        assert!(stop_and_go(&f).is_some(), "without an RTT the buffer alone decides");
        f.rtt_min_us = Some(615.0);
        assert!(stop_and_go(&f).is_none());
        // At a stall's pace over the same RTT the waits had the time: stop-and-go, said with it.
        f.goodput_bps = 2e6;
        let x = stop_and_go(&f).map(|x| x.evidence).unwrap_or_default();
        assert!(x.contains("is 2% of what 8.00 KiB allows over its smallest RTT"), "{x}");
        // An RTT that held delayed-ACK waits (40 ms or more) bounds nothing.
        f.rtt_min_us = Some(41_000.0);
        assert!(stop_and_go(&f).is_some_and(|x| !x.evidence.contains("allows")));
    }

    /// A flow at 90 % or more of its link stalled for at most a tenth of its time (seed 004's
    /// 16K window: 1.8 segments of 9136 B, 117 Mbit/s of TAXI 140's 125.7).
    #[test]
    fn a_flow_near_its_link_did_not_stop_and_go() {
        let mut f = tiny();
        (f.goodput_bps, f.mss_bytes) = (117e6, Some(9136));
        f.send_buffer = BufferFact { granted: Some(32_768), requested: Some(16_384) };
        f.receive_buffer = BufferFact { granted: Some(131_072), requested: None };
        assert!(stop_and_go(&f).is_some());
        let link =
            Reference { kind: ReferenceKind::Link, description: "taxi-140".into(), limit_bps: 125.7e6 };
        f.reference = Some(link.clone());
        assert!(stop_and_go(&f).is_none());
        f.reference = Some(Reference { kind: ReferenceKind::LoopbackBaseline, ..link });
        assert!(stop_and_go(&f).is_some(), "a loop-back baseline is no ceiling of the path");
    }
}
