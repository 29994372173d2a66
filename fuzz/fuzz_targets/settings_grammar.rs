//! Any text through the one duration grammar (`model::units::parse_duration`, every duration
//! flag and path spec) and the settings table's writer (`results::setting::ValueKind::write`,
//! how help, errors, reports and sweep axes show a value): a duration parses or is refused
//! without a panic under each reading of a bare number, a parsed duration prints as text
//! that reads back to the same value, and every numeric setting value is written as text its
//! flag reads back exactly (sizes, rates, times), or refuses as too large only past 64 bits of
//! nanoseconds. Settings are also looked up by the text as a name.
//! Run: `cargo fuzz run settings_grammar` (from the repository root).
#![no_main]

use libfuzzer_sys::fuzz_target;
use model::units::{format_duration, parse_duration, parse_size, BareNumber, BitRate};
use results::setting::{self, ValueKind};
use results::ParamValue;

fuzz_target!(|data: &[u8]| {
    if let Some(head) = data.get(..8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(head);
        written_values_read_back(u64::from_le_bytes(word));
    }
    let Ok(text) = std::str::from_utf8(data) else { return };
    for bare in [BareNumber::Seconds, BareNumber::Milliseconds, BareNumber::NeedsUnit] {
        if let Ok(d) = parse_duration(text, bare) {
            let shown = format_duration(d);
            assert_eq!(parse_duration(&shown, BareNumber::NeedsUnit).ok(), Some(d), "{text:?} as {shown:?}");
        }
    }
    if let Some(s) = setting::find(text.trim()) {
        assert!(s.is_named(text.trim()) && !s.label.is_empty());
        let _ = s.flag_for(text);
    }
});

/// `n` as each numeric kind writes it reads back as `n`.
fn written_values_read_back(n: u64) {
    let v = ParamValue::Int(n);
    let bytes = ValueKind::Bytes.write(&v);
    assert_eq!(parse_size(&bytes).ok(), Some(n), "{n} bytes as {bytes:?}");
    let rate = ValueKind::Rate.write(&v);
    assert_eq!(BitRate::parse(&rate).ok(), Some(BitRate(n)), "{n} bit/s as {rate:?}");
    let time = ValueKind::Millis.write(&v);
    let read = parse_duration(&time, BareNumber::Seconds);
    match n.checked_mul(1_000_000) {
        Some(ns) => assert_eq!(read.ok(), Some(std::time::Duration::from_nanos(ns)), "{n} ms as {time:?}"),
        None => assert!(read.is_err(), "{n} ms as {time:?} fits 64 bits of ns"),
    }
    let _ = ValueKind::Count.write(&v);
}
