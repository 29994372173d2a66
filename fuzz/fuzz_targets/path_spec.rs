//! Any text as an emulated path spec (`--path`, `emu` specs): the parser refuses or accepts
//! without panicking, and an accepted path builds both directions' links.
//! Run: `cargo fuzz run path_spec` (from the repository root).
#![no_main]

use emu::{Direction, PathConfig};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(path) = PathConfig::parse(text) else { return };
    for direction in [Direction::Up, Direction::Down] {
        let _ = path.link(direction);
        let _link: emu::Link<Vec<u8>> = path.build_link(direction, 1);
    }
});
