//! Coverage-guided fuzzing of everything a server decodes before and after the hello:
//! the fixed hello, then the byte stream as frames, each frame as a control message; a
//! message that decodes must encode to bytes that decode again (what a peer accepts, this
//! build can send: no field serialised in a shape its own decoder refuses).
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
                Ok(Some(frame)) => reencode(&frame),
                Ok(None) | Err(_) => break,
            }
        }
    }
});

fn reencode(frame: &[u8]) {
    let Ok(message) = Message::decode(frame) else { return };
    // Re-encoding may lengthen numbers past the frame limit; that is a refusal, not a bug.
    if let Ok(bytes) = message.encode() {
        assert!(Message::decode(&bytes[4..]).is_ok(), "{} does not decode after encoding", message.name());
    }
}
