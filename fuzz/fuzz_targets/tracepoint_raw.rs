//! Any bytes as a binary tracepoint record (a perf sample's raw data), decoded with layouts
//! read from `format` texts: the format parser and both decoders must never panic, and a
//! decoded record feeds the trace as at most one row.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use trace::raw::{Format, ProbeLayout, RetransmitLayout};

/// Field lines of the two events as this kernel writes them.
const FORMAT: &str = "\tfield:__u8 saddr[28];\toffset:8;\tsize:28;\tsigned:0;\n\
\tfield:__u8 daddr[28];\toffset:36;\tsize:28;\tsigned:0;\n\
\tfield:__u16 data_len;\toffset:76;\tsize:2;\tsigned:0;\n\
\tfield:__u32 snd_nxt;\toffset:80;\tsize:4;\tsigned:0;\n\
\tfield:__u32 snd_una;\toffset:84;\tsize:4;\tsigned:0;\n\
\tfield:__u32 snd_cwnd;\toffset:88;\tsize:4;\tsigned:0;\n\
\tfield:__u32 ssthresh;\toffset:92;\tsize:4;\tsigned:0;\n\
\tfield:__u32 snd_wnd;\toffset:96;\tsize:4;\tsigned:0;\n\
\tfield:__u32 srtt;\toffset:100;\tsize:4;\tsigned:0;\n\
\tfield:__u32 rcv_wnd;\toffset:104;\tsize:4;\tsigned:0;\n\
\tfield:__u64 sock_cookie;\toffset:112;\tsize:8;\tsigned:0;\n";

const RETRANSMIT: &str = "\tfield:__u16 sport;\toffset:28;\tsize:2;\tsigned:0;\n\
\tfield:__u16 dport;\toffset:30;\tsize:2;\tsigned:0;\n\
\tfield:__u16 family;\toffset:32;\tsize:2;\tsigned:0;\n\
\tfield:__u8 saddr[4];\toffset:34;\tsize:4;\tsigned:0;\n\
\tfield:__u8 daddr[4];\toffset:38;\tsize:4;\tsigned:0;\n\
\tfield:__u8 saddr_v6[16];\toffset:42;\tsize:16;\tsigned:0;\n\
\tfield:__u8 daddr_v6[16];\toffset:58;\tsize:16;\tsigned:0;\n";

/// The layouts of the two built-in formats, parsed once: they do not depend on the input,
/// and parsing them for every input took most of this target's time.
fn layouts() -> &'static (ProbeLayout, RetransmitLayout) {
    static LAYOUTS: OnceLock<(ProbeLayout, RetransmitLayout)> = OnceLock::new();
    LAYOUTS.get_or_init(|| {
        match (ProbeLayout::of(&Format::parse(FORMAT)), RetransmitLayout::of(&Format::parse(RETRANSMIT))) {
            (Ok(probe), Ok(retx)) => (probe, retx),
            _ => panic!("the built-in formats parse"),
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let _ = ProbeLayout::of(&Format::parse(&String::from_utf8_lossy(data)));
    let (probe, retx) = layouts();
    let mut t = trace::Trace::new(9180);
    for e in [probe.decode(1, data), retx.decode(2, data)].into_iter().flatten() {
        let before = t.rows().len();
        let _ = t.event(e);
        assert!(t.rows().len() <= before + 1);
    }
});
