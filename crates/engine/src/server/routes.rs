//! Which running test a data connection belongs to: token → (control peer's IP, the test's
//! [`DataAuth`], channel). A connection is delivered only with the right token, from the
//! control peer's address, and with a valid tag when the test is authenticated.

use std::collections::HashMap;
use std::net::{IpAddr, TcpStream};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

use wire::{DataHello, Token};

use crate::auth::DataAuth;

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
    auth: DataAuth,
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
    /// Registers a test; its data connections from `peer` that `auth` admits arrive on the
    /// receiver.
    pub fn register(&self, auth: DataAuth, peer: IpAddr) -> (RouteGuard, Receiver<DataConn>) {
        let (tx, rx) = channel();
        let token = auth.token;
        if let Ok(mut map) = self.0.lock() {
            map.insert(token, Route { peer, auth, tx });
        }
        (RouteGuard { routes: self.clone(), token }, rx)
    }

    /// Delivers a connection; refuses unknown tokens, foreign addresses and bad tags.
    pub fn deliver(&self, hello: &DataHello, from: IpAddr, stream: TcpStream) -> Result<(), &'static str> {
        let map = self.0.lock().map_err(|_| "routing table poisoned")?;
        let route = map.get(&hello.token).ok_or("unknown token")?;
        if route.peer != from {
            return Err("data connection from another address than the control connection");
        }
        if !route.auth.admits(hello) {
            return Err("data connection without a valid tag for this test's session key");
        }
        route.tx.send(DataConn { index: hello.stream, stream }).map_err(|_| "test already finished")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn() -> (TcpStream, std::net::TcpListener) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let s = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        (s, l)
    }

    fn hello(auth: &DataAuth) -> DataHello {
        DataHello::decode(&auth.hello(0)).unwrap()
    }

    #[test]
    fn only_the_right_token_from_the_right_peer_is_delivered() {
        let routes = Routes::default();
        let auth = DataAuth { token: Token([7; 16]), key: None };
        let local: IpAddr = "127.0.0.1".parse().unwrap();
        let (guard, rx) = routes.register(auth.clone(), local);
        let (c, _l) = conn();
        let other = DataAuth { token: Token([8; 16]), key: None };
        assert!(routes.deliver(&hello(&other), local, c).is_err());
        let (c, _l) = conn();
        assert!(routes.deliver(&hello(&auth), "198.18.0.9".parse().unwrap(), c).is_err());
        let (c, _l) = conn();
        assert!(routes.deliver(&hello(&auth), local, c).is_ok());
        assert!(rx.try_recv().is_ok());
        drop(guard);
        let (c, _l) = conn();
        assert_eq!(routes.deliver(&hello(&auth), local, c).err(), Some("unknown token"));
    }
}
