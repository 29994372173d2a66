//! Accepting connections that must first say who they are: a fixed-size greeting (the
//! native hello, iperf3's cookie) is read from each without blocking on any one peer. A
//! connection whose greeting is not complete within the handshake timeout is closed; at
//! most [`MAX_PENDING`] wait at once (the oldest is dropped first). Exactly the greeting is
//! read, so what the peer sent after it stays in the socket for whoever serves it.
//! Both acceptors ([`super::acceptor`], [`super::iperf3::accept`]) run on this.

use std::collections::HashMap;
use std::io::{self, Read};
use std::net::{SocketAddr, TcpListener};
use std::time::{Duration, Instant};

use mio::net::{TcpListener as MioListener, TcpStream as MioStream};
use mio::{Events, Interest, Poll, Token as PollToken};

/// Connections allowed to be waiting for their greeting at once.
pub const MAX_PENDING: usize = 256;
const LISTENER: PollToken = PollToken(0);
const TICK: Duration = Duration::from_millis(100);

/// What a port's connections send first.
#[derive(Debug, Clone, Copy)]
pub struct Greeting {
    /// Its largest size, bytes.
    pub max: usize,
    /// Its size given what has arrived of it (a native data hello is longer than a control
    /// hello, which its kind byte says).
    pub want: fn(&[u8]) -> usize,
    /// Its name in log lines (`cookie`); `None` logs no dropped connections.
    pub logged_as: Option<&'static str>,
    /// Log lines' prefix (`iperf3 `).
    pub prefix: &'static str,
}

/// A connection and what has arrived of its greeting.
pub struct Pending {
    /// The connection (non-blocking).
    pub stream: MioStream,
    /// Its peer, IPv4-mapped addresses named as IPv4.
    pub peer: SocketAddr,
    since: Instant,
    /// The greeting's bytes so far (`buf[..got]`).
    pub buf: Vec<u8>,
    /// How many have arrived.
    pub got: usize,
}

impl Pending {
    /// Whether the whole greeting arrived (else the peer closed or failed before it).
    pub fn complete(&self, g: &Greeting) -> bool {
        self.got >= (g.want)(&self.buf[..self.got])
    }
}

/// The listening socket and the connections waiting for their greeting.
pub struct Acceptor {
    listener: MioListener,
    poll: Poll,
    events: Events,
    pending: HashMap<usize, Pending>,
    next_id: usize,
    greeting: Greeting,
}

impl Acceptor {
    /// Starts accepting on `listener`.
    pub fn new(listener: TcpListener, greeting: Greeting) -> io::Result<Acceptor> {
        listener.set_nonblocking(true)?;
        let mut listener = MioListener::from_std(listener);
        let poll = Poll::new()?;
        poll.registry().register(&mut listener, LISTENER, Interest::READABLE)?;
        let (events, pending) = (Events::with_capacity(256), HashMap::new());
        Ok(Acceptor { listener, poll, events, pending, next_id: 1, greeting })
    }

    /// Waits up to a tick for connections and greeting bytes; hands each connection whose
    /// greeting is complete, or that closed or failed first, to `ready` (blocking again);
    /// closes those older than `timeout`.
    pub fn turn(&mut self, timeout: Duration, mut ready: impl FnMut(Pending)) -> io::Result<()> {
        if let Err(e) = self.poll.poll(&mut self.events, Some(TICK)) {
            return if e.kind() == io::ErrorKind::Interrupted { Ok(()) } else { Err(e) };
        }
        let tokens: Vec<PollToken> = self.events.iter().map(|e| e.token()).collect();
        for token in tokens {
            if token == LISTENER {
                self.accept_all();
            } else if let Some(mut p) = self.advance(token.0).and_then(|id| self.pending.remove(&id)) {
                let _ = self.poll.registry().deregister(&mut p.stream);
                ready(p);
            }
        }
        self.expire(timeout);
        Ok(())
    }

    fn accept_all(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((mut stream, peer)) => {
                    // On a dual-stack socket an IPv4 client is ::ffff:a.b.c.d: name it as IPv4.
                    let peer = SocketAddr::new(peer.ip().to_canonical(), peer.port());
                    if self.pending.len() >= MAX_PENDING {
                        self.evict_oldest();
                    }
                    let id = self.next_id;
                    self.next_id = self.next_id.wrapping_add(1).max(1);
                    if self.poll.registry().register(&mut stream, PollToken(id), Interest::READABLE).is_ok() {
                        let buf = vec![0; self.greeting.max];
                        self.pending.insert(id, Pending { stream, peer, since: Instant::now(), buf, got: 0 });
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    tracing::warn!("{}accept: {e}", self.greeting.prefix);
                    return;
                }
            }
        }
    }

    fn evict_oldest(&mut self) {
        if let Some((&id, p)) = self.pending.iter().min_by_key(|(_, p)| p.since) {
            if let Some(what) = self.greeting.logged_as {
                tracing::info!(
                    "{}{}: dropped: too many connections waiting for their {what}",
                    self.greeting.prefix,
                    p.peer
                );
            }
            self.pending.remove(&id);
        }
    }

    /// Reads what is there of the greeting; returns the id when it is complete or the
    /// connection is finished with (closed or in error: `ready` then drops it).
    fn advance(&mut self, id: usize) -> Option<usize> {
        let want = self.greeting.want;
        let p = self.pending.get_mut(&id)?;
        loop {
            let need = want(&p.buf[..p.got]).min(p.buf.len());
            match p.stream.read(&mut p.buf[p.got..need]) {
                Ok(0) => return Some(id),
                Ok(n) => {
                    p.got += n;
                    if p.got >= want(&p.buf[..p.got]) {
                        return Some(id);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return None,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return Some(id),
            }
        }
    }

    fn expire(&mut self, timeout: Duration) {
        let now = Instant::now();
        let g = self.greeting;
        self.pending.retain(|_, p| {
            let alive = now.saturating_duration_since(p.since) < timeout;
            if let (false, Some(what)) = (alive, g.logged_as) {
                tracing::info!(
                    "{}{}: dropped: no {what} within {} s",
                    g.prefix,
                    p.peer,
                    timeout.as_secs_f64()
                );
            }
            alive
        });
    }
}
