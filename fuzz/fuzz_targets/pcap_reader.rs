//! Any bytes as a pcap file read back by `--trace` (the segment table is built from the
//! capture files): the file header, each record header and each packet's IPv4/IPv6 + TCP
//! headers (`wire::pcap`, `wire::tcpip`) parse or are refused without a panic, and a parsed
//! segment's length is bounded by its IP header (64 KiB) or, where that says 0 (BIG TCP), by
//! the record's original length.
//! Run: `cargo fuzz run pcap_reader` (from the repository root).
#![no_main]

use libfuzzer_sys::fuzz_target;
use wire::pcap::{parse_file_header, FILE_HEADER_BYTES, RECORD_HEADER_BYTES};

fuzz_target!(|data: &[u8]| {
    let Some(info) = parse_file_header(data) else { return };
    let mut at = FILE_HEADER_BYTES;
    while let Some(h) = data.get(at..).and_then(|rest| info.parse_record_header(rest)) {
        at += RECORD_HEADER_BYTES;
        let end = at.saturating_add(h.captured_len as usize).min(data.len());
        if let Some(seg) = wire::tcpip::parse(&data[at..end], h.original_len) {
            let bound = h.original_len.max(65_535 + 40);
            assert!(seg.payload_len <= bound, "{seg:?} from {h:?}");
        }
        at = end;
    }
});
