//! From both ends' measurements to a [`Summary`] with its headline, and the [`Warning`]s: the
//! shared parts that each test type's `summarize` (registry) is built from.

use results::{
    DirectionSummary, Headline, HostInfo, Metric, Role, RrSummary, SideMeasurement, StreamStats, Summary,
    TcpInfoSummary, TestSpec, Warning, WarningKind,
};

/// The summary of a TCP bulk test (`directions`), headline goodput.
pub fn tcp_bulk(spec: &TestSpec, local: &SideMeasurement, remote: Option<&SideMeasurement>) -> Summary {
    let mut s = Summary::default();
    if spec.client_sends() {
        s.directions.push(direction("client→server", local, remote));
    }
    match (spec.server_sends(), remote) {
        (true, Some(r)) => s.directions.push(direction("server→client", r, Some(local))),
        // The server's report was lost (it vanished, the test failed): what this end read is
        // still measured; what the server wrote is not.
        (true, None) => s.directions.push(received_only("server→client", local)),
        (false, _) => {}
    }
    let receivers = [(spec.client_sends(), remote), (spec.server_sends(), Some(local))];
    with_goodput(s, receivers, local, remote)
}

/// Sets the bulk headline and the CPU cost per byte. The goodput is known only when every
/// receiving end of the test measured a window (a missing server report is not 0 bit/s).
pub fn with_goodput(
    mut s: Summary,
    receivers: [(bool, Option<&SideMeasurement>); 2],
    local: &SideMeasurement,
    remote: Option<&SideMeasurement>,
) -> Summary {
    let known = receivers.iter().all(|(used, m)| !used || m.is_some_and(|m| m.measured_s > 0.0));
    let goodput = s.goodput_bps();
    s.headline = Some(match known {
        true => Headline::measured(Metric::Goodput, goodput),
        false => Headline::unknown(Metric::Goodput),
    });
    s.local_cost = local.cpu.as_ref().map(|c| stats::cost::stream_cost(c, goodput));
    s.remote_cost = remote.and_then(|r| r.cpu.as_ref()).map(|c| stats::cost::stream_cost(c, goodput));
    s
}

/// The summary of a request/response test (`rr`, measured at the client), headline
/// `metric`. `in_flight` is the number of transactions each flow keeps outstanding.
pub fn transactions(
    spec: &TestSpec,
    local: &SideMeasurement,
    remote: Option<&SideMeasurement>,
    metric: Metric,
    in_flight: u32,
) -> Summary {
    let rr = rr_summary(spec, local, in_flight);
    let mut s = Summary {
        headline: Some(match local.measured_s > 0.0 {
            true => Headline::measured(metric, rr.trans_per_s),
            false => Headline::unknown(metric),
        }),
        ..Summary::default()
    };
    s.local_cost = local.cpu.as_ref().map(|c| stats::cost::rr_cost(c, rr.trans_per_s));
    s.remote_cost = remote.and_then(|r| r.cpu.as_ref()).map(|c| stats::cost::rr_cost(c, rr.trans_per_s));
    s.rr = Some(rr);
    s
}

fn with_role(side: &SideMeasurement, role: Role) -> impl Iterator<Item = &StreamStats> {
    side.streams.iter().filter(move |s| s.role == role)
}

fn rate(bytes: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        bytes as f64 * 8.0 / secs
    } else {
        0.0
    }
}

/// One direction: `sender` is the side that wrote, `receiver` the side that read. A figure
/// some sending stream did not measure (a stock iperf3 peer reports retransmits at most) is
/// `None`, never 0.
fn direction(name: &str, sender: &SideMeasurement, receiver: Option<&SideMeasurement>) -> DirectionSummary {
    let sent: Vec<&StreamStats> = with_role(sender, Role::Send).collect();
    let sender_bytes = sent.iter().map(|s| s.bytes).sum();
    let receiver_bytes = receiver.map(|r| with_role(r, Role::Recv).map(|s| s.bytes).sum()).unwrap_or(0);
    let tcp: Option<Vec<&TcpInfoSummary>> = sent.iter().map(|s| s.tcp.as_ref()).collect();
    let tcp = tcp.filter(|t| !t.is_empty());
    let sampled = tcp.clone().filter(|t| t.iter().all(|t| t.sampled));
    let calls: u64 = sent.iter().map(|s| s.calls).sum();
    let lifetime_us = (sender.measured_s * 1e6) * sent.len() as f64;
    let rtt = sampled.as_deref().map(rtt_range).unwrap_or_default();
    DirectionSummary {
        direction: name.to_string(),
        streams: sent.len() as u32,
        sender_bytes,
        sender_bps: rate(sender_bytes, sender.measured_s),
        receiver_bytes,
        receiver_bps: receiver.map(|r| rate(receiver_bytes, r.measured_s)).unwrap_or(0.0),
        retransmits: tcp.map(|t| t.iter().map(|t| t.retransmits).sum()),
        rtt_min_us: rtt.0,
        rtt_mean_us: rtt.1,
        rtt_max_us: rtt.2,
        busy_frac: sampled.as_deref().and_then(|t| busy_share(t, lifetime_us)),
        rwnd_limited_frac: sampled.as_deref().map(|t| of_busy(t, |t| t.rwnd_limited_us)),
        sndbuf_limited_frac: sampled.as_deref().map(|t| of_busy(t, |t| t.sndbuf_limited_us)),
        writes_per_mb: (calls > 0 && sender_bytes > 0).then(|| calls as f64 / (sender_bytes as f64 / 1e6)),
        of_reference: None,
    }
}

/// A direction whose sender's report is missing: the receiver's bytes and rate, every sender
/// figure 0 or `None` (the text shows a direction with no sender bytes but received ones as
/// unknown, not as 0).
fn received_only(name: &str, receiver: &SideMeasurement) -> DirectionSummary {
    let read: Vec<&StreamStats> = with_role(receiver, Role::Recv).collect();
    let receiver_bytes = read.iter().map(|s| s.bytes).sum();
    DirectionSummary {
        direction: name.to_string(),
        streams: read.len() as u32,
        sender_bytes: 0,
        sender_bps: 0.0,
        receiver_bytes,
        receiver_bps: rate(receiver_bytes, receiver.measured_s),
        retransmits: None,
        rtt_min_us: None,
        rtt_mean_us: None,
        rtt_max_us: None,
        busy_frac: None,
        rwnd_limited_frac: None,
        sndbuf_limited_frac: None,
        writes_per_mb: None,
        of_reference: None,
    }
}

/// Smallest, mean and largest sampled RTT over the streams that sampled one.
fn rtt_range(tcp: &[&TcpInfoSummary]) -> (Option<u32>, Option<u32>, Option<u32>) {
    let rtts: Vec<_> = tcp.iter().filter(|t| t.rtt_mean_us > 0).collect();
    if rtts.is_empty() {
        return (None, None, None);
    }
    let mean = rtts.iter().map(|t| u64::from(t.rtt_mean_us)).sum::<u64>() / rtts.len() as u64;
    (
        rtts.iter().map(|t| t.rtt_min_us).min(),
        u32::try_from(mean).ok(),
        rtts.iter().map(|t| t.rtt_max_us).max(),
    )
}

/// TCP_INFO busy time ÷ the streams' lifetime, when both are known.
fn busy_share(tcp: &[&TcpInfoSummary], lifetime_us: f64) -> Option<f64> {
    let busy: u64 = tcp.iter().map(|t| t.busy_us).sum();
    (lifetime_us > 0.0).then(|| (busy as f64 / lifetime_us).min(1.0))
}

/// A limited time's share of busy time (0 when the connection was never busy).
fn of_busy(tcp: &[&TcpInfoSummary], part: impl Fn(&TcpInfoSummary) -> u64) -> f64 {
    let busy: u64 = tcp.iter().map(|t| t.busy_us).sum();
    let v: u64 = tcp.iter().map(|t| part(t)).sum();
    if busy > 0 {
        v as f64 / busy as f64
    } else {
        0.0
    }
}

fn rr_summary(spec: &TestSpec, local: &SideMeasurement, in_flight: u32) -> RrSummary {
    let transactions: u64 = local.streams.iter().map(|s| s.transactions).sum();
    let tps = if local.measured_s > 0.0 { transactions as f64 / local.measured_s } else { 0.0 };
    let in_flight = f64::from(spec.parallel) * f64::from(in_flight);
    RrSummary {
        flows: spec.parallel,
        transactions,
        trans_per_s: tps,
        rtt_from_rate_us: if tps > 0.0 { 1e6 * in_flight / tps } else { 0.0 },
        latency: local.latency.clone().unwrap_or_default(),
        lost: local
            .streams
            .iter()
            .any(|s| s.udp.is_some())
            .then(|| local.streams.iter().filter_map(|s| s.udp.as_ref()).map(|u| u.timeouts).sum()),
    }
}

/// Context for warnings that the measurements alone do not carry.
#[derive(Debug, Clone, Copy)]
pub struct WarnContext<'a> {
    /// Client and server on one host (loopback).
    pub same_host: bool,
    /// The client host.
    pub local_host: &'a HostInfo,
}

/// For rr and crr on one host without pinning: where the two ends ran, in words.
fn unpinned_rr(
    spec: &TestSpec,
    summary: &Summary,
    local: &SideMeasurement,
    remote: Option<&SideMeasurement>,
    same_host: bool,
) -> Option<String> {
    if !same_host || summary.rr.is_none() || (spec.cpu_local.is_some() && spec.cpu_remote.is_some()) {
        return None;
    }
    let main = |m: &SideMeasurement| m.streams.first().and_then(|s| s.placement.main_cpu());
    let where_ = match (main(local), remote.and_then(main)) {
        (Some(c), Some(s)) if c == s => format!("both on CPU {c} most of the time"),
        (Some(c), Some(s)) => format!("client mostly on CPU {c}, server on CPU {s}"),
        _ => "placement unknown".to_string(),
    };
    Some(format!(
        "client and server threads were not pinned ({where_}); latency depends on whether they share a core"
    ))
}

/// Whether every direction of a paced UDP test sent at (within 2 % of) its target rate: a busy
/// CPU then did not hold the sender back, so no "may be CPU-bound" doubt is raised.
fn paced_to_target(summary: &Summary) -> bool {
    !summary.udp.is_empty()
        && summary.udp.iter().all(|d| d.target_bps > 0 && d.sender_bps >= 0.98 * d.target_bps as f64)
}

/// How to measure for longer: a file or a byte count ends the test when sent, so its `-t` is
/// only a give-up time.
fn longer(spec: &TestSpec) -> &'static str {
    let own = crate::registry::of(spec.test).longer();
    match (own, spec.bytes_limit) {
        (Some(advice), _) => advice,
        (None, Some(_)) => "send more (a larger -n, or -t instead) so the test lasts a few seconds",
        (None, None) => "use -t of a few seconds or more",
    }
}

/// Doubts about a result, each with advice.
pub fn warnings(
    spec: &TestSpec,
    summary: &Summary,
    local: &SideMeasurement,
    remote: Option<&SideMeasurement>,
    cx: WarnContext,
) -> Vec<Warning> {
    let mut w = Vec::new();
    let mut push =
        |kind, message: String, advice: &str| w.push(Warning { kind, message, advice: advice.into() });
    if cx.same_host {
        push(
            WarningKind::SameHost,
            "client and server share this host: system CPU counts both ends".into(),
            "run `tcplab server` on another host to separate sender and receiver cost",
        );
    }
    if cx.local_host.virtualized {
        push(
            WarningKind::Virtualized,
            "this host is a virtual machine: hypervisor work is not counted in CPU figures".into(),
            "treat CPU and service demand as lower bounds",
        );
    }
    let retrans: u64 = summary.directions.iter().filter_map(|d| d.retransmits).sum();
    if cx.same_host && retrans > 0 {
        push(
            WarningKind::SpuriousRetransmits,
            format!("{retrans} retransmits on loopback: reordering between cores, not loss"),
            "do not read loopback retransmits as packet loss",
        );
    }
    if let Some(message) = unpinned_rr(spec, summary, local, remote, cx.same_host) {
        push(
            WarningKind::Unpinned,
            message,
            "pin both ends with -A N,M: the same CPU avoids wake-ups, different CPUs pay a cross-core wake-up each way",
        );
    }
    let main = |m: &SideMeasurement| m.streams.first().and_then(|s| s.placement.main_cpu());
    let shared = main(local).is_some() && main(local) == remote.and_then(main);
    if spec.busy_poll && cx.same_host && shared {
        push(
            WarningKind::SharedCoreSpin,
            "both ends busy-polled on one CPU: each spins through the other's time slice".into(),
            "with --busy-poll, pin the ends to different CPUs (-A 0,1)",
        );
    }
    let samples = summary.rr.as_ref().map(|r| r.latency.count).unwrap_or(u64::MAX);
    if samples < 1000 {
        push(
            WarningKind::TooFewSamples,
            format!("only {samples} latency samples: p99.9 is not meaningful"),
            "run longer (-t) for tail percentiles",
        );
    }
    let bulk = summary.headline.is_some_and(|h| h.metric == Metric::Goodput);
    if bulk && local.measured_s < 1.0 && spec.duration_ms > 0 {
        push(
            WarningKind::TooFewSamples,
            format!("measured window only {:.2} s", local.measured_s),
            longer(spec),
        );
    }
    let ends = [("client", local.cpu.as_ref()), ("server", remote.and_then(|r| r.cpu.as_ref()))];
    if !paced_to_target(summary) {
        w.extend(results::warning::cpu_saturated(ends, cx.same_host));
    }
    w.extend(results::warning::cpu_stolen(ends, cx.same_host));
    w.extend(results::warning::cpu_figures_inconsistent(ends));
    w.extend(crate::udp_summary::warnings(&summary.udp));
    w.extend(crate::registry::of(spec.test).warnings(spec, local, remote));
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::{CpuUsage, ProcessCpu, TestKind};

    fn side(busiest_pct: f64, steal_pct: f64) -> SideMeasurement {
        let cpu = CpuUsage {
            cpus: 2,
            window_s: 2.0,
            cores_busy: 1.4,
            busiest_pct,
            steal_pct,
            process: ProcessCpu { pct_of_core: 81.0, ..ProcessCpu::default() },
            ..CpuUsage::default()
        };
        SideMeasurement { measured_s: 2.0, cpu: Some(cpu), ..SideMeasurement::default() }
    }

    fn kinds(same_host: bool, local: &SideMeasurement, remote: &SideMeasurement) -> Vec<WarningKind> {
        let host = HostInfo::default();
        let cx = WarnContext { same_host, local_host: &host };
        let spec = TestSpec::new(TestKind::TcpStream);
        warnings(&spec, &Summary::default(), local, Some(remote), cx).iter().map(|w| w.kind).collect()
    }

    #[test]
    fn one_host_is_one_cpu_warning_and_stolen_time_is_warned() {
        use WarningKind::{CpuSaturated, CpuStolen, SameHost};
        // Both ends read this host's counters: one warning, not "client cpu0" and "server cpu0".
        let (a, b) = (side(100.0, 0.0), side(100.0, 0.0));
        assert_eq!(kinds(true, &a, &b), vec![SameHost, CpuSaturated]);
        assert_eq!(kinds(false, &a, &b), vec![CpuSaturated, CpuSaturated]);
        // 70% busy and 34% stolen: a full CPU, and figures that cannot be trusted.
        let (a, b) = (side(70.0, 34.0), side(70.0, 34.0));
        assert_eq!(kinds(true, &a, &b), vec![SameHost, CpuSaturated, CpuStolen]);
    }

    #[test]
    fn a_short_window_gets_advice_that_fits_the_test() {
        let host = HostInfo::default();
        let cx = WarnContext { same_host: false, local_host: &host };
        let summary = Summary {
            headline: Some(results::Headline::measured(Metric::Goodput, 1e9)),
            ..Summary::default()
        };
        let short = SideMeasurement { measured_s: 0.02, ..SideMeasurement::default() };
        let advice = |kind, bytes| {
            let spec = TestSpec { bytes_limit: bytes, ..TestSpec::new(kind) };
            let w = warnings(&spec, &summary, &short, None, cx);
            w.into_iter().find(|w| w.message.starts_with("measured window only 0.02 s")).map(|w| w.advice)
        };
        assert_eq!(
            advice(TestKind::File, Some(1 << 20)).as_deref(),
            Some(longer(&TestSpec::new(TestKind::File)))
        );
        assert!(advice(TestKind::File, Some(1 << 20)).unwrap().contains("--size"));
        assert!(advice(TestKind::TcpStream, Some(1 << 20)).unwrap().contains("a larger -n"));
        assert!(advice(TestKind::TcpStream, None).unwrap().contains("-t"));
    }

    #[test]
    fn a_paced_udp_test_that_reached_its_target_is_not_called_cpu_bound() {
        let host = HostInfo::default();
        let cx = WarnContext { same_host: false, local_host: &host };
        let spec = TestSpec::new(TestKind::UdpStream);
        let (a, b) = (side(100.0, 0.0), side(100.0, 0.0));
        let paced = |sender_bps: f64| {
            let row = results::UdpSummary { target_bps: 20_000_000, sender_bps, ..Default::default() };
            let summary = Summary { udp: vec![row], ..Summary::default() };
            warnings(&spec, &summary, &a, Some(&b), cx)
                .iter()
                .filter(|w| w.kind == WarningKind::CpuSaturated)
                .count()
        };
        assert_eq!(paced(20_006_000.0), 0, "the sender kept its pace");
        assert_eq!(paced(12_000_000.0), 2, "the sender fell behind its pace with both CPUs full");
    }

    #[test]
    fn a_system_figure_below_the_process_time_is_flagged() {
        let mut a = side(60.0, 0.0);
        if let Some(c) = a.cpu.as_mut() {
            c.cores_busy = 0.5;
        }
        let k = kinds(false, &a, &side(60.0, 0.0));
        assert_eq!(k, vec![WarningKind::CpuFiguresInconsistent]);
    }

    fn received(bytes: u64, secs: f64) -> SideMeasurement {
        let stream = StreamStats {
            index: 0,
            role: Role::Recv,
            bytes,
            bytes_total: bytes,
            calls: 1,
            transactions: 0,
            socket: results::SocketReport::default(),
            tcp: None,
            placement: results::Placement::default(),
            udp: None,
        };
        SideMeasurement { measured_s: secs, streams: vec![stream], ..SideMeasurement::default() }
    }

    #[test]
    fn a_reverse_stream_without_the_servers_report_keeps_what_the_client_read() {
        // The server vanished mid-test: no report from it, 1 GB read here in 2 s. The
        // goodput is measured at this end (not a made-up 0, not unknown).
        let spec = TestSpec { direction: results::Direction::Reverse, ..TestSpec::new(TestKind::TcpStream) };
        let s = tcp_bulk(&spec, &received(1_000_000_000, 2.0), None);
        assert_eq!(s.headline_value(), Some(4e9), "{s:?}");
        assert_eq!(s.directions.len(), 1);
        assert_eq!((s.directions[0].receiver_bytes, s.directions[0].retransmits), (1_000_000_000, None));
        // Sent by the client: only the receiving server could say what arrived.
        let up = tcp_bulk(&TestSpec::new(TestKind::TcpStream), &SideMeasurement::default(), None);
        assert_eq!(up.headline_value(), None);
    }
}
