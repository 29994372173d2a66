//! What a server accepts: every field of a [`TestSpec`] checked for range and consistency
//! before anything is allocated (security-notes.md S3, S7). The client runs the same checks
//! first, so a bad flag value fails before any connection is made.

use results::{TestKind, TestSpec};
use wire::Rejection;

/// Server-side caps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Longest test, ms.
    pub max_duration_ms: u64,
    /// Most streams or flows per direction.
    pub max_parallel: u32,
    /// Largest read, write, request or response, bytes.
    pub max_len: u32,
    /// Largest burst.
    pub max_burst: u32,
    /// Largest socket buffer a peer may ask for, bytes.
    pub max_buffer: u32,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_duration_ms: 3_600_000,
            max_parallel: 128,
            max_len: 16 * 1024 * 1024,
            max_burst: 1024,
            max_buffer: 512 * 1024 * 1024,
        }
    }
}

/// Checks `spec` against `limits`; the first problem found is returned with its field name.
pub fn validate(spec: &TestSpec, limits: &Limits) -> Result<(), Rejection> {
    check_timing(spec, limits)?;
    check_range("parallel", spec.parallel.into(), 1, limits.max_parallel.into())?;
    for (field, v) in [
        ("send_len", spec.send_len),
        ("recv_len", spec.recv_len),
        ("request_len", spec.request_len),
        ("response_len", spec.response_len),
    ] {
        check_range(field, v.into(), 1, limits.max_len.into())?;
    }
    check_range("burst", spec.burst.into(), 1, limits.max_burst.into())?;
    if let Some(mss) = spec.mss {
        check_range("mss", mss.into(), 88, 65_535)?;
    }
    for (field, v) in [
        ("sndbuf", spec.sndbuf),
        ("rcvbuf", spec.rcvbuf),
        ("remote_sndbuf", spec.remote_sndbuf),
        ("remote_rcvbuf", spec.remote_rcvbuf),
    ] {
        if let Some(v) = v {
            check_range(field, v.into(), 1, limits.max_buffer.into())?;
        }
    }
    if let Some(cc) = &spec.congestion {
        check_congestion_name(cc)?;
    }
    if spec.busy_poll && spec.test != TestKind::TcpRr {
        return Err(Rejection::field("busy_poll", "busy polling applies to rr tests only"));
    }
    for (field, cpu) in [("cpu_local", spec.cpu_local), ("cpu_remote", spec.cpu_remote)] {
        if let Some(cpu) = cpu {
            check_range(field, cpu.into(), 0, 4095)?;
        }
    }
    if spec.test.is_udp() {
        check_udp(spec)?;
    } else {
        check_not_udp(spec)?;
    }
    Ok(())
}

/// UDP-only settings on a TCP test are a mistake (a sweep over `rate` of a TCP stream would
/// otherwise measure the same thing at every point).
fn check_not_udp(spec: &TestSpec) -> Result<(), Rejection> {
    let set = [
        ("rate_bps", spec.rate_bps != 0),
        ("no_checksum", spec.no_checksum),
        ("no_offload", spec.no_offload),
    ];
    match set.into_iter().find(|(_, on)| *on) {
        Some((field, _)) => Err(Rejection::field(field, format!("{field} applies to UDP tests only"))),
        None => Ok(()),
    }
}

/// Datagram sizes: room for the header, at most one IPv4 datagram's payload.
fn check_udp(spec: &TestSpec) -> Result<(), Rejection> {
    let (min, max) = (wire::udp::HEADER_LEN as u64, wire::udp::MAX_DATAGRAM as u64);
    match spec.test {
        TestKind::UdpRr => {
            check_range("request_len", spec.request_len.into(), min, max)?;
            check_range("response_len", spec.response_len.into(), min, max)
        }
        _ => check_range("send_len", spec.send_len.into(), min, max),
    }
}

fn check_timing(spec: &TestSpec, limits: &Limits) -> Result<(), Rejection> {
    match (spec.duration_ms, spec.bytes_limit) {
        (0, None) => return Err(Rejection::field("duration_ms", "a test needs a time or a byte limit")),
        (_, Some(0)) => return Err(Rejection::field("bytes_limit", "byte limit must be at least 1")),
        (_, Some(_)) if !matches!(spec.test, TestKind::TcpStream | TestKind::UdpStream) => {
            return Err(Rejection::field("bytes_limit", "byte limits apply to stream tests only"));
        }
        _ => {}
    }
    check_range("duration_ms", spec.duration_ms, 0, limits.max_duration_ms)?;
    if spec.interval_ms != 0 {
        check_range("interval_ms", spec.interval_ms, 100, 60_000)?;
    }
    if spec.duration_ms > 0 && spec.omit_ms >= spec.duration_ms {
        return Err(Rejection::field("omit_ms", "omitted time must be shorter than the test"));
    }
    check_range("omit_ms", spec.omit_ms, 0, limits.max_duration_ms)
}

/// Checks that this host may run threads on `cpu` (the pinning of `-A`); `field` names the
/// spec field for the error.
pub fn check_pin(field: &str, cpu: Option<u32>) -> Result<(), Rejection> {
    let Some(cpu) = cpu else { return Ok(()) };
    let allowed = netio::sched::allowed_cpus().unwrap_or_default();
    if allowed.contains(&cpu) {
        return Ok(());
    }
    let list: Vec<String> = allowed.iter().map(u32::to_string).collect();
    Err(Rejection::field(field, format!("CPU {cpu} is not available here (allowed: {})", list.join(","))))
}

fn check_range(field: &str, v: u64, min: u64, max: u64) -> Result<(), Rejection> {
    if v < min || v > max {
        return Err(Rejection::field(field, format!("{field} must be between {min} and {max}, got {v}")));
    }
    Ok(())
}

fn check_congestion_name(cc: &str) -> Result<(), Rejection> {
    let ok = !cc.is_empty() && cc.len() < 16 && cc.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(Rejection::field("congestion", format!("'{cc}' is not a congestion control name")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(spec: &TestSpec) -> bool {
        validate(spec, &Limits::default()).is_ok()
    }

    fn field_of(spec: &TestSpec) -> Option<String> {
        validate(spec, &Limits::default()).err().and_then(|r| r.field)
    }

    #[test]
    fn udp_settings_are_refused_on_tcp_tests() {
        let mut s = TestSpec::new(TestKind::TcpStream);
        s.rate_bps = 1_000_000;
        assert_eq!(field_of(&s).as_deref(), Some("rate_bps"));
        s.rate_bps = 0;
        s.no_offload = true;
        assert_eq!(field_of(&s).as_deref(), Some("no_offload"));
        let mut u = TestSpec::new(TestKind::UdpStream);
        (u.send_len, u.recv_len, u.rate_bps, u.no_offload) = (1400, 1400, 1_000_000, true);
        assert!(ok(&u));
    }

    #[test]
    fn defaults_are_valid() {
        for k in [TestKind::TcpStream, TestKind::TcpRr, TestKind::TcpCrr] {
            assert!(ok(&TestSpec::new(k)));
        }
    }

    type Mutation = Box<dyn Fn(&mut TestSpec)>;

    #[test]
    fn each_bad_field_is_named() {
        let base = TestSpec::new(TestKind::TcpStream);
        let cases: Vec<(Mutation, &str)> = vec![
            (Box::new(|s| s.parallel = 0), "parallel"),
            (Box::new(|s| s.parallel = 129), "parallel"),
            (Box::new(|s| s.send_len = 0), "send_len"),
            (Box::new(|s| s.recv_len = u32::MAX), "recv_len"),
            (Box::new(|s| s.duration_ms = 0), "duration_ms"),
            (Box::new(|s| s.duration_ms = 3_600_001), "duration_ms"),
            (Box::new(|s| s.interval_ms = 5), "interval_ms"),
            (Box::new(|s| s.omit_ms = 10_000), "omit_ms"),
            (Box::new(|s| s.mss = Some(10)), "mss"),
            (Box::new(|s| s.remote_rcvbuf = Some(0)), "remote_rcvbuf"),
            (Box::new(|s| s.congestion = Some("bbr; rm -rf".into())), "congestion"),
            (Box::new(|s| s.bytes_limit = Some(0)), "bytes_limit"),
            (Box::new(|s| s.burst = 0), "burst"),
        ];
        for (mutate, field) in cases {
            let mut s = base.clone();
            mutate(&mut s);
            assert_eq!(field_of(&s).as_deref(), Some(field));
        }
    }

    #[test]
    fn udp_datagram_sizes_are_bounded() {
        let mut s = TestSpec::new(TestKind::UdpStream);
        s.send_len = 15;
        assert_eq!(field_of(&s).as_deref(), Some("send_len"));
        s.send_len = 65_508;
        assert_eq!(field_of(&s).as_deref(), Some("send_len"));
        s.send_len = 64;
        assert!(ok(&s));
        let mut r = TestSpec::new(TestKind::UdpRr);
        assert_eq!(field_of(&r).as_deref(), Some("request_len"), "1-byte requests cannot carry a sequence");
        (r.request_len, r.response_len) = (64, 70_000);
        assert_eq!(field_of(&r).as_deref(), Some("response_len"));
    }

    #[test]
    fn byte_limited_stream_needs_no_duration_but_rr_cannot_be_byte_limited() {
        let mut s = TestSpec::new(TestKind::TcpStream);
        s.duration_ms = 0;
        s.bytes_limit = Some(1 << 20);
        assert!(ok(&s));
        s.test = TestKind::TcpRr;
        assert_eq!(field_of(&s).as_deref(), Some("bytes_limit"));
    }
}
