//! Coverage-guided fuzzing of what a UDP receiver decodes: every datagram it reads goes through
//! `wire::udp::classify`, whatever its length or contents, and then a header round trip. The
//! input, cut into 16-byte headers, is then fed to the receiver's account
//! (`stats::datagrams::Account`) as datagrams arriving 1 µs apart — sequence numbers and send
//! times as a hostile or broken sender picks them; an end marker closes an interval. The
//! account never panics or overflows, and its counts stay consistent: distinct arrivals never
//! outnumber the sequence numbers below the highest one seen, and no interval receives more
//! than the whole test.
//! Run: `cargo fuzz run udp_datagram` (from the repository root).
#![no_main]

use libfuzzer_sys::fuzz_target;
use stats::datagrams::{interval, Account};
use wire::udp::{classify, Datagram, HEADER_LEN};

fuzz_target!(|data: &[u8]| {
    if let Ok(Datagram::Data(h)) = classify(data) {
        let mut buf = [0u8; HEADER_LEN];
        assert!(h.write(&mut buf));
        assert_eq!(classify(&buf), Ok(Datagram::Data(h)));
    }
    let mut account = Account::new();
    let mut before = account.counts();
    for (i, chunk) in data.chunks_exact(HEADER_LEN).enumerate() {
        match classify(chunk) {
            Ok(Datagram::Data(h)) => {
                account.record(h.seq, h.sent_ns, i as u64 * 1000);
            }
            Ok(Datagram::End { .. }) => {
                let now = account.counts();
                let iv = interval(&now, &before);
                assert!(iv.received <= now.received);
                before = now;
                account.mark_interval();
            }
            _ => {}
        }
    }
    let c = account.counts();
    assert!(c.duplicates <= c.received, "{c:?}");
    // Distinct arrivals cannot outnumber the sequence numbers below the highest one seen.
    assert!(account.unique() <= account.next_expected(), "{c:?}, next {}", account.next_expected());
    assert!(c.jitter_us.is_finite() && c.jitter_us >= 0.0, "{c:?}");
});
