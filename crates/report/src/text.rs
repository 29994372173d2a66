//! Human output: live interval lines in iperf3's layout, a summary block per test and one
//! table for a suite.

use std::fmt::Write;

use results::{
    CpuCost, CpuUsage, DirectionSummary, Interval, RrSummary, Status, TestKind, TestResult, TestSpec,
};

use crate::units::{bytes, count, micros, rate, sig3};

/// Header above interval lines.
pub fn interval_header(spec: &TestSpec) -> String {
    match spec.test {
        TestKind::UdpStream => crate::udp::interval_header(),
        TestKind::TcpStream => format!(
            "{:<6}{:<15}{:>14}{:>16}{:>7}{:>12}{:>11}",
            "[ ID]", "Interval", "Transfer", "Bitrate", "Retr", "Cwnd", "RTT"
        ),
        _ => format!("{:<6}{:<15}{:>14}{:>14}", "[ ID]", "Interval", "Transactions", "Trans/s"),
    }
}

/// Lines for one interval: one per stream, plus `[SUM]` when there are several.
pub fn interval_lines(spec: &TestSpec, iv: &Interval) -> Vec<String> {
    if spec.test == TestKind::UdpStream {
        return crate::udp::interval_lines(iv);
    }
    let span = format!("{:.2}-{:.2} s", iv.start_s, iv.end_s);
    let secs = iv.len_s().max(1e-9);
    let omitted = if iv.omitted { "  (omitted)" } else { "" };
    let mut lines: Vec<String> = iv
        .streams
        .iter()
        .map(|s| match spec.test {
            TestKind::TcpStream => format!(
                "[{:>3}] {:<15}{:>14}{:>16}{:>7}{:>12}{:>11}{omitted}",
                s.index + 1,
                span,
                bytes(s.bytes),
                rate(s.bytes as f64 * 8.0 / secs),
                s.retransmits,
                if s.cwnd_bytes > 0 { bytes(s.cwnd_bytes) } else { "-".into() },
                if s.rtt_us > 0 { micros(f64::from(s.rtt_us)) } else { "-".into() },
            ),
            _ => format!(
                "[{:>3}] {:<15}{:>14}{:>14}{omitted}",
                s.index + 1,
                span,
                count(s.transactions),
                sig3(s.transactions as f64 / secs)
            ),
        })
        .collect();
    if iv.streams.len() > 1 {
        let (b, t) = (iv.bytes(), iv.transactions());
        lines.push(match spec.test {
            TestKind::TcpStream => format!(
                "[SUM] {:<15}{:>14}{:>16}{:>7}{omitted}",
                span,
                bytes(b),
                rate(b as f64 * 8.0 / secs),
                iv.streams.iter().map(|s| s.retransmits).sum::<u64>()
            ),
            _ => format!("[SUM] {:<15}{:>14}{:>14}{omitted}", span, count(t), sig3(t as f64 / secs)),
        });
    }
    lines
}

/// The full summary block of one test.
pub fn test_summary(r: &TestResult) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "── {} · {} · {} ──", r.label, r.spec.test.id(), r.server);
    for d in &r.summary.directions {
        direction_block(&mut o, d);
    }
    if let (TestKind::UdpStream, true, Some(m)) = (r.spec.test, r.spec.client_sends(), &r.remote) {
        crate::udp::remote_receiver_intervals(&mut o, m);
    }
    r.summary.udp.iter().for_each(|d| crate::udp::block(&mut o, d));
    if let Some(rr) = &r.summary.rr {
        rr_block(&mut o, rr, &r.spec);
    }
    sockets_block(&mut o, r);
    cpu_block(&mut o, "client", r.local.cpu.as_ref(), r.summary.local_cost.as_ref());
    cpu_block(
        &mut o,
        "server",
        r.remote.as_ref().and_then(|m| m.cpu.as_ref()),
        r.summary.remote_cost.as_ref(),
    );
    if r.summary.local_cost.as_ref().is_some_and(|c| c.figure_of_merit.is_some()) {
        let _ = writeln!(o, "  (M = goodput in Mbit/s ÷ CPU-cores busy on that host, all CPUs counted; service demand = µs of CPU per KB moved)");
    }
    for w in &r.warnings {
        let _ = writeln!(o, "  warning: {} — {}", w.message, w.advice);
    }
    status_line(&mut o, r);
    o
}

fn direction_block(o: &mut String, d: &DirectionSummary) {
    let _ = writeln!(o, "  {} ({} stream{})", d.direction, d.streams, if d.streams == 1 { "" } else { "s" });
    let _ = writeln!(
        o,
        "    sender    {:>14}  {:>14}  retr {}",
        bytes(d.sender_bytes),
        rate(d.sender_bps),
        d.retransmits
    );
    let _ = writeln!(o, "    receiver  {:>14}  {:>14}", bytes(d.receiver_bytes), rate(d.receiver_bps));
    if d.rtt_mean_us > 0 {
        let _ = writeln!(
            o,
            "    RTT min/mean/max {} / {} / {}",
            micros(d.rtt_min_us.into()),
            micros(d.rtt_mean_us.into()),
            micros(d.rtt_max_us.into())
        );
    }
    let _ = writeln!(
        o,
        "    TCP_INFO busy {:.0}% · rwnd-limited {:.1}% · sndbuf-limited {:.1}% of busy time · {:.1} writes/MB",
        d.busy_frac * 100.0, d.rwnd_limited_frac * 100.0, d.sndbuf_limited_frac * 100.0, d.writes_per_mb
    );
}

fn rr_block(o: &mut String, rr: &RrSummary, spec: &TestSpec) {
    let l = &rr.latency;
    let _ = writeln!(
        o,
        "  {} flow{} · request {} B · response {} B · burst {}",
        rr.flows,
        if rr.flows == 1 { "" } else { "s" },
        spec.request_len,
        spec.response_len,
        spec.burst
    );
    let _ = writeln!(
        o,
        "    {} transactions · {} trans/s · RTT from rate {}",
        count(rr.transactions),
        sig3(rr.trans_per_s),
        micros(rr.rtt_from_rate_us)
    );
    let _ = writeln!(
        o,
        "    latency mean {} · p50 {} · p90 {} · p99 {} · p99.9 {} · max {} ({} samples)",
        micros(l.mean_us),
        micros(l.p50_us),
        micros(l.p90_us),
        micros(l.p99_us),
        micros(l.p999_us),
        micros(l.max_us),
        count(l.count)
    );
    if spec.test == TestKind::UdpRr {
        let _ = writeln!(
            o,
            "    {} requests lost (no response within the timeout; each retried)",
            count(rr.lost)
        );
    }
}

fn sockets_block(o: &mut String, r: &TestResult) {
    let first =
        |m: Option<&results::SideMeasurement>| m.and_then(|m| m.streams.first()).map(|s| s.socket.clone());
    for (side, s) in [("client", first(Some(&r.local))), ("server", first(r.remote.as_ref()))] {
        let Some(s) = s.filter(|s| s.sndbuf_actual > 0) else { continue };
        let asked = |v: Option<u32>| v.map(|v| format!(" (asked {})", bytes(v.into()))).unwrap_or_default();
        let tcp = if s.mss > 0 {
            format!(" · mss {} · {}{}", s.mss, s.congestion, if s.nodelay { " · nodelay" } else { "" })
        } else {
            String::new()
        };
        let _ = writeln!(
            o,
            "  {side} socket: sndbuf {}{} · rcvbuf {}{}{tcp}",
            bytes(s.sndbuf_actual.into()),
            asked(s.sndbuf_requested),
            bytes(s.rcvbuf_actual.into()),
            asked(s.rcvbuf_requested),
        );
    }
    let doubled = r
        .local
        .streams
        .iter()
        .any(|s| s.socket.sndbuf_requested.is_some() || s.socket.rcvbuf_requested.is_some());
    if doubled {
        let _ = writeln!(o, "  (Linux doubles a requested socket buffer for bookkeeping; the actual value is what getsockopt reports)");
    }
}

fn cpu_block(o: &mut String, side: &str, cpu: Option<&CpuUsage>, cost: Option<&CpuCost>) {
    let (Some(c), Some(k)) = (cpu, cost) else { return };
    let m = k.figure_of_merit.map(|m| format!(" · M {}", sig3(m))).unwrap_or_default();
    let _ = writeln!(
        o,
        "  {side} CPU {:.1}% of {} CPUs ({:.2} cores; busiest cpu{} {:.0}%; softirq {:.1}%) · tcplab {:.0}% of a core · SD {} {}{m}",
        c.util_pct, c.cpus, c.cores_busy, c.busiest_cpu, c.busiest_pct, c.softirq_pct, c.process.pct_of_core, sig3(k.service_demand_us), k.service_demand_unit
    );
}

fn status_line(o: &mut String, r: &TestResult) {
    match (&r.status, &r.error) {
        (Status::Completed, _) => {}
        (s, Some(e)) => {
            let _ = writeln!(o, "  status: {s:?} — {} ({})", e.message, e.code);
        }
        (s, None) => {
            let _ = writeln!(o, "  status: {s:?}");
        }
    }
}

/// One table for a suite of tests (`tcplab run`).
pub fn suite_table(results: &[TestResult]) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{:<16}{:>16}{:>12}{:>12}{:>12}{:>10}{:>10}{:>14}{:>10}",
        "test", "result", "RTT(rate)", "p50", "p99", "CPU cli", "CPU srv", "SD cli", "M cli"
    );
    for r in results {
        let (result, rtt, p50, p99) = headline(r);
        let cpu =
            |c: Option<&CpuCost>| c.map(|c| format!("{:.0}%", c.util_pct)).unwrap_or_else(|| "-".into());
        let sd = r
            .summary
            .local_cost
            .as_ref()
            .map(|c| format!("{} {}", sig3(c.service_demand_us), c.service_demand_unit))
            .unwrap_or_else(|| "-".into());
        let m = r
            .summary
            .local_cost
            .as_ref()
            .and_then(|c| c.figure_of_merit)
            .map(sig3)
            .unwrap_or_else(|| "-".into());
        let _ = writeln!(
            o,
            "{:<16}{:>16}{:>12}{:>12}{:>12}{:>10}{:>10}{:>14}{:>10}",
            r.label,
            result,
            rtt,
            p50,
            p99,
            cpu(r.summary.local_cost.as_ref()),
            cpu(r.summary.remote_cost.as_ref()),
            sd,
            m
        );
    }
    o
}

fn headline(r: &TestResult) -> (String, String, String, String) {
    if r.status == Status::Failed {
        let code = r.error.as_ref().map(|e| e.code.as_str()).unwrap_or("failed");
        return (format!("FAILED ({code})"), "-".into(), "-".into(), "-".into());
    }
    if !r.summary.udp.is_empty() {
        return (crate::udp::headline(&r.summary.udp), "-".into(), "-".into(), "-".into());
    }
    if let Some(rr) = &r.summary.rr {
        let unit = if r.spec.test == TestKind::TcpCrr { "conn/s" } else { "tr/s" };
        return (
            format!("{} {unit}", sig3(rr.trans_per_s)),
            micros(rr.rtt_from_rate_us),
            micros(rr.latency.p50_us),
            micros(rr.latency.p99_us),
        );
    }
    (rate(r.summary.goodput_bps()), "-".into(), "-".into(), "-".into())
}
