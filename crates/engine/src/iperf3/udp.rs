//! The client's UDP streams to an iperf3 server: per stream a socket connected to the
//! server's port, the 4-byte hello ("9876") and the wait for the reply ("6789", or the
//! legacy reply of servers before 3.12). The hello is sent once: the server opens a new
//! listening socket after each hello, so a repeated hello would become a stream of its own.

use std::io::ErrorKind;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use results::{SocketReport, TestSpec};
use wire::iperf3::udp as magic;

use crate::side::End;
use crate::udp_flow;
use crate::Error;

/// Datagrams other than the reply tolerated while waiting for it: in `-R` a data datagram
/// may overtake the reply (iperf3 tolerates 2).
const MAX_EARLY_DATAGRAMS: u32 = 64;

/// Opens `count` streams to `server`, in order; each socket is connected and answered.
pub fn open(
    spec: &TestSpec,
    server: SocketAddr,
    bind: Option<IpAddr>,
    count: u32,
    timeout: Duration,
) -> Result<Vec<(UdpSocket, SocketReport)>, Error> {
    let floor = spec.send_len.saturating_add(1024);
    let bufs = spec.buffers(End::Client).at_least(floor);
    let any = match server {
        SocketAddr::V4(_) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        SocketAddr::V6(_) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
    };
    let io = |what| move |source| Error::Io { what, source };
    let mut out = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let sock =
            UdpSocket::bind(SocketAddr::new(bind.unwrap_or(any), 0)).map_err(io("binding a UDP socket"))?;
        let report = udp_flow::apply(&sock, spec, bufs)?;
        sock.connect(server).map_err(io("connecting a UDP socket"))?;
        sock.send(&magic::CONNECT_MSG).map_err(io("sending the iperf3 UDP hello"))?;
        await_reply(&sock, Instant::now() + timeout)?;
        out.push((sock, report));
    }
    Ok(out)
}

/// Reads until the server's reply arrives, skipping a few early data datagrams.
fn await_reply(sock: &UdpSocket, deadline: Instant) -> Result<(), Error> {
    let mut buf = vec![0u8; 65_536];
    let mut early = 0u32;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || early > MAX_EARLY_DATAGRAMS {
            return Err(Error::Timeout { what: "waiting for the iperf3 server to answer a UDP stream" });
        }
        let _ = sock.set_read_timeout(Some(left));
        match sock.recv(&mut buf) {
            Ok(n) if magic::is_connect_reply(&buf[..n]) => return Ok(()),
            Ok(_) => early += 1,
            Err(e) if netio::udp::is_wait(&e) => {}
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
                return Err(Error::Protocol {
                    detail: "the iperf3 server's UDP port refused the stream (nothing listens there)".into(),
                })
            }
            Err(source) => return Err(Error::Io { what: "waiting for the iperf3 UDP reply", source }),
        }
    }
}
