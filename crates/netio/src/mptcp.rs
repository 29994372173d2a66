//! Multipath TCP (RFC 8684, Linux `IPPROTO_MPTCP`): stream sockets that are `std`
//! [`TcpStream`]/[`TcpListener`] to the rest of tcplab, and what the kernel says about the
//! connection — `MPTCP_INFO` (the connection level) and `MPTCP_TCPINFO` (TCP_INFO of each
//! subflow).
//!
//! A connection whose peer does not speak MPTCP falls back to plain TCP (RFC 8684 §3.7); the
//! socket keeps working, and [`info`] answers [`Level::Fallback`] so a caller can say so.

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsFd, AsRawFd};

use socket2::{Domain, Protocol, Socket, Type};

use crate::tcpinfo::{self, TcpInfo};

/// `IPPROTO_MPTCP` (linux/in.h).
pub const IPPROTO_MPTCP: i32 = 262;
/// `SOL_MPTCP` (linux/socket.h).
const SOL_MPTCP: i32 = 284;
/// `MPTCP_INFO` (linux/mptcp.h).
const MPTCP_INFO: i32 = 1;
/// `MPTCP_TCPINFO` (linux/mptcp.h).
const MPTCP_TCPINFO: i32 = 2;
/// `MPTCP_INFO_FLAG_FALLBACK`: the connection went on as plain TCP.
const FLAG_FALLBACK: u32 = 1;
/// Subflows whose TCP_INFO one [`subflows`] call reads (the kernel's default limit is 2, its
/// maximum 8).
pub const MAX_SUBFLOWS: usize = 8;
/// Bytes of `struct mptcp_info` up to `mptcpi_csum_enabled` (kernels 5.14 to 6.4).
const LEN_V1: u32 = 43;
/// Bytes up to `mptcpi_bytes_acked` (6.5 and later).
const LEN_BYTES: u32 = 80;

/// An MPTCP stream to `addr`. Where the kernel has no MPTCP (or `net.mptcp.enabled` is 0 in
/// this namespace) the error says so; a peer without MPTCP is not an error (see [`info`]).
pub fn connect(addr: SocketAddr) -> io::Result<TcpStream> {
    let socket = new_socket(addr)?;
    socket.connect(&addr.into())?;
    Ok(socket.into())
}

/// An MPTCP listener on `addr`; each accepted stream is MPTCP (or its fallback to TCP, so
/// plain TCP clients are served too). On the IPv6 wildcard (`::`) it takes IPv4 clients as
/// well, as [`crate::listen::tcp`] does.
pub fn listen(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = new_socket(addr)?;
    if matches!(addr, SocketAddr::V6(a) if a.ip().is_unspecified()) {
        socket.set_only_v6(false)?;
    }
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(1024)?;
    Ok(socket.into())
}

/// Whether this kernel (in this namespace) opens MPTCP sockets; the error says why not.
pub fn available() -> io::Result<()> {
    new_socket(SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, 0))).map(drop)
}

/// An unconnected MPTCP stream socket for `addr`'s family, for a caller that sets options or
/// binds before connecting. Where the kernel has no MPTCP the error says so.
pub fn socket(addr: SocketAddr) -> io::Result<Socket> {
    new_socket(addr)
}

fn new_socket(addr: SocketAddr) -> io::Result<Socket> {
    Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::from(IPPROTO_MPTCP))).map_err(|e| {
        match e.raw_os_error() {
            Some(libc::EPROTONOSUPPORT | libc::EINVAL | libc::ENOPROTOOPT) => io::Error::new(
                io::ErrorKind::Unsupported,
                format!("MPTCP is not available here (kernel without it, or net.mptcp.enabled=0): {e}"),
            ),
            _ => e,
        }
    })
}

/// What a stream is at the connection level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// A multipath connection, with its counters.
    Mptcp(MptcpInfo),
    /// An MPTCP socket whose connection fell back to plain TCP (the peer, or a middlebox,
    /// did not take MPTCP), or a plain TCP socket.
    Fallback,
}

/// `struct mptcp_info`, the fields tcplab reads. Counters a kernel older than 6.5 does not
/// report are `None`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MptcpInfo {
    /// Additional subflows now open (the first one not counted).
    pub subflows: u8,
    /// ADD_ADDR announcements sent.
    pub add_addr_signal: u8,
    /// ADD_ADDR announcements accepted from the peer.
    pub add_addr_accepted: u8,
    /// The limit of additional subflows (`ip mptcp limits … subflows`).
    pub subflows_max: u8,
    /// The limit of accepted ADD_ADDR.
    pub add_addr_accepted_max: u8,
    /// The connection's token.
    pub token: u32,
    /// Data-level retransmissions (6.5+).
    pub retransmits: Option<u32>,
    /// Data-level bytes sent, retransmitted, received and acknowledged (6.5+).
    pub bytes: Option<DataBytes>,
    /// Subflows ever opened, the first included (6.10+; `None` where the kernel leaves it 0).
    pub subflows_total: Option<u8>,
}

/// Data-level byte counters of a connection (MPTCP_INFO, kernel 6.5+).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DataBytes {
    /// Bytes sent, retransmissions included.
    pub sent: u64,
    /// Bytes retransmitted.
    pub retrans: u64,
    /// Bytes received in order.
    pub received: u64,
    /// Bytes the peer acknowledged.
    pub acked: u64,
}

impl MptcpInfo {
    /// Subflows now open, the initial one included.
    pub fn open_subflows(&self) -> u32 {
        u32::from(self.subflows) + 1
    }
}

/// `struct mptcp_info` of a 6.12+ kernel; a shorter one from an older kernel leaves the tail
/// zero, and `len` (as the kernel wrote it) says how much is real.
#[repr(C)]
#[derive(Default)]
struct RawInfo {
    subflows: u8,
    add_addr_signal: u8,
    add_addr_accepted: u8,
    subflows_max: u8,
    add_addr_signal_max: u8,
    add_addr_accepted_max: u8,
    flags: u32,
    token: u32,
    write_seq: u64,
    snd_una: u64,
    rcv_nxt: u64,
    local_addr_used: u8,
    local_addr_max: u8,
    csum_enabled: u8,
    retransmits: u32,
    bytes_retrans: u64,
    bytes_sent: u64,
    bytes_received: u64,
    bytes_acked: u64,
    subflows_total: u8,
    reserved: [u8; 3],
    last_data_sent: u32,
    last_data_recv: u32,
    last_ack_recv: u32,
}

/// MPTCP_INFO of `sock`: [`Level::Mptcp`] with its counters, or [`Level::Fallback`] where
/// the connection is plain TCP. Other errors (not a socket, closed) are errors.
pub fn info<S: AsFd>(sock: &S) -> io::Result<Level> {
    let mut raw = RawInfo::default();
    let mut len = std::mem::size_of::<RawInfo>() as libc::socklen_t;
    // SAFETY: `raw` is a plain-integer repr(C) struct writable for `len` bytes; the kernel
    // writes at most `len` bytes and stores the length it wrote.
    let rc = unsafe {
        libc::getsockopt(sock.as_fd().as_raw_fd(), SOL_MPTCP, MPTCP_INFO, (&raw mut raw).cast(), &mut len)
    };
    if rc != 0 {
        let e = io::Error::last_os_error();
        // A fallen-back connection answers as TCP does: SOL_MPTCP is not a TCP level.
        return match e.raw_os_error() {
            Some(libc::EOPNOTSUPP | libc::ENOPROTOOPT) => Ok(Level::Fallback),
            _ => Err(e),
        };
    }
    if len < LEN_V1 || raw.flags & FLAG_FALLBACK != 0 {
        return Ok(Level::Fallback);
    }
    Ok(Level::Mptcp(from_raw(&raw, len)))
}

fn from_raw(raw: &RawInfo, len: u32) -> MptcpInfo {
    let full = len >= LEN_BYTES;
    MptcpInfo {
        subflows: raw.subflows,
        add_addr_signal: raw.add_addr_signal,
        add_addr_accepted: raw.add_addr_accepted,
        subflows_max: raw.subflows_max,
        add_addr_accepted_max: raw.add_addr_accepted_max,
        token: raw.token,
        retransmits: full.then_some(raw.retransmits),
        bytes: full.then_some(DataBytes {
            sent: raw.bytes_sent,
            retrans: raw.bytes_retrans,
            received: raw.bytes_received,
            acked: raw.bytes_acked,
        }),
        subflows_total: (len > LEN_BYTES && raw.subflows_total > 0).then_some(raw.subflows_total),
    }
}

/// `struct mptcp_subflow_data` followed by room for [`MAX_SUBFLOWS`] `tcp_info`.
#[repr(C)]
struct RawSubflows {
    size_subflow_data: u32,
    num_subflows: u32,
    size_kernel: u32,
    size_user: u32,
    infos: [libc::tcp_info; MAX_SUBFLOWS],
}

/// TCP_INFO of each subflow of `sock` (MPTCP_TCPINFO, kernel 5.16+), at most
/// [`MAX_SUBFLOWS`], and how many subflows the connection has. A fallen-back connection and a
/// kernel without MPTCP_TCPINFO answer `Unsupported`.
pub fn subflows<S: AsFd>(sock: &S) -> io::Result<(Vec<TcpInfo>, u32)> {
    // SAFETY: all-zero integers are valid for every field (tcp_info is plain integers).
    let mut raw: RawSubflows = unsafe { std::mem::zeroed() };
    raw.size_subflow_data = 16;
    raw.size_user = std::mem::size_of::<libc::tcp_info>() as u32;
    let mut len = std::mem::size_of::<RawSubflows>() as libc::socklen_t;
    // SAFETY: `raw` is writable for `len` bytes; the kernel writes the header and at most
    // (len - 16) / size_user entries of size_user bytes each, then stores the length.
    let rc = unsafe {
        libc::getsockopt(sock.as_fd().as_raw_fd(), SOL_MPTCP, MPTCP_TCPINFO, (&raw mut raw).cast(), &mut len)
    };
    if rc != 0 {
        let e = io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::EOPNOTSUPP | libc::ENOPROTOOPT) => {
                io::Error::new(io::ErrorKind::Unsupported, format!("no MPTCP subflow info: {e}"))
            }
            _ => e,
        });
    }
    let filled = (raw.num_subflows as usize).min(MAX_SUBFLOWS);
    Ok((raw.infos[..filled].iter().map(tcpinfo::from_raw).collect(), raw.num_subflows))
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::thread;

    use super::*;

    const BYTES: usize = 4 << 20;

    /// One MPTCP stream over loopback: `BYTES` written by the client, read by the server.
    fn carry(server: TcpListener) -> (TcpStream, TcpStream) {
        let addr = server.local_addr().unwrap();
        let reader = thread::spawn(move || {
            let (mut s, _) = server.accept().unwrap();
            let mut got = vec![0u8; BYTES];
            s.read_exact(&mut got).unwrap();
            s.write_all(b"k").unwrap();
            s
        });
        let mut c = connect(addr).unwrap();
        c.write_all(&vec![7u8; BYTES]).unwrap();
        let mut ack = [0u8; 1];
        c.read_exact(&mut ack).unwrap();
        (c, reader.join().unwrap())
    }

    #[test]
    fn an_mptcp_connection_carries_data_and_counts_it() {
        let (client, server) = carry(listen("127.0.0.1:0".parse().unwrap()).unwrap());
        let Level::Mptcp(c) = info(&client).unwrap() else { panic!("the client fell back to TCP") };
        let Level::Mptcp(s) = info(&server).unwrap() else { panic!("the server fell back to TCP") };
        assert_ne!(c.token, 0, "{c:?}");
        assert!(c.bytes.is_some(), "this kernel (6.5+) reports data bytes: {c:?}");
        assert_eq!(c.open_subflows(), 1, "loopback with no endpoints has one subflow: {c:?}");
        if let (Some(cb), Some(sb)) = (c.bytes, s.bytes) {
            assert!(cb.sent >= BYTES as u64 && cb.acked >= BYTES as u64, "{cb:?}");
            assert!(sb.received >= BYTES as u64, "{sb:?}");
            // MPTCP's own retransmission timer can resend data even on loopback when the host
            // is busy (seen: 19,267 of 4 MiB), so the count is only held to what was sent.
            assert!(cb.retrans < cb.sent, "more retransmitted than sent: {cb:?}");
        }
        let (flows, n) = subflows(&client).unwrap();
        assert_eq!((flows.len(), n), (1, 1));
        assert!(flows[0].snd_mss > 0 && flows[0].data_segs_out > 0, "{:?}", flows[0]);
    }

    #[test]
    fn a_tcp_peer_makes_the_connection_fall_back_and_it_is_said() {
        let (client, server) = carry(TcpListener::bind("127.0.0.1:0").unwrap());
        assert_eq!(info(&client).unwrap(), Level::Fallback);
        assert_eq!(info(&server).unwrap(), Level::Fallback, "a plain TCP socket is not MPTCP");
        assert_eq!(subflows(&client).unwrap_err().kind(), io::ErrorKind::Unsupported);
    }
}
