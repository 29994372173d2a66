//! The wire segment table (`NN-<test>.segments.csv` and `.segments.ndjson`): one row per
//! captured segment, the schema in [`COLUMNS`], the same cells in both formats. Strings
//! only: the caller writes them where it wants.

use crate::wire::WireRow;

/// The columns, in order, with what each holds (written to `columns.txt` of a trace
/// directory and checked against the header by the tests).
pub const COLUMNS: [(&str, &str); 17] = [
    ("t_us", "µs since the test's first captured segment (capture clock: realtime)"),
    ("at", "where it was captured: client or server (the device of that end), host (loopback)"),
    ("dir", "which way it went: c2s or s2c"),
    ("conn", "the connection: the client's port"),
    ("seq", "sequence number relative to the direction's SYN (the SYN is 0, as tshark shows it)"),
    ("len", "payload bytes (a GSO/GRO super-packet counts whole)"),
    ("ack", "acknowledgement number relative to the other direction's SYN; empty without ACK"),
    ("wnd", "the window this segment announces, bytes, scaled by its sender's window-scale factor"),
    ("peer_wnd", "the window last announced to this segment's sender, bytes (scaled); empty before one"),
    ("outstanding", "bytes sent and not yet acknowledged at the capture point: for a segment with payload its own direction after it, for one without the direction it acknowledges"),
    ("flags", "TCP flags: S(YN) A(CK) P(SH) F(IN) R(ST), `.` for none"),
    ("retx", "1 for a retransmission, as tshark's analysis classifies one: the segment carries sequence space this capture point saw already, or fills a gap that opened 3 ms or more before"),
    ("ooo", "1 for a segment out of order: below the highest sequence sent, filling a gap younger than 3 ms (overtaken on the way, as between cores on loopback; not resent)"),
    ("gso_size", "the segment size TSO/GSO cuts this super-packet to (the peer's MSS less options); empty for a single segment"),
    ("cwnd", "the sending socket's congestion window, segments, at its last tcp:tcp_probe before the segment"),
    ("srtt_us", "the sending socket's smoothed RTT, µs, from the same probe"),
    ("snd_wnd", "the window the sending socket held as announced by its peer, bytes, from the same probe"),
];

/// The CSV header line (no newline).
pub fn header() -> String {
    COLUMNS.iter().map(|(name, _)| *name).collect::<Vec<_>>().join(",")
}

/// The cells of `r` in column order; times relative to `origin_unix_ns`.
fn cells(r: &WireRow, origin_unix_ns: u64) -> [String; 17] {
    let t = r.unix_ns.saturating_sub(origin_unix_ns);
    let opt = |v: Option<u32>| v.map(|v| v.to_string()).unwrap_or_default();
    let p = r.probe;
    [
        format!("{}.{:03}", t / 1000, t % 1000),
        r.at.name().into(),
        r.dir.short().into(),
        r.conn.to_string(),
        r.seq.to_string(),
        r.len.to_string(),
        opt(r.ack),
        r.wnd.to_string(),
        opt(r.peer_wnd),
        opt(r.outstanding),
        wire::tcpip::TcpSegment { flags: r.flags, ..Default::default() }.flag_letters(),
        u8::from(r.retransmission).to_string(),
        u8::from(r.out_of_order).to_string(),
        opt(r.gso_size),
        opt(p.map(|p| p.cwnd)),
        opt(p.map(|p| p.srtt_us)),
        opt(p.map(|p| p.snd_wnd)),
    ]
}

/// One CSV row (no newline).
pub fn csv_row(r: &WireRow, origin_unix_ns: u64) -> String {
    cells(r, origin_unix_ns).join(",")
}

/// One NDJSON line (no newline): numbers as numbers, empty cells as `null`.
pub fn json_row(r: &WireRow, origin_unix_ns: u64) -> String {
    let fields: Vec<String> = COLUMNS
        .iter()
        .zip(cells(r, origin_unix_ns))
        .map(|((name, _), v)| {
            let value = match *name {
                "at" | "dir" | "flags" => format!("\"{v}\""),
                _ if v.is_empty() => "null".into(),
                _ => v,
            };
            format!("\"{name}\":{value}")
        })
        .collect();
    format!("{{{}}}", fields.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segment::Dir;
    use crate::wire::{Point, ProbeState};

    fn row() -> WireRow {
        WireRow {
            unix_ns: 1_000_001_234_567,
            at: Point::Client,
            dir: Dir::Up,
            conn: 40000,
            seq: 1,
            len: 2896,
            ack: Some(1),
            wnd: 64128,
            peer_wnd: Some(65160),
            outstanding: Some(4344),
            flags: 0x18,
            retransmission: false,
            out_of_order: false,
            gso_size: Some(1448),
            probe: Some(ProbeState { cwnd: 10, srtt_us: 120, snd_wnd: 65160 }),
        }
    }

    #[test]
    fn csv_and_json_rows_carry_every_column() {
        let r = row();
        assert_eq!(
            csv_row(&r, 1_000_000_000_000),
            "1234.567,client,c2s,40000,1,2896,1,64128,65160,4344,AP,0,0,1448,10,120,65160"
        );
        assert_eq!(header().split(',').count(), csv_row(&r, 0).split(',').count());
        let bare = WireRow { ack: None, probe: None, gso_size: None, flags: 0x02, ..r };
        assert_eq!(
            csv_row(&bare, 1_000_000_000_000),
            "1234.567,client,c2s,40000,1,2896,,64128,65160,4344,S,0,0,,,,"
        );
        let j = json_row(&bare, 1_000_000_000_000);
        assert!(j.starts_with("{\"t_us\":1234.567,\"at\":\"client\",\"dir\":\"c2s\""), "{j}");
        assert!(
            j.contains("\"ack\":null") && j.contains("\"flags\":\"S\"") && j.ends_with("\"snd_wnd\":null}"),
            "{j}"
        );
    }
}
