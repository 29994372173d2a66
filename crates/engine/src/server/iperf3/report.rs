//! What the server tells an iperf3 client at the end: its results document (per stream, by
//! iperf3 id) and, with `--get-server-output`, a text report laid out like iperf3's own
//! server output (MBytes in powers of 1024, bits/sec in powers of 1000, as iperf3 and tcplab
//! both count).

use std::fmt::Write as _;
use std::net::SocketAddr;

use results::{Role, SideMeasurement};
use wire::iperf3::{stream_id, Protocol, Results};

use crate::iperf3::convert::stream_results;

use super::plan::Plan;

/// The server's results document.
pub fn results(plan: &Plan, m: &SideMeasurement, congestion: &str, output: Option<String>) -> Results {
    let tcp = plan.protocol == Protocol::Tcp;
    let sends = m.streams.iter().any(|s| s.role == Role::Send);
    let cpu = m.cpu.as_ref();
    Results {
        cpu_util_total: cpu.map_or(0.0, |c| c.util_pct),
        cpu_util_user: cpu.map_or(0.0, |c| c.user_pct),
        cpu_util_system: cpu.map_or(0.0, |c| c.system_pct),
        sender_has_retransmits: if tcp && sends { 1 } else { -1 },
        congestion_used: tcp.then(|| congestion.to_string()),
        streams: m.streams.iter().map(|s| stream_results(s, tcp, m.measured_s)).collect(),
        server_output_json: None,
        server_output_text: output,
    }
}

/// A text report of the test as the server saw it, one line per stream and interval, then
/// the totals.
pub fn text(m: &SideMeasurement, client: SocketAddr, local: SocketAddr) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "-----------------------------------------------------------");
    let _ = writeln!(out, "Server listening on {} (tcplab server --iperf3)", local.port());
    let _ = writeln!(out, "-----------------------------------------------------------");
    let _ = writeln!(out, "Accepted connection from {}, port {}", client.ip(), client.port());
    let _ = writeln!(out, "[ ID] Interval           Transfer     Bitrate");
    for iv in &m.intervals {
        for s in &iv.streams {
            let secs = (iv.end_s - iv.start_s).max(1e-9);
            let omitted = if iv.omitted { "  (omitted)" } else { "" };
            let _ =
                writeln!(out, "{}{omitted}", line(stream_id(s.index), iv.start_s, iv.end_s, s.bytes, secs));
        }
    }
    let _ = writeln!(out, "- - - - - - - - - - - - - - - - - - - - - - - - -");
    let _ = writeln!(out, "[ ID] Interval           Transfer     Bitrate");
    for s in &m.streams {
        let role = if s.role == Role::Send { "sender" } else { "receiver" };
        let secs = m.measured_s.max(1e-9);
        let _ = writeln!(
            out,
            "{}                  {role}",
            line(stream_id(s.index), 0.0, m.measured_s, s.bytes, secs)
        );
    }
    out
}

fn line(id: i64, from: f64, to: f64, bytes: u64, secs: f64) -> String {
    format!("[{id:3}] {from:6.2}-{to:<6.2} sec  {}  {}", transfer(bytes), bitrate(bytes as f64 * 8.0 / secs))
}

/// iperf3's transfer column: KBytes/MBytes/GBytes in powers of 1024.
fn transfer(bytes: u64) -> String {
    let b = bytes as f64;
    let (v, unit) = match b {
        _ if b >= 1024.0 * 1024.0 * 1024.0 => (b / (1024.0 * 1024.0 * 1024.0), "GBytes"),
        _ if b >= 1024.0 * 1024.0 => (b / (1024.0 * 1024.0), "MBytes"),
        _ => (b / 1024.0, "KBytes"),
    };
    format!("{} {unit}", fixed(v))
}

/// iperf3's bitrate column: Kbits/Mbits/Gbits per second in powers of 1000.
fn bitrate(bps: f64) -> String {
    let (v, unit) = match bps {
        _ if bps >= 1e9 => (bps / 1e9, "Gbits/sec"),
        _ if bps >= 1e6 => (bps / 1e6, "Mbits/sec"),
        _ => (bps / 1e3, "Kbits/sec"),
    };
    format!("{} {unit}", fixed(v))
}

/// Four significant figures in a 5-wide column, as iperf3 prints them.
fn fixed(v: f64) -> String {
    match v {
        _ if v < 9.995 => format!("{v:5.2}"),
        _ if v < 99.95 => format!("{v:5.1}"),
        _ => format!("{v:5.0}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::{StreamStats, UdpCounts};
    use wire::iperf3::StreamResults;

    #[test]
    fn columns_use_binary_sizes_and_decimal_rates() {
        assert_eq!(transfer(3 * 1024 * 1024 * 1024 / 2), " 1.50 GBytes");
        assert_eq!(transfer(10 * 1024 * 1024), " 10.0 MBytes");
        assert_eq!(bitrate(21_500_000_000.0), " 21.5 Gbits/sec");
        assert_eq!(bitrate(1_048_576.0), " 1.05 Mbits/sec");
    }

    #[test]
    fn a_udp_receiver_reports_loss_and_jitter_in_iperf3_terms() {
        let udp = UdpCounts { received: 98, lost: 2, jitter_us: 1500.0, ..UdpCounts::default() };
        let s = StreamStats {
            index: 1,
            role: Role::Recv,
            bytes: 1000,
            bytes_total: 1000,
            calls: 0,
            transactions: 0,
            socket: Default::default(),
            tcp: None,
            placement: Default::default(),
            udp: Some(udp),
        };
        let r: StreamResults = stream_results(&s, false, 2.0);
        assert_eq!((r.id, r.packets, r.errors, r.retransmits), (3, 100, 2, -1));
        assert!((r.jitter - 0.0015).abs() < 1e-12);
    }
}
