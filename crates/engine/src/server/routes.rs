//! Which running test a data connection belongs to: token → (control peer's IP, channel).

use std::collections::HashMap;
use std::net::{IpAddr, TcpStream};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

use wire::Token;

/// A data connection delivered to its session.
#[derive(Debug)]
pub struct DataConn {
    /// Stream number from the data hello.
    pub index: u32,
    /// The connection, blocking mode.
    pub stream: TcpStream,
}

#[derive(Debug)]
struct Route {
    peer: IpAddr,
    tx: Sender<DataConn>,
}

/// The routing table.
#[derive(Debug, Default, Clone)]
pub struct Routes(Arc<Mutex<HashMap<Token, Route>>>);

/// Removes its route when dropped.
#[derive(Debug)]
pub struct RouteGuard {
    routes: Routes,
    token: Token,
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        if let Ok(mut map) = self.routes.0.lock() {
            map.remove(&self.token);
        }
    }
}

impl Routes {
    /// Registers a test; data connections for `token` from `peer` arrive on the receiver.
    pub fn register(&self, token: Token, peer: IpAddr) -> (RouteGuard, Receiver<DataConn>) {
        let (tx, rx) = channel();
        if let Ok(mut map) = self.0.lock() {
            map.insert(token, Route { peer, tx });
        }
        (RouteGuard { routes: self.clone(), token }, rx)
    }

    /// Delivers a connection; refuses unknown tokens and foreign addresses.
    pub fn deliver(&self, token: Token, from: IpAddr, conn: DataConn) -> Result<(), &'static str> {
        let map = self.0.lock().map_err(|_| "routing table poisoned")?;
        let route = map.get(&token).ok_or("unknown token")?;
        if route.peer != from {
            return Err("data connection from another address than the control connection");
        }
        route.tx.send(conn).map_err(|_| "test already finished")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn() -> (DataConn, std::net::TcpListener) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let s = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        (DataConn { index: 0, stream: s }, l)
    }

    #[test]
    fn only_the_right_token_from_the_right_peer_is_delivered() {
        let routes = Routes::default();
        let token = Token([7; 16]);
        let local: IpAddr = "127.0.0.1".parse().unwrap();
        let (guard, rx) = routes.register(token, local);
        let (c, _l) = conn();
        assert!(routes.deliver(Token([8; 16]), local, c).is_err());
        let (c, _l) = conn();
        assert!(routes.deliver(token, "198.18.0.9".parse().unwrap(), c).is_err());
        let (c, _l) = conn();
        assert!(routes.deliver(token, local, c).is_ok());
        assert!(rx.try_recv().is_ok());
        drop(guard);
        let (c, _l) = conn();
        assert_eq!(routes.deliver(token, local, c).err(), Some("unknown token"));
    }
}
