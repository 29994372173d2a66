//! Per-segment stack time from tracepoint pairs (`tcplab segment-cost`, method B). Lines of a
//! tracefs instance whose events are already filtered to one thread go in; intervals come
//! out, with what could not be paired counted:
//!
//! * send side: `raw_syscalls:sys_enter` of a send call → every `net:net_dev_start_xmit`
//!   until the next send call (the segments, or GSO super-packets, the call put on the
//!   device), per call the time to its last transmit;
//! * receive side: `net:netif_receive_skb` of an skb → `skb:skb_copy_datagram_iovec` of the
//!   same skb address (the copy to the application), per copied skb.
//!
//! Timestamps are `secs.frac` (clocks such as `mono`, µs resolution) or a raw counter
//! (`x86-tsc`), turned into ns by [`Clock`].

use std::collections::HashMap;

use crate::ParseError;

/// How a line's timestamp becomes ns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Clock {
    /// `secs.frac`.
    Seconds,
    /// A raw counter, `ns_per_tick` ns each.
    Ticks {
        /// ns per tick of the counter.
        ns_per_tick: f64,
    },
}

/// One event of a segment-cost trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CostEvent {
    /// A send call entered the kernel (`sys_enter`).
    Syscall {
        /// ns.
        t_ns: u64,
    },
    /// A packet was handed to a device (`net_dev_start_xmit`).
    Xmit {
        /// ns.
        t_ns: u64,
        /// Its length, bytes.
        len: u32,
    },
    /// A packet entered the receive stack (`netif_receive_skb`).
    Receive {
        /// ns.
        t_ns: u64,
        /// The skb's (hashed) address.
        skb: u64,
    },
    /// Data of an skb was copied to the application (`skb_copy_datagram_iovec`).
    Copy {
        /// ns.
        t_ns: u64,
        /// The skb's (hashed) address.
        skb: u64,
    },
    /// The kernel dropped this many events on one CPU.
    Lost(u64),
}

const EVENTS: [&str; 4] =
    [": sys_enter: ", ": net_dev_start_xmit: ", ": netif_receive_skb: ", ": skb_copy_datagram_iovec: "];

/// Reads one line. `Ok(None)`: a comment, a blank line or another event.
pub fn parse_line(line: &str, clock: Clock) -> Result<Option<CostEvent>, ParseError> {
    let line = line.trim_end();
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    if let Some(n) = lost(line) {
        return Ok(Some(CostEvent::Lost(n)));
    }
    let Some((which, at)) = EVENTS.iter().enumerate().find_map(|(i, e)| line.find(e).map(|at| (i, at)))
    else {
        return Ok(None);
    };
    let t_ns = timestamp(&line[..at], clock)?;
    let fields = &line[at + EVENTS[which].len()..];
    Ok(Some(match which {
        0 => CostEvent::Syscall { t_ns },
        1 => CostEvent::Xmit { t_ns, len: field(fields, "len")?.parse().map_err(|_| bad("len", fields))? },
        2 => CostEvent::Receive { t_ns, skb: hex(fields, "skbaddr")? },
        _ => CostEvent::Copy { t_ns, skb: hex(fields, "skbaddr")? },
    }))
}

/// `CPU:1 [LOST 12 EVENTS]` → 12.
fn lost(line: &str) -> Option<u64> {
    let rest = line.trim_start().strip_prefix("CPU:")?;
    let (_, tail) = rest.split_once("[LOST ")?;
    tail.strip_suffix(" EVENTS]")?.trim().parse().ok()
}

fn bad(field: &'static str, value: &str) -> ParseError {
    ParseError::Value { field, value: value.chars().take(64).collect() }
}

fn field<'a>(fields: &'a str, name: &'static str) -> Result<&'a str, ParseError> {
    fields
        .split_whitespace()
        .find_map(|kv| kv.split_once('=').filter(|(k, _)| *k == name).map(|(_, v)| v))
        .ok_or(ParseError::Missing { field: name })
}

fn hex(fields: &str, name: &'static str) -> Result<u64, ParseError> {
    let v = field(fields, name)?;
    u64::from_str_radix(v.trim_start_matches("0x"), 16).map_err(|_| bad(name, v))
}

/// The last token of `head` (`3714.444175:` or `123456789:`) in ns.
fn timestamp(head: &str, clock: Clock) -> Result<u64, ParseError> {
    let token = head.split_whitespace().next_back().ok_or(ParseError::Timestamp)?;
    let token = token.strip_suffix(':').unwrap_or(token);
    let (whole, frac) = token.split_once('.').unwrap_or((token, ""));
    let whole: u64 = whole.parse().map_err(|_| ParseError::Timestamp)?;
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ParseError::Timestamp);
    }
    match clock {
        Clock::Ticks { ns_per_tick } if frac.is_empty() && ns_per_tick.is_finite() && ns_per_tick > 0.0 => {
            let ns = whole as f64 * ns_per_tick;
            (ns < u64::MAX as f64).then_some(ns as u64).ok_or(ParseError::Timestamp)
        }
        Clock::Ticks { .. } => Err(ParseError::Timestamp),
        Clock::Seconds => {
            let frac_ns = if frac.is_empty() {
                0
            } else {
                let v: u64 = frac.parse().map_err(|_| ParseError::Timestamp)?;
                v * 10u64.pow(9 - frac.len() as u32)
            };
            whole.checked_mul(1_000_000_000).and_then(|s| s.checked_add(frac_ns)).ok_or(ParseError::Timestamp)
        }
    }
}

/// What pairing found: intervals in ns, and what could not be paired.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Paired {
    /// Send side: per send call, call entry → its last transmit. Receive side: per copied
    /// skb, stack entry → copy.
    pub intervals_ns: Vec<u64>,
    /// Send side: packets transmitted per paired call, summed.
    pub packets: u64,
    /// Send calls with no transmit before the next call; copies of skbs never seen entering
    /// the stack.
    pub unpaired: u64,
    /// Lines that did not parse.
    pub malformed: u64,
    /// Events the kernel reported lost.
    pub lost: u64,
}

/// Reads `lines` (one tracefs read, in time order) into events, counting the bad ones.
pub fn events<'a>(lines: impl Iterator<Item = &'a str>, clock: Clock, out: &mut Paired) -> Vec<CostEvent> {
    let mut evs = Vec::new();
    for l in lines {
        match parse_line(l, clock) {
            Ok(Some(CostEvent::Lost(n))) => out.lost += n,
            Ok(Some(e)) => evs.push(e),
            Ok(None) => {}
            Err(_) => out.malformed += 1,
        }
    }
    evs
}

/// Send side: each send call with the transmits that follow it (until the next call). Only
/// transmits at least `min_len` bytes long count (pure ACKs are shorter).
pub fn pair_send(events: &[CostEvent], min_len: u32, out: &mut Paired) {
    let mut open: Option<(u64, Option<u64>, u64)> = None;
    let close = |open: Option<(u64, Option<u64>, u64)>, out: &mut Paired| match open {
        Some((start, Some(last), n)) => {
            out.intervals_ns.push(last.saturating_sub(start));
            out.packets += n;
        }
        Some((_, None, _)) => out.unpaired += 1,
        None => {}
    };
    for e in events {
        match *e {
            CostEvent::Syscall { t_ns } => {
                close(open.take(), out);
                open = Some((t_ns, None, 0));
            }
            CostEvent::Xmit { t_ns, len } if len >= min_len => {
                if let Some((_, last, n)) = open.as_mut() {
                    *last = Some(t_ns);
                    *n += 1;
                }
            }
            _ => {}
        }
    }
    close(open, out);
}

/// Receive side: each copy with the latest stack entry of the same skb before it.
pub fn pair_receive(events: &[CostEvent], out: &mut Paired) {
    let mut entered: HashMap<u64, u64> = HashMap::new();
    for e in events {
        match *e {
            CostEvent::Receive { t_ns, skb } => {
                // Bounded: a skb address is reused, so the map holds at most the live skbs.
                if entered.len() > 1 << 16 {
                    entered.clear();
                }
                entered.insert(skb, t_ns);
            }
            CostEvent::Copy { t_ns, skb } => match entered.get(&skb) {
                Some(&t0) if t0 <= t_ns => out.intervals_ns.push(t_ns - t0),
                _ => out.unpaired += 1,
            },
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recorded on this project's machines (6.18, x86-tsc clock, hashed pointers).
    const SEND: &str = "\
           <...>-4242    [001] ..... 1000000: sys_enter: NR 44 (5, 7f00, 40, 0, 0, 0)
           <...>-4242    [001] b..1. 1002600: net_dev_start_xmit: dev=lo queue_mapping=0 skbaddr=00000000a1b2c3d4 vlan_tagged=0 vlan_proto=0x0000 vlan_tci=0x0000 protocol=0x0800 ip_summed=3 len=130 data_len=0 network_offset=14 transport_offset_valid=1 transport_offset=34 tx_flags=0 gso_size=0 gso_segs=0 gso_type=0
           <...>-4242    [001] ..s1. 1003000: net_dev_start_xmit: dev=lo queue_mapping=0 skbaddr=00000000a1b2c3d5 vlan_tagged=0 vlan_proto=0x0000 vlan_tci=0x0000 protocol=0x0800 ip_summed=3 len=66 data_len=0 network_offset=14 transport_offset_valid=1 transport_offset=34 tx_flags=0 gso_size=0 gso_segs=0 gso_type=0
           <...>-4242    [001] ..... 2000000: sys_enter: NR 44 (5, 7f00, 40, 0, 0, 0)
CPU:0 [LOST 3 EVENTS]
           <...>-4242    [001] ..... 3000000: sys_enter: NR 44 (5, 7f00, 40, 0, 0, 0)
           <...>-4242    [001] b..1. 3005200: net_dev_start_xmit: dev=lo queue_mapping=0 skbaddr=00000000a1b2c3d4 vlan_tagged=0 vlan_proto=0x0000 vlan_tci=0x0000 protocol=0x0800 ip_summed=3 len=65548 data_len=65482 network_offset=14 transport_offset_valid=1 transport_offset=34 tx_flags=0 gso_size=0 gso_segs=0 gso_type=0
           <...>-4242    [001] b..1. 3007800: net_dev_start_xmit: dev=lo queue_mapping=0 skbaddr=00000000a1b2c3d6 vlan_tagged=0 vlan_proto=0x0000 vlan_tci=0x0000 protocol=0x0800 ip_summed=3 len=120 data_len=0 network_offset=14 transport_offset_valid=1 transport_offset=34 tx_flags=0 gso_size=0 gso_segs=0 gso_type=0
garbage line: with a colon
";

    const RECV: &str = "\
          <idle>-0       [000] ..s2. 5000.000001: netif_receive_skb: dev=lo skbaddr=00000000deadbeef len=116
           <...>-77      [000] ..... 5000.000004: skb_copy_datagram_iovec: skbaddr=00000000deadbeef len=64
           <...>-77      [000] ..... 5000.000009: skb_copy_datagram_iovec: skbaddr=00000000feedface len=64
          <idle>-0       [000] ..s2. 5000.000010: netif_receive_skb: dev=lo skbaddr=00000000feedface len=116
           <...>-77      [000] ..... 5000.000012: skb_copy_datagram_iovec: skbaddr=00000000feedface len=64
";

    #[test]
    fn sends_pair_with_the_transmits_that_follow_them() {
        let clock = Clock::Ticks { ns_per_tick: 0.5 };
        let mut out = Paired::default();
        let evs = events(SEND.lines(), clock, &mut out);
        pair_send(&evs, 100, &mut out);
        assert_eq!(out.intervals_ns, vec![1300, 3900], "the 66-byte ACK is no segment");
        assert_eq!(out.packets, 3);
        assert_eq!(out.unpaired, 1, "the second call saw no transmit");
        assert_eq!((out.lost, out.malformed), (3, 0), "a line of another shape is not ours");
    }

    #[test]
    fn copies_pair_with_their_skb_entering_the_stack() {
        let mut out = Paired::default();
        let evs = events(RECV.lines(), Clock::Seconds, &mut out);
        pair_receive(&evs, &mut out);
        assert_eq!(out.intervals_ns, vec![3000, 2000]);
        assert_eq!(out.unpaired, 1, "a copy before its skb was seen entering");
    }

    #[test]
    fn bad_timestamps_and_fields_are_errors_not_panics() {
        let bad = [
            "x-1 [000] ..... 99999999999999999999999: sys_enter: NR 1",
            "x-1 [000] ..... 1.0000000001: sys_enter: NR 1",
            "x-1 [000] ..... 1.5: netif_receive_skb: dev=lo skbaddr=zz len=1",
            "x-1 [000] ..... 1.5: net_dev_start_xmit: dev=lo",
            "1.0: skb_copy_datagram_iovec: len=3",
        ];
        for l in bad {
            assert!(parse_line(l, Clock::Seconds).is_err(), "{l}");
        }
        assert!(
            parse_line("x-1 [000] ..... 1.5: sys_enter: NR 1", Clock::Ticks { ns_per_tick: 1.0 }).is_err()
        );
        assert_eq!(parse_line("# tracer: nop", Clock::Seconds), Ok(None));
    }
}
