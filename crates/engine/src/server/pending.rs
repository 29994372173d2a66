//! Accepting connections that must first say who they are: a fixed-size greeting (the
//! native hello and the client's authentication, iperf3's cookie) is read from each without
//! blocking on any one peer and without a thread per peer. A greeting may have two stages:
//! the first (the hello), the server's answer to it (its own hello), then the second (the
//! authentication); no peer gets a thread of its own before its whole greeting arrived.
//!
//! Budgets (what an unauthenticated peer can hold): a connection whose first stage is not
//! complete within [`FIRST_BYTES`], or whose whole greeting is not within the handshake
//! timeout, is closed; at most [`MAX_PENDING`] wait at once. When the table is full, the
//! oldest connection of the source holding the most is dropped: a source (an IPv4 address,
//! an IPv6 /64) is held to its fair share of the table, so a flood from a few sources
//! evicts only its own connections, never those of a client from another address.
//! Exactly the greeting is read, so what the peer sent after it stays in the socket for
//! whoever serves it. Both acceptors (the native port's and the iperf3 port's) run on
//! this.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::time::{Duration, Instant};

use mio::net::{TcpListener as MioListener, TcpStream as MioStream};
use mio::{Events, Interest, Poll, Token as PollToken};

use super::refusals::Refusals;

/// Connections allowed to be waiting for their greeting at once.
pub const MAX_PENDING: usize = 256;
/// How long a connection has for the first stage of its greeting (a client sends it as soon
/// as it is connected: this is one trip across the path, with room for slow paths).
pub const FIRST_BYTES: Duration = Duration::from_secs(2);
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
    /// When the first stage is complete: the answer to send and where the second stage
    /// ends (bytes from the start); `None`: the greeting is complete.
    pub next: fn(&[u8]) -> Option<Stage>,
    /// Its name in log lines (`cookie`); `None` logs no dropped connections.
    pub logged_as: Option<&'static str>,
    /// Log lines' prefix (`iperf3 `).
    pub prefix: &'static str,
}

/// The second stage of a greeting: what the server answers the first, and where it ends.
#[derive(Debug, Clone)]
pub struct Stage {
    /// Sent to the peer before it sends the second stage.
    pub answer: Vec<u8>,
    /// The greeting's whole length, first stage included.
    pub end: usize,
}

/// No second stage.
pub fn one_stage(_: &[u8]) -> Option<Stage> {
    None
}

/// What has arrived of one connection's greeting: the state machine the acceptor drives,
/// without I/O (the acceptor reads into `buf[got..need]` and sends the answers), so that it
/// is tested and fuzzed on bytes alone.
#[derive(Debug, Clone)]
pub struct Progress {
    /// The greeting's bytes so far (`buf[..got]`).
    pub buf: Vec<u8>,
    /// How many have arrived.
    pub got: usize,
    /// The second stage, once the first is answered: what was sent, and its end.
    pub second: Option<Stage>,
}

/// What the acceptor does after bytes arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Read more (up to [`Progress::need`]).
    More,
    /// Send these bytes (the answer to the first stage), then read the second stage.
    Answer(Vec<u8>),
    /// The greeting is complete: hand the connection over.
    Done,
}

impl Progress {
    /// Nothing arrived yet.
    pub fn new(g: &Greeting) -> Progress {
        Progress { buf: vec![0; g.max], got: 0, second: None }
    }

    /// Whether the whole greeting arrived.
    pub fn complete(&self, g: &Greeting) -> bool {
        self.got >= self.need(g)
    }

    /// Where the stage being read ends (bytes from the start, at most the buffer's size).
    pub fn need(&self, g: &Greeting) -> usize {
        match &self.second {
            Some(stage) => stage.end,
            None => (g.want)(&self.buf[..self.got]),
        }
        .min(self.buf.len())
    }

    /// Counts `n` more bytes read into `buf[got..]`; what to do next.
    pub fn arrived(&mut self, g: &Greeting, n: usize) -> Step {
        self.got = self.got.saturating_add(n).min(self.buf.len());
        if self.got < self.need(g) {
            return Step::More;
        }
        if self.second.is_none() {
            if let Some(stage) = (g.next)(&self.buf[..self.got]) {
                let answer = stage.answer.clone();
                self.second = Some(stage);
                if self.got < self.need(g) {
                    return Step::Answer(answer);
                }
            }
        }
        Step::Done
    }
}

/// A connection and what has arrived of its greeting.
pub(crate) struct Pending {
    /// The connection (non-blocking).
    pub stream: MioStream,
    /// Its peer, IPv4-mapped addresses named as IPv4.
    pub peer: SocketAddr,
    since: Instant,
    /// Its greeting so far.
    pub progress: Progress,
}

impl Pending {
    /// Whether the whole greeting arrived (else the peer closed or failed before it).
    pub fn complete(&self, g: &Greeting) -> bool {
        self.progress.complete(g)
    }
}

/// Which waiting connection to drop when the table is full: the oldest of the source holding
/// the most (ids, peers and arrival times of the waiting connections).
fn evictee(waiting: impl Iterator<Item = (usize, IpAddr, Instant)> + Clone) -> Option<usize> {
    let mut held: HashMap<IpAddr, usize> = HashMap::new();
    for (_, ip, _) in waiting.clone() {
        *held.entry(source(ip)).or_default() += 1;
    }
    let most = held.values().copied().max()?;
    waiting
        .filter(|(_, ip, _)| held.get(&source(*ip)) == Some(&most))
        .min_by_key(|&(_, _, at)| at)
        .map(|(id, ..)| id)
}

/// The source a connection is counted under: its IPv4 address, or its IPv6 /64 (one host
/// can hold a whole /64).
pub fn source(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => {
            let s = v6.segments();
            IpAddr::from([s[0], s[1], s[2], s[3], 0, 0, 0, 0])
        }
        v4 => v4,
    }
}

/// The listening socket and the connections waiting for their greeting.
pub(crate) struct Acceptor {
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
    /// Lines about dropped connections go through `gate`.
    pub fn turn(
        &mut self,
        timeout: Duration,
        gate: &Refusals,
        mut ready: impl FnMut(Pending),
    ) -> io::Result<()> {
        if let Err(e) = self.poll.poll(&mut self.events, Some(TICK)) {
            return if e.kind() == io::ErrorKind::Interrupted { Ok(()) } else { Err(e) };
        }
        let tokens: Vec<PollToken> = self.events.iter().map(|e| e.token()).collect();
        for token in tokens {
            if token == LISTENER {
                self.accept_all(gate);
            } else if let Some(mut p) = self.advance(token.0).and_then(|id| self.pending.remove(&id)) {
                let _ = self.poll.registry().deregister(&mut p.stream);
                ready(p);
            }
        }
        self.expire(timeout, gate);
        Ok(())
    }

    fn accept_all(&mut self, gate: &Refusals) {
        loop {
            match self.listener.accept() {
                Ok((mut stream, peer)) => {
                    // On a dual-stack socket an IPv4 client is ::ffff:a.b.c.d: name it as IPv4.
                    let peer = SocketAddr::new(peer.ip().to_canonical(), peer.port());
                    if self.pending.len() >= MAX_PENDING {
                        self.evict_oldest(gate);
                    }
                    let id = self.next_id;
                    self.next_id = self.next_id.wrapping_add(1).max(1);
                    if self.poll.registry().register(&mut stream, PollToken(id), Interest::READABLE).is_ok() {
                        let since = Instant::now();
                        let p = Pending { stream, peer, since, progress: Progress::new(&self.greeting) };
                        self.pending.insert(id, p);
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

    /// Drops the oldest connection of the source holding the most.
    fn evict_oldest(&mut self, gate: &Refusals) {
        let victim = evictee(self.pending.iter().map(|(&id, p)| (id, p.peer.ip(), p.since)))
            .and_then(|id| self.pending.get(&id).map(|p| (id, p)));
        if let Some((id, p)) = victim {
            if let Some(what) = self.greeting.logged_as {
                let line = format!(
                    "{}{}: dropped: too many connections waiting for their {what}",
                    self.greeting.prefix, p.peer
                );
                gate.log(p.peer.ip(), &line);
            }
            self.pending.remove(&id);
        }
    }

    /// Reads what is there of the greeting; returns the id when it is complete or the
    /// connection is finished with (closed or in error: `ready` then drops it).
    fn advance(&mut self, id: usize) -> Option<usize> {
        let g = self.greeting;
        let p = self.pending.get_mut(&id)?;
        loop {
            let (got, need) = (p.progress.got, p.progress.need(&g));
            match p.stream.read(&mut p.progress.buf[got..need]) {
                Ok(0) => return Some(id),
                Ok(n) => match p.progress.arrived(&g, n) {
                    Step::More => {}
                    // A peer that does not take the answer at once is not waited for.
                    Step::Answer(a) if !p.stream.write(&a).is_ok_and(|w| w == a.len()) => return Some(id),
                    Step::Answer(_) => {}
                    Step::Done => return Some(id),
                },
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return None,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return Some(id),
            }
        }
    }

    /// Closes the connections past their deadline: [`FIRST_BYTES`] for the first stage,
    /// `timeout` for the whole greeting.
    fn expire(&mut self, timeout: Duration, gate: &Refusals) {
        let now = Instant::now();
        let g = self.greeting;
        self.pending.retain(|_, p| {
            let limit = if p.progress.second.is_some() { timeout } else { timeout.min(FIRST_BYTES) };
            let alive = now.saturating_duration_since(p.since) < limit;
            if let (false, Some(what)) = (alive, g.logged_as) {
                let line =
                    format!("{}{}: dropped: no {what} within {} s", g.prefix, p.peer, limit.as_secs_f64());
                gate.log(p.peer.ip(), &line);
            }
            alive
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_native_greeting_is_answered_once_then_complete_with_the_authentication() {
        let g = crate::server::NATIVE_GREETING;
        let mut p = Progress::new(&g);
        let feed = |p: &mut Progress, bytes: &[u8]| {
            p.buf[p.got..p.got + bytes.len()].copy_from_slice(bytes);
            p.arrived(&g, bytes.len())
        };
        let hello = wire::Hello::control([5; 32]).encode();
        assert_eq!(feed(&mut p, &hello[..10]), Step::More);
        let Step::Answer(answer) = feed(&mut p, &hello[10..]) else { panic!("no answer") };
        assert!(matches!(wire::Hello::decode(&answer).unwrap().kind, wire::HelloKind::Server { .. }));
        let auth = wire::auth::ClientAuth::Anonymous.encode();
        assert_eq!(p.need(&g), wire::HELLO_LEN + auth.len());
        assert_eq!(feed(&mut p, &auth[..1]), Step::More);
        assert_eq!(feed(&mut p, &auth[1..]), Step::Done);
        assert!(p.complete(&g));
        // A data hello is complete without an answer; a hello of another version too.
        let mut d = Progress::new(&g);
        let data = wire::DataHello::new(wire::Token([1; 16]), 0, [0; 32]).encode();
        assert_eq!(feed(&mut d, &data), Step::Done);
        let mut old = Progress::new(&g);
        let mut h = wire::Hello::control([5; 32]);
        h.version = 1;
        assert_eq!(feed(&mut old, &h.encode()), Step::Done);
    }

    #[test]
    fn an_ipv6_source_is_its_64_and_an_ipv4_one_its_address() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::7".parse().unwrap();
        assert_eq!(source(a), source(b));
        assert_ne!(source(a), source("2001:db8:1:3::1".parse().unwrap()));
        assert_eq!(source("::ffff:198.18.0.1".parse().unwrap()), "198.18.0.1".parse::<IpAddr>().unwrap());
        assert_ne!(source("198.18.0.1".parse().unwrap()), source("198.18.0.2".parse().unwrap()));
    }

    #[test]
    fn a_full_table_drops_the_oldest_of_the_source_holding_the_most() {
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let (flood, client): (IpAddr, IpAddr) =
            ("198.18.0.66".parse().unwrap(), "198.18.0.1".parse().unwrap());
        // The client's connection is the oldest, but the flood holds more: its oldest goes.
        let waiting = [(1, client, at(0)), (2, flood, at(5)), (3, flood, at(1)), (4, flood, at(9))];
        assert_eq!(evictee(waiting.iter().copied()), Some(3));
        // Equal shares: the oldest overall.
        let even = [(1, client, at(3)), (2, flood, at(2))];
        assert_eq!(evictee(even.iter().copied()), Some(2));
        assert_eq!(evictee(std::iter::empty()), None);
    }
}
