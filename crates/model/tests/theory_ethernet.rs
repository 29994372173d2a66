//! Known answers from theory.md §3 (Ethernet framing).
#![allow(clippy::expect_used, reason = "in tests a panic is the failure report")]

mod common;

use common::{assert_printed, max, setup};
use model::{goodput, Overhead};

/// (spec, stack, S, wire bytes, Mbit/s, frames/s) at 1 Gbit/s.
const TABLE: [(&str, &str, u64, u64, &str, &str); 8] = [
    ("ethernet:1g", "tcp", 1460, 1538, "949.28", "81274"),
    ("ethernet:1g", "tcp:ts", 1448, 1538, "941.48", "81274"),
    ("ethernet:1g:vlan", "tcp", 1460, 1542, "946.82", "81064"),
    ("ethernet:1g:vlan", "tcp:ts", 1448, 1542, "939.04", "81064"),
    ("ethernet:1g:mtu=9000", "tcp", 8960, 9038, "991.37", "13830"),
    ("ethernet:1g:jumbo", "tcp:ts", 8948, 9038, "990.04", "13830"),
    ("ethernet:1g:mtu=9000:vlan", "tcp", 8960, 9042, "990.93", "13824"),
    ("ethernet:1g:jumbo:vlan", "tcp:ts", 8948, 9042, "989.60", "13824"),
];

#[test]
fn one_gigabit_table() {
    for (link, stack, s, wire, mbit, frames) in TABLE {
        let g = max(link, stack);
        assert_eq!(g.message_bytes, s, "{link} {stack}");
        assert_eq!(g.wire_bytes, wire, "{link} {stack}");
        assert_printed(g.goodput_bps / 1e6, mbit);
        assert_printed(g.packets_per_s, frames);
    }
}

#[test]
fn headline_numbers() {
    assert_printed(max("ethernet:1g", "tcp").goodput_bps / 1e6, "949.28");
    assert_printed(max("ethernet:1g", "tcp:ts").goodput_bps / 1e6, "941.48");
    assert_printed(max("ethernet:1g", "tcp:ts").goodput_bps / 1e6, "941.5");
}

#[test]
fn frame_overhead_is_itemised() {
    let g = max("ethernet:1g:vlan", "tcp:ts");
    let expected = [
        (Overhead::IpHeader, 20),
        (Overhead::TcpHeader, 20),
        (Overhead::TcpOptions, 12),
        (Overhead::Preamble, 8),
        (Overhead::EthernetHeader, 14),
        (Overhead::VlanTag, 4),
        (Overhead::Fcs, 4),
        (Overhead::InterFrameGap, 12),
    ];
    for (kind, bytes) in expected {
        assert_eq!(g.overhead_bytes(kind), bytes, "{kind:?}");
    }
    assert_eq!(g.items.len(), expected.len());
}

#[test]
fn ratios_scale_with_rate() {
    assert_printed(max("ethernet:10g", "tcp:ts").goodput_bps / 1e9, "9.415");
    assert_printed(max("ethernet:10g:jumbo", "tcp:ts").goodput_bps / 1e9, "9.900");
}

#[test]
fn pure_ack_and_delayed_ack_load() {
    let (link, stack) = setup("ethernet:1g", "tcp");
    let ack = goodput::ack_load(&link, &stack, 2).expect("computable");
    assert_eq!(ack.ack_wire_bytes, 84);
    assert_eq!(ack.ack_wire_bytes - 20, 64);
    assert_printed(ack.reverse_fraction * 100.0, "2.7");
}
