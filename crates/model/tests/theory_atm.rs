//! Known answers from theory.md §1 (ATM) and §2 (goodput versus message size).
#![allow(clippy::expect_used, reason = "in tests a panic is the failure report")]

mod common;

use common::{assert_printed, max, setup};
use model::{goodput, Overhead};

/// One row of the §1.3 table: spec, stack, S, cells, pad, wire bytes, goodput.
fn row(link: &str, stack: &str, s: u64, cells: u64, pad: i64, wire: u64, mbit: &str) {
    let g = max(link, stack);
    assert_eq!(g.message_bytes, s, "{link} {stack}: S");
    assert_eq!(g.cells, Some(cells), "{link} {stack}: cells");
    assert_eq!(g.overhead_bytes(Overhead::Aal5Pad), pad, "{link} {stack}: pad");
    assert_eq!(g.wire_bytes, wire, "{link} {stack}: wire");
    assert_printed(g.goodput_bps / 1e6, mbit);
}

#[test]
fn clip_9180_llc_snap_is_134_51() {
    row("atm:oc3c:mtu=9180", "tcp", 9140, 192, 20, 10_176, "134.51");
}

#[test]
fn clip_9180_timestamps_is_134_34() {
    row("atm:oc3c", "tcp:ts", 9128, 192, 20, 10_176, "134.34");
}

#[test]
fn clip_9180_vcmux_pad_absorbs_the_header() {
    row("atm:oc3c:vcmux", "tcp", 9140, 192, 28, 10_176, "134.51");
}

#[test]
fn cell_aligned_mtu_9152_is_134_80() {
    row("atm:oc3c:mtu=9152", "tcp", 9112, 191, 0, 10_123, "134.80");
}

#[test]
fn lane_1500_is_128_92() {
    row("atm:oc3c:lane", "tcp", 1460, 32, 12, 1_696, "128.92");
}

#[test]
fn lane_1500_timestamps_is_127_86() {
    row("atm:oc3c:lane", "tcp:ts", 1448, 32, 12, 1_696, "127.86");
}

#[test]
fn clip_1500_llc_snap_is_128_92() {
    row("atm:oc3c:mtu=1500", "tcp", 1460, 32, 20, 1_696, "128.92");
}

#[test]
fn aal5_payload_rate_and_cell_tax() {
    let g = max("atm:oc3c", "tcp");
    assert_eq!(g.line_rate_bps, 155_520_000);
    assert_eq!(g.payload_rate_bps, 149_760_000);
    // 353,207.5 cells/s: theory.md prints the whole cells, 353,207.
    assert_eq!(g.payload_rate_bps / (53 * 8), 353_207);
    assert_printed(g.payload_rate_bps as f64 * 48.0 / 53.0 / 1e6, "135.63");
    assert_printed((1.0 - 48.0 / 53.0) * 100.0, "9.4");
}

#[test]
fn literature_value_is_134_5() {
    assert_printed(max("atm:oc3c", "tcp").goodput_bps / 1e6, "134.5");
}

#[test]
fn mistake_line_rate_instead_of_payload_is_139_69() {
    // Same cells, but charged at the 155.52 Mbit/s line rate.
    let g = max("raw:155.52m:overhead=16:cell=48:cellover=5:mtu=9180", "tcp");
    assert_eq!(g.wire_bytes, 10_176);
    assert_printed(g.goodput_bps / 1e6, "139.69");
}

#[test]
fn mistake_tcp_header_as_payload_is_134_81() {
    let g = max("atm:oc3c", "tcp");
    let with_header = g.message_bytes as i64 + g.overhead_bytes(Overhead::TcpHeader);
    assert_printed(with_header as f64 * 8.0 * g.messages_per_s / 1e6, "134.81");
    assert_printed(with_header as f64 * 8.0 * g.messages_per_s / 1e6, "134.808");
}

#[test]
fn netem_cell_model_reproduces_aal5() {
    let atm = max("atm:oc3c", "tcp");
    let raw = max("raw:149.76m:overhead=16:cell=48:cellover=5:mtu=9180", "tcp");
    assert_eq!(raw.wire_bytes, atm.wire_bytes);
    assert_eq!(raw.cells, atm.cells);
    assert_printed(raw.goodput_bps / 1e6, "134.51");
}

#[test]
fn taxi_rows() {
    let cases = [
        ("taxi:140:vcmux:mtu=9188", 192, "125.86", "125.9"),
        ("taxi:140:aal34:vcmux:mtu=9188", 209, "115.62", "115.6"),
        ("taxi:100", 192, "89.82", "89.8"),
        ("taxi:100:aal34:vcmux:mtu=9188", 209, "82.59", "82.6"),
    ];
    for (spec, cells, mbit, scenario_mbit) in cases {
        let g = max(spec, "tcp");
        assert_eq!(g.cells, Some(cells), "{spec}");
        assert_printed(g.goodput_bps / 1e6, mbit);
        assert_printed(g.goodput_bps / 1e6, scenario_mbit);
    }
    assert_eq!(max("taxi:140:vcmux:mtu=9188", "tcp").message_bytes, 9148);
}

#[test]
fn per_packet_figures_at_oc3c() {
    let (link, _) = setup("atm:oc3c", "tcp");
    let model::Link::Atm(atm) = link else { panic!("atm spec gives an ATM link") };
    assert_printed(atm.cell_time_ns() / 1e3, "2.83");
    let clip = max("atm:oc3c", "tcp");
    assert_printed(clip.wire_time_ns / 1e3, "544");
    assert_printed(clip.packets_per_s / 10.0, "184");
    let lane = max("atm:oc3c:lane", "tcp");
    assert_printed(lane.wire_time_ns / 1e3, "90.6");
    // theory.md prints 11,040: 11,037.7 rounded to four significant digits.
    assert_printed(lane.packets_per_s / 10.0, "1104");
}

#[test]
fn pure_ack_cells() {
    let cells = |link: &str, stack: &str| {
        let (link, stack) = setup(link, stack);
        goodput::ack_load(&link, &stack, 1).map(|ack| ack.ack_cells)
    };
    assert_eq!(cells("atm:oc3c", "tcp"), Ok(Some(2)));
    assert_eq!(cells("atm:oc3c:vcmux", "tcp"), Ok(Some(1)));
    assert_eq!(cells("atm:oc3c", "tcp:ts"), Ok(Some(2)));
    assert_eq!(cells("atm:oc3c:vcmux", "tcp:ts"), Ok(Some(2)));
}

/// theory.md §2: (M, CLIP 9180 Mbit/s, LANE 1500 Mbit/s), no timestamps, one write per
/// segment group.
const CURVE: [(u64, &str, &str); 18] = [
    (1, "1.41", "1.41"),
    (40, "56.51", "37.68"),
    (48, "45.21", "45.21"),
    (64, "60.28", "60.28"),
    (100, "70.64", "70.64"),
    (256, "103.34", "103.34"),
    (512, "120.56", "120.56"),
    (1024, "125.80", "125.80"),
    (1460, "128.92", "128.92"),
    (1461, "129.01", "121.42"),
    (2048, "131.52", "125.80"),
    (4096, "133.03", "128.60"),
    (8192, "134.58", "128.60"),
    (9140, "134.51", "127.85"),
    (9141, "133.14", "127.87"),
    (16384, "134.19", "128.24"),
    (32768, "134.38", "128.78"),
    (65536, "134.38", "128.87"),
];

#[test]
fn goodput_versus_message_size() {
    let sizes: Vec<u64> = CURVE.iter().map(|(m, _, _)| *m).collect();
    let (clip, tcp) = setup("atm:oc3c", "tcp");
    let (lane, _) = setup("atm:oc3c:lane", "tcp");
    let clip_curve = goodput::curve(&clip, &tcp, &sizes).expect("computable");
    let lane_curve = goodput::curve(&lane, &tcp, &sizes).expect("computable");
    for (i, (m, clip_mbit, lane_mbit)) in CURVE.iter().enumerate() {
        assert_eq!(clip_curve[i].message_bytes, *m);
        assert_printed(clip_curve[i].goodput_bps / 1e6, clip_mbit);
        assert_printed(lane_curve[i].goodput_bps / 1e6, lane_mbit);
        assert_printed(clip_curve[i].coalesced_goodput_bps / 1e6, "134.51");
        assert_printed(lane_curve[i].coalesced_goodput_bps / 1e6, "128.92");
    }
}

#[test]
fn curve_notes() {
    let (clip, tcp) = setup("atm:oc3c", "tcp");
    let (lane, _) = setup("atm:oc3c:lane", "tcp");
    let cells = |link, m| goodput::message_goodput(link, &tcp, m).map(|g| g.cells);
    assert_eq!(cells(&clip, 1), Ok(Some(2)));
    assert_eq!(cells(&clip, 40), Ok(Some(2)));
    assert_eq!(cells(&lane, 40), Ok(Some(3)));
    assert_eq!(cells(&clip, 48), Ok(Some(3)));
    let g8192 = goodput::message_goodput(&clip, &tcp, 8192).expect("computable");
    assert_eq!(g8192.overhead_bytes(Overhead::Aal5Pad), 8);
}
