//! Events → segment rows of one test: which end's socket saw each event, which way the
//! segment went, which connection it belongs to, and the socket's sequence state relative to
//! the first value seen (so the table reads from 0, not from a random initial sequence).
//!
//! The filter in the kernel keeps only segments to or from the server's port; the client's
//! port names the connection. The test's control connection is the first connection seen
//! (the protocol opens it, and exchanges its hellos, before any data connection): its rows
//! are counted and left out.

use std::collections::HashMap;

use crate::line::{Event, Probe, Retransmit};

/// The end whose socket saw an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum End {
    /// The tcplab client's socket.
    Client,
    /// The tcplab server's socket.
    Server,
}

impl End {
    /// `client` / `server`.
    pub fn name(self) -> &'static str {
        match self {
            End::Client => "client",
            End::Server => "server",
        }
    }
}

/// Which way a segment crossed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dir {
    /// Client to server.
    Up,
    /// Server to client.
    Down,
}

impl Dir {
    /// `client→server` / `server→client`, as in a result's summary.
    pub fn name(self) -> &'static str {
        match self {
            Dir::Up => "client→server",
            Dir::Down => "server→client",
        }
    }

    /// `c2s` / `s2c`, for the table.
    pub fn short(self) -> &'static str {
        match self {
            Dir::Up => "c2s",
            Dir::Down => "s2c",
        }
    }
}

/// What a row records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A segment with payload arrived.
    Data,
    /// A segment without payload (an ACK or window update) arrived.
    Ack,
    /// The socket retransmitted a segment.
    Retransmit,
}

impl Kind {
    /// `data` / `ack` / `retx`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Data => "data",
            Kind::Ack => "ack",
            Kind::Retransmit => "retx",
        }
    }
}

/// The socket's state when a segment arrived (before processing it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SocketState {
    /// snd_una relative to the first seen on this socket.
    pub snd_una: u32,
    /// snd_nxt relative to the first snd_una seen on this socket.
    pub snd_nxt: u32,
    /// Window announced by the peer, bytes.
    pub snd_wnd: u32,
    /// Window this socket announces, bytes.
    pub rcv_wnd: u32,
    /// Congestion window, segments.
    pub cwnd: u32,
    /// Slow-start threshold, segments.
    pub ssthresh: u32,
    /// Smoothed RTT, µs.
    pub srtt_us: u32,
}

impl SocketState {
    /// Bytes sent and not yet acknowledged.
    pub fn outstanding(&self) -> u32 {
        self.snd_nxt.wrapping_sub(self.snd_una)
    }
}

/// One row of the segment table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// ns since the test's first traced event.
    pub t_ns: u64,
    /// The end whose socket saw it.
    pub end: End,
    /// Which way the segment went.
    pub dir: Dir,
    /// The connection: the client's port.
    pub conn: u16,
    /// What happened.
    pub kind: Kind,
    /// Payload bytes (0 for ACKs and retransmissions, whose length the event does not carry).
    pub len: u32,
    /// The socket's state (`None` for retransmissions).
    pub state: Option<SocketState>,
}

/// Turns one test's events into rows.
#[derive(Debug, Clone)]
pub struct Segmenter {
    server_port: u16,
    t0: Option<u64>,
    control: Option<u16>,
    base: HashMap<(End, u16), u32>,
    /// Events lost in the kernel, from its `LOST` lines.
    pub lost: u64,
    /// Events of the control connection (left out).
    pub control_events: u64,
    /// Events of other connections on the traced ports (left out).
    pub foreign_events: u64,
}

impl Segmenter {
    /// A segmenter for a test against `server_port`.
    pub fn new(server_port: u16) -> Segmenter {
        Segmenter {
            server_port,
            t0: None,
            control: None,
            base: HashMap::new(),
            lost: 0,
            control_events: 0,
            foreign_events: 0,
        }
    }

    /// The trace-clock time rows are relative to (the first event's), once one was seen.
    pub fn origin_ns(&self) -> Option<u64> {
        self.t0
    }

    /// The row of `event`, if it is a data connection's.
    pub fn push(&mut self, event: Event) -> Option<Segment> {
        match event {
            Event::Lost(n) => {
                self.lost = self.lost.saturating_add(n);
                None
            }
            Event::Probe(p) => self.probe(&p),
            Event::Retransmit(r) => self.retransmit(&r),
        }
    }

    fn probe(&mut self, p: &Probe) -> Option<Segment> {
        let (end, conn) = self.place(p.src.port(), p.dst.port())?;
        let dir = match end {
            End::Client => Dir::Down,
            End::Server => Dir::Up,
        };
        let t_ns = self.time(p.t_ns, conn)?;
        let base = *self.base.entry((end, conn)).or_insert(p.snd_una);
        let state = SocketState {
            snd_una: p.snd_una.wrapping_sub(base),
            snd_nxt: p.snd_nxt.wrapping_sub(base),
            snd_wnd: p.snd_wnd,
            rcv_wnd: p.rcv_wnd,
            cwnd: p.snd_cwnd,
            ssthresh: p.ssthresh,
            srtt_us: p.srtt_us,
        };
        let kind = if p.data_len > 0 { Kind::Data } else { Kind::Ack };
        Some(Segment { t_ns, end, dir, conn, kind, len: p.data_len, state: Some(state) })
    }

    fn retransmit(&mut self, r: &Retransmit) -> Option<Segment> {
        let (end, conn) = self.place(r.src.port(), r.dst.port())?;
        let dir = match end {
            End::Client => Dir::Up,
            End::Server => Dir::Down,
        };
        let t_ns = self.time(r.t_ns, conn)?;
        Some(Segment { t_ns, end, dir, conn, kind: Kind::Retransmit, len: 0, state: None })
    }

    /// The end and connection of a socket at `local` talking to `peer`.
    fn place(&mut self, local: u16, peer: u16) -> Option<(End, u16)> {
        match (local == self.server_port, peer == self.server_port) {
            (true, false) => Some((End::Server, peer)),
            (false, true) => Some((End::Client, local)),
            _ => {
                self.foreign_events += 1;
                None
            }
        }
    }

    /// The event's time since the first, or `None` for the control connection.
    fn time(&mut self, t_ns: u64, conn: u16) -> Option<u64> {
        let t0 = *self.t0.get_or_insert(t_ns);
        let control = *self.control.get_or_insert(conn);
        if conn == control {
            self.control_events += 1;
            return None;
        }
        Some(t_ns.saturating_sub(t0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::line::parse;

    const CAPTURED: &str = include_str!("../tests/fixtures/tracefs_lines.txt");

    fn rows(port: u16, first: &str) -> (Segmenter, Vec<Segment>) {
        let mut s = Segmenter::new(port);
        let lines = std::iter::once(first).chain(CAPTURED.lines());
        let rows = lines.filter_map(|l| parse(l).ok().flatten()).filter_map(|e| s.push(e)).collect();
        (s, rows)
    }

    #[test]
    fn the_loopback_capture_splits_into_ends_and_leaves_the_control_connection_out() {
        let (s, rows) = rows(9391, "");
        // Four lines on the control connection (35932), seven on the data one (35944); the
        // emulated path's six probes and three retransmissions are another test's ports.
        assert_eq!((s.control_events, rows.len(), s.foreign_events), (4, 7, 9));
        assert!(rows.iter().all(|r| r.conn == 35944));
        let data: Vec<&Segment> = rows.iter().filter(|r| r.kind == Kind::Data).collect();
        assert!(data.iter().all(|r| r.end == End::Server && r.dir == Dir::Up));
        assert_eq!(data.iter().map(|r| r.len).collect::<Vec<_>>(), vec![4096, 32768, 4096, 32768]);
        let acks: Vec<SocketState> =
            rows.iter().filter(|r| r.end == End::Client).filter_map(|r| r.state).collect();
        assert_eq!(acks.iter().map(SocketState::outstanding).collect::<Vec<_>>(), vec![4096, 32768, 4096]);
        assert_eq!(acks.iter().map(|a| a.snd_una).collect::<Vec<_>>(), vec![0, 4096, 36864]);
        assert!(acks.iter().all(|a| a.snd_wnd == 32768 && a.ssthresh == 8));
        assert_eq!(rows[0].t_ns, 3_714_450_626_000 - 3_714_442_494_000);
    }

    #[test]
    fn the_path_capture_has_data_acks_and_retransmissions_the_way_their_sockets_sent_them() {
        let control = "x-1 [000] ..... 3725.000000: tcp_probe: family=AF_INET src=198.18.0.1:1000 dest=198.18.0.2:37747 mark=0x0 data_len=44 snd_nxt=0x1 snd_una=0x1 snd_cwnd=10 ssthresh=7 snd_wnd=512 srtt=9 rcv_wnd=1024 sock_cookie=a skbaddr=0 skaddr=0";
        let (mut s, rows) = rows(37747, control);
        assert_eq!((s.control_events, rows.len(), s.foreign_events), (1, 9, 11));
        let kinds = |k: Kind| rows.iter().filter(|r| r.kind == k).count();
        assert_eq!((kinds(Kind::Data), kinds(Kind::Ack), kinds(Kind::Retransmit)), (3, 3, 3));
        let retx: Vec<&Segment> = rows.iter().filter(|r| r.kind == Kind::Retransmit).collect();
        assert!(retx.iter().all(|r| r.end == End::Client && r.dir == Dir::Up && r.state.is_none()));
        assert_eq!(retx.iter().map(|r| r.conn).collect::<Vec<_>>(), vec![36862, 36868, 36868]);
        let out: Vec<u32> = rows
            .iter()
            .filter_map(|r| r.state.filter(|_| r.end == End::Client))
            .map(|s| s.outstanding())
            .collect();
        assert_eq!(out, vec![487_976, 489_424, 490_872]);
        assert_eq!(s.lost, 0);
        assert_eq!(s.push(Event::Lost(3)), None);
        assert_eq!(s.lost, 3);
    }
}
