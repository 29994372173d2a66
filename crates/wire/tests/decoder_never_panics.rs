//! Arbitrary bytes through the hello, frame and message decoders: errors, never panics.
//! (The coverage-guided versions of this live in `fuzz/`.)
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

use proptest::prelude::*;
use wire::{FrameDecoder, Hello, Message};

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048), split in 0usize..2048) {
        let _ = Hello::decode(&bytes);
        let _ = wire::DataHello::decode(&bytes);
        if let Ok(a) = wire::auth::ClientAuth::decode(&bytes) {
            prop_assert_eq!(&a.encode()[..], &bytes[..wire::auth::CLIENT_AUTH_LEN]);
        }
        if let Ok(a) = wire::auth::ServerAuth::decode(&bytes) {
            prop_assert_eq!(&a.encode()[..], &bytes[..wire::auth::SERVER_AUTH_LEN]);
        }
        let mut d = FrameDecoder::new();
        let split = split.min(bytes.len());
        d.push(&bytes[..split]);
        while let Ok(Some(f)) = d.next_frame() {
            let _ = Message::decode(&f);
        }
        d.push(&bytes[split..]);
        while let Ok(Some(f)) = d.next_frame() {
            let _ = Message::decode(&f);
        }
        prop_assert!(d.buffered() <= bytes.len());
    }

    #[test]
    fn json_shaped_input_never_panics(s in r#"\{"type":"(setup|start|stop|error|results)"[ -~]{0,200}\}"#) {
        let _ = Message::decode(s.as_bytes());
    }
}

proptest! {
    #[test]
    fn arbitrary_datagrams_classify_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..128)) {
        if let Ok(wire::Datagram::Data(h)) = wire::udp::classify(&bytes) {
            prop_assert!(h.seq < 1 << 63);
            let mut buf = [0u8; wire::udp::HEADER_LEN];
            prop_assert!(h.write(&mut buf));
            prop_assert_eq!(wire::udp::classify(&buf), Ok(wire::Datagram::Data(h)));
        }
    }
}
