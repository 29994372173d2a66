//! What a test was asked to do. The same value travels to the server, into the archive and
//! into reports; sweeps vary its fields by name.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::sweep::ParamValue;

/// One stable kebab-case id per test type (STYLE.md), used everywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TestKind {
    /// TCP bulk transfer (netperf TCP_STREAM / TCP_MAERTS).
    TcpStream,
    /// TCP request/response (netperf TCP_RR).
    TcpRr,
    /// TCP connect/request/response (netperf TCP_CRR).
    TcpCrr,
    /// Paced UDP datagrams with loss, reordering, duplicate and jitter accounting.
    UdpStream,
    /// UDP request/response (netperf UDP_RR).
    UdpRr,
    /// A file sent through TCP, verified, with disk and network time apart.
    File,
    /// Per-segment send and receive stack time against segment size (seed 004, Figure 4).
    SegmentCost,
}

impl TestKind {
    /// The kebab-case id.
    pub fn id(self) -> &'static str {
        match self {
            TestKind::TcpStream => "tcp-stream",
            TestKind::TcpRr => "tcp-rr",
            TestKind::TcpCrr => "tcp-crr",
            TestKind::UdpStream => "udp-stream",
            TestKind::UdpRr => "udp-rr",
            TestKind::File => "file",
            TestKind::SegmentCost => "segment-cost",
        }
    }

    /// Every kind, in the order the registry lists them.
    pub const ALL: [TestKind; 7] = [
        TestKind::TcpStream,
        TestKind::TcpRr,
        TestKind::TcpCrr,
        TestKind::UdpStream,
        TestKind::UdpRr,
        TestKind::File,
        TestKind::SegmentCost,
    ];

    /// The kind whose id is `id`.
    pub fn from_id(id: &str) -> Option<TestKind> {
        TestKind::ALL.into_iter().find(|k| k.id() == id)
    }
}

/// Which way the bulk data flows, seen from the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// Client sends, server receives (TCP_STREAM).
    Forward,
    /// Server sends, client receives (TCP_MAERTS, iperf3 `-R`).
    Reverse,
    /// Both at once, one set of streams each way (iperf3 `--bidir`).
    Bidir,
}

/// The parameters of one test. Sizes in bytes, times in milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestSpec {
    /// Test type.
    pub test: TestKind,
    /// Time limit; 0 when the test is limited by `bytes_limit` only.
    pub duration_ms: u64,
    /// Total bytes to send over all streams of one direction (`-n`, or `-k` × `-l`).
    pub bytes_limit: Option<u64>,
    /// Parallel streams (or flows) per direction.
    pub parallel: u32,
    /// Data direction (stream tests).
    pub direction: Direction,
    /// Bytes per write (`-l`).
    pub send_len: u32,
    /// Bytes per read (`--recv-len`).
    pub recv_len: u32,
    /// Request size (rr, crr).
    pub request_len: u32,
    /// Response size (rr, crr).
    pub response_len: u32,
    /// Transactions kept in flight per flow (rr, udp-rr); datagrams per pacing step (udp).
    pub burst: u32,
    /// TCP_NODELAY on every data socket.
    pub nodelay: bool,
    /// TCP_MAXSEG requested.
    pub mss: Option<u32>,
    /// Congestion control requested on both ends.
    pub congestion: Option<String>,
    /// SO_SNDBUF requested on the client's data sockets.
    pub sndbuf: Option<u32>,
    /// SO_RCVBUF requested on the client's data sockets.
    pub rcvbuf: Option<u32>,
    /// SO_SNDBUF requested on the server's data sockets.
    pub remote_sndbuf: Option<u32>,
    /// SO_RCVBUF requested on the server's data sockets.
    pub remote_rcvbuf: Option<u32>,
    /// Interval report period; 0 = no interval reports.
    pub interval_ms: u64,
    /// Leading time excluded from summaries (`-O`).
    pub omit_ms: u64,
    /// CPU the client's worker threads are pinned to (`-A N`).
    #[serde(default)]
    pub cpu_local: Option<u32>,
    /// CPU the server's worker threads are pinned to (`-A N,M`).
    #[serde(default)]
    pub cpu_remote: Option<u32>,
    /// Spin on non-blocking reads instead of sleeping in them (`--busy-poll`, both ends).
    #[serde(default)]
    pub busy_poll: bool,
    /// Target rate of each sending stream, bit/s of payload (`-b`; 0 = as fast as possible): UDP
    /// datagrams, or a TCP stream's writes (paced as iperf3's `-b` on TCP).
    #[serde(default)]
    pub rate_bps: u64,
    /// UDP: send without UDP checksums (SO_NO_CHECK; IPv4 only).
    #[serde(default)]
    pub no_checksum: bool,
    /// UDP: no GSO/GRO and no sendmmsg/recvmmsg batches (one datagram per call).
    #[serde(default)]
    pub no_offload: bool,
    /// Ask the server to record its end of the segment flow too (`--trace` against a
    /// `tcplab server --allow-trace`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trace_server: bool,
    /// Settings only one test type has, by name (e.g. a file test's sink), declared and
    /// checked by that test type (engine's registry); empty for the others.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: BTreeMap<String, ParamValue>,
}

impl TestSpec {
    /// A spec with iperf3-like defaults for `test`: 10 s, one stream, 128 KiB writes. The
    /// test type's own defaults (engine's registry) start from this.
    pub fn new(test: TestKind) -> TestSpec {
        TestSpec {
            test,
            duration_ms: 10_000,
            bytes_limit: None,
            parallel: 1,
            direction: Direction::Forward,
            send_len: 128 * 1024,
            recv_len: 128 * 1024,
            request_len: 1,
            response_len: 1,
            burst: 1,
            nodelay: false,
            mss: None,
            congestion: None,
            sndbuf: None,
            rcvbuf: None,
            remote_sndbuf: None,
            remote_rcvbuf: None,
            interval_ms: 1000,
            omit_ms: 0,
            cpu_local: None,
            cpu_remote: None,
            busy_poll: false,
            rate_bps: 0,
            no_checksum: false,
            no_offload: false,
            trace_server: false,
            options: BTreeMap::new(),
        }
    }

    /// Whether the client sends bulk data in this test.
    pub fn client_sends(&self) -> bool {
        matches!(self.direction, Direction::Forward | Direction::Bidir)
    }

    /// Whether the server sends bulk data in this test.
    pub fn server_sends(&self) -> bool {
        matches!(self.direction, Direction::Reverse | Direction::Bidir)
    }

    /// The socket buffers `end` asks for on its data sockets (the one place that says whose
    /// buffer field is whose).
    pub fn buffers(&self, end: End) -> BufferSizes {
        match end {
            End::Client => BufferSizes { send: self.sndbuf, receive: self.rcvbuf },
            End::Server => BufferSizes { send: self.remote_sndbuf, receive: self.remote_rcvbuf },
        }
    }

    /// Sets one socket buffer `end` asks for (`None`: the kernel's default).
    pub fn set_buffer(&mut self, end: End, which: Buffer, bytes: Option<u32>) {
        let mut b = self.buffers(end);
        match which {
            Buffer::Send => b.send = bytes,
            Buffer::Receive => b.receive = bytes,
        }
        self.set_buffers(end, b);
    }

    /// Sets the socket buffers `end` asks for.
    pub fn set_buffers(&mut self, end: End, b: BufferSizes) {
        match end {
            End::Client => (self.sndbuf, self.rcvbuf) = (b.send, b.receive),
            End::Server => (self.remote_sndbuf, self.remote_rcvbuf) = (b.send, b.receive),
        }
    }
}

/// Which end of a test: the one that connects, or the one that accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum End {
    /// The `tcplab stream/rr/crr/run` side.
    Client,
    /// The `tcplab server` side.
    Server,
}

impl End {
    /// Both ends, client first.
    pub const ALL: [End; 2] = [End::Client, End::Server];
}

/// One of a socket's two buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Buffer {
    /// SO_SNDBUF.
    Send,
    /// SO_RCVBUF.
    Receive,
}

impl Buffer {
    /// Both buffers, send first (the order reports list them in).
    pub const ALL: [Buffer; 2] = [Buffer::Send, Buffer::Receive];

    /// The setting that asks for this buffer on `end`'s data sockets: its flag, label and
    /// limit are this buffer's.
    pub fn setting(self, end: End) -> &'static crate::Setting {
        use crate::setting as s;
        match (end, self) {
            (End::Client, Buffer::Send) => &s::SNDBUF,
            (End::Client, Buffer::Receive) => &s::RCVBUF,
            (End::Server, Buffer::Send) => &s::REMOTE_SNDBUF,
            (End::Server, Buffer::Receive) => &s::REMOTE_RCVBUF,
        }
    }

    /// Its name in reports: the client setting's label (the socket option's short name).
    pub fn name(self) -> &'static str {
        self.setting(End::Client).label
    }
}

/// The socket buffers one end asks for, bytes; `None` leaves the OS default (and autotuning).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BufferSizes {
    /// SO_SNDBUF.
    pub send: Option<u32>,
    /// SO_RCVBUF.
    pub receive: Option<u32>,
}

impl BufferSizes {
    /// Both buffers at `bytes`, as iperf3's `-w` asks.
    pub fn both(bytes: Option<u32>) -> BufferSizes {
        BufferSizes { send: bytes, receive: bytes }
    }

    /// The size asked for `b`.
    pub fn get(self, b: Buffer) -> Option<u32> {
        match b {
            Buffer::Send => self.send,
            Buffer::Receive => self.receive,
        }
    }

    /// Each buffer asked for raised to `floor` bytes at least; one not asked for stays the OS
    /// default.
    pub fn at_least(self, floor: u32) -> BufferSizes {
        BufferSizes { send: self.send.map(|n| n.max(floor)), receive: self.receive.map(|n| n.max(floor)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_end_asks_for_its_own_buffers_through_its_own_settings() {
        let mut spec = TestSpec::new(TestKind::TcpStream);
        spec.set_buffers(End::Client, BufferSizes { send: Some(1), receive: Some(2) });
        spec.set_buffers(End::Server, BufferSizes { send: Some(3), receive: None });
        for end in End::ALL {
            for b in Buffer::ALL {
                let via_table = (b.setting(end).get)(&spec);
                let direct = spec.buffers(end).get(b).map(|n| crate::ParamValue::Int(n.into()));
                assert_eq!(via_table, direct, "{end:?} {b:?}");
            }
        }
        assert_eq!(spec.buffers(End::Server).at_least(10), BufferSizes { send: Some(10), receive: None });
        assert_eq!(
            (Buffer::Send.name(), Buffer::Receive.setting(End::Server).flag),
            ("sndbuf", "--remote-rcvbuf")
        );
    }
}
