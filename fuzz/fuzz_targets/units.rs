//! Any text through the unit parsers every size and rate option uses (`model::units`): a
//! size (K/M/G = 1024ⁿ) or a rate (k/M/G = 1000ⁿ) parses or is refused without a panic, and a
//! parsed rate prints as text that parses back to the same value.
//! Run: `cargo fuzz run units` (from the repository root).
#![no_main]

use libfuzzer_sys::fuzz_target;
use model::units::{parse_size, split_number, BitRate};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = split_number(text);
    let _ = parse_size(text);
    let _ = model::human::size(parse_size(text).unwrap_or(0) as f64);
    if let Ok(rate) = BitRate::parse(text) {
        let _ = rate.bps_f64();
        let shown = rate.to_string();
        assert_eq!(BitRate::parse(&shown).ok(), Some(rate), "{text:?} printed as {shown:?}");
    }
});
