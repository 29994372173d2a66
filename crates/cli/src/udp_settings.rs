//! `tcplab udp` / `udp-rr` arguments → validated specs.

use anyhow::Result;
use results::{Direction, TestKind, TestSpec};

use crate::args::udp::{UdpArgs, UdpRrArgs, UdpSocketArgs};
use crate::settings::{apply_buffers, apply_timing, check};

fn apply_socket(spec: &mut TestSpec, s: &UdpSocketArgs) {
    apply_buffers(spec, &s.buffers);
    spec.no_checksum = s.no_checksum;
    spec.no_offload = s.no_offload;
}

/// The spec of `tcplab udp`.
pub fn udp_spec(a: &UdpArgs) -> Result<TestSpec> {
    let mut spec = engine::registry::defaults(TestKind::UdpStream);
    apply_timing(&mut spec, &a.timing);
    apply_socket(&mut spec, &a.socket);
    (spec.send_len, spec.recv_len) = (a.len, a.len);
    spec.rate_bps = a.rate;
    spec.burst = a.burst;
    if let Some(d) = a.recv_delay {
        set_recv_delay(&mut spec, d)?;
    }
    spec.direction = match (a.reverse, a.bidir) {
        (true, _) => Direction::Reverse,
        (_, true) => Direction::Bidir,
        _ => Direction::Forward,
    };
    if let Some(n) = a.bytes {
        spec.bytes_limit = Some(n);
        spec.duration_ms = 0;
        spec.omit_ms = 0;
    }
    check(&spec)
}

/// `--recv-delay`: the receiver's time per datagram, kept in whole µs (`recv_delay_us`).
fn set_recv_delay(spec: &mut TestSpec, d: std::time::Duration) -> Result<()> {
    let us = d.as_secs_f64() * 1e6;
    if us < 0.5 {
        anyhow::bail!("--recv-delay must be at least 1us (got {d:?})");
    }
    let setting = &results::setting::RECV_DELAY_US;
    (setting.set)(spec, &results::ParamValue::Int(us.round() as u64)).map_err(anyhow::Error::msg)
}

/// The spec of `tcplab udp-rr`.
pub fn udp_rr_spec(a: &UdpRrArgs) -> Result<TestSpec> {
    let mut spec = engine::registry::defaults(TestKind::UdpRr);
    apply_timing(&mut spec, &a.timing);
    apply_socket(&mut spec, &a.socket);
    (spec.request_len, spec.response_len) = a.size;
    spec.burst = a.burst;
    check(&spec)
}

/// The UDP test of `tcplab run`'s suite: a modest paced stream.
pub fn suite_udp(time_ms: u64) -> TestSpec {
    let mut s = engine::registry::defaults(TestKind::UdpStream);
    s.send_len = 1400;
    s.recv_len = 1400;
    s.rate_bps = 100_000_000;
    s.duration_ms = time_ms;
    s.interval_ms = 0;
    s
}
