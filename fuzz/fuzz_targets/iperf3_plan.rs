//! Any bytes as an iperf3 client's parameter document, through what `tcplab server --iperf3`
//! does with it before it serves anything: decode, iperf3's ranges, the server's hard limits,
//! then the anonymous class's caps. Nothing may panic, and a test that passes them is within
//! them: duration (a byte-limited test stopped at the cap), streams, and a paced, capped
//! total rate for UDP.
//! Run: `cargo fuzz run iperf3_plan` (from the repository root).
#![no_main]

use engine::limits::{check_policy, validate, Limits, Policy, ANONYMOUS};
use engine::server::iperf3::plan::plan;
use libfuzzer_sys::fuzz_target;
use results::{Direction, TestKind};
use wire::iperf3::Params;

fuzz_target!(|data: &[u8]| {
    let Ok(params) = Params::decode(data) else { return };
    let limits = Limits { max_duration_ms: 600_000, max_parallel: 16, ..Limits::default() };
    let anon = Policy {
        class: ANONYMOUS.into(),
        max_duration_ms: Some(10_000),
        max_rate_bps: Some(100_000_000),
        max_parallel: Some(4),
        max_concurrent: Some(2),
        tests_per_minute: Some(10),
    };
    let Ok(plan) = plan(&params, &limits) else { return };
    let s = &plan.spec;
    assert!(validate(s, &limits).is_ok(), "a plan outside the hard limits: {s:?}");
    assert!(s.duration_ms > 0 || s.bytes_limit.is_some(), "an unlimited test: {s:?}");
    if check_policy(s, &anon).is_err() {
        return;
    }
    assert!(s.duration_ms <= 10_000 && (1..=4).contains(&s.parallel), "{s:?}");
    assert!(anon.duration_cap_ms(&limits) <= 10_000);
    if s.test == TestKind::UdpStream {
        let dirs = if s.direction == Direction::Bidir { 2 } else { 1 };
        let total = u128::from(s.rate_bps) * u128::from(s.parallel) * dirs;
        assert!(s.rate_bps > 0 && total <= 100_000_000, "UDP past the rate cap: {s:?}");
    }
});
