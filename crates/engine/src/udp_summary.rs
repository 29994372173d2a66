//! The UDP rows of a summary: per direction, the sender's count against the receiver's
//! account (`lost = sent − (received − duplicates)`, exact), rates over the measured window, and
//! warnings that say plainly where datagrams were lost.

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
        t.socket_drops += c.socket_drops;
        jitter += c.jitter_us;
    }
    t.jitter_us = if n > 0 { jitter / f64::from(n) } else { 0.0 };
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
        sender_pps: per_s(tx_bytes as f64 / len, sender.measured_s),
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
    s.jitter_ms = rx.jitter_us / 1000.0;
    s.receiver_bps = per_s(rx_bytes as f64 * 8.0, receiver.measured_s);
    s.receiver_pps = per_s(rx_bytes as f64 / len, receiver.measured_s);
    s
}

/// Where datagrams went missing, said plainly.
pub fn warnings(rows: &[UdpSummary]) -> Vec<Warning> {
    let mut w = Vec::new();
    for d in rows {
        let receiver = if d.direction.starts_with("client") { "server" } else { "client" };
        if d.socket_drops > 0 {
            w.push(Warning {
                kind: WarningKind::ReceiverOverrun,
                message: format!(
                    "{}: receiver overrun — the {receiver}'s socket receive buffer overflowed {} times (each drop one datagram, or one coalesced GSO/GRO train of up to 64); {:.2}% of the datagrams sent were lost: the receiver could not keep up",
                    d.direction, d.socket_drops, d.loss_pct
                ),
                advice: "raise the receiver's buffer (--remote-rcvbuf, or --rcvbuf with -R), lower -b, or spread over -P flows".into(),
            });
        }
        if d.send_errors > 0 {
            w.push(Warning {
                kind: WarningKind::SendErrors,
                message: format!(
                    "{}: {} sends failed on the sending host ({} ENOBUFS): those datagrams never left it and are not counted as sent",
                    d.direction, d.send_errors, d.enobufs
                ),
                advice: "lower -b or raise --sndbuf; loss on the sending host is not path loss".into(),
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
        let rx = UdpCounts { received: 960, duplicates: 10, socket_drops: 30, ..UdpCounts::default() };
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
}
