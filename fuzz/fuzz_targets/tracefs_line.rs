//! Any bytes as a tracefs line: the parser and the segmenter must never panic, and a line
//! that parses to a probe must come out of the trace as at most one row. The segment-cost
//! parser and its pairing (trace::cost) read the same lines and must not panic either.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut t = trace::Trace::new(9180);
    for line in text.lines() {
        let before = t.rows().len();
        let _ = t.line(line);
        assert!(t.rows().len() <= before + 1);
    }
    let _ = t.summary(0);
    for clock in [trace::cost::Clock::Seconds, trace::cost::Clock::Ticks { ns_per_tick: 0.385 }] {
        let mut out = trace::cost::Paired::default();
        let evs = trace::cost::events(text.lines(), clock, &mut out);
        trace::cost::pair_send(&evs, 100, &mut out);
        trace::cost::pair_receive(&evs, &mut out);
        assert!(out.intervals_ns.len() <= evs.len());
    }
});
