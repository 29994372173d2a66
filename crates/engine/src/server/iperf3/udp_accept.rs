//! The iperf3 port's UDP side. A client opens each UDP stream by sending a 4-byte hello to
//! the port and waiting for the 4-byte reply. For each hello from an address whose test waits
//! for UDP streams, a new socket is bound to the same port and connected to the hello's
//! source, the reply goes out from it, and the socket is handed to the test; the kernel then
//! delivers that source's datagrams to the connected socket, and new hellos still to the
//! listening one. Hellos from any other address are ignored: nothing is ever sent to an
//! address without a control connection (security-notes.md S8).

use std::io::{self, ErrorKind};
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::Duration;

use socket2::{Domain, Socket, Type};
use wire::iperf3::udp as magic;

use super::Service;
use crate::stop::StopFlag;

const TICK: Duration = Duration::from_millis(100);

/// Binds a UDP socket on `addr` that shares its port with the per-stream sockets.
pub fn bind(addr: SocketAddr) -> io::Result<UdpSocket> {
    let socket = Socket::new(Domain::for_address(addr), Type::DGRAM, None)?;
    if matches!(addr, SocketAddr::V6(a) if a.ip().is_unspecified()) {
        socket.set_only_v6(false)?;
    }
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    Ok(socket.into())
}

/// Answers hellos until `shutdown`.
pub fn run(listener: UdpSocket, service: &Arc<Service>, shutdown: &StopFlag) -> io::Result<()> {
    listener.set_read_timeout(Some(TICK))?;
    let local = listener.local_addr()?;
    let mut buf = [0u8; 64];
    while !shutdown.is_set() {
        match listener.recv_from(&mut buf) {
            Ok((n, from)) => hello(&buf[..n.min(buf.len())], from, local, service),
            Err(e) if netio::udp::is_wait(&e) => {}
            // An ICMP error for an earlier reply: nothing to do.
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => {}
            Err(e) => {
                tracing::warn!("iperf3 UDP port: {e}");
                std::thread::sleep(TICK);
            }
        }
    }
    Ok(())
}

fn hello(datagram: &[u8], from: SocketAddr, local: SocketAddr, service: &Service) {
    let ip = from.ip().to_canonical();
    if !is_hello(datagram) || !service.streams.udp_wanted(ip) {
        tracing::debug!(
            "iperf3 UDP {from}: ignored a {}-byte datagram (no test waits for it)",
            datagram.len()
        );
        return;
    }
    match connect_stream(local, from) {
        Ok(sock) => {
            if !service.streams.deliver_udp(ip, sock) {
                tracing::debug!("iperf3 UDP {from}: its test stopped waiting");
            }
        }
        Err(e) => tracing::info!("iperf3 UDP {from}: cannot open a stream socket: {e}"),
    }
}

/// A stream hello: "9876" from iperf3 3.12 on, 123456789 in little-endian order before.
fn is_hello(datagram: &[u8]) -> bool {
    datagram == magic::CONNECT_MSG || datagram == 123_456_789u32.to_le_bytes()
}

/// A socket on the listener's address, connected to `peer`, that has sent the reply.
fn connect_stream(local: SocketAddr, peer: SocketAddr) -> io::Result<UdpSocket> {
    let sock = bind(local)?;
    sock.connect(peer)?;
    sock.send(&magic::CONNECT_REPLY)?;
    Ok(sock)
}
