//! Any text as a server's keys file (`tcplab server --keys`), a client's key file
//! (`--key-file`) and a `TCPLAB_KEY` value: each parses or is refused with a message, never a
//! panic; a parsed keyring answers lookups of every id it holds.
//! Run: `cargo fuzz run key_file` (from the repository root).
#![no_main]

use engine::auth::{keys, ClientKey};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(ring) = keys::parse(text) {
        let _ = (ring.len(), ring.is_empty(), ring.class("anonymous"));
    }
    let _ = ClientKey::from_file_text(text);
    let _ = ClientKey::from_pair(text);
});
