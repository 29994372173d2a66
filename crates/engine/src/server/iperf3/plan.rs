//! An iperf3 client's parameters as a tcplab test: every field checked for range first (the
//! checks iperf3 master added in 2026 and 3.12 lacks), then the spec checked against the
//! server's own limits like a native test. A refusal carries the `i_errno` an iperf3 server
//! would send, so the client prints a matching message.

use results::{setting, Direction, ParamValue, TestKind, TestSpec};
use wire::iperf3::{Params, Protocol, DEFAULT_TCP_BLOCK, DEFAULT_UDP_BLOCK};

use crate::limits::Limits;

/// iperf3's error numbers this server sends (reference §12).
pub mod errno {
    /// Duration out of range.
    pub const DURATION: i32 = 5;
    /// Too many streams.
    pub const NUM_STREAMS: i32 = 6;
    /// TCP block size out of range.
    pub const BLOCK_SIZE: i32 = 7;
    /// Socket buffer too large.
    pub const BUF_SIZE: i32 = 8;
    /// MSS out of range.
    pub const MSS: i32 = 10;
    /// Bad omit.
    pub const OMIT: i32 = 12;
    /// Not implemented.
    pub const UNIMPLEMENTED: i32 = 13;
    /// Bad burst.
    pub const BURST: i32 = 15;
    /// No SCTP here.
    pub const NO_SCTP: i32 = 18;
    /// UDP datagram size out of range.
    pub const UDP_BLOCK_SIZE: i32 = 20;
    /// Both -R and --bidir.
    pub const REVERSE_BIDIR: i32 = 25;
    /// Duration above the server's maximum, or unlimited.
    pub const MAX_DURATION: i32 = 37;
    /// Parameters unreadable or out of range.
    pub const RECV_PARAMS: i32 = 114;
    /// Unknown control byte.
    pub const MESSAGE: i32 = 110;
    /// Results unreadable.
    pub const RECV_RESULTS: i32 = 117;
    /// Affinity out of range or unavailable.
    pub const AFFINITY: i32 = 132;
    /// Congestion control cannot be set.
    pub const SET_CONGESTION: i32 = 134;
    /// A data stream was not accepted in time.
    pub const STREAM_ACCEPT: i32 = 204;
    /// The server's watchdog ended the test.
    pub const DURATION_EXPIRED: i32 = 160;
}

/// Why a test is refused: the number iperf3 clients know and a line for the log.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// iperf3's `i_errno`.
    pub i_errno: i32,
    /// For the server's log.
    pub message: String,
}

impl Refusal {
    /// A refusal with `i_errno`.
    pub fn new(i_errno: i32, message: impl Into<String>) -> Refusal {
        Refusal { i_errno, message: message.into() }
    }
}

/// What the session runs.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The test as tcplab describes it (the archive's spec): `duration_ms` includes `omit`.
    pub spec: TestSpec,
    /// TCP or UDP.
    pub protocol: Protocol,
    /// 64-bit UDP sequence numbers.
    pub counters_64bit: bool,
    /// The client asked for the server's output (`--get-server-output`).
    pub server_output: bool,
    /// The client's iperf3 version, as it says.
    pub client_version: Option<String>,
}

/// Checks `p` and turns it into a plan within `limits`.
pub fn plan(p: &Params, limits: &Limits) -> Result<Plan, Refusal> {
    let protocol = match p.protocol() {
        Some(Protocol::Sctp) => return Err(Refusal::new(errno::NO_SCTP, "SCTP is not served")),
        Some(proto) => proto,
        None => return Err(Refusal::new(errno::RECV_PARAMS, "not exactly one of tcp, udp, sctp")),
    };
    check_ranges(p, protocol)?;
    if p.reverse && p.bidirectional {
        return Err(Refusal::new(errno::REVERSE_BIDIR, "both reverse and bidirectional"));
    }
    let spec = spec_of(p, protocol)?;
    check_limits(&spec, limits)?;
    crate::limits::check_pin("cpu_remote", spec.cpu_remote)
        .map_err(|r| Refusal::new(errno::AFFINITY, r.message))?;
    Ok(Plan {
        spec,
        protocol,
        counters_64bit: p.udp_counters_64bit == Some(1),
        server_output: p.get_server_output == Some(1),
        client_version: p.client_version.clone(),
    })
}

fn nonneg(v: Option<i64>) -> u64 {
    v.map_or(0, |v| u64::try_from(v).unwrap_or(0))
}

/// iperf3's own ranges, each with its error number.
fn check_ranges(p: &Params, protocol: Protocol) -> Result<(), Refusal> {
    let len_range = match protocol {
        Protocol::Udp => (16, 65_507, errno::UDP_BLOCK_SIZE),
        _ => (1, 1024 * 1024, errno::BLOCK_SIZE),
    };
    let checks: [(&str, Option<i64>, i64, i64, i32); 14] = [
        ("omit", p.omit, 0, 600, errno::OMIT),
        ("server_affinity", p.server_affinity, 0, 1024, errno::AFFINITY),
        ("time", p.time, 0, 86_400, errno::DURATION),
        ("num", p.num, 0, i64::MAX, errno::RECV_PARAMS),
        ("blockcount", p.blockcount, 0, i64::MAX, errno::RECV_PARAMS),
        ("MSS", p.MSS, 0, 32_767, errno::MSS),
        ("parallel", p.parallel, 1, 128, errno::NUM_STREAMS),
        ("window", p.window, 0, 512 * 1024 * 1024, errno::BUF_SIZE),
        (
            "len",
            p.len.filter(|&l| l != 0 || protocol != Protocol::Udp),
            len_range.0,
            len_range.1,
            len_range.2,
        ),
        ("bandwidth", p.bandwidth, 0, i64::MAX, errno::RECV_PARAMS),
        ("fqrate", p.fqrate, 0, i64::MAX, errno::RECV_PARAMS),
        ("pacing_timer", p.pacing_timer, 0, i64::MAX, errno::RECV_PARAMS),
        ("burst", p.burst.filter(|&b| b != 0), 1, 1000, errno::BURST),
        ("TOS", p.TOS, 0, 255, 21),
    ];
    for (name, value, min, max, code) in checks {
        if let Some(v) = value.filter(|v| !(min..=max).contains(v)) {
            return Err(Refusal::new(code, format!("{name} must be between {min} and {max}, got {v}")));
        }
    }
    Ok(())
}

/// The tcplab spec of a checked parameter document.
fn spec_of(p: &Params, protocol: Protocol) -> Result<TestSpec, Refusal> {
    let kind = if protocol == Protocol::Udp { TestKind::UdpStream } else { TestKind::TcpStream };
    let mut spec = crate::registry::defaults(kind);
    let (time, omit) = (nonneg(p.time), nonneg(p.omit));
    let len = match nonneg(p.len) {
        0 if protocol == Protocol::Udp => DEFAULT_UDP_BLOCK as u32,
        0 => DEFAULT_TCP_BLOCK as u32,
        n => n as u32,
    };
    let bytes = match (nonneg(p.num), nonneg(p.blockcount)) {
        (0, 0) => None,
        (0, blocks) => Some(blocks.saturating_mul(u64::from(len))),
        (num, _) => Some(num),
    };
    if time == 0 && bytes.is_none() {
        return Err(Refusal::new(errno::MAX_DURATION, "unlimited tests (-t 0) are not served"));
    }
    spec.duration_ms = if bytes.is_some() { 0 } else { (time + omit) * 1000 };
    spec.omit_ms = omit * 1000;
    spec.bytes_limit = bytes;
    spec.parallel = nonneg(p.parallel).max(1) as u32;
    spec.direction = match (p.reverse, p.bidirectional) {
        (true, _) => Direction::Reverse,
        (_, true) => Direction::Bidir,
        _ => Direction::Forward,
    };
    (spec.send_len, spec.recv_len) = (len, len);
    spec.nodelay = p.nodelay;
    spec.mss = p.MSS.filter(|&m| m > 0).map(|m| m as u32);
    spec.congestion = p.congestion.clone();
    if p.mptcp && protocol == Protocol::Tcp {
        // iperf3 -m (3.16+): its server makes the data listener MPTCP; UDP ignores it, as there.
        let on = results::ParamValue::Bool(true);
        (results::setting::MPTCP.set)(&mut spec, &on).map_err(|e| Refusal::new(errno::RECV_PARAMS, e))?;
    }
    let window = p.window.filter(|&w| w > 0).map(|w| w as u32);
    spec.set_buffers(results::End::Server, results::BufferSizes::both(window));
    spec.cpu_remote = p.server_affinity.map(|a| a as u32);
    spec.interval_ms = 1000;
    // Per stream, for TCP as for UDP; the sending end paces (the client's own for TCP
    // forward, this server's with -R and --bidir).
    spec.rate_bps = nonneg(p.bandwidth);
    if protocol == Protocol::Udp {
        spec.burst = nonneg(p.burst).max(1) as u32;
    } else if p.skip_rx_copy == Some(1) {
        spec.options.insert("skip-rx-copy".into(), ParamValue::Bool(true));
    }
    Ok(spec)
}

/// The server's limits, as for a native test; a refusal names iperf3's matching error. (A
/// byte-limited test is also bounded in time: the session's watchdog ends it after the
/// longest duration allowed.)
fn check_limits(spec: &TestSpec, limits: &Limits) -> Result<(), Refusal> {
    crate::limits::validate(spec, limits).map_err(|r| refusal(spec, r))
}

/// A limit's refusal as iperf3's matching error (its client prints the text after its own).
pub(super) fn refusal(spec: &TestSpec, r: wire::Rejection) -> Refusal {
    let field = r.field.as_deref().unwrap_or("");
    let is_buffer = setting::by_id(field).is_some_and(|s| s.limit == Some(setting::Limit::Buffer));
    let code = match field {
        _ if is_buffer => errno::BUF_SIZE,
        "duration_ms" => errno::MAX_DURATION,
        "parallel" => errno::NUM_STREAMS,
        "send_len" | "recv_len" if spec.test == TestKind::UdpStream => errno::UDP_BLOCK_SIZE,
        "send_len" | "recv_len" => errno::BLOCK_SIZE,
        "mss" => errno::MSS,
        "omit_ms" => errno::OMIT,
        "burst" => errno::BURST,
        "congestion" => errno::SET_CONGESTION,
        _ => errno::RECV_PARAMS,
    };
    Refusal::new(code, r.message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(json: &str) -> Params {
        Params::decode(json.as_bytes()).unwrap()
    }

    #[test]
    fn a_3_12_udp_reverse_document_becomes_a_udp_stream_test() {
        let p = params(
            r#"{"udp":true,"omit":1,"time":3,"num":0,"blockcount":0,"parallel":2,"reverse":true,"len":1448,"bandwidth":10000000,"pacing_timer":1000,"client_version":"3.12"}"#,
        );
        let plan = plan(&p, &Limits::default()).unwrap();
        let s = &plan.spec;
        assert_eq!((s.test, s.direction, s.parallel), (TestKind::UdpStream, Direction::Reverse, 2));
        assert_eq!((s.duration_ms, s.omit_ms, s.send_len, s.rate_bps), (4000, 1000, 1448, 10_000_000));
        assert_eq!(plan.client_version.as_deref(), Some("3.12"));
    }

    /// iperf3 3.16+ sends `"mptcp": true` for `-m` (iperf_api.c, send_parameters): a TCP test
    /// then asks for MPTCP streams; UDP has no MPTCP, and ignores it as iperf3 does.
    #[test]
    fn an_mptcp_document_asks_for_mptcp_streams() {
        let p = params(r#"{"tcp":true,"mptcp":true,"time":2,"parallel":1,"client_version":"3.17"}"#);
        let s = plan(&p, &Limits::default()).unwrap().spec;
        assert!(crate::registry::mptcp::asks(&s), "{:?}", s.options);
        let p = params(r#"{"udp":true,"mptcp":true,"time":2,"parallel":1,"bandwidth":1000000}"#);
        assert!(!crate::registry::mptcp::asks(&plan(&p, &Limits::default()).unwrap().spec));
        let p = params(r#"{"tcp":true,"time":2,"parallel":1}"#);
        assert!(!crate::registry::mptcp::asks(&plan(&p, &Limits::default()).unwrap().spec));
    }

    #[test]
    fn a_tcp_bandwidth_is_the_paced_rate_of_each_stream() {
        let p = params(r#"{"tcp":true,"time":2,"parallel":2,"reverse":true,"bandwidth":20000000}"#);
        let s = plan(&p, &Limits::default()).unwrap().spec;
        assert_eq!((s.test, s.rate_bps, s.parallel), (TestKind::TcpStream, 20_000_000, 2));
        let p = params(r#"{"tcp":true,"time":2,"parallel":1}"#);
        assert_eq!(plan(&p, &Limits::default()).unwrap().spec.rate_bps, 0, "no -b: unlimited");
    }

    #[test]
    fn byte_and_block_counts_become_a_byte_limit() {
        let p = params(r#"{"tcp":true,"time":0,"num":0,"blockcount":4,"len":1000,"parallel":1}"#);
        assert_eq!(plan(&p, &Limits::default()).unwrap().spec.bytes_limit, Some(4000));
        let p = params(r#"{"tcp":true,"time":0,"num":5000,"parallel":1,"bidirectional":true}"#);
        let plan = plan(&p, &Limits::default()).unwrap();
        assert_eq!((plan.spec.bytes_limit, plan.spec.direction), (Some(5000), Direction::Bidir));
    }

    #[test]
    fn out_of_range_values_get_iperf3_error_numbers() {
        let code = |json: &str| plan(&params(json), &Limits::default()).unwrap_err().i_errno;
        assert_eq!(code(r#"{"tcp":true,"time":10,"parallel":129}"#), errno::NUM_STREAMS);
        assert_eq!(code(r#"{"tcp":true,"time":10,"parallel":1,"len":2000000}"#), errno::BLOCK_SIZE);
        assert_eq!(code(r#"{"udp":true,"time":10,"parallel":1,"len":8}"#), errno::UDP_BLOCK_SIZE);
        assert_eq!(code(r#"{"tcp":true,"time":0,"parallel":1}"#), errno::MAX_DURATION);
        assert_eq!(code(r#"{"tcp":true,"time":10,"num":-1}"#), errno::RECV_PARAMS);
        assert_eq!(code(r#"{"tcp":true,"udp":true,"time":10}"#), errno::RECV_PARAMS);
        assert_eq!(
            code(r#"{"tcp":true,"time":10,"reverse":true,"bidirectional":true}"#),
            errno::REVERSE_BIDIR
        );
        assert_eq!(code(r#"{"tcp":true,"time":10,"window":1000000000}"#), errno::BUF_SIZE);
        let short = Limits { max_duration_ms: 5000, ..Limits::default() };
        assert_eq!(
            plan(&params(r#"{"tcp":true,"time":10}"#), &short).unwrap_err().i_errno,
            errno::MAX_DURATION
        );
    }

    /// A server limit that refuses a socket buffer, any of the four, is iperf3's buffer error.
    #[test]
    fn a_refused_buffer_is_iperf3s_buffer_error() {
        let spec = TestSpec::new(TestKind::TcpStream);
        let code = |field: &str| refusal(&spec, wire::Rejection::field(field, "too large")).i_errno;
        let buffers: Vec<_> =
            setting::ALL.iter().filter(|s| s.limit == Some(setting::Limit::Buffer)).collect();
        assert_eq!(buffers.len(), 4);
        for b in buffers {
            assert_eq!(code(b.id), errno::BUF_SIZE, "{}", b.id);
        }
        assert_eq!((code(setting::MSS.id), code("window")), (errno::MSS, errno::RECV_PARAMS));
    }

    proptest::proptest! {
        /// Whatever numbers a client sends, an accepted plan is within the server's limits
        /// (security-notes.md S3).
        #[test]
        fn accepted_plans_stay_within_the_limits(
            udp: bool,
            time in -5i64..100_000,
            omit in -5i64..700,
            num in -5i64..1_000_000_000,
            parallel in -5i64..300,
            len in -5i64..2_000_000,
            window in -5i64..1_000_000_000,
            burst in -5i64..2000,
        ) {
            let p = Params {
                tcp: !udp,
                udp,
                time: Some(time),
                omit: Some(omit),
                num: Some(num),
                parallel: Some(parallel),
                len: Some(len),
                window: Some(window),
                burst: Some(burst),
                ..Params::default()
            };
            let limits = Limits { max_duration_ms: 60_000, max_parallel: 8, ..Limits::default() };
            if let Ok(plan) = plan(&p, &limits) {
                let s = &plan.spec;
                proptest::prop_assert!(s.duration_ms <= 60_000 && s.parallel <= 8 && s.parallel >= 1);
                proptest::prop_assert!(s.duration_ms > 0 || s.bytes_limit.is_some());
                proptest::prop_assert!(s.send_len >= 1 && s.send_len <= 1024 * 1024);
                proptest::prop_assert!(s.buffers(results::End::Server).receive.is_none_or(|w| w <= 512 * 1024 * 1024));
                proptest::prop_assert!(crate::limits::validate(s, &limits).is_ok());
            }
        }
    }
}
