//! Coverage-guided fuzzing of what a UDP receiver decodes: every datagram it reads goes through
//! `wire::udp::classify`, whatever its length or contents, and then a header round trip.
//! Run: `cargo fuzz run udp_datagram` (from the repository root).
#![no_main]

use libfuzzer_sys::fuzz_target;
use wire::udp::{classify, Datagram, HEADER_LEN};

fuzz_target!(|data: &[u8]| {
    if let Ok(Datagram::Data(h)) = classify(data) {
        let mut buf = [0u8; HEADER_LEN];
        assert!(h.write(&mut buf));
        assert_eq!(classify(&buf), Ok(Datagram::Data(h)));
    }
});
