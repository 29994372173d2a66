//! Where an iperf3 data stream goes. TCP streams present their test's cookie and must come
//! from the control peer's address; UDP streams carry no cookie (iperf3's design), so a UDP
//! hello is given to the oldest test from the same address still waiting for UDP streams,
//! and to nobody else (security-notes.md S8: no test traffic to an address that has no
//! control connection with us).

use std::collections::HashMap;
use std::net::{IpAddr, TcpStream, UdpSocket};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

/// An iperf3 cookie as it travels: 36 characters and a NUL.
pub type CookieBytes = [u8; 37];

/// What a TCP data stream presenting a cookie meets.
#[derive(Debug, PartialEq, Eq)]
pub enum Routed {
    /// Handed to its test.
    Delivered,
    /// The cookie names a test that takes no more streams, or another address sent it:
    /// answer ACCESS_DENIED, as iperf3 does for a bad stream cookie.
    Refused,
    /// No test has this cookie: it is a new control connection.
    Unknown,
}

#[derive(Debug)]
struct TcpRoute {
    peer: IpAddr,
    tx: Option<Sender<TcpStream>>,
}

#[derive(Debug)]
struct UdpWait {
    id: u64,
    peer: IpAddr,
    tx: Sender<UdpSocket>,
}

#[derive(Debug, Default)]
struct Tables {
    tcp: HashMap<CookieBytes, TcpRoute>,
    udp: Vec<UdpWait>,
    next_id: u64,
}

/// The routing tables of all running iperf3 tests.
#[derive(Debug, Default, Clone)]
pub struct Streams(Arc<Mutex<Tables>>);

/// A test's place in the tables; removed when dropped.
#[derive(Debug)]
pub struct Registration {
    streams: Streams,
    cookie: CookieBytes,
    udp_id: Option<u64>,
}

impl Streams {
    /// Registers a test by its cookie: known from now on (a second control connection with
    /// the same cookie is refused), taking no streams yet.
    pub fn register(&self, cookie: CookieBytes, peer: IpAddr) -> Registration {
        self.with(|t| {
            t.tcp.insert(cookie, TcpRoute { peer, tx: None });
        });
        Registration { streams: self.clone(), cookie, udp_id: None }
    }

    /// Routes a TCP connection that presented `cookie` from `from`.
    pub fn deliver_tcp(&self, cookie: &CookieBytes, from: IpAddr, conn: TcpStream) -> Routed {
        self.with(|t| match t.tcp.get(cookie) {
            None => Routed::Unknown,
            Some(r) if r.peer != from => Routed::Refused,
            Some(TcpRoute { tx: Some(tx), .. }) => {
                if tx.send(conn).is_ok() {
                    Routed::Delivered
                } else {
                    Routed::Refused
                }
            }
            Some(_) => Routed::Refused,
        })
        .unwrap_or(Routed::Refused)
    }

    /// Gives a connected UDP socket to the oldest test from `from` waiting for UDP streams;
    /// false when there is none.
    pub fn deliver_udp(&self, from: IpAddr, sock: UdpSocket) -> bool {
        self.with(|t| {
            let mut sock = Some(sock);
            t.udp.retain(|w| {
                if w.peer != from || sock.is_none() {
                    return true;
                }
                match sock.take() {
                    Some(s) => match w.tx.send(s) {
                        Ok(()) => true,
                        Err(std::sync::mpsc::SendError(s)) => {
                            sock = Some(s);
                            false
                        }
                    },
                    None => true,
                }
            });
            sock.is_none()
        })
        .unwrap_or(false)
    }

    /// Whether some test from `from` waits for UDP streams.
    pub fn udp_wanted(&self, from: IpAddr) -> bool {
        self.with(|t| t.udp.iter().any(|w| w.peer == from)).unwrap_or(false)
    }

    fn with<T>(&self, f: impl FnOnce(&mut Tables) -> T) -> Option<T> {
        self.0.lock().ok().map(|mut t| f(&mut t))
    }
}

impl Registration {
    /// Opens the test to TCP data streams (CREATE_STREAMS); they arrive on the receiver.
    pub fn open_tcp(&mut self) -> Receiver<TcpStream> {
        let (tx, rx) = channel();
        let cookie = self.cookie;
        self.streams.with(|t| {
            if let Some(r) = t.tcp.get_mut(&cookie) {
                r.tx = Some(tx);
            }
        });
        rx
    }

    /// Opens the test to UDP streams from its control peer; they arrive on the receiver.
    pub fn open_udp(&mut self, peer: IpAddr) -> Receiver<UdpSocket> {
        let (tx, rx) = channel();
        let id = self.streams.with(|t| {
            t.next_id += 1;
            t.udp.push(UdpWait { id: t.next_id, peer, tx });
            t.next_id
        });
        self.udp_id = id;
        rx
    }

    /// Takes no more streams (all arrived, or the test moved on).
    pub fn close(&mut self) {
        let (cookie, udp) = (self.cookie, self.udp_id.take());
        self.streams.with(|t| {
            if let Some(r) = t.tcp.get_mut(&cookie) {
                r.tx = None;
            }
            if let Some(id) = udp {
                t.udp.retain(|w| w.id != id);
            }
        });
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.close();
        let cookie = self.cookie;
        self.streams.with(|t| t.tcp.remove(&cookie));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> (TcpStream, std::net::TcpListener) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        (TcpStream::connect(l.local_addr().unwrap()).unwrap(), l)
    }

    #[test]
    fn tcp_streams_need_the_cookie_the_address_and_an_open_test() {
        let streams = Streams::default();
        let local: IpAddr = "127.0.0.1".parse().unwrap();
        let cookie = [b'a'; 37];
        assert_eq!(streams.deliver_tcp(&cookie, local, pair().0), Routed::Unknown);
        let mut reg = streams.register(cookie, local);
        assert_eq!(streams.deliver_tcp(&cookie, local, pair().0), Routed::Refused);
        let rx = reg.open_tcp();
        let other: IpAddr = "198.18.0.9".parse().unwrap();
        assert_eq!(streams.deliver_tcp(&cookie, other, pair().0), Routed::Refused);
        assert_eq!(streams.deliver_tcp(&cookie, local, pair().0), Routed::Delivered);
        assert!(rx.try_recv().is_ok());
        reg.close();
        assert_eq!(streams.deliver_tcp(&cookie, local, pair().0), Routed::Refused);
        drop(reg);
        assert_eq!(streams.deliver_tcp(&cookie, local, pair().0), Routed::Unknown);
    }

    #[test]
    fn udp_streams_go_to_the_oldest_waiting_test_of_their_address() {
        let streams = Streams::default();
        let local: IpAddr = "127.0.0.1".parse().unwrap();
        let sock = || UdpSocket::bind("127.0.0.1:0").unwrap();
        assert!(!streams.deliver_udp(local, sock()));
        let mut first = streams.register([b'a'; 37], local);
        let mut second = streams.register([b'b'; 37], local);
        let rx1 = first.open_udp(local);
        let rx2 = second.open_udp(local);
        assert!(!streams.deliver_udp("198.18.0.9".parse().unwrap(), sock()));
        assert!(streams.deliver_udp(local, sock()));
        assert!(rx1.try_recv().is_ok() && rx2.try_recv().is_err());
        first.close();
        assert!(streams.deliver_udp(local, sock()));
        assert!(rx2.try_recv().is_ok());
        drop(second);
        assert!(!streams.udp_wanted(local));
    }
}
