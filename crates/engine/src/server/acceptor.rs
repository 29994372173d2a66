//! The acceptor: accepts, reads each connection's 44-byte hello (76 with the tag of a data
//! hello, [`wire::DataHello`]) without blocking on any one peer, and dispatches. A connection
//! that has not sent its hello within the handshake timeout is closed; at most
//! [`MAX_PENDING`] wait at once (the oldest is dropped first). Exactly the hello is read, so a
//! crr request sent in the same segment stays in the socket for its worker.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::net::{TcpListener as MioListener, TcpStream as MioStream};
use mio::{Events, Interest, Poll, Token as PollToken};
use wire::{DataHello, Hello, HelloKind, Message, Rejection, DATA_HELLO_LEN, HELLO_LEN};

use super::{session, Shared};
use crate::stop::StopFlag;

/// Connections allowed to be waiting for their hello at once.
pub const MAX_PENDING: usize = 256;
/// Control connections allowed to be in the handshake (hello to setup) at once.
pub const MAX_HANDSHAKES: usize = 64;
const LISTENER: PollToken = PollToken(0);
const TICK: Duration = Duration::from_millis(100);

struct Pending {
    stream: MioStream,
    peer: SocketAddr,
    since: Instant,
    buf: [u8; DATA_HELLO_LEN],
    got: usize,
}

impl Pending {
    /// Bytes of this connection's hello: a data hello carries its tag too.
    fn want(&self) -> usize {
        const KIND: usize = 6;
        if self.got >= HELLO_LEN && self.buf[KIND] == 2 {
            DATA_HELLO_LEN
        } else {
            HELLO_LEN
        }
    }
}

/// Runs the accept loop until `shutdown` (or one-off completion).
pub fn run(listener: TcpListener, shared: Arc<Shared>, shutdown: &StopFlag) -> io::Result<()> {
    listener.set_nonblocking(true)?;
    let mut listener = MioListener::from_std(listener);
    let mut poll = Poll::new()?;
    poll.registry().register(&mut listener, LISTENER, Interest::READABLE)?;
    let mut events = Events::with_capacity(256);
    let mut pending: HashMap<usize, Pending> = HashMap::new();
    let mut next_id = 1usize;
    while !shutdown.is_set() && !one_off_done(&shared) {
        if let Err(e) = poll.poll(&mut events, Some(TICK)) {
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        for ev in events.iter() {
            if ev.token() == LISTENER {
                accept_all(&listener, &poll, &mut pending, &mut next_id);
            } else if let Some(mut p) = advance(ev.token().0, &mut pending).and_then(|id| pending.remove(&id))
            {
                let _ = poll.registry().deregister(&mut p.stream);
                dispatch(p, &shared);
            }
        }
        expire(&mut pending, shared.cfg.handshake_timeout);
    }
    Ok(())
}

fn one_off_done(shared: &Shared) -> bool {
    shared.cfg.one_off && shared.finished.load(Relaxed) > 0 && shared.active.load(Relaxed) == 0
}

fn accept_all(
    listener: &MioListener,
    poll: &Poll,
    pending: &mut HashMap<usize, Pending>,
    next_id: &mut usize,
) {
    loop {
        match listener.accept() {
            Ok((mut stream, peer)) => {
                // On a dual-stack socket an IPv4 client is ::ffff:a.b.c.d: name it as IPv4.
                let peer = SocketAddr::new(peer.ip().to_canonical(), peer.port());
                if pending.len() >= MAX_PENDING {
                    evict_oldest(pending);
                }
                let id = *next_id;
                *next_id = next_id.wrapping_add(1).max(1);
                if poll.registry().register(&mut stream, PollToken(id), Interest::READABLE).is_ok() {
                    pending.insert(
                        id,
                        Pending { stream, peer, since: Instant::now(), buf: [0; DATA_HELLO_LEN], got: 0 },
                    );
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                tracing::warn!("accept: {e}");
                return;
            }
        }
    }
}

fn evict_oldest(pending: &mut HashMap<usize, Pending>) {
    if let Some((&id, _)) = pending.iter().min_by_key(|(_, p)| p.since) {
        pending.remove(&id);
    }
}

/// Reads what is there of the hello; returns the id when the hello is complete or the
/// connection is finished with (closed or in error: dispatch then drops it).
fn advance(id: usize, pending: &mut HashMap<usize, Pending>) -> Option<usize> {
    let p = pending.get_mut(&id)?;
    loop {
        let want = p.want();
        match p.stream.read(&mut p.buf[p.got..want]) {
            Ok(0) => return Some(id),
            Ok(n) => {
                p.got += n;
                if p.got == p.want() {
                    return Some(id);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return None,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return Some(id),
        }
    }
}

fn expire(pending: &mut HashMap<usize, Pending>, timeout: Duration) {
    let now = Instant::now();
    pending.retain(|_, p| now.saturating_duration_since(p.since) < timeout);
}

fn dispatch(p: Pending, shared: &Arc<Shared>) {
    if p.got < p.want() {
        return;
    }
    let hello = match Hello::decode(&p.buf) {
        Ok(h) => h,
        Err(e) => {
            tracing::debug!("{}: {e}", p.peer);
            return;
        }
    };
    let stream: std::net::TcpStream = p.stream.into();
    if stream.set_nonblocking(false).is_err() {
        return;
    }
    match hello.kind {
        HelloKind::Control { .. } => control(stream, p.peer, hello, shared),
        HelloKind::Data { .. } => {
            let delivered = DataHello::decode(&p.buf)
                .map_err(|_| "malformed data hello")
                .and_then(|h| shared.routes.deliver(&h, p.peer.ip(), stream));
            if let Err(why) = delivered {
                tracing::debug!("{}: data connection refused: {why}", p.peer);
            }
        }
        HelloKind::Server { .. } => tracing::debug!("{}: sent a server hello", p.peer),
    }
}

/// Starts a session for a control connection, or answers busy. The test slot is taken only
/// once the client has authenticated (anonymously on a server without keys) and asked for a
/// test, so a peer that stalls in the handshake never holds it; at most [`MAX_HANDSHAKES`]
/// clients are in the handshake at once.
fn control(mut stream: std::net::TcpStream, peer: SocketAddr, hello: Hello, shared: &Arc<Shared>) {
    let full = shared.handshaking.load(Relaxed) >= MAX_HANDSHAKES
        || shared.active.load(Relaxed) >= shared.cfg.max_concurrent;
    if full {
        tracing::info!("{peer}: refused: busy ({} test(s) running)", shared.active.load(Relaxed));
        refuse(&mut stream, super::busy());
        return;
    }
    let (admission, handshake) = (None, Some(super::Handshaking::start(shared)));
    let shared = shared.clone();
    let spawned = std::thread::Builder::new().name(format!("session {peer}")).spawn(move || {
        session::serve(stream, peer, hello, &shared, (admission, handshake));
    });
    if let Err(e) = spawned {
        tracing::warn!("cannot start a session thread: {e}");
    }
}

/// Answers a control hello with the server hello and one error, then closes.
fn refuse(stream: &mut std::net::TcpStream, why: Rejection) {
    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
    let nonce = netio::random_bytes::<32>().unwrap_or([0; 32]);
    let mut out = Hello::server(nonce).encode().to_vec();
    out.extend(Message::Error(why).encode().unwrap_or_default());
    let _ = stream.write_all(&out);
}
