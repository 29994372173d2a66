//! tcplab values ↔ iperf3 documents: a test spec as parameters, this end's measurement as
//! results, and the server's results as the remote measurement (what iperf3 does not report,
//! such as system-wide CPU and TCP_INFO, stays absent).

use results::{
    Buffer, Direction, End, Placement, Role, SideMeasurement, SocketReport, StreamStats, TcpInfoSummary,
    TestKind, TestSpec, UdpCounts,
};
use wire::iperf3::{stream_id, Params, Results, StreamResults};

/// iperf3's version this client announces (the oldest we test against, Debian's).
pub const CLIENT_VERSION: &str = "3.12";
/// Name of the remote measurement's section that holds what iperf3 reported about itself.
pub const SECTION: &str = "iperf3";

/// The parameter document for `spec`; refuses what iperf3 cannot express.
pub fn params(spec: &TestSpec) -> Result<Params, String> {
    if spec.omit_ms % 1000 != 0 {
        return Err("--iperf3: iperf3 takes -O/--omit in whole seconds".into());
    }
    if spec.bytes_limit.is_some() && spec.direction != Direction::Forward {
        return Err("--iperf3: -n works only client-to-server (iperf3's client ends the test)".into());
    }
    let mptcp = crate::registry::mptcp::asks(spec);
    let others = spec.options.keys().filter(|name| name.as_str() != results::setting::MPTCP.id);
    if let Some(s) = others.into_iter().find_map(|name| results::setting::of_option(name)) {
        return Err(format!("--iperf3: a stock iperf3 server has no {} ({})", s.flag, s.label));
    }
    let secs = |ms: u64| i64::try_from(ms.div_ceil(1000)).unwrap_or(i64::MAX);
    let int = |v: u32| Some(i64::from(v));
    let tcp = spec.test != TestKind::UdpStream;
    let bandwidth = i64::try_from(spec.rate_bps).unwrap_or(i64::MAX);
    Ok(Params {
        tcp,
        udp: !tcp,
        omit: Some(secs(spec.omit_ms)),
        time: Some(if spec.bytes_limit.is_some() {
            0
        } else {
            secs(spec.duration_ms.saturating_sub(spec.omit_ms))
        }),
        num: Some(spec.bytes_limit.map_or(0, |b| i64::try_from(b).unwrap_or(i64::MAX))),
        blockcount: Some(0),
        MSS: spec.mss.filter(|_| tcp).and_then(int),
        nodelay: tcp && spec.nodelay,
        parallel: int(spec.parallel.max(1)),
        reverse: spec.direction == Direction::Reverse,
        bidirectional: spec.direction == Direction::Bidir,
        window: window(spec).and_then(int),
        len: int(if tcp { spec.send_len.max(spec.recv_len) } else { spec.send_len }.max(1)),
        // For UDP, iperf3 reads no rate as 1 Mbit/s; 0 is unlimited, as tcplab's.
        bandwidth: (bandwidth > 0 || !tcp).then_some(bandwidth),
        pacing_timer: Some(1000),
        congestion: spec.congestion.clone().filter(|_| tcp),
        client_version: Some(CLIENT_VERSION.into()),
        // iperf3 -m: a 3.16+ server listens with MPTCP; an older one ignores it (the data
        // connections fall back to TCP, and the result says so).
        mptcp: tcp && mptcp,
        ..Params::default()
    })
}

/// The window iperf3's `-w` carries: the first buffer asked for, the server's before the
/// client's, send before receive (iperf3 sets both ends' buffers to it).
fn window(spec: &TestSpec) -> Option<u32> {
    [End::Server, End::Client]
        .into_iter()
        .flat_map(|e| Buffer::ALL.map(|b| spec.buffers(e).get(b)))
        .flatten()
        .next()
}

/// This end's results for the exchange: per stream the bytes of the measured window, and
/// TCP retransmits of sending streams; CPU is the tcplab process's, as iperf3 reports its own.
pub fn local_results(local: &SideMeasurement, congestion: Option<String>, tcp: bool) -> Results {
    let sends = local.streams.iter().any(|s| s.role == Role::Send);
    let (user, system) = local.cpu.as_ref().filter(|c| c.window_s > 0.0).map_or((0.0, 0.0), |c| {
        (100.0 * c.process.user_s / c.window_s, 100.0 * c.process.system_s / c.window_s)
    });
    Results {
        cpu_util_total: user + system,
        cpu_util_user: user,
        cpu_util_system: system,
        sender_has_retransmits: match (sends, tcp) {
            (false, _) => -1,
            (true, tcp) => i64::from(tcp),
        },
        congestion_used: congestion.filter(|_| tcp),
        streams: local.streams.iter().map(|s| stream_results(s, tcp, local.measured_s)).collect(),
        ..Results::default()
    }
}

/// One stream's entry in a results document (either end's): bytes, TCP retransmits of a
/// sending stream, and for UDP iperf3's datagram counts — a sender's `packets` is what it
/// sent; a receiver's is the datagrams accounted (duplicates aside) plus the lost ones, with
/// the lost as `errors` and jitter in seconds.
pub fn stream_results(s: &StreamStats, tcp: bool, seconds: f64) -> StreamResults {
    let udp = s.udp.clone().unwrap_or_default();
    let (packets, errors) = match s.role {
        Role::Send => (udp.sent, 0),
        _ => (udp.received.saturating_sub(udp.duplicates) + udp.lost, udp.lost),
    };
    let retransmits = match (tcp, s.role, &s.tcp) {
        (true, Role::Send, Some(t)) => i64::try_from(t.retransmits).unwrap_or(i64::MAX),
        _ => -1,
    };
    StreamResults {
        id: stream_id(s.index),
        bytes: s.bytes,
        retransmits,
        jitter: if tcp { 0.0 } else { udp.jitter_us / 1e6 },
        errors: if tcp { 0 } else { i64::try_from(errors).unwrap_or(i64::MAX) },
        omitted_errors: None,
        packets: if tcp { 0 } else { i64::try_from(packets).unwrap_or(i64::MAX) },
        omitted_packets: None,
        start_time: Some(0.0),
        end_time: Some(seconds),
    }
}

/// The server's side as a measurement: one stream per local stream (matched by id, role
/// reversed), bytes as the server counted them, and for UDP its datagram counts; no CPU
/// window and no TCP_INFO (iperf3 sends neither). What iperf3 said about its own process CPU
/// is kept in the [`SECTION`] section.
pub fn remote_measurement(
    local: &SideMeasurement,
    server: &Results,
    udp: bool,
) -> Result<SideMeasurement, String> {
    let mut streams = Vec::with_capacity(local.streams.len());
    for mine in &local.streams {
        let id = stream_id(mine.index);
        let theirs =
            server.stream(id).ok_or_else(|| format!("the iperf3 server sent no results for stream {id}"))?;
        let role = if mine.role == Role::Send { Role::Recv } else { Role::Send };
        let mut stream = counted(mine.index, role, theirs.bytes);
        stream.udp = udp.then(|| datagrams(role, theirs));
        stream.tcp = (!udp && role == Role::Send).then(|| reported_retransmits(theirs)).flatten();
        streams.push(stream);
    }
    let measured_s = server.streams.iter().filter_map(|s| s.end_time).fold(0.0, f64::max);
    let mut m = SideMeasurement {
        measured_s: if measured_s > 0.0 { measured_s } else { local.measured_s },
        streams,
        ..SideMeasurement::default()
    };
    m.sections.insert(SECTION.into(), iperf3_section(server));
    Ok(m)
}

/// A sending stream's retransmits as a stock iperf3 reports them (`-1`: not counted); nothing
/// else of TCP_INFO is known.
fn reported_retransmits(s: &StreamResults) -> Option<TcpInfoSummary> {
    let retransmits = u64::try_from(s.retransmits).ok()?;
    Some(TcpInfoSummary { retransmits, sampled: false, ..TcpInfoSummary::default() })
}

/// A stream known only by its byte count.
fn counted(index: u32, role: Role, bytes: u64) -> StreamStats {
    StreamStats {
        index,
        role,
        bytes,
        bytes_total: bytes,
        calls: 0,
        transactions: 0,
        socket: SocketReport::default(),
        tcp: None,
        placement: Placement::default(),
        udp: None,
    }
}

/// iperf3's datagram counts in tcplab's terms: a sender's `packets` is what it sent; a
/// receiver's is its highest sequence number, `errors` the gaps left, so it received
/// `packets − errors` (duplicates and reordering are not told apart).
fn datagrams(role: Role, s: &StreamResults) -> UdpCounts {
    let count = |v: i64| u64::try_from(v).unwrap_or(0);
    match role {
        Role::Send => UdpCounts { sent: count(s.packets), ..UdpCounts::default() },
        _ => UdpCounts {
            received: count(s.packets).saturating_sub(count(s.errors)),
            lost: count(s.errors),
            jitter_us: s.jitter * 1e6,
            ..UdpCounts::default()
        },
    }
}

fn iperf3_section(server: &Results) -> serde_json::Value {
    serde_json::json!({
        "process_cpu_total_pct": server.cpu_util_total,
        "process_cpu_user_pct": server.cpu_util_user,
        "process_cpu_system_pct": server.cpu_util_system,
        "congestion_used": server.congestion_used,
        "note": "CPU of the iperf3 server process as iperf3 reports it; not system-wide",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// iperf3 has one window for all buffers: the server's send buffer first, then its
    /// receive buffer, then the client's.
    #[test]
    fn iperf3s_window_is_the_first_buffer_asked_for() {
        let mut spec = TestSpec::new(TestKind::TcpStream);
        let window = |s: &TestSpec| params(s).map(|p| p.window).unwrap_or_default();
        assert_eq!(window(&spec), None, "the OS default");
        spec.set_buffers(End::Client, results::BufferSizes { send: None, receive: Some(4096) });
        assert_eq!(window(&spec), Some(4096));
        spec.set_buffers(End::Server, results::BufferSizes { send: None, receive: Some(8192) });
        assert_eq!(window(&spec), Some(8192));
        spec.set_buffers(End::Server, results::BufferSizes { send: Some(16_384), receive: Some(8192) });
        assert_eq!(window(&spec), Some(16_384));
    }

    #[test]
    fn a_reverse_spec_becomes_iperf3_parameters() {
        let spec = TestSpec {
            duration_ms: 3000,
            omit_ms: 1000,
            parallel: 2,
            direction: Direction::Reverse,
            send_len: 65536,
            recv_len: 65536,
            nodelay: true,
            ..TestSpec::new(results::TestKind::TcpStream)
        };
        let p = params(&spec).unwrap();
        assert_eq!((p.time, p.omit, p.parallel, p.len), (Some(2), Some(1), Some(2), Some(65536)));
        assert!(p.reverse && p.nodelay && p.tcp && p.bandwidth.is_none());
        let paced = TestSpec { rate_bps: 50_000_000, ..spec.clone() };
        assert_eq!(params(&paced).unwrap().bandwidth, Some(50_000_000), "-b goes to iperf3 per stream");
        let half = TestSpec { omit_ms: 500, ..spec.clone() };
        assert!(params(&half).is_err());
        let counted = TestSpec { bytes_limit: Some(1 << 20), ..spec };
        assert!(params(&counted).is_err());
    }

    #[test]
    fn a_setting_a_stock_iperf3_server_lacks_is_refused_by_its_flag() {
        let mut spec = TestSpec::new(TestKind::TcpStream);
        spec.options.insert("window-clamp".into(), results::ParamValue::Int(4096));
        let e = params(&spec).map(|_| ()).unwrap_err();
        assert!(e.contains("--window-clamp"), "{e}");
        let mut udp = TestSpec::new(TestKind::UdpStream);
        udp.options.insert("recv-delay-us".into(), results::ParamValue::Int(2600));
        assert!(params(&udp).map(|_| ()).unwrap_err().contains("--recv-delay"));
    }

    #[test]
    fn a_udp_spec_asks_for_udp_at_its_rate_and_reads_datagram_counts_back() {
        let spec = TestSpec { rate_bps: 0, send_len: 1200, ..TestSpec::new(TestKind::UdpStream) };
        let p = params(&spec).unwrap();
        assert!(p.udp && !p.tcp && !p.nodelay && p.MSS.is_none());
        assert_eq!((p.bandwidth, p.len), (Some(0), Some(1200)), "0 is unlimited, not iperf3's 1 Mbit/s");
        let local = SideMeasurement {
            streams: vec![counted(0, Role::Send, 12_000), counted(1, Role::Recv, 9_600)],
            ..SideMeasurement::default()
        };
        let server = Results::decode(br#"{"cpu_util_total":0,"cpu_util_user":0,"cpu_util_system":0,"sender_has_retransmits":-1,"streams":[{"id":1,"bytes":9600,"retransmits":-1,"jitter":0.002,"errors":2,"packets":10},{"id":3,"bytes":12000,"retransmits":-1,"jitter":0,"errors":0,"packets":10}]}"#).unwrap();
        let remote = remote_measurement(&local, &server, true).unwrap();
        let (rx, tx) = (remote.streams[0].udp.clone().unwrap(), remote.streams[1].udp.clone().unwrap());
        assert_eq!((rx.received, rx.lost, tx.sent), (8, 2, 10));
        assert!((rx.jitter_us - 2000.0).abs() < 1e-6);
        let mine = local_results(&local, Some("cubic".into()), false);
        assert_eq!((mine.sender_has_retransmits, mine.congestion_used), (0, None));
    }

    #[test]
    fn server_results_become_the_remote_side_by_stream_id() {
        let stream = |index, role| counted(index, role, 100);
        let local = SideMeasurement {
            measured_s: 1.0,
            streams: vec![stream(0, Role::Send), stream(1, Role::Recv)],
            ..SideMeasurement::default()
        };
        let server = Results::decode(br#"{"cpu_util_total":3,"cpu_util_user":1,"cpu_util_system":2,"sender_has_retransmits":0,"streams":[{"id":1,"bytes":90,"retransmits":-1,"jitter":0,"errors":0,"packets":0,"end_time":1.01},{"id":3,"bytes":120,"retransmits":0,"jitter":0,"errors":0,"packets":0,"end_time":1.0}]}"#).unwrap();
        let remote = remote_measurement(&local, &server, false).unwrap();
        assert_eq!(
            remote.streams.iter().map(|s| (s.bytes, s.role)).collect::<Vec<_>>(),
            vec![(90, Role::Recv), (120, Role::Send)]
        );
        assert!(remote.cpu.is_none() && remote.streams[0].tcp.is_none());
        assert_eq!(remote.sections[SECTION]["process_cpu_total_pct"], 3.0);
        let short = Results { streams: server.streams[..1].to_vec(), ..server };
        assert!(remote_measurement(&local, &short, false).is_err());
    }
}
