//! `tcplab server --iperf3`: the server also answers stock iperf3 3.x clients, on iperf3's
//! port (5201 by default), with tcplab's own data engines and limits. iperf3 clients are
//! anonymous (the protocol has no room for tcplab's authentication): the anonymous caps
//! apply to them, and on a keyed server they must be set ([`crate::Server::bind`]). Unlike
//! an iperf3 server it runs several tests at once: up to `--anon-max-concurrent`, and on a
//! server without keys up to the server's `max_concurrent` too (shared with native
//! clients); on a keyed server they never take a key holder's test slot (`accept::Slot`).
//! A client beyond that gets ACCESS_DENIED ("the server is busy"), as from a busy iperf3
//! server. Its parameters are parsed before anything else, bounded in size and time
//! (security-notes.md §7.1).
//!
//! Parts: `accept` reads each TCP connection's cookie and dispatches it, `udp_accept`
//! answers UDP stream hellos, `streams` routes data streams to their tests, `session`
//! runs one client's state machine (`ctl` its control connection, [`plan`] its parameters,
//! `jobs` (with the shared `iperf3::udp_data`) its data, `report` its results), and [`served`] turns a
//! finished test into a tcplab result for the archive.

mod accept;
mod ctl;
mod jobs;
pub mod plan;
mod report;
pub mod served;
mod session;
mod streams;
mod udp_accept;

use std::io;
use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::sync::Arc;
use std::thread::JoinHandle;

use super::Shared;
use crate::stop::StopFlag;

pub use served::{Served, ServedSink};

/// The iperf3 port's sockets, bound.
#[derive(Debug)]
pub(super) struct Listeners {
    tcp: TcpListener,
    udp: UdpSocket,
}

impl Listeners {
    /// Binds TCP and UDP on `addr` (port 0: any free TCP port, and UDP on the same number);
    /// with `mptcp` the TCP listener is MPTCP (plain TCP clients are served as before, and
    /// iperf3 `-m` clients' data streams are MPTCP, as iperf3's server makes them).
    pub fn bind(addr: SocketAddr, mptcp: bool) -> io::Result<Listeners> {
        let tcp = if mptcp { netio::mptcp::listen(addr)? } else { netio::listen::tcp(addr)? };
        let bound = tcp.local_addr()?;
        let udp = udp_accept::bind(SocketAddr::new(bound.ip(), bound.port()))?;
        Ok(Listeners { tcp, udp })
    }

    /// The TCP listener's address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.tcp.local_addr()
    }
}

/// What the iperf3 threads share.
#[derive(Debug)]
struct Service {
    shared: Arc<Shared>,
    streams: streams::Streams,
    listen: SocketAddr,
}

/// Starts the iperf3 acceptor and UDP threads; they run until `stop`.
pub(super) fn spawn(l: Listeners, shared: Arc<Shared>, stop: &StopFlag) -> io::Result<Vec<JoinHandle<()>>> {
    let listen = l.local_addr()?;
    let service = Arc::new(Service { shared, streams: streams::Streams::default(), listen });
    let (s1, stop1) = (service.clone(), stop.clone());
    let tcp = std::thread::Builder::new().name("iperf3-accept".into()).spawn(move || {
        if let Err(e) = accept::run(l.tcp, &s1, &stop1) {
            tracing::warn!("iperf3 port: {e}");
        }
    })?;
    let stop2 = stop.clone();
    let udp = std::thread::Builder::new().name("iperf3-udp".into()).spawn(move || {
        if let Err(e) = udp_accept::run(l.udp, &service, &stop2) {
            tracing::warn!("iperf3 UDP port: {e}");
        }
    })?;
    Ok(vec![tcp, udp])
}
