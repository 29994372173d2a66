//! Human output: live interval lines in iperf3's layout, a summary block per test and one
//! table for a suite.

use std::fmt::Write;

use results::{
    Buffer, CpuCost, CpuUsage, Diagnosis, DirectionSummary, Finding, Interval, IntervalLayout, Metric,
    Reference, ReferenceKind, RrSummary, Status, StreamInterval, TestResult, TestSpec,
};

use crate::units::{bytes, count, known, micros, rate, sig3, UNKNOWN};

/// Header above interval lines laid out as `layout`.
pub fn interval_header(layout: IntervalLayout) -> String {
    match layout {
        IntervalLayout::Datagrams => crate::udp::interval_header(),
        IntervalLayout::Bulk => format!(
            "{:<6}{:<15}{:>14}{:>16}{:>7}{:>12}{:>11}",
            "[ ID]", "Interval", "Transfer", "Bitrate", "Retr", "Cwnd", "RTT"
        ),
        IntervalLayout::Transactions => {
            format!("{:<6}{:<15}{:>14}{:>14}", "[ ID]", "Interval", "Transactions", "Trans/s")
        }
    }
}

/// Lines for one interval laid out as `layout`, seen at one end: one per stream, plus `[SUM]`
/// when there are several. `receives(index)` says which streams this end reads: their TCP_INFO
/// is the receiving socket's (its RTT is not the path's, it has no congestion window or
/// retransmits), so they show `–` there, as iperf3 does. With streams both ways (`--bidir`)
/// each line is tagged `[TX]` or `[RX]` and each direction gets its own `[SUM]`.
pub fn interval_lines(layout: IntervalLayout, iv: &Interval, receives: &dyn Fn(u32) -> bool) -> Vec<String> {
    match layout {
        IntervalLayout::Datagrams => crate::udp::interval_lines(iv),
        IntervalLayout::Bulk => bulk_lines(iv, receives),
        IntervalLayout::Transactions => rr_lines(iv),
    }
}

fn span_and_tail(iv: &Interval) -> (String, f64, &'static str) {
    let omitted = if iv.omitted { "  (omitted)" } else { "" };
    (format!("{:.2}-{:.2} s", iv.start_s, iv.end_s), iv.len_s().max(1e-9), omitted)
}

fn bulk_lines(iv: &Interval, receives: &dyn Fn(u32) -> bool) -> Vec<String> {
    let (span, secs, omitted) = span_and_tail(iv);
    let (rx, tx): (Vec<&StreamInterval>, Vec<&StreamInterval>) =
        iv.streams.iter().partition(|s| receives(s.index));
    let both = !rx.is_empty() && !tx.is_empty();
    let tag = |receiving: bool| match (both, receiving) {
        (false, _) => "",
        (true, false) => "[TX]",
        (true, true) => "[RX]",
    };
    let known = |receiving: bool, v: String| if receiving { UNKNOWN.to_string() } else { v };
    let mut lines: Vec<String> = iv
        .streams
        .iter()
        .map(|s| {
            let r = receives(s.index);
            format!(
                "[{:>3}]{} {:<15}{:>14}{:>16}{:>7}{:>12}{:>11}{omitted}",
                s.index + 1,
                tag(r),
                span,
                bytes(s.bytes),
                rate(s.bytes as f64 * 8.0 / secs),
                known(r, s.retransmits.to_string()),
                known(r, if s.cwnd_bytes > 0 { bytes(s.cwnd_bytes) } else { "-".into() }),
                known(r, if s.rtt_us > 0 { micros(f64::from(s.rtt_us)) } else { "-".into() }),
            )
        })
        .collect();
    let groups: Vec<(bool, &Vec<&StreamInterval>)> = match both {
        true => vec![(false, &tx), (true, &rx)],
        false => vec![(!rx.is_empty(), if rx.is_empty() { &tx } else { &rx })],
    };
    for (receiving, streams) in groups.into_iter().filter(|(_, g)| both || g.len() > 1) {
        let b: u64 = streams.iter().map(|s| s.bytes).sum();
        let retr: u64 = streams.iter().map(|s| s.retransmits).sum();
        lines.push(format!(
            "[SUM]{} {:<15}{:>14}{:>16}{:>7}{omitted}",
            tag(receiving),
            span,
            bytes(b),
            rate(b as f64 * 8.0 / secs),
            known(receiving, retr.to_string())
        ));
    }
    lines
}

fn rr_lines(iv: &Interval) -> Vec<String> {
    let (span, secs, omitted) = span_and_tail(iv);
    let mut lines: Vec<String> = iv
        .streams
        .iter()
        .map(|s| {
            format!(
                "[{:>3}] {:<15}{:>14}{:>14}{omitted}",
                s.index + 1,
                span,
                count(s.transactions),
                sig3(s.transactions as f64 / secs)
            )
        })
        .collect();
    if iv.streams.len() > 1 {
        let t = iv.transactions();
        lines.push(format!("[SUM] {:<15}{:>14}{:>14}{omitted}", span, count(t), sig3(t as f64 / secs)));
    }
    lines
}

/// ` · paced at 20.0 Mbit/s per stream` for bulk TCP intervals with `-b`, else nothing (a
/// UDP test's target is in its own block).
pub fn pacing(spec: &TestSpec, layout: Option<IntervalLayout>) -> String {
    match (layout, spec.rate_bps) {
        (Some(IntervalLayout::Bulk), r) if r > 0 => format!(" · paced at {} per stream", rate(r as f64)),
        _ => String::new(),
    }
}

/// The test type's own settings that are on, as the command line names them (`zerocopy,
/// skip-rx-copy`; `send=sendfile` for a valued one); `None` when there are none.
pub fn modes(spec: &TestSpec) -> Option<String> {
    let on: Vec<String> = spec
        .options
        .iter()
        .filter_map(|(name, value)| match value {
            results::ParamValue::Bool(true) => Some(name.clone()),
            results::ParamValue::Bool(false) => None,
            other => Some(format!("{name}={other}")),
        })
        .collect();
    (!on.is_empty()).then(|| on.join(", "))
}

/// Under a sending client's interval header: its rates are what it handed to the socket,
/// which runs ahead of the path (by the socket buffer) until the buffer is full.
pub const SENDER_RATE_NOTE: &str =
    "(sending: Bitrate counts bytes handed to the socket, ahead of the path; the receiver's rate is in the summary)";

/// `tcplab tcp-stream → 127.0.0.1:9180 · 1 stream · 10 s`: the line a test starts with.
pub fn start_line(label: &str, server: &str, spec: &TestSpec, layout: Option<IntervalLayout>) -> String {
    let streams = if spec.parallel == 1 { "" } else { "s" };
    let modes = modes(spec).map(|m| format!(" · {m}")).unwrap_or_default();
    let limit = match spec.bytes_limit {
        Some(n) => format!("{} to send", bytes(n)),
        None => format!("{} s", spec.duration_ms as f64 / 1000.0),
    };
    format!(
        "tcplab {label} → {server} · {} stream{streams} · {limit}{}{modes}",
        spec.parallel,
        pacing(spec, layout)
    )
}

/// The full summary block of one test.
pub fn test_summary(r: &TestResult) -> String {
    let mut o = String::new();
    let place = match &r.third_party {
        Some(t) => format!("{} → {} (third-party)", t.from, r.server),
        None => r.server.clone(),
    };
    let modes = modes(&r.spec).map(|m| format!(" · {m}")).unwrap_or_default();
    let _ = writeln!(o, "── {} · {} · {place}{modes} ──", r.label, r.spec.test.id());
    partial_line(&mut o, r);
    if r.summary.headline_value().is_none() {
        // Nothing was measured: no block of zeros that could be read as a measurement.
        let _ = writeln!(
            o,
            "  {}: {} (not measured)",
            r.summary.headline.map_or("result", |h| h.metric.name()),
            UNKNOWN
        );
        r.summary.directions.iter().filter(|d| d.sender_bytes > 0).for_each(|d| {
            let _ = writeln!(
                o,
                "  {}: sender wrote {} ({}) before it ended; what arrived was not reported",
                d.direction,
                bytes(d.sender_bytes),
                rate(d.sender_bps)
            );
        });
        r.warnings.iter().for_each(|w| {
            let _ = writeln!(o, "  warning: {} — {}", w.message, w.advice);
        });
        status_line(&mut o, r);
        return o;
    }
    for d in &r.summary.directions {
        direction_block(&mut o, d, r.spec.rate_bps, r.reference.as_ref());
        let traced =
            r.segment_flow.as_ref().and_then(|f| f.directions.iter().find(|f| f.direction == d.direction));
        if let Some(f) = traced {
            let probed = r
                .segment_flow
                .as_ref()
                .is_some_and(|f| f.sources.iter().any(|s| s.ok && s.name.contains("tcp_retransmit_skb")));
            let _ = writeln!(o, "{}", retransmission_counts(d, f, probed));
        }
    }
    if let Some(f) = &r.segment_flow {
        let _ = writeln!(o, "{}", trace_cost(&f.sources, r.local.measured_s));
    }
    if let (false, true, Some(m)) = (r.summary.udp.is_empty(), r.spec.client_sends(), &r.remote) {
        let jitter_known = r.summary.udp.iter().all(|d| d.jitter_ms.is_some());
        crate::udp::remote_receiver_intervals(&mut o, m, jitter_known);
    }
    r.summary.udp.iter().for_each(|d| crate::udp::block(&mut o, d, r.reference.as_ref()));
    crate::figures::block(&mut o, &r.summary.figures);
    crate::figures::own_block(&mut o, r);
    if let Some(rr) = &r.summary.rr {
        let metric = r.summary.headline.map_or(Metric::TransactionRate, |h| h.metric);
        rr_block(&mut o, rr, &r.spec, metric);
    }
    sockets_block(&mut o, r);
    placement_line(&mut o, r);
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
    reference_line(&mut o, r.reference.as_ref());
    for d in &r.diagnosis {
        diagnosis_block(&mut o, d);
    }
    if let Some(rep) = &r.repetition {
        o.push_str(&crate::confidence::block(rep));
    }
    for w in &r.warnings {
        let _ = writeln!(o, "  warning: {} — {}", w.message, w.advice);
    }
    status_line(&mut o, r);
    o
}

/// `x% of theoretical` or `x% of loopback baseline`, empty without a reference.
pub fn of_reference(frac: Option<f64>, reference: Option<&Reference>) -> String {
    let (Some(f), Some(r)) = (frac, reference) else { return String::new() };
    let what = match r.kind {
        ReferenceKind::Link => "theoretical",
        ReferenceKind::LoopbackBaseline => "loopback baseline",
    };
    format!("{:.1}% of {what}", f * 100.0)
}

fn reference_line(o: &mut String, r: Option<&Reference>) {
    if let Some(r) = r {
        let what = match r.kind {
            ReferenceKind::Link => "theoretical maximum goodput",
            ReferenceKind::LoopbackBaseline => "reference",
        };
        let _ = writeln!(o, "  {what}: {} ({})", rate(r.limit_bps), r.description);
    }
}

fn finding_line(o: &mut String, lead: &str, f: &Finding) {
    match f.cause {
        // Its evidence is the sentence: "No limit was found: …".
        results::Cause::Unknown => {
            let _ = writeln!(o, "{lead}{}", f.evidence);
        }
        cause => {
            let _ = writeln!(o, "{lead}{} — {}", cause.label(), f.evidence);
        }
    }
    let _ = writeln!(o, "      → {}", f.advice);
}

fn diagnosis_block(o: &mut String, d: &Diagnosis) {
    let _ = writeln!(o, "  diagnosis {}: {}", d.direction, d.verdict());
    finding_line(o, "    ", &d.primary);
    for (i, f) in d.contributing.iter().enumerate() {
        finding_line(o, if i == 0 && d.split { "    or: " } else { "    also: " }, f);
    }
}

/// One line per stream test of a suite: the primary cause.
pub fn suite_diagnosis(results: &[TestResult]) -> String {
    let mut o = String::new();
    for r in results {
        for d in &r.diagnosis {
            let _ = writeln!(o, "{} {}: {} — {}", r.label, d.direction, d.verdict(), d.primary.evidence);
        }
    }
    o
}

/// One direction of a bulk test; `paced_bps` is each sending stream's target (`-b`), 0 = none.
fn direction_block(o: &mut String, d: &DirectionSummary, paced_bps: u64, reference: Option<&Reference>) {
    let plural = if d.streams == 1 { "" } else { "s" };
    let (paced, of_target) = match paced_bps {
        0 => (String::new(), String::new()),
        r => {
            let target = r as f64 * f64::from(d.streams.max(1));
            let each = if d.streams > 1 { "each " } else { "" };
            (
                format!(", {each}paced at {}", rate(r as f64)),
                format!(" ({:.1}% of paced)", 100.0 * d.sender_bps / target),
            )
        }
    };
    let _ = writeln!(o, "  {} ({} stream{plural}{paced})", d.direction, d.streams);
    // No sender bytes but received ones: the sender's report was lost (a failed test).
    let sent = Some(d).filter(|d| d.sender_bytes > 0 || d.receiver_bytes == 0);
    let _ = writeln!(
        o,
        "    sender    {:>14}  {:>14}{of_target}  retr {}",
        known(sent, |d| bytes(d.sender_bytes)),
        known(sent, |d| rate(d.sender_bps)),
        known(d.retransmits, |n| n.to_string())
    );
    let share = of_reference(d.of_reference, reference);
    let share = if share.is_empty() { share } else { format!("  ({share})") };
    let _ = writeln!(o, "    receiver  {:>14}  {:>14}{share}", bytes(d.receiver_bytes), rate(d.receiver_bps));
    if let (Some(lo), Some(hi), Some(_)) = (d.rtt_min_us, d.rtt_max_us, d.rtt_mean_us) {
        if lo == hi {
            // One reading (or all alike): one number, not the same one three times.
            let _ = writeln!(o, "    RTT {} (every reading the same)", micros(lo.into()));
        } else {
            let _ = writeln!(o, "    RTT min/mean/max {}", rtt_range(d));
        }
    }
    let share = |v: Option<f64>, digits: usize| known(v, |x| format!("{:.digits$}%", x * 100.0));
    let _ = writeln!(
        o,
        "    TCP_INFO busy {} · rwnd-limited {} · sndbuf-limited {} of busy time · {} writes/MB",
        share(d.busy_frac, 0),
        share(d.rwnd_limited_frac, 1),
        share(d.sndbuf_limited_frac, 1),
        known(d.writes_per_mb, |w| format!("{w:.1}"))
    );
}

/// A traced direction's retransmission counts side by side, each named, and its reordering
/// apart from them. `probed`: the probe source ran (else its count is left out, not shown
/// as 0).
fn retransmission_counts(
    d: &DirectionSummary,
    f: &results::segment_flow::FlowDirection,
    probed: bool,
) -> String {
    let mut parts = vec![format!(
        "TCP_INFO retr {} (segments the sender resent, whole test)",
        known(d.retransmits, |n| n.to_string())
    )];
    if probed {
        parts.push(format!(
            "trace {} (tcp:tcp_retransmit_skb events while traced; an skb may hold several segments)",
            f.retransmissions
        ));
    }
    if let Some(w) = f.wire.as_ref().filter(|w| w.data_rows > 0) {
        parts.push(format!(
            "capture {} of {} data rows retx=1 (seen again at the capture point, or a gap ≥ 3 ms old filled)",
            w.retransmitted_rows, w.data_rows
        ));
        parts.push(format!(
            "reordering apart: {} rows ooo=1 (a gap < 3 ms old filled: overtaken, not resent)",
            w.out_of_order_rows
        ));
    }
    format!("    retransmissions: {}", parts.join(" · "))
}

/// What the trace's own sources cost on this host: each reader's CPU time (and its share of
/// one core over the `measured_s` the test ran) and the events it lost.
fn trace_cost(sources: &[results::segment_flow::TraceSource], measured_s: f64) -> String {
    let parts: Vec<String> = sources
        .iter()
        .filter(|s| s.ok)
        .map(|s| {
            let cpu = match s.cpu_ns {
                Some(ns) if measured_s > 0.0 => format!(
                    "{:.0} ms CPU ({:.1}% of a core over the test)",
                    ns as f64 / 1e6,
                    ns as f64 / 1e9 / measured_s * 100.0
                ),
                Some(ns) => format!("{:.0} ms CPU", ns as f64 / 1e6),
                None => "CPU not measured (its own thread)".into(),
            };
            format!("{}: {cpu}, {} of {} events lost", s.name, s.lost, s.events + s.lost)
        })
        .collect();
    format!("  trace cost: {}", parts.join(" · "))
}

/// `min / mean / max` of a direction's sampled RTT, `–` for what was not sampled.
pub(crate) fn rtt_range(d: &DirectionSummary) -> String {
    let us = |v: Option<u32>| known(v, |v| micros(v.into()));
    format!("{} / {} / {}", us(d.rtt_min_us), us(d.rtt_mean_us), us(d.rtt_max_us))
}

/// What a test's requests were: `request 64 B`, or for a test that steps through sizes (a
/// `sizes` option, as segment-cost has) how many sizes, from which to which.
fn requests(spec: &TestSpec) -> (String, &'static str) {
    let sizes: Vec<u64> = match spec.options.get("sizes") {
        Some(results::ParamValue::Text(t)) => t.split(',').filter_map(|w| w.trim().parse().ok()).collect(),
        _ => Vec::new(),
    };
    match (sizes.iter().min(), sizes.iter().max()) {
        (Some(lo), Some(hi)) if sizes.len() > 1 => (
            format!("requests of {} sizes, {}–{}, one size at a time", sizes.len(), bytes(*lo), bytes(*hi)),
            " (all sizes together)",
        ),
        _ => (format!("request {} B", spec.request_len), ""),
    }
}

fn rr_block(o: &mut String, rr: &RrSummary, spec: &TestSpec, metric: Metric) {
    let l = &rr.latency;
    let (requests, mixed) = requests(spec);
    let _ = writeln!(
        o,
        "  {} flow{} · {requests} · response {} B · burst {}",
        rr.flows,
        if rr.flows == 1 { "" } else { "s" },
        spec.response_len,
        spec.burst
    );
    let _ = writeln!(
        o,
        "    {} transactions · {} · RTT from rate {}",
        count(rr.transactions),
        crate::units::metric(metric, rr.trans_per_s),
        micros(rr.rtt_from_rate_us)
    );
    if l.count == 0 {
        let _ = writeln!(o, "    latency {UNKNOWN} (no samples)");
    } else {
        let _ = writeln!(
            o,
            "    latency{mixed} mean {} · p50 {} · p90 {} · p99 {} · p99.9 {} · max {} ({} samples)",
            micros(l.mean_us),
            micros(l.p50_us),
            micros(l.p90_us),
            micros(l.p99_us),
            micros(l.p999_us),
            micros(l.max_us),
            count(l.count)
        );
    }
    if let Some(lost) = rr.lost {
        let _ =
            writeln!(o, "    {} requests lost (no response within the timeout; each retried)", count(lost));
    }
}

fn sockets_block(o: &mut String, r: &TestResult) {
    let first =
        |m: Option<&results::SideMeasurement>| m.and_then(|m| m.streams.first()).map(|s| s.socket.clone());
    for (side, s) in [("client", first(Some(&r.local))), ("server", first(r.remote.as_ref()))] {
        let Some(s) = s.filter(|s| s.send.actual > 0) else { continue };
        let asked = |v: Option<u32>| v.map(|v| format!(" (asked {})", bytes(v.into()))).unwrap_or_default();
        let tcp = if s.mss > 0 {
            format!(" · mss {} · {}{}", s.mss, s.congestion, if s.nodelay { " · nodelay" } else { "" })
        } else {
            String::new()
        };
        let buffers: Vec<String> = Buffer::ALL
            .iter()
            .map(|&b| {
                format!("{} {}{}", b.name(), bytes(s.buffer(b).actual.into()), asked(s.buffer(b).requested))
            })
            .collect();
        let _ = writeln!(o, "  {side} socket: {}{tcp}", buffers.join(" · "));
    }
    let doubled =
        r.local.streams.iter().any(|s| Buffer::ALL.iter().any(|&b| s.socket.buffer(b).requested.is_some()));
    if doubled {
        let _ = writeln!(o, "  (Linux doubles a requested socket buffer for bookkeeping; the actual value is what getsockopt reports)");
    }
}

/// Where the worker threads ran: "threads: client CPU 1 (pinned) · server CPU 0".
fn placement_line(o: &mut String, r: &TestResult) {
    let side = |m: &results::SideMeasurement| -> Option<String> {
        let mut cpus: Vec<u32> = m.streams.iter().filter_map(|s| s.placement.main_cpu()).collect();
        cpus.dedup();
        if cpus.is_empty() {
            return None;
        }
        let pinned = m.streams.iter().all(|s| s.placement.pinned_cpu.is_some());
        let list: Vec<String> = cpus.iter().map(u32::to_string).collect();
        let noun = if cpus.len() == 1 { "CPU" } else { "CPUs" };
        Some(format!("{noun} {}{}", list.join(","), if pinned { " (pinned)" } else { "" }))
    };
    let parts: Vec<String> = [("client", Some(&r.local)), ("server", r.remote.as_ref())]
        .into_iter()
        .filter_map(|(name, m)| m.and_then(side).map(|s| format!("{name} {s}")))
        .collect();
    if !parts.is_empty() {
        let _ = writeln!(o, "  threads: {}", parts.join(" · "));
    }
}

fn cpu_block(o: &mut String, side: &str, cpu: Option<&CpuUsage>, cost: Option<&CpuCost>) {
    let (Some(c), Some(k)) = (cpu, cost) else { return };
    let m = k.figure_of_merit.map(|m| format!(" · M {}", sig3(m))).unwrap_or_default();
    // No throughput: CPU per unit moved is undefined, not 0.
    let sd = match k.service_demand_us.is_finite() && k.service_demand_us > 0.0 {
        true => service_demand(k),
        false => format!("{UNKNOWN} (nothing moved)"),
    };
    let steal = if c.steal_pct >= 0.05 { format!("; steal {:.1}%", c.steal_pct) } else { String::new() };
    let doubt = if c.system_below_process(results::cpu::ACCOUNTING_SLACK_PCT) { " (unreliable)" } else { "" };
    let _ = writeln!(
        o,
        "  {side} CPU {:.1}% of {} CPUs ({:.2} cores; busiest cpu{} {:.0}%; softirq {:.1}%{steal}) · tcplab {:.0}% of a core · SD {sd}{m}{doubt}",
        c.util_pct, c.cpus, c.cores_busy, c.busiest_cpu, c.busiest_pct, c.softirq_pct, c.process.pct_of_core
    );
}

/// A failed test's figures cover only the part that ran: said before them.
fn partial_line(o: &mut String, r: &TestResult) {
    if r.summary.headline.is_some_and(|h| h.partial) {
        let _ = writeln!(
            o,
            "  PARTIAL: the test failed after {:.2} s of {}; the figures below cover what ran before it failed",
            r.local.measured_s,
            known((r.spec.duration_ms > 0).then_some(r.spec.duration_ms), |ms| format!("{:.2} s", ms as f64 / 1e3))
        );
    }
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
        "{:<16}{:>18}{:>8}{:>7}{:>12}{:>12}{:>12}{:>10}{:>10}{:>14}{:>10}",
        "test",
        "result",
        "of ref",
        "loss",
        "RTT(rate)",
        "p50",
        "p99",
        "CPU cli",
        "CPU srv",
        "SD cli",
        "M cli"
    );
    for r in results {
        let h = headline(r);
        let cpu =
            |c: Option<&CpuCost>| c.map(|c| format!("{:.0}%", c.util_pct)).unwrap_or_else(|| "-".into());
        let sd = r.summary.local_cost.as_ref().map(service_demand).unwrap_or_else(|| "-".into());
        let m = r
            .summary
            .local_cost
            .as_ref()
            .and_then(|c| c.figure_of_merit)
            .map(sig3)
            .unwrap_or_else(|| "-".into());
        let _ = writeln!(
            o,
            "{:<16}{:>18}{:>8}{:>7}{:>12}{:>12}{:>12}{:>10}{:>10}{:>14}{:>10}",
            r.label,
            h.result,
            h.of_reference,
            h.loss,
            h.rtt,
            h.p50,
            h.p99,
            cpu(r.summary.local_cost.as_ref()),
            cpu(r.summary.remote_cost.as_ref()),
            sd,
            m
        );
    }
    o
}

/// `0.50 µs/KB`: service demand in its unit, µs written as everywhere else.
pub fn service_demand(c: &CpuCost) -> String {
    format!("{} {}", sig3(c.service_demand_us), crate::units::micro_unit(&c.service_demand_unit))
}

/// A test's cells in the suite table; `-` where a figure does not apply.
struct SuiteCells {
    result: String,
    /// Share of the reference (`--link`, or `run`'s loopback baseline).
    of_reference: String,
    /// UDP: datagrams lost, % of those sent.
    loss: String,
    rtt: String,
    p50: String,
    p99: String,
}

fn headline(r: &TestResult) -> SuiteCells {
    let cells = |result: String| SuiteCells {
        result,
        of_reference: "-".into(),
        loss: "-".into(),
        rtt: "-".into(),
        p50: "-".into(),
        p99: "-".into(),
    };
    if r.status == Status::Failed {
        let code = r.error.as_ref().map(|e| e.code.as_str()).unwrap_or("failed");
        return match r.summary.headline.filter(|h| h.partial) {
            Some(h) => cells(format!("FAILED ({code}): {} partial", crate::units::headline(Some(h)))),
            None => cells(format!("FAILED ({code})")),
        };
    }
    if !r.summary.udp.is_empty() {
        let (rate, loss) = crate::udp::headline(&r.summary.udp);
        return SuiteCells { loss, ..cells(rate) };
    }
    let value = crate::units::headline(r.summary.headline);
    if r.summary.headline_value().is_none() {
        return cells(value);
    }
    if let Some(rr) = &r.summary.rr {
        let l = &rr.latency;
        let known = |v: f64| if l.count > 0 { micros(v) } else { "-".into() };
        return SuiteCells {
            rtt: micros(rr.rtt_from_rate_us),
            p50: known(l.p50_us),
            p99: known(l.p99_us),
            ..cells(value)
        };
    }
    let share: Vec<f64> = r.summary.directions.iter().filter_map(|d| d.of_reference).collect();
    match share.as_slice() {
        [one] => SuiteCells { of_reference: format!("{:.0}%", one * 100.0), ..cells(value) },
        _ => cells(value),
    }
}

/// One `--trace` segment-flow line of an interval, e.g. `  trace client→server 1.0 s: 12030
/// segs, mean 31.2 KiB, max 64.0 KiB · 0.52 ACK/seg · outstanding ≤ 256 KiB of 512 KiB window ·
/// window full 120 ms`.
pub fn segment_flow_line(f: &results::segment_flow::FlowInterval) -> String {
    format!(
        "  trace {} {:.1} s: {} segs, mean {}, max {} · {:.2} ACK/seg · outstanding ≤ {} of {} window · window full {:.0} ms",
        f.direction,
        f.t_s,
        f.segments,
        bytes(f.mean_segment_bytes.round() as u64),
        bytes(u64::from(f.max_segment_bytes)),
        f.acks_per_segment,
        bytes(f.max_outstanding_bytes),
        bytes(f.window_bytes),
        f.window_full_ms
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::{Cause, TestKind, TestSpec};

    #[test]
    fn one_rtt_reading_is_one_number() {
        let d = DirectionSummary {
            rtt_min_us: Some(746),
            rtt_mean_us: Some(746),
            rtt_max_us: Some(746),
            ..Default::default()
        };
        let mut o = String::new();
        direction_block(&mut o, &d, 0, None);
        assert!(o.contains("RTT 746 µs (every reading the same)") && !o.contains("min/mean/max"), "{o}");
        let d =
            DirectionSummary { rtt_min_us: Some(700), rtt_mean_us: Some(746), rtt_max_us: Some(900), ..d };
        let mut o = String::new();
        direction_block(&mut o, &d, 0, None);
        assert!(o.contains("RTT min/mean/max 700 µs / 746 µs / 900 µs"), "{o}");
    }

    #[test]
    fn a_traced_direction_names_its_three_retransmission_counts_and_reordering_apart() {
        let d = DirectionSummary { retransmits: Some(18), ..Default::default() };
        let wire = results::segment_flow::WireFindings {
            data_rows: 900,
            retransmitted_rows: 4,
            out_of_order_rows: 40,
            ..Default::default()
        };
        let f = results::segment_flow::FlowDirection {
            retransmissions: 14,
            wire: Some(wire),
            ..Default::default()
        };
        let line = retransmission_counts(&d, &f, true);
        assert!(!retransmission_counts(&d, &f, false).contains("tcp_retransmit_skb"), "not probed: no count");
        for part in [
            "TCP_INFO retr 18 (segments the sender resent, whole test)",
            "trace 14 (tcp:tcp_retransmit_skb events while traced",
            "capture 4 of 900 data rows retx=1",
            "reordering apart: 40 rows ooo=1",
        ] {
            assert!(line.contains(part), "{part}: {line}");
        }
        let untraced_wire = results::segment_flow::FlowDirection { retransmissions: 0, ..Default::default() };
        assert!(!retransmission_counts(&d, &untraced_wire, true).contains("ooo"));
    }

    #[test]
    fn the_trace_cost_names_each_readers_cpu_and_losses() {
        let src = |name: &str, cpu_ns, lost| results::segment_flow::TraceSource {
            name: name.into(),
            ok: true,
            events: 1000,
            lost,
            detail: String::new(),
            cpu_ns,
        };
        let line = trace_cost(&[src("probes", Some(120_000_000), 0), src("pump", None, 3)], 2.0);
        assert!(
            line.contains("probes: 120 ms CPU (6.0% of a core over the test), 0 of 1000 events lost"),
            "{line}"
        );
        assert!(line.contains("pump: CPU not measured (its own thread), 3 of 1003 events lost"), "{line}");
    }

    fn stream(index: u32, bytes: u64, rtt_us: u32) -> StreamInterval {
        StreamInterval { index, bytes, retransmits: 2, cwnd_bytes: 65_536, rtt_us, ..Default::default() }
    }

    #[test]
    fn receiving_streams_show_no_sender_figures_and_bidir_sums_per_direction() {
        let iv = Interval { start_s: 0.0, end_s: 1.0, omitted: false, streams: vec![stream(0, 1 << 20, 11)] };
        let reverse = interval_lines(IntervalLayout::Bulk, &iv, &|_| true);
        assert_eq!(reverse.len(), 1);
        assert!(!reverse[0].contains("11.0 µs") && !reverse[0].contains("64.0 KiB"), "{}", reverse[0]);
        assert!(reverse[0].trim_end().ends_with("–           –          –"), "{}", reverse[0]);
        let forward = interval_lines(IntervalLayout::Bulk, &iv, &|_| false);
        assert!(forward[0].contains("11.0 µs") && forward[0].contains("64.0 KiB"), "{}", forward[0]);

        let streams = vec![
            stream(0, 1 << 20, 186),
            stream(1, 2 << 20, 11),
            stream(2, 1 << 20, 190),
            stream(3, 2 << 20, 12),
        ];
        let iv = Interval { streams, ..iv };
        let bidir = interval_lines(IntervalLayout::Bulk, &iv, &|i| i >= 2);
        assert_eq!(bidir.len(), 6, "{bidir:#?}");
        assert!(bidir[0].starts_with("[  1][TX]") && bidir[0].contains("186 µs"), "{}", bidir[0]);
        assert!(bidir[2].starts_with("[  3][RX]") && !bidir[2].contains("190 µs"), "{}", bidir[2]);
        assert!(bidir[4].starts_with("[SUM][TX]") && bidir[4].contains("3.00 MiB"), "{}", bidir[4]);
        assert!(bidir[5].starts_with("[SUM][RX]") && bidir[5].contains("3.00 MiB"), "{}", bidir[5]);
    }

    #[test]
    fn a_paced_stream_says_its_rate_per_stream_and_the_share_achieved() {
        let direction = DirectionSummary {
            direction: "client→server".into(),
            streams: 2,
            sender_bps: 39.8e6,
            receiver_bps: 39.8e6,
            ..Default::default()
        };
        let summary = results::Summary {
            headline: Some(results::Headline::measured(results::Metric::Goodput, 39.8e6)),
            directions: vec![direction],
            ..Default::default()
        };
        let spec = TestSpec { rate_bps: 20_000_000, parallel: 2, ..TestSpec::new(TestKind::TcpStream) };
        let r = TestResult { summary, ..TestResult::new("stream", spec, "h:1", 0) };
        let text = test_summary(&r);
        assert!(text.contains("client→server (2 streams, each paced at 20.0 Mbit/s)"), "{text}");
        assert!(text.contains("(99.5% of paced)"), "{text}");
        assert_eq!(pacing(&r.spec, Some(IntervalLayout::Bulk)), " · paced at 20.0 Mbit/s per stream");
        let unpaced = TestResult { spec: TestSpec::new(TestKind::TcpStream), ..r };
        assert!(
            !test_summary(&unpaced).contains("paced")
                && pacing(&unpaced.spec, Some(IntervalLayout::Bulk)).is_empty()
        );
    }

    #[test]
    fn summary_shows_share_of_reference_and_diagnosis() {
        let finding = |cause, evidence: &str| Finding {
            cause,
            weight: 0.9,
            evidence: evidence.into(),
            advice: "do this".into(),
            bound_bps: None,
        };
        let direction = DirectionSummary {
            direction: "client→server".into(),
            receiver_bps: 9e8,
            of_reference: Some(0.956),
            ..Default::default()
        };
        let r = TestResult {
            summary: results::Summary {
                headline: Some(results::Headline::measured(results::Metric::Goodput, 9e8)),
                directions: vec![direction],
                ..Default::default()
            },
            reference: Some(Reference {
                kind: ReferenceKind::Link,
                description: "ethernet:1g".into(),
                limit_bps: 941.48e6,
            }),
            diagnosis: vec![Diagnosis {
                direction: "client→server".into(),
                primary: finding(Cause::Link, "at the link"),
                contributing: vec![finding(Cause::SenderCpu, "busy")],
                split: false,
            }],
            ..TestResult::new("stream", TestSpec::new(TestKind::TcpStream), "h:1", 0)
        };
        let text = test_summary(&r);
        for needle in [
            "(95.6% of theoretical)",
            "theoretical maximum goodput: 941 Mbit/s (ethernet:1g)",
            "diagnosis client→server: limited by link capacity\n    link capacity — at the link",
            "also: sender CPU — busy",
            "→ do this",
        ] {
            assert!(text.contains(needle), "{needle} missing in:\n{text}");
        }
        let table = suite_table(std::slice::from_ref(&r));
        let (head, row) = table.split_once('\n').unwrap_or_default();
        assert!(head.contains("  result  of ref   loss"), "every column has a header: {table}");
        assert!(row.contains("900 Mbit/s     96%      -"), "{table}");
        assert!(suite_diagnosis(&[r]).contains("stream client→server: limited by link capacity"));
    }
}
