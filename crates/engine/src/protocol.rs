//! The one place where the control protocol's types ([`wire::ctrl`]) meet the archive's
//! ([`results`]). The client and the server send and receive only the protocol's types and
//! convert here, so changing a struct in `results` cannot change the bytes on the wire: every
//! conversion names every field (struct literals without `..`, destructuring without `..`,
//! exhaustive matches), and a field added to or removed from either side fails to compile
//! here until someone decides what it means for the protocol (and bumps
//! [`wire::PROTOCOL_VERSION`] if the wire changes). A test request is the exception: its
//! settings are converted by walking the settings table ([`results::setting::on_wire`]), so a
//! setting is declared once, there, and reaches the wire by its declared name.
//!
//! What comes from a peer is checked on the way in and never panics: a measurement that
//! breaks its own invariants (a negative time, more duplicates than datagrams received) is
//! an [`Error::Invalid`] naming the field. Ranges of a test request are the business of
//! [`crate::limits`], which names the field in its `bad-field` answer.

use std::net::SocketAddr;

use results as r;
use results::setting;
use wire::ctrl as w;
use wire::{ErrorCode, Hello, HelloKind, Rejection, Token, PROTOCOL_VERSION};

use crate::Error;

/// Checks the server's hello before anything else is sent: a server hello, at this version.
pub fn check_server_hello(hello: &Hello, server: SocketAddr) -> Result<(), Error> {
    if !matches!(hello.kind, HelloKind::Server { .. }) {
        return Err(Error::Protocol { detail: format!("{server} did not answer with a server hello") });
    }
    if hello.version != PROTOCOL_VERSION {
        return Err(Error::ServerVersion {
            server: server.to_string(),
            theirs: hello.version,
            ours: PROTOCOL_VERSION,
        });
    }
    Ok(())
}

/// Checks a client's hello on the server: a `bad-version` refusal naming both versions.
pub fn check_client_hello(hello: &Hello) -> Result<(), Rejection> {
    if hello.version == PROTOCOL_VERSION {
        return Ok(());
    }
    let msg = format!(
        "client speaks tcplab protocol {}, this server {PROTOCOL_VERSION}: upgrade the older side",
        hello.version
    );
    Err(Rejection::new(ErrorCode::BadVersion, msg))
}

/// The `setup` body for `spec` (client → server): its test type's id and every setting the
/// table puts on the wire, by its wire name (`null` when unset).
pub fn request(spec: &r::TestSpec) -> w::TestRequest {
    w::TestRequest {
        test: spec.test.id().to_string(),
        trace_server: spec.trace_server,
        options: spec.options.clone().into_iter().map(|(k, v)| (k, option_to_wire(v))).collect(),
        settings: setting::on_wire()
            .map(|(name, s)| (name.to_string(), (s.get)(spec).map(option_to_wire)))
            .collect(),
    }
}

fn option_to_wire(v: r::ParamValue) -> w::OptionValue {
    match v {
        r::ParamValue::Bool(b) => w::OptionValue::Bool(b),
        r::ParamValue::Int(n) => w::OptionValue::Int(n),
        r::ParamValue::Text(t) => w::OptionValue::Text(t),
    }
}

fn option_from_wire(v: w::OptionValue) -> r::ParamValue {
    match v {
        w::OptionValue::Bool(b) => r::ParamValue::Bool(b),
        w::OptionValue::Int(n) => r::ParamValue::Int(n),
        w::OptionValue::Text(t) => r::ParamValue::Text(t),
    }
}

/// The spec a client asked for (server side): a test type this build does not know is
/// refused naming it; every other wire value has a meaning here, and ranges are checked by
/// [`crate::limits::validate`] afterwards.
pub fn spec(req: w::TestRequest) -> Result<r::TestSpec, wire::Rejection> {
    let Some(test) = r::TestKind::from_id(&req.test) else {
        let known: Vec<&str> = r::TestKind::ALL.iter().map(|k| k.id()).collect();
        let msg = format!("unknown test type '{}' (this server runs: {})", req.test, known.join(", "));
        return Err(wire::Rejection {
            field: Some("test".into()),
            ..wire::Rejection::new(wire::ErrorCode::Unsupported, msg)
        });
    };
    if let Some(name) = req.settings.keys().find(|n| setting::on_wire().all(|(wire, _)| wire != n.as_str())) {
        return Err(wire::Rejection::field(name, format!("'{name}' is not a setting of this server")));
    }
    let (fresh, defaults) = (r::TestSpec::new(test), crate::registry::defaults(test));
    let mut spec = r::TestSpec {
        trace_server: req.trace_server,
        options: req.options.into_iter().map(|(k, v)| (k, option_from_wire(v))).collect(),
        ..fresh.clone()
    };
    for (name, s) in setting::on_wire() {
        let value = match req.settings.get(name) {
            Some(Some(v)) => option_from_wire(v.clone()),
            Some(None) if (s.get)(&fresh).is_none() => continue,
            Some(None) => {
                return Err(wire::Rejection::field(name, format!("{name} needs a value, not null")))
            }
            // Left out by a peer that predates it: the test type's default.
            None => match (s.get)(&defaults) {
                Some(v) => v,
                None => continue,
            },
        };
        (s.set)(&mut spec, &value).map_err(|e| wire::Rejection::field(name, format!("{name}: {e}")))?;
    }
    Ok(spec)
}

/// The server's `accepted` body: the test's token, this host, the UDP ports (UDP tests).
pub fn accepted(token: Token, host_info: &r::HostInfo, udp_ports: Vec<u16>) -> w::Accepted {
    w::Accepted { token: token.to_hex(), host: host(host_info), udp_ports }
}

/// The server's self-description for `accepted`.
pub fn host(info: &r::HostInfo) -> w::Host {
    let r::HostInfo {
        hostname,
        kernel,
        cpu_model,
        cpus,
        congestion_available,
        congestion_default,
        virtualized,
        tool_version,
    } = info.clone();
    w::Host {
        hostname,
        kernel,
        cpu_model,
        cpus,
        congestion_available,
        congestion_default,
        virtualized,
        tool_version,
    }
}

/// The server host as the client records it. Free text and counts: nothing to check.
pub fn host_info(host: w::Host) -> r::HostInfo {
    r::HostInfo {
        hostname: host.hostname,
        kernel: host.kernel,
        cpu_model: host.cpu_model,
        cpus: host.cpus,
        congestion_available: host.congestion_available,
        congestion_default: host.congestion_default,
        virtualized: host.virtualized,
        tool_version: host.tool_version,
    }
}

/// The `results` body for what this end measured (server → client).
pub fn report(side: r::SideMeasurement) -> w::SideReport {
    let r::SideMeasurement { measured_s, streams, intervals, cpu, latency, sections } = side;
    w::SideReport {
        measured_s,
        streams: streams.into_iter().map(stream_to_wire).collect(),
        intervals: intervals.into_iter().map(interval_to_wire).collect(),
        cpu: cpu.map(cpu_to_wire),
        latency: latency.map(latency_to_wire),
        sections,
    }
}

/// What the server measured, checked: the first value that breaks an invariant of the
/// measurement is an [`Error::Invalid`] naming it (`results.intervals[2].end_s`).
pub fn measurement(side: w::SideReport) -> Result<r::SideMeasurement, Error> {
    let at = "results";
    Ok(r::SideMeasurement {
        measured_s: non_negative(at, "measured_s", side.measured_s)?,
        streams: each(side.streams, &format!("{at}.streams"), stream_from_wire)?,
        intervals: each(side.intervals, &format!("{at}.intervals"), interval_from_wire)?,
        cpu: side.cpu.map(|c| cpu_from_wire(&format!("{at}.cpu"), c)).transpose()?,
        latency: side.latency.map(|l| latency_from_wire(&format!("{at}.latency"), l)).transpose()?,
        // The test type reads its own sections back and checks them (engine's registry).
        sections: side.sections,
    })
}

/// Converts every element, naming its index in errors.
fn each<T, U>(
    items: Vec<T>,
    at: &str,
    convert: impl Fn(&str, T) -> Result<U, Error>,
) -> Result<Vec<U>, Error> {
    items.into_iter().enumerate().map(|(i, item)| convert(&format!("{at}[{i}]"), item)).collect()
}

fn invalid(at: &str, name: &str, why: String) -> Error {
    Error::Invalid { field: format!("{at}.{name}"), why }
}

/// A time, rate or share that cannot be below zero (JSON cannot carry NaN or infinities).
fn non_negative(at: &str, name: &str, v: f64) -> Result<f64, Error> {
    if v >= 0.0 {
        Ok(v)
    } else {
        Err(invalid(at, name, format!("{v} is negative")))
    }
}

fn at_most(at: &str, (name, v): (&str, u64), (limit_name, limit): (&str, u64)) -> Result<u64, Error> {
    if v <= limit {
        Ok(v)
    } else {
        Err(invalid(at, name, format!("{v} exceeds {limit_name} {limit}")))
    }
}

fn stream_to_wire(s: r::StreamStats) -> w::StreamReport {
    let r::StreamStats { index, role, bytes, bytes_total, calls, transactions, socket, tcp, placement, udp } =
        s;
    w::StreamReport {
        index,
        role: role_to_wire(role),
        bytes,
        bytes_total,
        calls,
        transactions,
        socket: socket_to_wire(socket),
        tcp: tcp.map(tcp_to_wire),
        placement: placement_to_wire(placement),
        udp: udp.map(udp_to_wire),
    }
}

fn stream_from_wire(at: &str, s: w::StreamReport) -> Result<r::StreamStats, Error> {
    Ok(r::StreamStats {
        index: s.index,
        role: role_from_wire(s.role),
        bytes: at_most(at, ("bytes", s.bytes), ("bytes_total", s.bytes_total))?,
        bytes_total: s.bytes_total,
        calls: s.calls,
        transactions: s.transactions,
        socket: socket_from_wire(s.socket),
        tcp: s.tcp.map(tcp_from_wire),
        placement: placement_from_wire(&format!("{at}.placement"), s.placement)?,
        udp: s.udp.map(|u| udp_from_wire(&format!("{at}.udp"), u)).transpose()?,
    })
}

fn role_to_wire(role: r::Role) -> w::Role {
    match role {
        r::Role::Send => w::Role::Send,
        r::Role::Recv => w::Role::Recv,
        r::Role::Request => w::Role::Request,
        r::Role::Respond => w::Role::Respond,
    }
}

fn role_from_wire(role: w::Role) -> r::Role {
    match role {
        w::Role::Send => r::Role::Send,
        w::Role::Recv => r::Role::Recv,
        w::Role::Request => r::Role::Request,
        w::Role::Respond => r::Role::Respond,
    }
}

fn socket_to_wire(s: r::SocketReport) -> w::SocketReport {
    let r::SocketReport { send, receive, mss, congestion, nodelay } = s;
    let grant = |g: r::BufferGrant| w::BufferGrant { requested: g.requested, actual: g.actual };
    w::SocketReport { send: grant(send), receive: grant(receive), mss, congestion, nodelay }
}

fn socket_from_wire(s: w::SocketReport) -> r::SocketReport {
    let w::SocketReport { send, receive, mss, congestion, nodelay } = s;
    let grant = |g: w::BufferGrant| r::BufferGrant { requested: g.requested, actual: g.actual };
    r::SocketReport { send: grant(send), receive: grant(receive), mss, congestion, nodelay }
}

fn tcp_to_wire(t: r::TcpInfoSummary) -> w::TcpInfoReport {
    let r::TcpInfoSummary {
        retransmits,
        rtt_min_us,
        rtt_mean_us,
        rtt_max_us,
        min_rtt_us,
        busy_us,
        rwnd_limited_us,
        sndbuf_limited_us,
        cwnd_bytes,
        snd_wnd_bytes,
        snd_mss,
        reord_seen,
        dsack_dups,
        data_segs_out,
        delivery_rate_bytes_per_s,
        sampled: _,
    } = t;
    w::TcpInfoReport {
        retransmits,
        rtt_min_us,
        rtt_mean_us,
        rtt_max_us,
        min_rtt_us,
        busy_us,
        rwnd_limited_us,
        sndbuf_limited_us,
        cwnd_bytes,
        snd_wnd_bytes,
        snd_mss,
        reord_seen,
        dsack_dups,
        data_segs_out,
        delivery_rate_bytes_per_s,
    }
}

fn tcp_from_wire(t: w::TcpInfoReport) -> r::TcpInfoSummary {
    r::TcpInfoSummary {
        retransmits: t.retransmits,
        rtt_min_us: t.rtt_min_us,
        rtt_mean_us: t.rtt_mean_us,
        rtt_max_us: t.rtt_max_us,
        min_rtt_us: t.min_rtt_us,
        busy_us: t.busy_us,
        rwnd_limited_us: t.rwnd_limited_us,
        sndbuf_limited_us: t.sndbuf_limited_us,
        cwnd_bytes: t.cwnd_bytes,
        snd_wnd_bytes: t.snd_wnd_bytes,
        snd_mss: t.snd_mss,
        reord_seen: t.reord_seen,
        dsack_dups: t.dsack_dups,
        data_segs_out: t.data_segs_out,
        delivery_rate_bytes_per_s: t.delivery_rate_bytes_per_s,
        sampled: true,
    }
}

fn placement_to_wire(p: r::Placement) -> w::Placement {
    let r::Placement { pinned_cpu, cpus_seen, thread_busy_pct } = p;
    let cpus_seen = cpus_seen
        .into_iter()
        .map(|c| {
            let r::CpuSeen { cpu, samples } = c;
            w::CpuSeen { cpu, samples }
        })
        .collect();
    w::Placement { pinned_cpu, cpus_seen, thread_busy_pct }
}

fn placement_from_wire(at: &str, p: w::Placement) -> Result<r::Placement, Error> {
    Ok(r::Placement {
        pinned_cpu: p.pinned_cpu,
        cpus_seen: p.cpus_seen.into_iter().map(|c| r::CpuSeen { cpu: c.cpu, samples: c.samples }).collect(),
        thread_busy_pct: p.thread_busy_pct.map(|v| non_negative(at, "thread_busy_pct", v)).transpose()?,
    })
}

fn udp_to_wire(u: r::UdpCounts) -> w::UdpCounts {
    let r::UdpCounts {
        sent,
        send_errors,
        enobufs,
        received,
        lost,
        out_of_order,
        duplicates,
        late,
        stale,
        jitter_us,
        socket_drops,
        timeouts,
        path,
    } = u;
    let path = path.map(|p| w::PathWindow {
        interface: p.interface,
        start: reading_to_wire(p.start),
        end: reading_to_wire(p.end),
    });
    w::UdpCounts {
        sent,
        send_errors,
        enobufs,
        received,
        lost,
        out_of_order,
        duplicates,
        late,
        stale,
        jitter_us,
        socket_drops: socket_drops.unwrap_or(0),
        timeouts,
        path,
    }
}

fn reading_to_wire(r: r::udp::PathReading) -> w::PathReading {
    let r::udp::PathReading {
        at_s,
        datagrams,
        if_skbs,
        if_bytes,
        udp_mib_skbs,
        udp_mib_receive_buffer_errors,
    } = r;
    w::PathReading { at_s, datagrams, if_skbs, if_bytes, udp_mib_skbs, udp_mib_receive_buffer_errors }
}

/// Counters only grow: an end reading below its start is refused (the summary subtracts).
fn path_from_wire(at: &str, p: w::PathWindow) -> Result<r::udp::PathWindow, Error> {
    let (s, e) = (&p.start, &p.end);
    for ((field, start), (_, end)) in s.counters().into_iter().zip(e.counters()) {
        at_most(&format!("{at}.path.start"), (field, start), (field, end))?;
    }
    if !(s.at_s.is_finite() && e.at_s.is_finite() && e.at_s >= s.at_s) {
        return Err(Error::Invalid {
            field: format!("{at}.path.end.at_s"),
            why: "before the start reading".into(),
        });
    }
    let reading = |r: w::PathReading| r::udp::PathReading {
        at_s: r.at_s,
        datagrams: r.datagrams,
        if_skbs: r.if_skbs,
        if_bytes: r.if_bytes,
        udp_mib_skbs: r.udp_mib_skbs,
        udp_mib_receive_buffer_errors: r.udp_mib_receive_buffer_errors,
    };
    Ok(r::udp::PathWindow { interface: p.interface, start: reading(p.start), end: reading(p.end) })
}

/// Duplicates are part of `received` and ENOBUFS part of `send_errors`: the summaries
/// subtract them.
fn udp_from_wire(at: &str, u: w::UdpCounts) -> Result<r::UdpCounts, Error> {
    Ok(r::UdpCounts {
        sent: u.sent,
        send_errors: u.send_errors,
        enobufs: at_most(at, ("enobufs", u.enobufs), ("send_errors", u.send_errors))?,
        received: u.received,
        lost: u.lost,
        out_of_order: u.out_of_order,
        duplicates: at_most(at, ("duplicates", u.duplicates), ("received", u.received))?,
        late: u.late,
        stale: u.stale,
        jitter_us: non_negative(at, "jitter_us", u.jitter_us)?,
        socket_drops: Some(u.socket_drops),
        timeouts: u.timeouts,
        path: u.path.map(|p| path_from_wire(at, p)).transpose()?,
    })
}

fn interval_to_wire(i: r::Interval) -> w::IntervalReport {
    let r::Interval { start_s, end_s, omitted, streams } = i;
    let streams = streams
        .into_iter()
        .map(|s| {
            let r::StreamInterval { index, bytes, transactions, retransmits, cwnd_bytes, rtt_us, udp } = s;
            let udp = udp.map(udp_to_wire);
            w::StreamInterval { index, bytes, transactions, retransmits, cwnd_bytes, rtt_us, udp }
        })
        .collect();
    w::IntervalReport { start_s, end_s, omitted, streams }
}

fn interval_from_wire(at: &str, i: w::IntervalReport) -> Result<r::Interval, Error> {
    let start_s = non_negative(at, "start_s", i.start_s)?;
    if i.end_s < start_s {
        return Err(invalid(at, "end_s", format!("{} is before start_s {start_s}", i.end_s)));
    }
    Ok(r::Interval {
        start_s,
        end_s: i.end_s,
        omitted: i.omitted,
        streams: each(i.streams, &format!("{at}.streams"), stream_interval_from_wire)?,
    })
}

fn stream_interval_from_wire(at: &str, s: w::StreamInterval) -> Result<r::StreamInterval, Error> {
    Ok(r::StreamInterval {
        index: s.index,
        bytes: s.bytes,
        transactions: s.transactions,
        retransmits: s.retransmits,
        cwnd_bytes: s.cwnd_bytes,
        rtt_us: s.rtt_us,
        udp: s.udp.map(|u| udp_from_wire(&format!("{at}.udp"), u)).transpose()?,
    })
}

fn cpu_to_wire(c: r::CpuUsage) -> w::CpuReport {
    let r::CpuUsage {
        cpus,
        window_s,
        util_pct,
        cores_busy,
        per_cpu_pct,
        busiest_cpu,
        busiest_pct,
        user_pct,
        system_pct,
        irq_pct,
        softirq_pct,
        steal_pct,
        process,
    } = c;
    let r::ProcessCpu { user_s, system_s, pct_of_core, throttled_s } = process;
    w::CpuReport {
        cpus,
        window_s,
        util_pct,
        cores_busy,
        per_cpu_pct,
        busiest_cpu,
        busiest_pct,
        user_pct,
        system_pct,
        irq_pct,
        softirq_pct,
        steal_pct,
        process: w::ProcessCpu { user_s, system_s, pct_of_core, throttled_s },
    }
}

fn cpu_from_wire(at: &str, c: w::CpuReport) -> Result<r::CpuUsage, Error> {
    let nn = |name, v| non_negative(at, name, v);
    let per_cpu_pct = c
        .per_cpu_pct
        .iter()
        .enumerate()
        .map(|(i, &v)| non_negative(at, &format!("per_cpu_pct[{i}]"), v))
        .collect::<Result<_, _>>()?;
    let p = &c.process;
    let pat = format!("{at}.process");
    Ok(r::CpuUsage {
        cpus: c.cpus,
        window_s: nn("window_s", c.window_s)?,
        util_pct: nn("util_pct", c.util_pct)?,
        cores_busy: nn("cores_busy", c.cores_busy)?,
        per_cpu_pct,
        busiest_cpu: c.busiest_cpu,
        busiest_pct: nn("busiest_pct", c.busiest_pct)?,
        user_pct: nn("user_pct", c.user_pct)?,
        system_pct: nn("system_pct", c.system_pct)?,
        irq_pct: nn("irq_pct", c.irq_pct)?,
        softirq_pct: nn("softirq_pct", c.softirq_pct)?,
        steal_pct: nn("steal_pct", c.steal_pct)?,
        process: r::ProcessCpu {
            user_s: non_negative(&pat, "user_s", p.user_s)?,
            system_s: non_negative(&pat, "system_s", p.system_s)?,
            pct_of_core: non_negative(&pat, "pct_of_core", p.pct_of_core)?,
            throttled_s: non_negative(&pat, "throttled_s", p.throttled_s)?,
        },
    })
}

fn latency_to_wire(l: r::LatencySummary) -> w::LatencyReport {
    let r::LatencySummary { count, min_us, mean_us, stddev_us, p50_us, p90_us, p99_us, p999_us, max_us, cdf } =
        l;
    w::LatencyReport { count, min_us, mean_us, stddev_us, p50_us, p90_us, p99_us, p999_us, max_us, cdf }
}

fn latency_from_wire(at: &str, l: w::LatencyReport) -> Result<r::LatencySummary, Error> {
    let nn = |name, v| non_negative(at, name, v);
    for (i, &(us, fraction)) in l.cdf.iter().enumerate() {
        non_negative(at, &format!("cdf[{i}][0]"), us)?;
        if !(0.0..=1.0).contains(&fraction) {
            return Err(invalid(at, &format!("cdf[{i}][1]"), format!("{fraction} is not a fraction")));
        }
    }
    Ok(r::LatencySummary {
        count: l.count,
        min_us: nn("min_us", l.min_us)?,
        mean_us: nn("mean_us", l.mean_us)?,
        stddev_us: nn("stddev_us", l.stddev_us)?,
        p50_us: nn("p50_us", l.p50_us)?,
        p90_us: nn("p90_us", l.p90_us)?,
        p99_us: nn("p99_us", l.p99_us)?,
        p999_us: nn("p999_us", l.p999_us)?,
        max_us: nn("max_us", l.max_us)?,
        cdf: l.cdf,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A path counter that shrinks over the window is refused, named as the wire names it.
    #[test]
    fn a_path_counter_below_its_start_is_refused_by_its_wire_name() {
        let start = w::PathReading { udp_mib_receive_buffer_errors: 9, ..w::PathReading::default() };
        let window = |end| w::PathWindow { interface: "veth0".into(), start: start.clone(), end };
        let grown = w::PathReading { at_s: 1.0, datagrams: 3, ..start.clone() };
        assert!(path_from_wire("remote", window(grown.clone())).is_ok());
        let shrunk = w::PathReading { udp_mib_receive_buffer_errors: 8, ..grown };
        let err = path_from_wire("remote", window(shrunk)).map(|_| ()).unwrap_err().to_string();
        assert!(err.contains("remote.path.start.udp_mib_rcvbuf_errors"), "{err}");
    }

    fn stream(index: u32, udp: Option<r::UdpCounts>) -> r::StreamStats {
        r::StreamStats {
            index,
            role: r::Role::Recv,
            bytes: 900,
            bytes_total: 1000,
            calls: 10,
            transactions: 0,
            socket: r::SocketReport {
                send: r::BufferGrant { requested: None, actual: 4096 },
                congestion: "cubic".into(),
                ..Default::default()
            },
            tcp: Some(r::TcpInfoSummary { retransmits: 3, rtt_min_us: 20, ..Default::default() }),
            placement: r::Placement {
                pinned_cpu: Some(1),
                cpus_seen: vec![r::CpuSeen { cpu: 1, samples: 9 }],
                thread_busy_pct: Some(55.0),
            },
            udp,
        }
    }

    fn measured() -> r::SideMeasurement {
        let udp = r::UdpCounts {
            received: 10,
            duplicates: 1,
            jitter_us: 3.5,
            socket_drops: Some(2),
            ..Default::default()
        };
        let interval = r::Interval {
            start_s: 0.0,
            end_s: 1.0,
            omitted: true,
            streams: vec![r::StreamInterval {
                index: 1,
                bytes: 5,
                udp: Some(udp.clone()),
                ..Default::default()
            }],
        };
        r::SideMeasurement {
            measured_s: 1.25,
            streams: vec![stream(0, None), stream(1, Some(udp))],
            intervals: vec![interval],
            cpu: Some(r::CpuUsage {
                cpus: 2,
                per_cpu_pct: vec![10.0, 90.0],
                process: r::ProcessCpu { user_s: 0.5, ..Default::default() },
                ..Default::default()
            }),
            latency: Some(r::LatencySummary {
                count: 2,
                p50_us: 7.0,
                cdf: vec![(7.0, 0.5)],
                ..Default::default()
            }),
            sections: [("file".to_string(), serde_json::json!({"mode": "zerocopy", "bytes": 4096}))].into(),
        }
    }

    #[test]
    fn a_measurement_survives_the_wire() {
        let m = measured();
        let frame = wire::Message::Results { side: Box::new(report(m.clone())) }.encode().unwrap();
        let Ok(wire::Message::Results { side }) = wire::Message::decode(&frame[4..]) else {
            panic!("not a results message")
        };
        assert_eq!(measurement(*side).unwrap(), m);
    }

    #[test]
    fn every_spec_field_survives_the_wire() {
        let spec = r::TestSpec {
            bytes_limit: Some(1 << 20),
            direction: r::Direction::Bidir,
            mss: Some(1400),
            congestion: Some("bbr".into()),
            remote_rcvbuf: Some(1 << 16),
            cpu_remote: Some(3),
            busy_poll: true,
            no_offload: true,
            ..r::TestSpec::new(r::TestKind::UdpRr)
        };
        assert_eq!(self::spec(request(&spec)), Ok(spec));
        let info = r::HostInfo { hostname: "h".into(), cpus: 4, virtualized: true, ..Default::default() };
        assert_eq!(host_info(host(&info)), info);
        let mut unknown = request(&r::TestSpec::new(r::TestKind::TcpRr));
        unknown.test = "sctp-stream".into();
        let refused = self::spec(unknown).err().map(|r| (r.code, r.field));
        assert_eq!(refused, Some((wire::ErrorCode::Unsupported, Some("test".to_string()))));
    }

    /// A protocol-2 `setup` body as every earlier tcplab client sent it, field by field.
    const OLD_SETUP: &str = concat!(
        r#"{"type":"setup","spec":{"test":"tcp-rr","duration_ms":5000,"bytes_limit":null,"#,
        r#""parallel":2,"direction":"forward","send_len":1200,"recv_len":1200,"request_len":64,"#,
        r#""response_len":128,"burst":4,"nodelay":true,"mss":null,"congestion":"cubic","#,
        r#""sndbuf":null,"rcvbuf":262144,"remote_sndbuf":null,"remote_rcvbuf":null,"#,
        r#""interval_ms":1000,"omit_ms":500,"cpu_local":1,"cpu_remote":null,"busy_poll":true,"#,
        r#""rate_bps":0,"no_checksum":false,"no_offload":false}}"#,
    );

    fn decoded(body: &str) -> Result<r::TestSpec, Rejection> {
        match wire::Message::decode(body.as_bytes()) {
            Ok(wire::Message::Setup { spec }) => self::spec(spec),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_older_peers_setup_means_what_it_meant() {
        let mut want = r::TestSpec::new(r::TestKind::TcpRr);
        (want.duration_ms, want.parallel, want.send_len, want.recv_len) = (5000, 2, 1200, 1200);
        (want.request_len, want.response_len, want.burst, want.nodelay) = (64, 128, 4, true);
        (want.congestion, want.cpu_local, want.busy_poll) = (Some("cubic".into()), Some(1), true);
        (setting::RCVBUF.set)(&mut want, &r::ParamValue::Int(262_144)).unwrap();
        (want.interval_ms, want.omit_ms) = (1000, 500);
        assert_eq!(decoded(OLD_SETUP), Ok(want.clone()));
        let sent = wire::Message::Setup { spec: request(&want) }.encode().unwrap();
        let value = |b: &[u8]| serde_json::from_slice::<serde_json::Value>(b).unwrap();
        assert_eq!(value(&sent[4..]), value(OLD_SETUP.as_bytes()), "a new client sends the same members");
    }

    #[test]
    fn a_setting_left_out_takes_the_types_default_and_null_unsets_only_an_optional_one() {
        let spec = decoded(&OLD_SETUP.replace(r#""nodelay":true,"#, "")).unwrap();
        assert!(spec.nodelay, "tcp-rr's default is nodelay");
        let spec = decoded(&OLD_SETUP.replace(r#""rcvbuf":262144"#, r#""rcvbuf":null"#)).unwrap();
        assert_eq!((setting::RCVBUF.get)(&spec), None);
        let refused = decoded(&OLD_SETUP.replace(r#""burst":4"#, r#""burst":null"#)).unwrap_err();
        assert_eq!(refused.field.as_deref(), Some("burst"), "{refused}");
    }

    #[test]
    fn unknown_settings_and_values_of_the_wrong_kind_are_refused_by_name() {
        let cases = [
            (r#""no_offload":false"#, r#""no_offload":false,"zerocopy":true"#, "zerocopy"),
            (r#""no_offload":false"#, r#""no_offload":false,"window":4096"#, "window"),
            (r#""parallel":2"#, r#""parallel":"many""#, "parallel"),
            (r#""parallel":2"#, r#""parallel":4294967296"#, "parallel"),
            (r#""nodelay":true"#, r#""nodelay":1"#, "nodelay"),
            (r#""direction":"forward""#, r#""direction":"sideways""#, "direction"),
        ];
        for (from, to, field) in cases {
            let refused = decoded(&OLD_SETUP.replace(from, to)).unwrap_err();
            assert_eq!((refused.code, refused.field.as_deref()), (ErrorCode::BadField, Some(field)), "{to}");
        }
    }

    #[test]
    fn every_setting_on_the_wire_survives_it() {
        for (name, s) in setting::on_wire() {
            let mut spec = r::TestSpec::new(r::TestKind::TcpStream);
            let value = match s.kind {
                r::ValueKind::Bool => r::ParamValue::Bool(true),
                r::ValueKind::Text | r::ValueKind::Direction => r::ParamValue::Text("reverse".into()),
                _ => r::ParamValue::Int(4242),
            };
            (s.set)(&mut spec, &value).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(self::spec(request(&spec)), Ok(spec.clone()), "{name}");
            assert_eq!(request(&spec).settings[name], Some(option_to_wire(value)), "{name}");
        }
    }

    /// Breaks one value of an otherwise valid report and returns the error's field.
    fn refused(break_it: impl FnOnce(&mut w::SideReport)) -> String {
        let mut side = report(measured());
        break_it(&mut side);
        match measurement(side) {
            Err(Error::Invalid { field, .. }) => field,
            other => panic!("accepted: {other:?}"),
        }
    }

    #[test]
    fn broken_invariants_are_refused_by_name() {
        assert_eq!(refused(|s| s.measured_s = -1.0), "results.measured_s");
        assert_eq!(refused(|s| s.streams[1].bytes = 1001), "results.streams[1].bytes");
        assert_eq!(
            refused(|s| s.streams[1].udp.as_mut().unwrap().duplicates = 11),
            "results.streams[1].udp.duplicates"
        );
        assert_eq!(
            refused(|s| s.streams[0].placement.thread_busy_pct = Some(-2.0)),
            "results.streams[0].placement.thread_busy_pct"
        );
        assert_eq!(refused(|s| s.intervals[0].end_s = -0.5), "results.intervals[0].end_s");
        assert_eq!(
            refused(|s| s.intervals[0].streams[0].udp.as_mut().unwrap().jitter_us = -1.0),
            "results.intervals[0].streams[0].udp.jitter_us"
        );
        assert_eq!(refused(|s| s.cpu.as_mut().unwrap().per_cpu_pct[1] = -3.0), "results.cpu.per_cpu_pct[1]");
        assert_eq!(
            refused(|s| s.cpu.as_mut().unwrap().process.throttled_s = -1.0),
            "results.cpu.process.throttled_s"
        );
        assert_eq!(refused(|s| s.latency.as_mut().unwrap().cdf[0].1 = 1.5), "results.latency.cdf[0][1]");
    }

    #[test]
    fn hellos_of_another_version_are_refused_with_both_numbers() {
        let server: SocketAddr = "127.0.0.1:9180".parse().unwrap();
        let mut old = Hello::server([0; 32]);
        old.version = 1;
        let e = check_server_hello(&old, server).unwrap_err();
        assert_eq!(e.code(), "bad-version");
        assert_eq!(
            e.to_string(),
            format!("server 127.0.0.1:9180 speaks tcplab protocol 1, this client {PROTOCOL_VERSION}: upgrade the older side")
        );
        assert!(check_server_hello(&Hello::server([0; 32]), server).is_ok());
        assert!(matches!(check_server_hello(&Hello::control([0; 32]), server), Err(Error::Protocol { .. })));
        let mut client = Hello::control([0; 32]);
        client.version = 1;
        let r = check_client_hello(&client).unwrap_err();
        assert_eq!(r.code, ErrorCode::BadVersion);
        assert!(r
            .message
            .starts_with(&format!("client speaks tcplab protocol 1, this server {PROTOCOL_VERSION}")));
        assert!(check_client_hello(&Hello::control([0; 32])).is_ok());
    }
}
