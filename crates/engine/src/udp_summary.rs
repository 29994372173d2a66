//! The UDP rows of a summary: per direction, the sender's count against the receiver's
//! account (`lost = sent − (received − duplicates)`, exact), rates over the measured window, the
//! skbs each end's interface counted in that window beside the datagrams, and warnings that say
//! plainly where datagrams were lost.

use results::setting;
use results::udp::{PathPackets, PathReading, PathWindow};
use results::{
    Role, SideMeasurement, StreamStats, Summary, TestSpec, UdpCounts, UdpSummary, Warning, WarningKind,
};

/// The summary of a UDP stream test (`udp`), headline goodput.
pub fn udp_bulk(spec: &TestSpec, local: &SideMeasurement, remote: Option<&SideMeasurement>) -> Summary {
    let s = Summary { udp: directions(spec, local, remote), ..Summary::default() };
    let receivers = [(spec.client_sends(), remote), (spec.server_sends(), Some(local))];
    crate::summarize::with_goodput(s, receivers, local, remote)
}

/// One entry per direction that carried data.
pub fn directions(
    spec: &TestSpec,
    local: &SideMeasurement,
    remote: Option<&SideMeasurement>,
) -> Vec<UdpSummary> {
    let mut out = Vec::new();
    if spec.client_sends() {
        out.push(direction("client→server", spec, local, remote));
    }
    if let (true, Some(r)) = (spec.server_sends(), remote) {
        out.push(direction("server→client", spec, r, Some(local)));
    }
    out
}

fn with_role(side: &SideMeasurement, role: Role) -> impl Iterator<Item = &StreamStats> {
    side.streams.iter().filter(move |s| s.role == role)
}

fn total<'a>(streams: impl Iterator<Item = &'a StreamStats>) -> (UdpCounts, u64, u32) {
    let mut t = UdpCounts::default();
    let (mut bytes, mut n, mut jitter) = (0u64, 0u32, 0.0);
    // Known only when every flow's receiver reported it.
    let mut drops = Some(0u64);
    for s in streams {
        bytes += s.bytes;
        n += 1;
        let Some(c) = &s.udp else { continue };
        t.sent += c.sent;
        t.send_errors += c.send_errors;
        t.enobufs += c.enobufs;
        t.received += c.received;
        t.duplicates += c.duplicates;
        t.out_of_order += c.out_of_order;
        t.late += c.late;
        t.stale += c.stale;
        drops = drops.zip(c.socket_drops).map(|(a, b)| a + b);
        jitter += c.jitter_us;
    }
    t.jitter_us = if n > 0 { jitter / f64::from(n) } else { 0.0 };
    t.socket_drops = drops;
    (t, bytes, n)
}

fn per_s(v: f64, secs: f64) -> f64 {
    if secs > 0.0 {
        v / secs
    } else {
        0.0
    }
}

fn direction(
    name: &str,
    spec: &TestSpec,
    sender: &SideMeasurement,
    receiver: Option<&SideMeasurement>,
) -> UdpSummary {
    let (tx, tx_bytes, streams) = total(with_role(sender, Role::Send));
    let len = f64::from(spec.send_len.max(1));
    let mut s = UdpSummary {
        direction: name.to_string(),
        streams,
        datagram_len: spec.send_len,
        target_bps: spec.rate_bps.saturating_mul(u64::from(streams)),
        sender_bps: per_s(tx_bytes as f64 * 8.0, sender.measured_s),
        sender_datagrams_per_s: per_s(tx_bytes as f64 / len, sender.measured_s),
        sender_path: path(sender, Role::Send),
        sent: tx.sent,
        send_errors: tx.send_errors,
        enobufs: tx.enobufs,
        ..UdpSummary::default()
    };
    let Some(receiver) = receiver else { return s };
    let (rx, rx_bytes, _) = total(with_role(receiver, Role::Recv));
    s.received = rx.received;
    s.duplicates = rx.duplicates;
    s.lost = tx.sent.saturating_sub(rx.received - rx.duplicates);
    s.loss_pct = if tx.sent > 0 { 100.0 * s.lost as f64 / tx.sent as f64 } else { 0.0 };
    s.out_of_order = rx.out_of_order;
    s.late = rx.late;
    s.stale = rx.stale;
    s.socket_drops = rx.socket_drops;
    s.receiver_bps = per_s(rx_bytes as f64 * 8.0, receiver.measured_s);
    s.receiver_datagrams_per_s = per_s(rx_bytes as f64 / len, receiver.measured_s);
    s.receiver_path = path(receiver, Role::Recv);
    // Datagrams of one GRO train arrive together: their jitter would be the sender's spacing.
    let coalesced = s.receiver_path.as_ref().is_some_and(PathPackets::coalesced);
    s.jitter_ms = (!coalesced).then_some(rx.jitter_us / 1000.0);
    s
}

/// What the path carried at one end for the flows with `role`: from the earliest start reading
/// to the latest end reading of the flows on the first flow's interface (the counters are the
/// interface's, so the flows' windows are joined, not added), with those flows' datagrams.
fn path(side: &SideMeasurement, role: Role) -> Option<PathPackets> {
    let windows: Vec<&PathWindow> =
        with_role(side, role).filter_map(|s| s.udp.as_ref()?.path.as_ref()).collect();
    let interface = &windows.first()?.interface;
    let same: Vec<&PathWindow> = windows.iter().copied().filter(|w| &w.interface == interface).collect();
    let first = |f: fn(&PathReading) -> u64| same.iter().map(|w| f(&w.start)).min().unwrap_or(0);
    let last = |f: fn(&PathReading) -> u64| same.iter().map(|w| f(&w.end)).max().unwrap_or(0);
    let delta = |f: fn(&PathReading) -> u64| last(f).saturating_sub(first(f));
    let from = same.iter().map(|w| w.start.at_s).fold(f64::INFINITY, f64::min);
    let to = same.iter().map(|w| w.end.at_s).fold(f64::NEG_INFINITY, f64::max);
    let window_s = (to - from).max(0.0);
    let datagrams: u64 = same.iter().map(|w| w.end.datagrams.saturating_sub(w.start.datagrams)).sum();
    let skbs = delta(|r| r.if_skbs);
    Some(PathPackets {
        interface: interface.clone(),
        window_s,
        datagrams,
        skbs,
        bytes: delta(|r| r.if_bytes),
        skbs_per_s: per_s(skbs as f64, window_s),
        datagrams_per_skb: if skbs > 0 { datagrams as f64 / skbs as f64 } else { 0.0 },
        udp_mib_skbs: delta(|r| r.udp_mib_skbs),
        udp_mib_receive_buffer_errors: delta(|r| r.udp_mib_receive_buffer_errors),
    })
}

/// Where datagrams went missing, said plainly.
pub fn warnings(rows: &[UdpSummary]) -> Vec<Warning> {
    let mut w = Vec::new();
    for d in rows {
        let receiver = if d.direction.starts_with("client") { "server" } else { "client" };
        if let Some(drops) = d.socket_drops.filter(|&n| n > 0) {
            w.push(Warning {
                kind: WarningKind::ReceiverOverrun,
                message: format!(
                    "{}: receiver overrun — the {receiver}'s socket receive buffer overflowed {} times (each drop one datagram, or one coalesced GSO/GRO train of up to 64); {:.2}% of the datagrams sent were lost: the receiver could not keep up",
                    d.direction, drops, d.loss_pct
                ),
                advice: format!(
                    "raise the receiver's buffer ({}, or {} with -R), lower -b, or spread over -P flows",
                    setting::REMOTE_RCVBUF.flag,
                    setting::RCVBUF.flag
                ),
            });
        }
        if d.send_errors > 0 {
            w.push(Warning {
                kind: WarningKind::SendErrors,
                message: format!(
                    "{}: {} sends failed on the sending host ({} ENOBUFS): those datagrams never left it and are not counted as sent",
                    d.direction, d.send_errors, d.enobufs
                ),
                advice: format!(
                    "lower -b or raise {}; loss on the sending host is not path loss",
                    if receiver == "server" { setting::SNDBUF.flag } else { setting::REMOTE_SNDBUF.flag }
                ),
            });
        }
        let target = d.target_bps as f64;
        if target > 0.0 && d.sender_bps < 0.99 * target {
            w.push(Warning {
                kind: WarningKind::RateNotReached,
                message: format!(
                    "{}: sent {:.1} Mbit/s of the {:.1} Mbit/s asked ({:.1}%)",
                    d.direction,
                    d.sender_bps / 1e6,
                    target / 1e6,
                    100.0 * d.sender_bps / target
                ),
                advice: "the sender is the limit: try -P, larger -l, or check the sender's CPU".into(),
            });
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::{SocketReport, TestKind};

    fn stream(role: Role, bytes: u64, udp: UdpCounts) -> StreamStats {
        StreamStats {
            index: 0,
            role,
            bytes,
            bytes_total: bytes,
            calls: 1,
            transactions: 0,
            socket: SocketReport::default(),
            tcp: None,
            placement: Default::default(),
            udp: Some(udp),
        }
    }

    #[test]
    fn loss_is_sent_minus_distinct_received_and_overrun_is_named() {
        let spec = TestSpec { rate_bps: 1_000_000, send_len: 100, ..TestSpec::new(TestKind::UdpStream) };
        let tx = UdpCounts { sent: 1000, ..UdpCounts::default() };
        let rx = UdpCounts { received: 960, duplicates: 10, socket_drops: Some(30), ..UdpCounts::default() };
        let local = SideMeasurement {
            measured_s: 1.0,
            streams: vec![stream(Role::Send, 100_000, tx)],
            ..Default::default()
        };
        let remote = SideMeasurement {
            measured_s: 1.0,
            streams: vec![stream(Role::Recv, 96_000, rx)],
            ..Default::default()
        };
        let rows = directions(&spec, &local, Some(&remote));
        assert_eq!(rows.len(), 1);
        let d = &rows[0];
        assert_eq!((d.sent, d.received, d.duplicates, d.lost), (1000, 960, 10, 50));
        assert!((d.loss_pct - 5.0).abs() < 1e-9);
        assert!((d.sender_bps - 800_000.0).abs() < 1e-6);
        let kinds: Vec<WarningKind> = warnings(&rows).iter().map(|w| w.kind).collect();
        assert_eq!(kinds, vec![WarningKind::ReceiverOverrun, WarningKind::RateNotReached]);
    }

    fn window(interface: &str, start: (f64, u64, u64), end: (f64, u64, u64)) -> Option<PathWindow> {
        let r = |(at_s, datagrams, if_skbs): (f64, u64, u64)| PathReading {
            at_s,
            datagrams,
            if_skbs,
            if_bytes: if_skbs * 1000,
            udp_mib_skbs: if_skbs / 2,
            udp_mib_receive_buffer_errors: 0,
        };
        Some(PathWindow { interface: interface.into(), start: r(start), end: r(end) })
    }

    #[test]
    fn flows_on_one_interface_join_their_windows_and_add_their_datagrams() {
        let spec = TestSpec { send_len: 1000, ..TestSpec::new(TestKind::UdpStream) };
        let flow = |path| stream(Role::Send, 0, UdpCounts { sent: 1, path, ..UdpCounts::default() });
        let local = SideMeasurement {
            measured_s: 2.0,
            streams: vec![
                // Both flows read the same counter (lo): 1000 → 1300 over the joined window.
                flow(window("lo", (-0.01, 0, 1000), (2.0, 4400, 1250))),
                flow(window("lo", (-0.02, 0, 1010), (1.99, 4400, 1300))),
                // A flow routed elsewhere is left out rather than mixed in.
                flow(window("eth0", (0.0, 0, 5), (2.0, 10, 15))),
                flow(None),
            ],
            ..Default::default()
        };
        let d = &directions(&spec, &local, None)[0];
        let p = d.sender_path.as_ref().unwrap();
        assert_eq!((p.interface.as_str(), p.datagrams, p.skbs, p.bytes), ("lo", 8800, 300, 300_000));
        assert_eq!(p.udp_mib_skbs, 650 - 500);
        assert!((p.window_s - 2.02).abs() < 1e-9, "{}", p.window_s);
        assert!((p.skbs_per_s - 300.0 / 2.02).abs() < 1e-6);
        assert!((p.datagrams_per_skb - 8800.0 / 300.0).abs() < 1e-9);
        assert!(d.receiver_path.is_none(), "no receiver measurement, no receiver skbs");
    }

    #[test]
    fn jitter_over_coalesced_trains_is_not_a_measurement() {
        let spec = TestSpec { send_len: 1000, ..TestSpec::new(TestKind::UdpStream) };
        let local = SideMeasurement {
            measured_s: 1.0,
            streams: vec![stream(Role::Send, 0, UdpCounts { sent: 4400, ..UdpCounts::default() })],
            ..Default::default()
        };
        let receiver = |end_skbs| {
            let rx = UdpCounts {
                received: 4400,
                jitter_us: 2.0,
                path: window("lo", (0.0, 0, 0), (1.0, 4400, end_skbs)),
                ..UdpCounts::default()
            };
            SideMeasurement {
                measured_s: 1.0,
                streams: vec![stream(Role::Recv, 0, rx)],
                ..Default::default()
            }
        };
        let trains = directions(&spec, &local, Some(&receiver(100)));
        assert_eq!(trains[0].jitter_ms, None, "44 datagrams per skb share their arrival times");
        let single = directions(&spec, &local, Some(&receiver(4410)));
        assert_eq!(single[0].jitter_ms, Some(0.002));
    }
}
