//! How a UDP test's data flows are set up over the control connection (DESIGN.md §6,
//! security-notes S8):
//!
//! 1. On `setup` the server binds one UDP socket per flow on the address the control
//!    connection reached, and lists their ports in `accepted` with the test's token.
//! 2. The client connects one UDP socket per flow to those ports and sends the flow's data hello
//!    (token + stream number + tag, [`wire::DataHello`]) every [`ANNOUNCE_EVERY`] until the
//!    server says `ready`: UDP may lose a hello, so it is repeated.
//! 3. The server takes, on each socket, the first hello that carries the token, that socket's
//!    stream number and, in an authenticated test, a valid tag **and** comes from the control
//!    peer's IP, and `connect()`s the socket to its source. From then on the kernel drops datagrams from anyone else; before,
//!    stray datagrams are read and ignored, and the whole step has the handshake deadline.
//!    The server never sends to an address that has not shown the token.
//! 4. Stale hellos arriving during the test are recognised ([`wire::Datagram::Hello`]) and
//!    ignored by receivers.

use std::io::{self, ErrorKind};
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use results::{Buffer, BufferSizes, SocketReport, TestSpec};
use wire::{Datagram, Message};

use crate::auth::DataAuth;

use crate::control::Control;
use crate::udp_path::PathProbe;
use crate::Error;

/// How often the client repeats its hellos while waiting for `ready`.
pub const ANNOUNCE_EVERY: Duration = Duration::from_millis(50);
/// Datagrams read per socket per pass while waiting for hellos (a flood cannot starve the
/// other sockets or the deadline check).
const READS_PER_PASS: usize = 64;

/// One UDP data flow at one end: a connected socket and its options.
#[derive(Debug)]
pub struct UdpFlow {
    /// Stream number.
    pub index: u32,
    /// The connected socket (blocking, with a read timeout).
    pub sock: UdpSocket,
    /// Options as applied.
    pub report: SocketReport,
    /// Stream tests: the path's counters as the flow was set up (before any data).
    pub path: Option<PathProbe>,
}

fn io_err(what: &'static str) -> impl Fn(io::Error) -> Error {
    move |source| Error::Io { what, source }
}

/// Applies buffer sizes and `SO_NO_CHECK`; reports what the kernel granted.
pub fn apply(sock: &UdpSocket, spec: &TestSpec, bufs: BufferSizes) -> Result<SocketReport, Error> {
    netio::sockopt::set_buffers(sock, bufs)?;
    if spec.no_checksum {
        if sock.local_addr().map(|a| a.is_ipv6()).unwrap_or(false) {
            return Err(Error::Rejected(wire::Rejection::field(
                "no_checksum",
                "--no-checksum applies to IPv4 only: IPv6 requires the UDP checksum",
            )));
        }
        netio::udp::disable_checksum(sock).map_err(|source| {
            Error::Socket(netio::SockError::Option { option: "SO_NO_CHECK", value: "1".into(), source })
        })?;
    }
    Ok(SocketReport {
        send: netio::sockopt::granted(sock, Buffer::Send, bufs),
        receive: netio::sockopt::granted(sock, Buffer::Receive, bufs),
        ..SocketReport::default()
    })
}

/// Server: one unconnected socket per flow on `local`, ephemeral ports.
pub fn bind_server(spec: &TestSpec, local: IpAddr) -> Result<Vec<UdpSocket>, Error> {
    (0..crate::registry::of(spec.test).data_connections(spec))
        .map(|_| UdpSocket::bind(SocketAddr::new(local, 0)).map_err(io_err("binding a UDP socket")))
        .collect()
}

/// The ports of `socks`, in order.
pub fn ports(socks: &[UdpSocket]) -> Result<Vec<u16>, Error> {
    socks.iter().map(|s| s.local_addr().map(|a| a.port()).map_err(io_err("reading a UDP port"))).collect()
}

/// Server: waits for each socket's hello from `peer` that `auth` admits, then connects the
/// socket to the hello's source. Gives up at once when `gone` says the client has gone away.
pub fn await_hellos(
    socks: Vec<UdpSocket>,
    auth: &DataAuth,
    peer: IpAddr,
    deadline: Instant,
    spec: &TestSpec,
    bufs: BufferSizes,
    gone: &dyn Fn() -> bool,
) -> Result<Vec<UdpFlow>, Error> {
    let mut pending: Vec<Option<UdpSocket>> = socks.into_iter().map(Some).collect();
    let mut flows = Vec::with_capacity(pending.len());
    for s in pending.iter().flatten() {
        s.set_nonblocking(true).map_err(io_err("setting a UDP socket non-blocking"))?;
    }
    while flows.len() < pending.len() {
        if Instant::now() >= deadline {
            return Err(Error::Timeout { what: "waiting for the UDP hellos" });
        }
        let mut idle = true;
        for (index, slot) in pending.iter_mut().enumerate() {
            let Some(sock) = slot.as_ref() else { continue };
            match first_valid_hello(sock, auth, peer, index as u32) {
                Ok(Some(from)) => {
                    idle = false;
                    if let Some(sock) = slot.take() {
                        flows.push(connect_flow(sock, index as u32, from, spec, bufs)?);
                    }
                }
                Ok(None) => {}
                Err(e) => return Err(Error::Io { what: "reading a UDP hello", source: e }),
            }
        }
        if idle {
            if gone() {
                return Err(Error::PeerClosed);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    flows.sort_by_key(|f| f.index);
    Ok(flows)
}

/// Reads queued datagrams; returns the source of the first valid hello.
fn first_valid_hello(
    sock: &UdpSocket,
    auth: &DataAuth,
    peer: IpAddr,
    index: u32,
) -> io::Result<Option<SocketAddr>> {
    let mut buf = [0u8; wire::DATA_HELLO_LEN + 1];
    for _ in 0..READS_PER_PASS {
        let (n, from) = match sock.recv_from(&mut buf) {
            Ok(r) => r,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => return Ok(None),
            // An ICMP error from an earlier datagram; nothing to do with hellos.
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => continue,
            Err(e) => return Err(e),
        };
        let hello = match wire::udp::classify(&buf[..n]) {
            Ok(Datagram::Hello(h)) => h,
            _ => {
                tracing::debug!("ignoring a stray datagram from {from} while waiting for hellos");
                continue;
            }
        };
        if hello.stream == index && from.ip() == peer && auth.admits(&hello) {
            return Ok(Some(from));
        }
        tracing::debug!("ignoring a UDP hello from {from}: wrong token, tag, stream or address");
    }
    Ok(None)
}

fn connect_flow(
    sock: UdpSocket,
    index: u32,
    to: SocketAddr,
    spec: &TestSpec,
    bufs: BufferSizes,
) -> Result<UdpFlow, Error> {
    sock.connect(to).map_err(io_err("connecting a UDP socket"))?;
    sock.set_nonblocking(false).map_err(io_err("setting a UDP socket blocking"))?;
    let report = apply(&sock, spec, bufs)?;
    let path = probe(&sock, spec);
    Ok(UdpFlow { index, sock, report, path })
}

/// Client: one socket per flow, connected to the server's ports.
pub fn client_flows(
    spec: &TestSpec,
    server: IpAddr,
    ports: &[u16],
    bind: Option<IpAddr>,
    bufs: BufferSizes,
) -> Result<Vec<UdpFlow>, Error> {
    if ports.len() != crate::registry::of(spec.test).data_connections(spec) as usize {
        let detail = format!(
            "server offered {} UDP ports for {} flows",
            ports.len(),
            crate::registry::of(spec.test).data_connections(spec)
        );
        return Err(Error::Protocol { detail });
    }
    let any: IpAddr = if server.is_ipv6() { "::".parse().unwrap_or(server) } else { [0, 0, 0, 0].into() };
    let mut flows = Vec::with_capacity(ports.len());
    for (index, &port) in ports.iter().enumerate() {
        let sock = UdpSocket::bind(SocketAddr::new(bind.unwrap_or(any), 0))
            .map_err(io_err("binding a UDP socket"))?;
        let report = apply(&sock, spec, bufs)?;
        sock.connect(SocketAddr::new(server, port)).map_err(io_err("connecting a UDP socket"))?;
        let path = probe(&sock, spec);
        flows.push(UdpFlow { index: index as u32, sock, report, path });
    }
    Ok(flows)
}

/// Bulk UDP tests read the path's counters at setup (their summary sets datagrams beside
/// packets); request/response tests do not use them.
fn probe(sock: &UdpSocket, spec: &TestSpec) -> Option<PathProbe> {
    crate::registry::of(spec.test).probes_path().then(|| PathProbe::at_setup(sock)).flatten()
}

/// Client: repeats every flow's hello until the server says `ready` (or refuses, or the
/// deadline passes).
pub fn announce(
    ctrl: &mut Control,
    flows: &[UdpFlow],
    auth: &DataAuth,
    timeout: Duration,
) -> Result<(), Error> {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        for f in flows {
            // A refused or dropped hello is repeated on the next round.
            let _ = f.sock.send(&auth.hello(f.index));
        }
        match ctrl.poll_by((Instant::now() + ANNOUNCE_EVERY).min(deadline))? {
            None => {}
            Some(Message::Ready {}) => return Ok(()),
            Some(Message::Error(r)) => return Err(Error::Rejected(r)),
            Some(other) => {
                return Err(Error::Protocol { detail: format!("expected ready, got {}", other.name()) });
            }
        }
    }
    Err(Error::Timeout { what: "waiting for the server to see the UDP hellos" })
}
