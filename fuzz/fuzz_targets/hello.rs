//! Coverage-guided fuzzing of the fixed-layout hello, the only thing the server's acceptor
//! reads from an unknown peer: any bytes decode or are refused without a panic, a hello that
//! decodes encodes back to the same 44 bytes (reserved bytes aside), and a data hello's token
//! survives its hex form (how `accepted` carries it).
//! Run: `cargo fuzz run hello` (from the repository root).
#![no_main]

use libfuzzer_sys::fuzz_target;
use wire::{Hello, HelloKind, Token, HELLO_LEN};

fuzz_target!(|data: &[u8]| {
    // As sent, and behind the magic (which a byte-wise search rarely finds by itself).
    check(data);
    check(&[b"TCPLAB", data].concat());
});

fn check(data: &[u8]) {
    let Ok(hello) = Hello::decode(data) else { return };
    let bytes = hello.encode();
    assert_eq!(Hello::decode(&bytes), Ok(hello));
    // Only the reserved bytes (7, 10..12 and a data hello's tail) may differ from the input.
    let kept = |i: usize| !matches!(i, 7 | 10 | 11) && !(matches!(hello.kind, HelloKind::Data { .. }) && i >= 32);
    for i in (0..HELLO_LEN).filter(|&i| kept(i)) {
        assert_eq!(bytes[i], data[i], "byte {i} changed in a round trip");
    }
    if let HelloKind::Data { token, .. } = hello.kind {
        assert_eq!(Token::from_hex(&token.to_hex()), Some(token));
    }
    let _ = Token::from_hex(&String::from_utf8_lossy(&data[HELLO_LEN..]));
}
