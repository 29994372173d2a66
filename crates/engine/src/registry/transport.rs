//! How a test type's data travels, as a trait object the type declares
//! ([`super::TestType::data`]): it opens the data connections at the client and accepts them
//! at the server. The client and server ask it and never branch on [`Transport`], so a new
//! transport is one implementation here, and cannot fall through to opening TCP connections.

use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use results::TestSpec;

use super::{Data, Transport};
use crate::auth::DataAuth;
use crate::control::Control;
use crate::server::routes::DataConn;
use crate::session::server::Event;
use crate::side::{DataSocket, End};
use crate::udp_flow;
use crate::Error;

/// The client's end of setting the data up, after the server accepted the test.
pub struct ClientEnd<'a> {
    /// The test.
    pub spec: &'a TestSpec,
    /// The server's address (its control connection's).
    pub server: SocketAddr,
    /// The test's token and session key.
    pub auth: DataAuth,
    /// The UDP ports the server bound for the test (empty for TCP).
    pub udp_ports: &'a [u16],
    /// The control connection.
    pub ctrl: &'a mut Control,
    /// Local address to bind to.
    pub bind: Option<IpAddr>,
    /// How long one step may take.
    pub timeout: Duration,
    /// Opens this many authenticated TCP data connections to `server`, in stream order.
    pub connect: &'a dyn Fn(u32) -> Result<Vec<DataSocket>, Error>,
}

/// Collects this many of the data connections in stream order, with the server's options.
pub type Collect<'a> = dyn Fn(&Receiver<DataConn>, u32) -> Result<Vec<DataSocket>, Event> + 'a;

/// The server's end of setting the data up, after it accepted the test.
pub struct ServerEnd<'a> {
    /// The test.
    pub spec: &'a TestSpec,
    /// The test's token and session key.
    pub auth: &'a DataAuth,
    /// The client's address.
    pub peer: IpAddr,
    /// When to give up waiting.
    pub deadline: Instant,
    /// The sockets [`DataTransport::bind`] bound.
    pub udp_socks: Vec<UdpSocket>,
    /// The test's TCP data connections as they arrive.
    pub conns: Receiver<DataConn>,
    /// The control connection.
    pub ctrl: &'a Control,
    /// Collects this many of `conns` in stream order, with the server's socket options.
    pub collect: &'a Collect<'a>,
}

impl std::fmt::Debug for ClientEnd<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientEnd").field("server", &self.server).finish_non_exhaustive()
    }
}

impl std::fmt::Debug for ServerEnd<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerEnd").field("peer", &self.peer).finish_non_exhaustive()
    }
}

/// How a test's data travels: what each end sets up, and how the test ends.
pub trait DataTransport: Sync {
    /// Client: opens the data the server accepted; whether `ready` came with it.
    fn open(&self, c: ClientEnd<'_>) -> Result<(Data, bool), Error>;
    /// Server, before accepting: what the client will reach besides the data listener.
    fn bind(&self, spec: &TestSpec, local: IpAddr) -> Result<Vec<UdpSocket>, Error>;
    /// Server: waits for the client's data until the deadline.
    fn accept(&self, s: ServerEnd<'_>) -> Result<Data, Event>;
    /// How its tests end and are counted (no default: each transport says).
    fn traits(&self) -> Traits;
}

/// How a transport's tests end and are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Traits {
    /// Whether the client's own end of the data says when results are due (UDP).
    pub results_end_local: bool,
    /// Whether the data connections closing ends the test (TCP streams).
    pub eof_ends: bool,
    /// Whether the server's end can be traced (its data is TCP on its port).
    pub traceable: bool,
    /// Whether each end counts datagrams (sent, lost, out of order) per interval.
    pub counts_datagrams: bool,
}

/// The implementation of `t`.
pub fn of(t: Transport) -> &'static dyn DataTransport {
    match t {
        Transport::TcpConnections => &TcpConnections,
        Transport::TcpPerTransaction => &TcpPerTransaction,
        Transport::Udp => &UdpFlows,
    }
}

/// TCP connections opened before the start.
struct TcpConnections;

impl DataTransport for TcpConnections {
    fn open(&self, c: ClientEnd<'_>) -> Result<(Data, bool), Error> {
        let n = super::of(c.spec.test).data_connections(c.spec);
        Ok((Data::Tcp((c.connect)(n)?), false))
    }
    fn bind(&self, _: &TestSpec, _: IpAddr) -> Result<Vec<UdpSocket>, Error> {
        Ok(Vec::new())
    }
    fn accept(&self, s: ServerEnd<'_>) -> Result<Data, Event> {
        (s.collect)(&s.conns, super::of(s.spec.test).data_connections(s.spec)).map(Data::Tcp)
    }
    fn traits(&self) -> Traits {
        Traits { results_end_local: false, eof_ends: true, traceable: true, counts_datagrams: false }
    }
}

/// A TCP connection per transaction, opened during the test.
struct TcpPerTransaction;

impl DataTransport for TcpPerTransaction {
    fn open(&self, c: ClientEnd<'_>) -> Result<(Data, bool), Error> {
        (c.connect)(super::of(c.spec.test).data_connections(c.spec))?;
        Ok((Data::Connect { server: c.server, auth: c.auth }, false))
    }
    fn bind(&self, _: &TestSpec, _: IpAddr) -> Result<Vec<UdpSocket>, Error> {
        Ok(Vec::new())
    }
    fn accept(&self, s: ServerEnd<'_>) -> Result<Data, Event> {
        Ok(Data::Accept(forward(s.conns)))
    }
    fn traits(&self) -> Traits {
        Traits { results_end_local: false, eof_ends: false, traceable: true, counts_datagrams: false }
    }
}

/// The per-transaction connections as plain streams, as they arrive.
fn forward(rx: Receiver<DataConn>) -> Receiver<std::net::TcpStream> {
    let (tx, conns) = std::sync::mpsc::channel();
    std::thread::spawn(move || rx.iter().try_for_each(|c| tx.send(c.stream)));
    conns
}

/// UDP flows, one per stream and direction.
struct UdpFlows;

impl DataTransport for UdpFlows {
    fn open(&self, c: ClientEnd<'_>) -> Result<(Data, bool), Error> {
        let bufs = c.spec.buffers(End::Client);
        let flows = udp_flow::client_flows(c.spec, c.server.ip(), c.udp_ports, c.bind, bufs)?;
        udp_flow::announce(c.ctrl, &flows, &c.auth, c.timeout)?;
        Ok((Data::Udp(flows), true))
    }
    fn bind(&self, spec: &TestSpec, local: IpAddr) -> Result<Vec<UdpSocket>, Error> {
        udp_flow::bind_server(spec, local)
    }
    fn accept(&self, s: ServerEnd<'_>) -> Result<Data, Event> {
        let bufs = s.spec.buffers(End::Server);
        let gone = || s.ctrl.peer_gone();
        udp_flow::await_hellos(s.udp_socks, s.auth, s.peer, s.deadline, s.spec, bufs, &gone)
            .map(Data::Udp)
            .map_err(|e| Event::Failed(e.into()))
    }
    fn traits(&self) -> Traits {
        Traits { results_end_local: true, eof_ends: false, traceable: false, counts_datagrams: true }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each transport says what it is; only UDP flows answer like UDP.
    #[test]
    fn each_transport_declares_how_its_test_ends_and_is_counted() {
        let says = |t: Transport| {
            let d = of(t).traits();
            (d.results_end_local, d.eof_ends, d.traceable, d.counts_datagrams)
        };
        assert_eq!(says(Transport::TcpConnections), (false, true, true, false));
        assert_eq!(says(Transport::TcpPerTransaction), (false, false, true, false));
        assert_eq!(says(Transport::Udp), (true, false, false, true));
    }
}
