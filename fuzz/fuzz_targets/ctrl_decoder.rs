//! Coverage-guided fuzzing of everything a server decodes before and after the hello:
//! the fixed hello, then the byte stream as frames, each frame as a control message.
//! Run: `cargo fuzz run ctrl_decoder` (from the repository root).
#![no_main]

use libfuzzer_sys::fuzz_target;
use wire::{FrameDecoder, Hello, Message, HELLO_LEN};

fuzz_target!(|data: &[u8]| {
    let _ = Hello::decode(data);
    let body = data.get(HELLO_LEN..).unwrap_or(&[]);
    let mut decoder = FrameDecoder::new();
    // Feed in two pieces so that partial headers and bodies are exercised too.
    let split = body.first().map_or(0, |&b| usize::from(b) % (body.len() + 1));
    for piece in [&body[..split], &body[split..]] {
        decoder.push(piece);
        loop {
            match decoder.next_frame() {
                Ok(Some(frame)) => {
                    let _ = Message::decode(&frame);
                }
                Ok(None) | Err(_) => break,
            }
        }
    }
});
