//! `window-clamp`: a stream's receivers clamp their announced window (TCP_WINDOW_CLAMP);
//! values outside 1K … 1G are refused before anything runs.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

use std::net::SocketAddr;
use std::time::Duration;

use engine::client::{ClientOptions, Quiet};
use engine::{Server, ServerConfig, StopFlag};
use results::{ParamValue, Status, TestKind, TestResult, TestSpec};

fn run(clamp: u64) -> TestResult {
    let cfg = ServerConfig { bind: SocketAddr::from(([127, 0, 0, 1], 0)), ..ServerConfig::default() };
    let srv = Server::bind(cfg).unwrap().spawn().unwrap();
    let opts = ClientOptions {
        host: "127.0.0.1".into(),
        port: srv.addr.port(),
        bind: None,
        family: None,
        timeout: Duration::from_secs(5),
        busy_wait: Duration::from_secs(3),
        key: None,
    };
    let mut spec =
        TestSpec { duration_ms: 300, send_len: 8192, recv_len: 8192, ..TestSpec::new(TestKind::TcpStream) };
    spec.options.insert("window-clamp".into(), ParamValue::Int(clamp));
    let (r, _) = engine::run_test(&opts, &spec, &mut Quiet, &StopFlag::new());
    srv.shutdown();
    r
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
