//! `recv-delay-us`: a receiver that works that long per datagram takes no more than its
//! capacity, and what it cannot take its socket drops (the paper's receiver overrun, seed 002);
//! without it the same paced stream arrives whole.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

mod support;

use results::{ParamValue, Status, TestKind, TestResult, TestSpec};

/// 8 KiB datagrams at 40 Mbit/s (≈ 610 per second) for 1 s into an 8 KiB receive buffer.
fn spec(delay_us: Option<u64>) -> TestSpec {
    let mut s = TestSpec {
        duration_ms: 1000,
        rate_bps: 40_000_000,
        send_len: 8192,
        recv_len: 8192,
        remote_rcvbuf: Some(8192),
        ..TestSpec::new(TestKind::UdpStream)
    };
    if let Some(us) = delay_us {
        s.options.insert("recv-delay-us".into(), ParamValue::Int(us));
    }
    s
}

fn run(spec: &TestSpec) -> TestResult {
    support::run_on_loopback(spec)
}

#[test]
fn a_slow_receiver_takes_its_capacity_and_its_socket_drops_the_rest() {
    // 5 ms per datagram: at most 200 datagrams a second of the ≈ 610 sent.
    let slow = run(&spec(Some(5000)));
    assert_eq!(slow.status, Status::Completed, "{:?}", slow.error);
    let u = &slow.summary.udp[0];
    assert!(u.sent > 400, "sent {}", u.sent);
    let taken = u.received - u.duplicates;
    assert!(taken <= 260, "a receiver of 200 datagrams/s took {taken} in ~1 s");
    let drops = u.socket_drops.unwrap_or(0);
    assert!(drops * 10 >= u.lost * 9, "socket drops {drops} must account for the loss {}", u.lost);
    assert!(u.lost * 2 > u.sent, "lost {} of {}", u.lost, u.sent);
}

#[test]
fn too_long_a_delay_is_refused() {
    let r = run(&spec(Some(2_000_000)));
    assert_eq!(r.status, Status::Failed);
    let e = r.error.map(|e| e.message).unwrap_or_default();
    assert!(e.contains("recv_delay_us") && e.contains("more than 1 s"), "{e}");
}
