//! Any bytes as a binary tracefs ring-buffer page (`trace_pipe_raw`): the decoder must never
//! panic, count exactly the events it hands over, and the trace must take them.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (header, probe, retransmit) = (
        include_str!("../../crates/trace/tests/fixtures/tracefs_format/header_page"),
        include_str!("../../crates/trace/tests/fixtures/tracefs_format/tcp_probe"),
        include_str!("../../crates/trace/tests/fixtures/tracefs_format/tcp_retransmit_skb"),
    );
    let Ok(d) = trace::raw::Decoder::new(header, probe, retransmit) else { return };
    let mut t = trace::Trace::new(9391);
    let mut n = 0u64;
    let sum = d.page(data, &mut |e| {
        n += 1;
        let _ = t.event(e);
    });
    assert_eq!(sum.events, n);
    let _ = t.summary(0);
});
