//! Coverage-guided fuzzing of everything an iperf3-compatible peer decodes: the cookie, state
//! bytes, frame heads (bounded before allocation), parameter and results documents and UDP
//! headers. A document that decodes must encode to bytes that decode to the same value.
//! Run: `cargo fuzz run iperf3_codec` (from the repository root).
#![no_main]

use libfuzzer_sys::fuzz_target;
use wire::iperf3::{frame, udp, Cookie, Params, Results, State, COOKIE_LEN};

fuzz_target!(|data: &[u8]| {
    let _ = Cookie::decode(data.get(..COOKIE_LEN).unwrap_or(data));
    if let Some(&b) = data.first() {
        if let Ok(s) = State::from_byte(b) {
            assert_eq!(s.to_byte(), b);
        }
    }
    if let Some(h) = data.get(..4) {
        if let Ok(frame::Head::Body(len)) = frame::decode_head([h[0], h[1], h[2], h[3]], frame::MAX_PARAMS_BYTES) {
            assert!(len > 0 && len <= frame::MAX_PARAMS_BYTES);
        }
    }
    for wide in [false, true] {
        let _ = udp::Header::read(data, wide);
    }
    if let Ok(p) = Params::decode(data) {
        let again = p.encode().ok().and_then(|b| Params::decode(&b).ok());
        assert_eq!(again.as_ref(), Some(&p), "parameters do not survive re-encoding");
    }
    if let Ok(r) = Results::decode(data) {
        let bytes = r.encode();
        assert!(bytes.is_ok_and(|b| Results::decode(&b).is_ok()), "results do not decode after encoding");
    }
});
