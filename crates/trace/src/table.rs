//! The per-segment table (`segments.csv`): one row per traced event, the schema in
//! [`COLUMNS`]. Strings only: the caller writes them where it wants.

use crate::segment::Segment;

/// The columns, in order, with what each holds (written to the README of a trace directory
/// and checked against the header by the tests).
pub const COLUMNS: [(&str, &str); 14] = [
    ("t_us", "µs since the test's first traced event (trace clock: mono)"),
    ("end", "whose socket saw the event: client or server"),
    ("dir", "which way the segment went: c2s or s2c"),
    ("conn", "the connection: the client's port"),
    ("kind", "data (a segment with payload arrived), ack (one without arrived), retx (the socket retransmitted)"),
    ("len", "payload bytes of the arriving segment (a GRO/GSO super-packet counts as one)"),
    ("snd_una", "the socket's oldest unacknowledged byte, relative to the first seen, before the segment is processed"),
    ("snd_nxt", "the socket's next byte to send, relative to the same origin"),
    ("outstanding", "snd_nxt − snd_una: bytes sent and not yet acknowledged"),
    ("snd_wnd", "the window the peer announced, bytes (scaled)"),
    ("rcv_wnd", "the window this socket announces, bytes"),
    ("cwnd", "congestion window, segments"),
    ("ssthresh", "slow-start threshold, segments"),
    ("srtt_us", "smoothed RTT, µs"),
];

/// The header line (no newline).
pub fn header() -> String {
    COLUMNS.iter().map(|(name, _)| *name).collect::<Vec<_>>().join(",")
}

/// One row (no newline); a retransmission has no socket state, its columns are empty.
pub fn row(s: &Segment) -> String {
    let head = format!(
        "{}.{:03},{},{},{},{},{}",
        s.t_ns / 1000,
        s.t_ns % 1000,
        s.end.name(),
        s.dir.short(),
        s.conn,
        s.kind.name(),
        s.len
    );
    match s.state {
        Some(st) => format!(
            "{head},{},{},{},{},{},{},{},{}",
            st.snd_una,
            st.snd_nxt,
            st.outstanding(),
            st.snd_wnd,
            st.rcv_wnd,
            st.cwnd,
            st.ssthresh,
            st.srtt_us
        ),
        None => format!("{head},,,,,,,,"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segment::{Dir, End, Kind, SocketState};

    #[test]
    fn rows_have_as_many_cells_as_the_header() {
        let state = SocketState {
            snd_una: 4096,
            snd_nxt: 8192,
            snd_wnd: 16384,
            rcv_wnd: 65536,
            cwnd: 10,
            ssthresh: 7,
            srtt_us: 13,
        };
        let ack = Segment {
            t_ns: 1_234_567,
            end: End::Client,
            dir: Dir::Down,
            conn: 40000,
            kind: Kind::Ack,
            len: 0,
            state: Some(state),
        };
        assert_eq!(row(&ack), "1234.567,client,s2c,40000,ack,0,4096,8192,4096,16384,65536,10,7,13");
        let retx = Segment { kind: Kind::Retransmit, state: None, dir: Dir::Up, ..ack };
        assert_eq!(row(&retx), "1234.567,client,c2s,40000,retx,0,,,,,,,,");
        let cells = header().split(',').count();
        assert_eq!(cells, 14);
        assert!([row(&ack), row(&retx)].iter().all(|r| r.split(',').count() == cells));
    }
}
