//! Ground truth for seed 002's Figures 3, 8 and 10: a wrong rule gets one of these wrong.

use results::{EmuDirection, EmuReport, EmuTally, RrSummary, TestKind, TestResult, TestSpec, UdpSummary};

use super::*;
use crate::fixture::{done, outcome, repeated, streams};
use crate::status::Status;

/// The emulator's counts of the data direction.
fn emu(wire_bytes: u64, queue_drops: u64) -> Option<EmuReport> {
    let up = EmuDirection {
        direction: "up".into(),
        wire_bytes,
        drops_queue_overflow: EmuTally { packets: queue_drops, bytes: 0 },
        ..EmuDirection::default()
    };
    Some(EmuReport { path: CLIP.into(), offload: false, directions: vec![up], second_path: None })
}

/// Runs of a UDP case of `len`-byte datagrams: (sent, lost, socket drops) each.
fn udp_case(len: u32, runs: &[(u64, u64, u64)], wire_bytes: u64, queue_drops: u64) -> TestResult {
    let mut spec = TestSpec::new(TestKind::UdpStream);
    (spec.send_len, spec.duration_ms) = (len, 2000);
    let one = |spec: &TestSpec, &(sent, lost, drops): &(u64, u64, u64)| {
        let mut r = TestResult::new("udp", spec.clone(), "h:1", 0);
        let loss_pct = lost as f64 * 100.0 / sent as f64;
        let u = UdpSummary {
            sent,
            lost,
            received: sent - lost,
            loss_pct,
            socket_drops: Some(drops),
            ..UdpSummary::default()
        };
        r.summary.udp = vec![u];
        r
    };
    let mut r = repeated(&spec, runs, one);
    r.emu = emu(wire_bytes, queue_drops);
    r
}

#[test]
fn figure_3_holds_udp_cells_to_the_cell_arithmetic() {
    // By hand: a 1024-byte datagram is a 1052-byte IP packet, + 8 LLC/SNAP + 8 trailer = 1068
    // bytes = 23 cells = 1219 bytes; 8192 bytes: 8236 = 172 cells = 9116 bytes.
    let (n, m) = (100_000u64, 10_000u64);
    let case = |len: u32, wire: u64| udp_case(len, &[(n, 0, 0)], wire, 0);
    let good =
        outcome(vec![done("clip-udp-l1K", case(1024, n * 1219)), done("clip-udp-l8K", case(8192, n * 9116))]);
    let v = curves::efficiency_curve(&good, CLIP);
    assert_eq!(v.status, Status::Reproduced, "{}", v.evidence);
    assert!(v.evidence.contains("1024 B 84.0 %"), "{}", v.evidence);
    // Ethernet framing instead of cells (38 bytes a frame, no cell padding): 1024 B at 92 %.
    let ether =
        outcome(vec![done("clip-udp-l1K", case(1024, n * 1090)), done("clip-udp-l8K", case(8192, n * 9116))]);
    let v = curves::efficiency_curve(&ether, CLIP);
    assert_eq!(v.status, Status::Differs, "{}", v.evidence);
    assert!(v.evidence.contains("Outside the tolerance: 1024 B."), "{}", v.evidence);
    // 8K datagrams cut into 1500-byte fragments: six packets, 6 × 32 cells.
    let frag = outcome(vec![
        done("clip-udp-l1K", case(1024, m * 10 * 1219)),
        done("clip-udp-l8K", case(8192, n * 6 * 32 * 53)),
    ]);
    assert_eq!(curves::efficiency_curve(&frag, CLIP).status, Status::Differs);
    let one = outcome(vec![done("clip-udp-l8K", case(8192, n * 9116))]);
    assert_eq!(curves::efficiency_curve(&one, CLIP).status, Status::NotRun);
}

/// A request/response case whose runs made `tps` transactions a second.
fn rr_case(len: u32, tps: &[f64]) -> TestResult {
    repeated(&rr(len, len, 2), tps, |spec, t| {
        let mut r = TestResult::new("rr", spec.clone(), "h:1", 0);
        r.summary.rr = Some(RrSummary { trans_per_s: *t, ..RrSummary::default() });
        r
    })
}

#[test]
fn figure_8_needs_the_delay_to_rise_with_size_and_lie_in_the_papers_range() {
    let fig8 = |small: &[f64], big: &[f64]| {
        let out = outcome(vec![
            done(curves::DELAY_JUDGED[0], rr_case(64, small)),
            done(curves::DELAY_JUDGED[1], rr_case(8192, big)),
        ]);
        curves::delay(&out)
    };
    // 1 ms and 2 ms round trips: in 0.5–4 ms, rising.
    let v = fig8(&[1000.0, 1010.0, 990.0], &[500.0, 505.0, 495.0]);
    assert_eq!(v.status, Status::Reproduced, "{}", v.evidence);
    // Like with like: the paper's delay is its RTT (§3.1), compared with round trips as measured.
    assert!(v.evidence.contains("paper's delay is its RTT, §3.1"), "{}", v.evidence);
    // 0.1 ms and 0.2 ms: rising, but below the paper's range.
    let v = fig8(&[10_000.0, 10_100.0, 9_900.0], &[5000.0, 5050.0, 4950.0]);
    assert_eq!(v.status, Status::Differs, "{}", v.evidence);
    assert!(v.evidence.contains("workstations"), "{}", v.evidence);
    // In range but falling with size.
    assert_eq!(fig8(&[500.0, 505.0, 495.0], &[1000.0, 1010.0, 990.0]).status, Status::Differs);
    assert_eq!(curves::delay(&outcome(Vec::new())).status, Status::NotRun);
}

#[test]
fn figure_10_tells_the_receivers_overrun_from_the_emulators_queue() {
    let fast = udp_case(8192, &[(1000, 0, 0), (1000, 1, 0), (1000, 0, 0)], 0, 0);
    // The slow reader loses 60 %, dropped by its own socket: the paper's overrun.
    let overrun = udp_case(8192, &[(1000, 600, 600), (1000, 610, 610), (1000, 590, 590)], 0, 0);
    let out = |slow: TestResult| {
        outcome(vec![done("clip-udp-bigbuf-l8K", fast.clone()), done("slow-udp-bigbuf-l8K", slow)])
    };
    let v = overrun_of(&out(overrun));
    assert_eq!(v.status, Status::SameShape, "{}", v.evidence);
    assert!(v.evidence.contains("queue refused 0.00 %, its socket dropped 60.0 %"), "{}", v.evidence);
    // The same loss, but the emulator's queue refused it (the socket dropped a few): not overrun.
    let queued = udp_case(8192, &[(1000, 600, 20), (1000, 610, 20), (1000, 590, 20)], 0, 1740);
    let v = overrun_of(&out(queued));
    assert_eq!(v.status, Status::Differs, "{}", v.evidence);
    assert!(v.evidence.contains("not the receiver"), "{}", v.evidence);
}

fn overrun_of(out: &Outcome) -> Verdict {
    AtmLoss.judge("Figure 10", out)
}

/// A TCP stream case whose runs carried `mbps` Mbit/s each.
fn tcp_case(key: &str, mbps: &[f64]) -> crate::Done {
    let spec = if key == LINUX_1K { linux_tcp(1024, 2) } else { small_tcp(1024, 2) };
    done(key, streams(&spec, mbps))
}

#[test]
fn the_papers_window_is_set_exactly_and_segments_fit_it() {
    let s = small_tcp(1024, 2);
    assert_eq!(s.options.get("window-clamp"), Some(&ParamValue::Int(8192)));
    assert_eq!((s.mss, s.sndbuf, s.remote_rcvbuf), (Some(8192 + 12), Some(8192), None));
    let l = linux_tcp(1024, 2);
    assert_eq!((l.mss, l.remote_rcvbuf), (None, Some(8192)));
    assert!(!l.options.contains_key("window-clamp"));
}

#[test]
fn linux_stalls_only_when_its_way_is_significantly_slower() {
    let judge = |paper: &[f64], linux: &[f64]| {
        AtmLoss
            .judge("§3.1 window", &outcome(vec![tcp_case("clip-tcp-l1K", paper), tcp_case(LINUX_1K, linux)]))
    };
    // Seed 002's run on Linux: 0.34 Mbit/s the Linux way, 111 with segments capped at the window.
    let v = judge(&[111.0, 112.0, 110.0], &[0.34, 0.33, 0.35]);
    assert_eq!(v.status, Status::Differs, "{}", v.evidence);
    assert!(v.evidence.contains("persist timer"), "{}", v.evidence);
    // A kernel that carried both alike (no significant difference): no stall to report.
    let v = judge(&[111.0, 112.0, 110.0], &[110.0, 113.0, 111.5]);
    assert_eq!(v.status, Status::NotMeasurable, "{}", v.evidence);
    assert!(!v.evidence.contains("persist timer"), "{}", v.evidence);
    // Linux's way faster: it carried the window as the paper's stacks did.
    assert_eq!(judge(&[50.0, 51.0, 49.0], &[110.0, 111.0, 109.0]).status, Status::Reproduced);
    assert_eq!(AtmLoss.judge("§3.1 window", &outcome(Vec::new())).status, Status::NotRun);
}
