//! Human text for UDP stream tests: interval lines with datagram counts, and the summary block
//! with the sender's count against the receiver's account and, apart from those *datagrams*, the
//! *packets (skbs)* each end's interface counted. Used by [`crate::text`].

use std::fmt::Write;

use results::udp::PathPackets;
use results::{Interval, StreamInterval, UdpSummary};

use crate::units::{bytes, count, micros, rate, sig3};

/// Header above UDP interval lines.
pub fn interval_header() -> String {
    format!(
        "{:<6}{:<15}{:>14}{:>16}{:>12} {:>18}{:>11}{:>8}",
        "[ ID]", "Interval", "Transfer", "Bitrate", "Datagrams", "Lost/Expected", "Jitter", "OoO"
    )
}

/// One stream's interval line: a sender shows datagrams sent, a receiver what it counted
/// (jitter `n/a` unless `jitter_known`).
fn line(
    id: &str,
    span: &str,
    secs: f64,
    bytes_moved: u64,
    s: &[&StreamInterval],
    tail: (&str, bool),
) -> String {
    let (omitted, jitter_known) = tail;
    let u = |f: fn(&results::UdpCounts) -> u64| s.iter().filter_map(|x| x.udp.as_ref()).map(f).sum::<u64>();
    let (sent, received, lost, late) = (u(|c| c.sent), u(|c| c.received), u(|c| c.lost), u(|c| c.late));
    let jitter: Vec<f64> = s.iter().filter_map(|x| x.udp.as_ref()).map(|c| c.jitter_us).collect();
    let (datagrams, lost_col, jitter_col, ooo) = if received > 0 || sent == 0 {
        let expected = (received + lost).saturating_sub(u(|c| c.duplicates));
        let pct = if expected > 0 { 100.0 * lost as f64 / expected as f64 } else { 0.0 };
        let late = if late > 0 { format!(" +{late} late") } else { String::new() };
        let mean_jitter = jitter.iter().sum::<f64>() / jitter.len().max(1) as f64;
        (
            count(received),
            format!("{lost}/{expected} ({pct:.2}%){late}"),
            if jitter_known { micros(mean_jitter) } else { JITTER_NA.to_string() },
            count(u(|c| c.out_of_order)),
        )
    } else {
        (count(sent), "(sent)".to_string(), "-".to_string(), "-".to_string())
    };
    format!(
        "{id:<6}{span:<15}{:>14}{:>16}{datagrams:>12} {lost_col:>18} {jitter_col:>10}{ooo:>8}{omitted}",
        bytes(bytes_moved),
        rate(bytes_moved as f64 * 8.0 / secs)
    )
}

/// Lines for one interval: one per stream, plus `[SUM]` when there are several.
pub fn interval_lines(iv: &Interval) -> Vec<String> {
    lines(iv, true)
}

fn lines(iv: &Interval, jitter_known: bool) -> Vec<String> {
    let span = format!("{:.2}-{:.2} s", iv.start_s, iv.end_s);
    let secs = iv.len_s().max(1e-9);
    let omitted = if iv.omitted { "  (omitted)" } else { "" };
    let mut lines: Vec<String> = iv
        .streams
        .iter()
        .map(|s| line(&format!("[{:>3}]", s.index + 1), &span, secs, s.bytes, &[s], (omitted, jitter_known)))
        .collect();
    if iv.streams.len() > 1 {
        let all: Vec<&StreamInterval> = iv.streams.iter().collect();
        lines.push(line("[SUM]", &span, secs, iv.bytes(), &all, (omitted, jitter_known)));
    }
    lines
}

/// The receiving server's interval lines (the client only sees its own, sending side live);
/// jitter `n/a` unless `jitter_known` (see [`UdpSummary::jitter_ms`]).
pub fn remote_receiver_intervals(o: &mut String, remote: &results::SideMeasurement, jitter_known: bool) {
    let receiving: Vec<Interval> = remote
        .intervals
        .iter()
        .map(|iv| Interval {
            streams: iv
                .streams
                .iter()
                .filter(|s| s.udp.as_ref().is_some_and(|u| u.sent == 0))
                .cloned()
                .collect(),
            ..iv.clone()
        })
        .filter(|iv| !iv.streams.is_empty())
        .collect();
    if receiving.is_empty() {
        return;
    }
    let _ = writeln!(o, "  server (receiver) intervals:");
    let _ = writeln!(o, "  {}", interval_header());
    let shown = results::side::without_trailing_stub(&receiving);
    for iv in shown {
        lines(iv, jitter_known).iter().for_each(|l| {
            let _ = writeln!(o, "  {l}");
        });
    }
    if let Some(stub) = receiving.get(shown.len()) {
        let datagrams: u64 = stub.streams.iter().filter_map(|s| s.udp.as_ref()).map(|u| u.received).sum();
        let _ = writeln!(
            o,
            "  (and {} datagram(s) in the last {:.1} ms after {:.2} s: in the totals, too short for a rate)",
            count(datagrams),
            stub.len_s() * 1e3,
            stub.start_s
        );
    }
}

/// A direction's jitter: `n/a` when the receiver got GRO-coalesced trains (see
/// [`UdpSummary::jitter_ms`]), never a made-up 0.
pub fn jitter(d: &UdpSummary) -> String {
    d.jitter_ms.map_or_else(|| JITTER_NA.to_string(), |ms| micros(ms * 1000.0))
}

/// What jitter reads when it measures nothing.
pub const JITTER_NA: &str = "n/a (GRO trains)";

/// The summary block of one direction.
pub fn block(o: &mut String, d: &UdpSummary, reference: Option<&results::Reference>) {
    let plural = if d.streams == 1 { "" } else { "s" };
    let target = if d.target_bps > 0 { rate(d.target_bps as f64) } else { "unlimited".into() };
    let _ = writeln!(
        o,
        "  {} ({} stream{plural}, {} B datagrams, target {target})",
        d.direction, d.streams, d.datagram_len
    );
    let achieved = if d.target_bps > 0 {
        format!(" ({:.2}% of target)", 100.0 * d.sender_bps / d.target_bps as f64)
    } else {
        String::new()
    };
    let _ = writeln!(
        o,
        "    sender    {:>14} datagrams  {:>14}{achieved}  {} datagrams/s  send errors {} (ENOBUFS {})",
        count(d.sent),
        rate(d.sender_bps),
        sig3(d.sender_datagrams_per_s),
        d.send_errors,
        d.enobufs
    );
    let _ = writeln!(
        o,
        "    receiver  {:>14} datagrams  {:>14}{}  {} datagrams/s  jitter {}",
        count(d.received),
        rate(d.receiver_bps),
        match crate::text::of_reference(d.of_reference, reference) {
            s if s.is_empty() => s,
            s => format!(" ({s})"),
        },
        sig3(d.receiver_datagrams_per_s),
        jitter(d)
    );
    let _ = writeln!(
        o,
        "    lost {} of {} ({:.3}%) · receiver overrun drops {} · out-of-order {} · duplicates {} · late {}{}",
        count(d.lost),
        count(d.sent),
        d.loss_pct,
        d.socket_drops.map_or("not reported".into(), count),
        count(d.out_of_order),
        count(d.duplicates),
        count(d.late),
        if d.stale > 0 { format!(" · beyond the reorder window {}", count(d.stale)) } else { String::new() }
    );
    packets(o, d);
}

/// The skbs each end's interface counted, apart from the datagrams, and the batching factor.
fn packets(o: &mut String, d: &UdpSummary) {
    let ends = [
        ("sender", "GSO", "OutDatagrams", &d.sender_path),
        ("receiver", "GRO", "InDatagrams", &d.receiver_path),
    ];
    let mut other = Vec::new();
    for (end, offload, mib, path) in ends {
        let Some(p) = path else { continue };
        let drops = if end == "receiver" {
            format!(", RcvbufErrors {}", count(p.udp_mib_receive_buffer_errors))
        } else {
            String::new()
        };
        let _ = writeln!(
            o,
            "    {end:<9} {:>14} packets (skbs on {if_})  {} packets/s (skbs on {if_})  {} datagrams per skb ({offload} batching)  UDP {mib} {}{drops}",
            count(p.skbs),
            sig3(p.skbs_per_s),
            sig3(p.datagrams_per_skb),
            count(p.udp_mib_skbs),
            if_ = p.interface,
        );
        // A few control packets always share the interface; say so when they matter (> 1 %).
        if p.other_traffic().saturating_mul(100) > p.skbs {
            other.push(other_traffic(end, p));
        }
    }
    if d.sender_path.is_some() || d.receiver_path.is_some() {
        let _ = writeln!(
            o,
            "    (datagrams are tcplab's; packets are the interface's counter over the same window: every skb on it, a GSO/GRO train counted once, other traffic included)"
        );
    }
    other.iter().for_each(|l| {
        let _ = writeln!(o, "    {l}");
    });
}

fn other_traffic(end: &str, p: &PathPackets) -> String {
    let drops = if p.udp_mib_receive_buffer_errors > 0 {
        format!(" and {} receive-buffer drops", count(p.udp_mib_receive_buffer_errors))
    } else {
        String::new()
    };
    format!(
        "note: the {end}'s {} counted {} more packets than this test's {} datagrams{drops}: other traffic shared it, so its packets/s is not this test's alone",
        p.interface,
        count(p.other_traffic()),
        count(p.datagrams)
    )
}

/// The suite-table cells: received rate, and datagrams lost in % of those sent.
pub fn headline(rows: &[UdpSummary]) -> (String, String) {
    let bps: f64 = rows.iter().map(|d| d.receiver_bps).sum();
    let (lost, sent) = rows.iter().fold((0, 0), |(l, s), d| (l + d.lost, s + d.sent));
    let pct = if sent > 0 { 100.0 * lost as f64 / sent as f64 } else { 0.0 };
    (rate(bps), format!("{pct:.1}%"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::UdpCounts;

    #[test]
    fn receiver_and_sender_intervals_render() {
        let rx = StreamInterval {
            index: 0,
            bytes: 140_000,
            udp: Some(UdpCounts {
                received: 100,
                lost: 2,
                late: 1,
                out_of_order: 3,
                jitter_us: 12.5,
                ..Default::default()
            }),
            ..Default::default()
        };
        let tx = StreamInterval {
            index: 1,
            bytes: 1400,
            udp: Some(UdpCounts { sent: 1, ..Default::default() }),
            ..Default::default()
        };
        let iv = Interval { start_s: 0.0, end_s: 1.0, omitted: false, streams: vec![rx, tx] };
        let lines = interval_lines(&iv);
        assert_eq!(lines.len(), 3);
        assert!(lines[0].contains("2/102 (1.96%) +1 late"), "{}", lines[0]);
        assert!(lines[0].contains("12.5 µs"), "{}", lines[0]);
        assert!(lines[1].contains("(sent)"), "{}", lines[1]);
        assert!(lines[2].starts_with("[SUM]"));
    }

    #[test]
    fn a_last_stub_interval_is_noted_not_drawn_as_a_rate() {
        let rx = |received: u64| StreamInterval {
            index: 0,
            bytes: received * 1460,
            udp: Some(UdpCounts { received, ..Default::default() }),
            ..Default::default()
        };
        let iv = |start_s: f64, end_s: f64, n: u64| Interval {
            start_s,
            end_s,
            omitted: false,
            streams: vec![rx(n)],
        };
        let remote = results::SideMeasurement {
            intervals: vec![iv(0.0, 1.0, 856), iv(1.0, 2.0, 856), iv(2.0, 2.0035, 1)],
            ..Default::default()
        };
        let mut o = String::new();
        remote_receiver_intervals(&mut o, &remote, true);
        assert!(!o.contains("2.00-2.00"), "{o}");
        assert!(o.contains("(and 1 datagram(s) in the last 3.5 ms after 2.00 s: in the totals"), "{o}");
        // A whole last interval stays a row.
        let remote =
            results::SideMeasurement { intervals: vec![iv(0.0, 1.0, 856), iv(1.0, 1.5, 428)], ..remote };
        let mut o = String::new();
        remote_receiver_intervals(&mut o, &remote, true);
        assert!(o.contains("1.00-1.50") && !o.contains("(and "), "{o}");
    }

    #[test]
    fn block_says_achieved_against_target_and_overrun() {
        let d = UdpSummary {
            direction: "client→server".into(),
            streams: 1,
            datagram_len: 64,
            target_bps: 1_000_000,
            sender_bps: 995_000.0,
            sent: 1000,
            received: 990,
            lost: 10,
            loss_pct: 1.0,
            socket_drops: Some(7),
            ..Default::default()
        };
        let mut o = String::new();
        block(&mut o, &d, None);
        assert!(o.contains("(99.50% of target)"), "{o}");
        assert!(o.contains("lost 10 of 1,000 (1.000%) · receiver overrun drops 7"), "{o}");
        assert!(o.contains("jitter n/a (GRO trains)"), "no jitter is not 0.00 µs: {o}");
        let measured = UdpSummary { jitter_ms: Some(0.0125), ..d.clone() };
        let mut o = String::new();
        block(&mut o, &measured, None);
        assert!(o.contains("jitter 12.5 µs"), "{o}");
        assert_eq!(headline(&[d]), ("0.00 bit/s".to_string(), "1.0%".to_string()));
    }

    #[test]
    fn block_keeps_datagrams_and_skbs_apart_and_says_when_other_traffic_shared_the_interface() {
        let path = |datagrams, skbs| PathPackets {
            interface: "lo".into(),
            window_s: 2.0,
            datagrams,
            skbs,
            bytes: skbs * 1000,
            skbs_per_s: skbs as f64 / 2.0,
            datagrams_per_skb: datagrams as f64 / skbs as f64,
            udp_mib_skbs: skbs,
            udp_mib_receive_buffer_errors: 3,
        };
        let mut d = UdpSummary {
            direction: "client→server".into(),
            sender_datagrams_per_s: 44_000.0,
            sender_path: Some(path(88_000, 2_000)),
            receiver_path: Some(path(1_000, 1_100)),
            ..Default::default()
        };
        let mut o = String::new();
        block(&mut o, &d, None);
        assert!(o.contains("44000 datagrams/s"), "{o}");
        assert!(o.contains("2,000 packets (skbs on lo)  1000 packets/s (skbs on lo)  44.0 datagrams per skb (GSO batching)  UDP OutDatagrams 2,000"), "{o}");
        assert!(o.contains("(GRO batching)  UDP InDatagrams 1,100, RcvbufErrors 3"), "{o}");
        assert!(o.contains("the receiver's lo counted 97 more packets than this test's 1,000 datagrams and 3 receive-buffer drops"), "{o}");
        assert!(!o.contains("the sender's lo counted"), "{o}");
        d.receiver_path = Some(path(1_000, 1_013));
        let mut o = String::new();
        block(&mut o, &d, None);
        assert!(!o.contains("note:"), "10 control packets in 1,013 are not worth a note: {o}");
        (d.sender_path, d.receiver_path) = (None, None);
        let mut o = String::new();
        block(&mut o, &d, None);
        assert!(!o.contains("packets"), "no interface counters, no packet lines: {o}");
    }
}
