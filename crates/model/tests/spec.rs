//! Link and stack spec strings: the documented examples, canonical forms and errors.
#![allow(clippy::expect_used, reason = "in tests a panic is the failure report")]

use model::atm::{Aal, Atm, Encapsulation, Phy};
use model::ethernet::Ethernet;
use model::raw::{Cells, Raw};
use model::units::QuantityReason;
use model::{BitRate, Error, Ip, Link, SpecReason, Stack, Transport};

fn link(spec: &str) -> Link {
    spec.parse().unwrap_or_else(|err| panic!("{spec}: {err}"))
}

fn reason(spec: &str) -> SpecReason {
    match spec.parse::<Link>() {
        Err(Error::Spec { reason, .. }) => reason,
        other => panic!("{spec}: expected a spec error, got {other:?}"),
    }
}

#[test]
fn ethernet_examples() {
    assert_eq!(link("ethernet:1g"), Link::Ethernet(Ethernet::new(BitRate::from_gbit(1))));
    let jumbo = Ethernet { mtu_bytes: 9000, ..Ethernet::new(BitRate::from_gbit(10)) };
    assert_eq!(link("ethernet:10g:mtu=9000"), Link::Ethernet(jumbo));
    assert_eq!(link("eth,rate=10gbit,jumbo"), Link::Ethernet(jumbo));
    let tagged = Ethernet { vlan: true, ..Ethernet::new(BitRate::from_mbit(100)) };
    assert_eq!(link(" Ethernet:100M:VLAN "), Link::Ethernet(tagged));
}

#[test]
fn link_specs_use_the_shared_units() {
    // Rates in powers of 1000, sizes in powers of 1024, as every flag and path spec.
    let jumbo = Ethernet { mtu_bytes: 9216, ..Ethernet::new(BitRate(1_000_000)) };
    assert_eq!(link("ethernet:1000k:mtu=9K"), Link::Ethernet(jumbo));
    assert_eq!(link("ethernet:1M:mtu=9KB"), Link::Ethernet(jumbo));
    assert_eq!(link("ethernet:1mbit/s:mtu=9kib"), Link::Ethernet(jumbo));
}

#[test]
fn atm_examples() {
    assert_eq!(link("atm:oc3c:mtu=9180"), Link::Atm(Atm::clip(Phy::Oc3c)));
    assert_eq!(link("atm:oc3c:lane"), Link::Atm(Atm::lane(Phy::Oc3c)));
    let vcmux = Atm { encapsulation: Encapsulation::VcMux, ..Atm::clip(Phy::Oc3c) };
    assert_eq!(link("atm:oc3c:vcmux"), Link::Atm(vcmux));
    let taxi = Atm { aal: Aal::Aal34, ..Atm::clip(Phy::Taxi140) };
    assert_eq!(link("taxi:140:aal34"), Link::Atm(taxi));
    assert_eq!(link("atm:taxi140:aal34"), Link::Atm(taxi));
    assert_eq!(link("atm:stm4"), Link::Atm(Atm::clip(Phy::Oc12c)));
}

#[test]
fn raw_example() {
    let expected = Raw {
        rate: BitRate::from_mbit(100),
        overhead_bytes: 20,
        cells: Some(Cells { size_bytes: 48, overhead_bytes: 5 }),
        mtu_bytes: 1500,
    };
    let spec = "raw:rate=100mbit,overhead=20,cell=48,cellover=5,mtu=1500";
    assert_eq!(link(spec), Link::Raw(expected));
    assert_eq!(link("raw:100m:overhead=-14").to_string(), "raw:100m:overhead=-14");
}

#[test]
fn canonical_forms() {
    for (spec, canonical) in [
        ("ethernet:1000m", "ethernet:1g"),
        ("eth:10g:jumbo:vlan", "ethernet:10g:mtu=9000:vlan"),
        ("atm:oc3:llc:aal5:mtu=9180", "atm:oc3c"),
        ("atm:oc3c:lane:mtu=1500", "atm:oc3c:lane"),
        ("atm:phy=taxi100,vcmux,mtu=9188", "taxi:100:vcmux:mtu=9188"),
        ("raw:149.76m,overhead=16,cell=48,cellover=5", "raw:149.76m:overhead=16:cell=48:cellover=5"),
    ] {
        assert_eq!(link(spec).to_string(), canonical, "{spec}");
    }
}

#[test]
fn errors_name_the_reason() {
    assert_eq!(reason(""), SpecReason::Empty);
    assert_eq!(reason("ethernet::1g"), SpecReason::Empty);
    assert_eq!(reason("fddi:100m"), SpecReason::UnknownKind);
    assert_eq!(reason("ethernet"), SpecReason::MissingRate);
    assert_eq!(reason("ethernet:mtu=9000"), SpecReason::MissingRate);
    assert_eq!(reason("ethernet:1gbps"), SpecReason::BadQuantity(QuantityReason::AmbiguousBps));
    assert!(matches!(reason("ethernet:0"), SpecReason::OutOfRange { .. }));
    assert_eq!(reason("ethernet:1.5"), SpecReason::BadQuantity(QuantityReason::Fraction { unit: "bit/s" }));
    assert_eq!(reason("ethernet:1g:vlan=1"), SpecReason::UnexpectedValue);
    assert_eq!(reason("ethernet:1g:mtu"), SpecReason::MissingValue);
    assert_eq!(reason("ethernet:1g:mtu=x"), SpecReason::BadQuantity(QuantityReason::NotANumber));
    assert_eq!(
        reason("ethernet:1g:mtu=1.3k"),
        SpecReason::BadQuantity(QuantityReason::Fraction { unit: "bytes" })
    );
    assert_eq!(reason("ethernet:1g:mtu=1500:jumbo"), SpecReason::Conflict);
    assert_eq!(reason("ethernet:1g:rate=2g"), SpecReason::Conflict);
    assert_eq!(reason("ethernet:1g:2g"), SpecReason::UnknownOption);
    assert!(matches!(reason("ethernet:1g:mtu=67"), SpecReason::OutOfRange { .. }));
    assert!(matches!(reason("ethernet:1g:mtu=65536"), SpecReason::OutOfRange { .. }));
    assert_eq!(reason("atm:oc48"), SpecReason::UnknownPhy);
    assert_eq!(reason("atm:lane"), SpecReason::MissingRate);
    assert_eq!(reason("atm:oc3c:lane:vcmux"), SpecReason::Conflict);
    assert_eq!(reason("taxi:155"), SpecReason::UnknownPhy);
    assert!(matches!(reason("atm:oc3c:mtu=65530"), SpecReason::OutOfRange { .. }));
    assert_eq!(reason("raw:100m:cellover=5"), SpecReason::Needs { needs: "cell" });
    assert!(matches!(reason("raw:100m:cell=0"), SpecReason::OutOfRange { .. }));
    assert_eq!(reason("raw:100m:overhead=--1"), SpecReason::BadQuantity(QuantityReason::Negative));
}

#[test]
fn error_message_quotes_spec_and_field() {
    let err = "ethernet:1g:mtu=x".parse::<Link>().map(|_| ());
    let text = err.map_err(|e| e.to_string());
    assert_eq!(
        text,
        Err("invalid spec \"ethernet:1g:mtu=x\": field \"mtu=x\": not a number (digits, optionally with a decimal point, then the unit)".into())
    );
}

#[test]
fn stacks() {
    let parse = |s: &str| s.parse::<Stack>();
    assert_eq!(parse("tcp"), Ok(Stack::tcp(Ip::V4, false)));
    assert_eq!(parse("TCP+ts"), Ok(Stack::tcp(Ip::V4, true)));
    assert_eq!(parse("ipv6:tcp:ts"), Ok(Stack::tcp(Ip::V6, true)));
    assert_eq!(parse("udp,v6"), Ok(Stack::udp(Ip::V6)));
    let sack = Stack { ip: Ip::V4, transport: Transport::Tcp { timestamps: true, extra_option_bytes: 8 } };
    assert_eq!(parse("ts:opts=8"), Ok(sack));
    assert_eq!(sack.to_string(), "ipv4:tcp:ts:opts=8");
    assert!(parse("udp:ts").is_err());
    assert!(parse("tcp:ts:opts=30").is_err());
    assert!(parse("tcp:udp").is_err());
    assert!(parse("sctp").is_err());
    assert!(parse("").is_err());
}

#[test]
fn json_shapes() {
    let json = serde_json::to_value(link("ethernet:1g:vlan")).expect("serialisable");
    let expected = serde_json::json!({
        "kind": "ethernet", "rate_bps": 1_000_000_000u64, "mtu_bytes": 1500, "vlan": true
    });
    assert_eq!(json, expected);
    let atm = serde_json::to_value(link("taxi:140:aal34:vcmux")).expect("serialisable");
    let expected = serde_json::json!({
        "kind": "atm", "phy": "taxi140", "aal": "aal34", "encapsulation": "vc-mux",
        "mtu_bytes": 9180
    });
    assert_eq!(atm, expected);
    let stack = serde_json::to_value(Stack::tcp(Ip::V4, true)).expect("serialisable");
    let expected = serde_json::json!({
        "ip": "v4", "transport": {"protocol": "tcp", "timestamps": true, "extra_option_bytes": 0}
    });
    assert_eq!(stack, expected);
}
