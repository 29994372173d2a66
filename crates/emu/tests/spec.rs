//! Path specs and presets: grammar, units, overrides, errors, and no panics on any input.
// Test helpers unwrap too: a panic in a test is a test failure, which is what we want.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use emu::{
    presets, BitRate, CellFormat, Direction, Discard, Encap, Error, LossModel, PathConfig, QueueLimit,
};
use proptest::prelude::*;
use std::time::Duration;

fn parse(s: &str) -> PathConfig {
    PathConfig::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn bps(config: &emu::LinkConfig) -> Option<u64> {
    config.rate.map(BitRate::bits_per_sec)
}

#[test]
fn the_example_spec() {
    let p = parse("rate=100mbit,delay=20ms,jitter=1ms,loss=0.1%,queue=100pkt,mtu=1500");
    assert_eq!(p.mtu_bytes, 1500);
    for d in Direction::BOTH {
        let l = p.link(d);
        assert_eq!(bps(l), Some(100_000_000));
        assert_eq!(l.delay, Duration::from_millis(20));
        assert_eq!(l.jitter, Duration::from_millis(1));
        assert!(matches!(l.loss, LossModel::Bernoulli { p } if p.get() == 0.001));
        assert_eq!(l.queue, QueueLimit::packets(100));
        assert!(!l.reorder);
    }
}

#[test]
fn per_direction_overrides() {
    let p = parse("rate=10mbit,up:rate=1mbit,down:delay=5ms,delay=1ms,up:reorder");
    assert_eq!(bps(&p.up), Some(1_000_000));
    assert_eq!(bps(&p.down), Some(10_000_000));
    // Later items win: the plain delay=1ms overrides down:delay=5ms.
    assert_eq!(p.down.delay, Duration::from_millis(1));
    assert!(p.up.reorder && !p.down.reorder);
}

#[test]
fn preset_then_overrides() {
    let p = parse("transatlantic,loss=0.01%,down:loss=0");
    assert_eq!(bps(&p.up), Some(1_000_000_000));
    assert_eq!(p.up.delay, Duration::from_millis(85));
    assert_eq!(p.up.queue, QueueLimit::packets(100));
    assert!(matches!(p.up.loss, LossModel::Bernoulli { p } if (p.get() - 1e-4).abs() < 1e-15));
    assert_eq!(p.down.loss, LossModel::None);
}

#[test]
fn every_preset_parses_and_is_listed() {
    assert!(presets::all().len() >= 9);
    for preset in presets::all() {
        let p = parse(preset.name);
        assert_eq!(p, parse(preset.spec), "{}", preset.name);
        assert!(p.up.rate.is_some(), "{}", preset.name);
    }
    let clip = parse("atm-oc3-clip");
    assert_eq!(clip.mtu_bytes, 9180);
    assert_eq!(bps(&clip.up), Some(149_760_000));
    assert_eq!(clip.up.framing.cells, Some(CellFormat::Aal5 { encap: Encap::Llc }));
    let lane = parse("atm-oc3-lane");
    assert_eq!(lane.up.framing.cells, Some(CellFormat::Aal5 { encap: Encap::Lane }));
    assert_eq!(lane.mtu_bytes, 1500);
    let snv = parse("snv-ams");
    assert_eq!(snv.up.delay + snv.down.delay, Duration::from_millis(170));
}

#[test]
fn gilbert_elliott_parameters_and_defaults() {
    let p = parse("ge=0.1%/20%/90%/0.5%");
    let LossModel::GilbertElliott(ge) = p.up.loss else { panic!("{:?}", p.up.loss) };
    assert_eq!(
        [ge.p.get(), ge.r.get(), ge.loss_in_bad.get(), ge.loss_in_good.get()],
        [0.001, 0.2, 0.9, 0.005]
    );
    let LossModel::GilbertElliott(simple) = parse("ge=1%").down.loss else { panic!() };
    assert_eq!(simple.r.get(), 0.99);
    assert!((simple.mean_loss() - 0.01).abs() < 1e-12);
}

#[test]
fn cell_framing_and_cell_loss() {
    let p = parse("taxi-100,cellloss=0.01%,discard=ppd,up:overhead=4");
    let cl = p.up.cell_loss.unwrap();
    assert_eq!(cl.discard, Discard::Partial);
    assert_eq!(p.up.framing.overhead_bytes, 4);
    let generic = parse("rate=10mbit,cell=48,celloverhead=5");
    assert!(matches!(
        generic.up.framing.cells,
        Some(CellFormat::Generic { payload_bytes, overhead_bytes: 5 }) if payload_bytes.get() == 48
    ));
    assert_eq!(parse("atm-oc3-clip,atm=none").up.framing.cells, None);
}

#[test]
fn default_queue_is_one_bdp_with_a_floor() {
    let p = parse("rate=1gbit,delay=85ms");
    assert_eq!(p.up.queue, QueueLimit::bytes(21_250_000));
    let lan = parse("rate=100mbit,mtu=9180");
    assert_eq!(lan.up.queue, QueueLimit::bytes(64 * 9180));
    assert_eq!(parse("delay=1ms").up.queue, QueueLimit::UNLIMITED);
    assert_eq!(parse("rate=1gbit,queue=unlimited").up.queue, QueueLimit::UNLIMITED);
}

#[test]
fn units_and_case() {
    let p = parse("RATE=1.5Gbit,Delay=250us,queue=64KiB,dup=0.5%,reorder=off,mtu=9000B");
    assert_eq!(bps(&p.up), Some(1_500_000_000));
    assert_eq!(p.up.delay, Duration::from_micros(250));
    assert_eq!(p.up.queue, QueueLimit::bytes(65_536));
    assert_eq!(p.up.duplicate.get(), 0.005);
    assert_eq!(p.mtu_bytes, 9000);
}

#[test]
fn sizes_are_powers_of_1024_and_rates_of_1000() {
    for queue in ["queue=8K", "queue=8KB", "queue=8kib", "queue=8192B"] {
        assert_eq!(parse(queue).up.queue, QueueLimit::bytes(8192), "{queue}");
    }
    assert_eq!(parse("queue=64000B").up.queue, QueueLimit::bytes(64_000));
    for rate in ["rate=1mbit", "rate=1M", "rate=1m", "rate=1000k", "rate=1000K", "rate=1Mbit/s"] {
        assert_eq!(bps(&parse(rate).up), Some(1_000_000), "{rate}");
    }
    assert_eq!(parse("mtu=9K").mtu_bytes, 9216);
    let message = err("queue=1.3K").to_string();
    assert!(message.contains("1.3K") && message.contains("whole number of bytes"), "{message}");
    assert!(err("rate=1mbps").to_string().contains("ambiguous"));
}

fn err(s: &str) -> Error {
    PathConfig::parse(s).expect_err(s)
}

#[test]
fn errors_name_the_culprit() {
    assert_eq!(err(""), Error::Empty);
    assert_eq!(err("rate=1mbit,,delay=1ms"), Error::EmptyItem { position: 2 });
    assert_eq!(err("nowhere"), Error::UnknownPreset { name: "nowhere".into() });
    assert_eq!(err("rate=1mbit,gige"), Error::PresetNotFirst { name: "gige".into() });
    assert_eq!(err("speed=1mbit"), Error::UnknownKey { key: "speed".into() });
    assert_eq!(err("left:rate=1mbit"), Error::UnknownDirection { prefix: "left".into() });
    assert_eq!(err("rate"), Error::MissingValue { key: "rate".into() });
    assert_eq!(err("up:mtu=1500"), Error::NotPerDirection { key: "mtu".into() });
    assert!(matches!(
        err("rate=fast"),
        Error::BadValue { key, value, .. } if key == "rate" && value == "fast"
    ));
    assert!(matches!(err("loss=150%"), Error::BadValue { .. }));
    assert!(matches!(err("mtu=20"), Error::BadValue { .. }));
    assert!(matches!(err("ge=1%/2%/3%/4%/5%"), Error::BadValue { .. }));
    assert!(matches!(err("up:cellloss=1%"), Error::Conflict { direction: Direction::Up, .. }));
    assert!(matches!(err("atm=llc,cell=48"), Error::Conflict { .. }));
    assert!(matches!(err("celloverhead=5"), Error::Conflict { .. }));
    let message = err("queue=100").to_string();
    assert!(message.contains("queue") && message.contains("pkt"), "{message}");
}

#[test]
fn path_config_round_trips_through_json() {
    let p = parse("atm-oc3-clip,cellloss=0.1%,ge=1%/10%,jitter=10us,dup=1%");
    let json = serde_json::to_string(&p).unwrap();
    assert_eq!(serde_json::from_str::<PathConfig>(&json).unwrap(), p);
}

#[test]
fn build_link_uses_distinct_seeds_per_direction() {
    assert_ne!(Direction::Up.seed(1), Direction::Down.seed(1));
    let p = parse("gige");
    let link: emu::Link<()> = p.build_link(Direction::Down, 1);
    assert_eq!(link.config(), &p.down);
}

const TOKENS: &[&str] = &[
    "rate",
    "delay",
    "jitter",
    "loss",
    "ge",
    "queue",
    "mtu",
    "overhead",
    "atm",
    "cell",
    "celloverhead",
    "cellloss",
    "discard",
    "dup",
    "reorder",
    "up:",
    "down:",
    "=",
    ",",
    "/",
    "%",
    "ms",
    "mbit",
    "pkt",
    "KB",
    "llc",
    "lane",
    "ppd",
    "0",
    "1",
    "48",
    "9180",
    ".",
    "1e9",
    "99999999999999999999999",
    "transatlantic",
    "atm-oc3-clip",
    "µs",
    " ",
    ":",
    "-",
];

proptest! {
    #[test]
    fn arbitrary_strings_never_panic(s in "\\PC{0,64}") {
        let _ = PathConfig::parse(&s);
    }

    #[test]
    fn spec_like_strings_never_panic(parts in proptest::collection::vec(0..TOKENS.len(), 0..24)) {
        let s: String = parts.iter().map(|&i| TOKENS[i]).collect();
        let _ = PathConfig::parse(&s);
    }

    #[test]
    fn valid_rates_round_to_exact_bits(mbit in 1u64..100_000, frac in 0u64..1000) {
        let p = parse(&format!("rate={mbit}.{frac:03}mbit"));
        prop_assert_eq!(bps(&p.up), Some(mbit * 1_000_000 + frac * 1_000));
    }
}
