//! `window-clamp`: a stream's receivers clamp their announced window (TCP_WINDOW_CLAMP);
//! values outside the kernel's floor … 1G are refused before anything runs (below the floor
//! the kernel would announce the floor, not the window asked).
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

mod support;

use results::{ParamValue, Status, TestKind, TestResult, TestSpec};

fn run(clamp: u64) -> TestResult {
    run_with(Some(clamp))
}

fn run_with(clamp: Option<u64>) -> TestResult {
    let mut spec =
        TestSpec { duration_ms: 300, send_len: 8192, recv_len: 8192, ..TestSpec::new(TestKind::TcpStream) };
    if let Some(c) = clamp {
        spec.options.insert("window-clamp".into(), ParamValue::Int(c));
    }
    support::run_on_loopback(&spec)
}

#[test]
fn a_clamped_stream_runs_and_a_tiny_clamp_is_refused() {
    let r = run(16384);
    assert_eq!(r.status, Status::Completed, "{:?}", r.error);
    assert!(r.summary.goodput_bps() > 0.0);
    let bad = run(100);
    assert_eq!(bad.status, Status::Failed);
    assert!(bad.error.map(|e| e.message).unwrap_or_default().contains("window-clamp"));
}

#[test]
fn a_clamp_below_the_kernels_floor_is_refused_and_the_floor_runs() {
    let floor = engine::stream::clamp_floor();
    let below = run(u64::from(floor) - 1);
    assert_eq!(below.status, Status::Failed);
    let msg = below.error.map(|e| e.message).unwrap_or_default();
    assert!(msg.contains(&format!("outside {floor} … 1G")), "{msg}");
    // At the floor the loop-back stream crawls (one small segment per delayed ACK): a few
    // writes are enough to show that it runs.
    let mut spec = TestSpec {
        duration_ms: 5000,
        send_len: 1024,
        recv_len: 1024,
        bytes_limit: Some(8 * 1024),
        ..TestSpec::new(TestKind::TcpStream)
    };
    spec.options.insert("window-clamp".into(), ParamValue::Int(u64::from(floor)));
    let at = support::run_on_loopback(&spec);
    assert_eq!(at.status, Status::Completed, "{:?}", at.error);
}

#[test]
fn the_clamp_holds_while_data_flows() {
    // Loopback's MSS is ~64 KiB: a 4 KiB window stalls the stream on delayed ACKs. Linux
    // raises a clamp set once as data arrives; held, it keeps the stream far below an
    // unclamped one (a factor of ~100 measured; 10 asserted).
    let free = run_with(None).summary.goodput_bps();
    let clamped = run(4096);
    assert_eq!(clamped.status, Status::Completed, "{:?}", clamped.error);
    let c = clamped.summary.goodput_bps();
    assert!(c * 10.0 < free, "clamped {c} bit/s against {free} unclamped");
}
