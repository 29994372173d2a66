//! The native port's acceptor as a state machine (`engine::server::pending::Progress` with
//! the native greeting): any bytes, arriving in any chunks (the first input byte seeds the
//! chunk sizes), are read as a hello, answered at most once with a server hello, then read as
//! the authentication, which a keyed server judges. Nothing may panic; the acceptor never
//! reads past what the stage under way needs; a complete greeting is a data hello, an
//! unanswered control hello, or a hello and an authentication; made-up bytes never
//! authenticate with a key.
//! Run: `cargo fuzz run native_greeting` (from the repository root).
#![no_main]

use engine::auth::{judge, keys};
use engine::server::pending::{Progress, Step};
use engine::server::NATIVE_GREETING as G;
use libfuzzer_sys::fuzz_target;
use wire::{auth::CLIENT_AUTH_LEN, DATA_HELLO_LEN, HELLO_LEN};

const KEYS: &str = "key lab 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n";

fuzz_target!(|data: &[u8]| {
    let Some((&seed, mut rest)) = data.split_first() else { return };
    let mut p = Progress::new(&G);
    let (mut answers, mut chunk) = (0, u32::from(seed) | 1);
    let done = loop {
        let room = p.need(&G) - p.got;
        assert!(room > 0, "asked to read nothing before the greeting is complete");
        chunk = chunk.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let n = (chunk as usize % 7 + 1).min(room).min(rest.len());
        if n == 0 {
            break false; // the peer closed first
        }
        p.buf[p.got..p.got + n].copy_from_slice(&rest[..n]);
        rest = &rest[n..];
        match p.arrived(&G, n) {
            Step::More => {}
            Step::Answer(a) => {
                answers += 1;
                assert_eq!((answers, p.got, a.len()), (1, HELLO_LEN, HELLO_LEN));
            }
            Step::Done => break true,
        }
    };
    assert!(p.got <= p.buf.len());
    if !done {
        return;
    }
    assert!(p.complete(&G));
    let whole = [HELLO_LEN, DATA_HELLO_LEN, HELLO_LEN + CLIENT_AUTH_LEN];
    assert!(whole.contains(&p.got), "a greeting of {} bytes", p.got);
    assert_eq!(p.second.is_some(), p.got == HELLO_LEN + CLIENT_AUTH_LEN);
    let Some(stage) = &p.second else { return };
    let Ok(ring) = keys::parse(KEYS) else { return };
    let ns: [u8; 32] = stage.answer[HELLO_LEN - 32..].try_into().unwrap_or([0; 32]);
    let nc: [u8; 32] = p.buf[HELLO_LEN - 32..HELLO_LEN].try_into().unwrap_or([0; 32]);
    let judged = judge(Some(&ring), (&nc, &ns), &p.buf[HELLO_LEN..p.got]);
    assert!(judged.peer.is_err(), "made-up bytes authenticated");
});
