//! Property tests: parsers never panic, specs round-trip, itemised bytes add up.
#![allow(clippy::expect_used, reason = "in tests a panic is the failure report")]

use model::atm::{Aal, Atm, Encapsulation, Phy};
use model::ethernet::Ethernet;
use model::raw::{Cells, Raw};
use model::{goodput, overhead, BitRate, Ip, Link, Stack, Transport};
use proptest::prelude::*;

fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("ethernet".to_string()),
        Just("atm".to_string()),
        Just("taxi".to_string()),
        Just("raw".to_string()),
        Just("mtu=".to_string()),
        Just("rate=".to_string()),
        Just("vlan".to_string()),
        Just("lane".to_string()),
        Just("aal34".to_string()),
        Just("oc3c".to_string()),
        Just("cell=".to_string()),
        Just("overhead=-".to_string()),
        Just("tcp".to_string()),
        Just("ts".to_string()),
        "[0-9]{0,25}",
        "[kmgt.]{0,3}(bit)?",
        "[:,=+]",
        any::<String>(),
    ]
}

fn ethernet() -> impl Strategy<Value = Link> {
    (1u64..=u64::MAX, 68u64..=65_535, any::<bool>())
        .prop_map(|(bps, mtu_bytes, vlan)| Link::Ethernet(Ethernet { rate: BitRate(bps), mtu_bytes, vlan }))
}

fn atm() -> impl Strategy<Value = Link> {
    let phy = prop_oneof![Just(Phy::Oc3c), Just(Phy::Oc12c), Just(Phy::Taxi100), Just(Phy::Taxi140)];
    let aal = prop_oneof![Just(Aal::Aal5), Just(Aal::Aal34)];
    let encap =
        prop_oneof![Just(Encapsulation::LlcSnap), Just(Encapsulation::VcMux), Just(Encapsulation::Lane)];
    (phy, aal, encap, 68u64..=65_519).prop_map(|(phy, aal, encapsulation, mtu_bytes)| {
        Link::Atm(Atm { phy, aal, encapsulation, mtu_bytes })
    })
}

fn raw() -> impl Strategy<Value = Link> {
    let cells = proptest::option::of((1u64..=65_535, 0u64..=65_535));
    (1u64..=u64::MAX, -65_535i64..=65_535, cells, 68u64..=65_535).prop_map(
        |(bps, overhead_bytes, cells, mtu_bytes)| {
            Link::Raw(Raw {
                rate: BitRate(bps),
                overhead_bytes,
                cells: cells.map(|(size_bytes, overhead_bytes)| Cells { size_bytes, overhead_bytes }),
                mtu_bytes,
            })
        },
    )
}

fn any_link() -> impl Strategy<Value = Link> {
    prop_oneof![ethernet(), atm(), raw()]
}

fn any_stack() -> impl Strategy<Value = Stack> {
    let ip = prop_oneof![Just(Ip::V4), Just(Ip::V6)];
    let transport = prop_oneof![
        (any::<bool>(), 0u64..=28).prop_map(|(timestamps, extra_option_bytes)| {
            Transport::Tcp { timestamps, extra_option_bytes }
        }),
        Just(Transport::Udp),
    ];
    (ip, transport).prop_map(|(ip, transport)| Stack { ip, transport })
}

proptest! {
    #[test]
    fn arbitrary_strings_never_panic(s in any::<String>()) {
        let _ = s.parse::<Link>();
        let _ = s.parse::<Stack>();
    }

    #[test]
    fn token_soup_never_panics(tokens in proptest::collection::vec(token(), 0..8)) {
        for sep in ["", ":", ","] {
            let spec = tokens.join(sep);
            let _ = spec.parse::<Link>();
            let _ = spec.parse::<Stack>();
        }
    }

    #[test]
    fn link_display_parses_back(link in any_link()) {
        let spec = link.to_string();
        prop_assert_eq!(spec.parse::<Link>(), Ok(link), "{}", spec);
    }

    #[test]
    fn stack_display_parses_back(stack in any_stack()) {
        prop_assume!(stack.tcp_option_bytes().is_ok());
        prop_assert_eq!(stack.to_string().parse::<Stack>(), Ok(stack));
    }

    #[test]
    fn items_add_up_and_goodput_is_bounded(
        link in any_link(),
        stack in any_stack(),
        message in 1u64..=200_000,
    ) {
        if let Ok(g) = goodput::message_goodput(&link, &stack, message) {
            let accounted = overhead::total_bytes(&g.items) + message as i64;
            prop_assert_eq!(accounted, g.wire_bytes as i64);
            prop_assert!(g.goodput_bps > 0.0);
            prop_assert!(g.goodput_bps <= g.payload_rate_bps as f64 * (1.0 + 1e-12)
                || matches!(link, Link::Raw(r) if r.overhead_bytes < 0));
            let json = serde_json::to_string(&g).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let back: goodput::Goodput = serde_json::from_str(&json)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(back.items, g.items);
        }
    }

    #[test]
    fn netem_cell_model_matches_aal5(ip_len in 68u64..=9180, vcmux in any::<bool>()) {
        let encapsulation = if vcmux { Encapsulation::VcMux } else { Encapsulation::LlcSnap };
        let atm = Link::Atm(Atm { encapsulation, ..Atm::clip(Phy::Oc3c) });
        let raw = Link::Raw(Raw {
            rate: Phy::Oc3c.cell_rate(),
            overhead_bytes: encapsulation.header_bytes() as i64 + 8,
            cells: Some(Cells { size_bytes: 48, overhead_bytes: 5 }),
            mtu_bytes: 9180,
        });
        let wire = |link: &Link| link.frame(ip_len).map(|f| f.wire_bytes);
        prop_assert_eq!(wire(&atm), wire(&raw));
    }

    #[test]
    fn link_serde_round_trips(link in any_link()) {
        let json = serde_json::to_string(&link).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let back: Link = serde_json::from_str(&json).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(back, link);
    }
}
