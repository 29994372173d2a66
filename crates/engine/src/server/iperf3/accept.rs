//! The iperf3 port's TCP acceptor. Every connection starts with a 37-byte cookie (control
//! and data alike); it is read without blocking on any one peer, within the handshake
//! timeout, at most [`MAX_PENDING`] connections waiting at once (the oldest is dropped
//! first). Nothing else is read before a test slot is taken: a cookie a running test knows
//! is a data stream, any other opens a test, or is told ACCESS_DENIED when every slot is
//! taken, as a busy iperf3 server does.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::net::{TcpListener as MioListener, TcpStream as MioStream};
use mio::{Events, Interest, Poll, Token as PollToken};
use wire::iperf3::{Cookie, State, COOKIE_LEN};

use super::streams::{CookieBytes, Routed};
use super::{session, Service};
use crate::stop::StopFlag;

/// Connections allowed to be waiting for their cookie at once.
pub const MAX_PENDING: usize = 256;
const LISTENER: PollToken = PollToken(0);
const TICK: Duration = Duration::from_millis(100);

struct Pending {
    stream: MioStream,
    peer: SocketAddr,
    since: Instant,
    buf: CookieBytes,
    got: usize,
}

/// Runs the accept loop until `shutdown`.
pub fn run(listener: TcpListener, service: &Arc<Service>, shutdown: &StopFlag) -> io::Result<()> {
    listener.set_nonblocking(true)?;
    let mut listener = MioListener::from_std(listener);
    let mut poll = Poll::new()?;
    poll.registry().register(&mut listener, LISTENER, Interest::READABLE)?;
    let mut events = Events::with_capacity(256);
    let mut pending: HashMap<usize, Pending> = HashMap::new();
    let mut next_id = 1usize;
    while !shutdown.is_set() {
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
                dispatch(p, service);
            }
        }
        expire(&mut pending, service.shared.cfg.handshake_timeout);
    }
    Ok(())
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
                let peer = SocketAddr::new(peer.ip().to_canonical(), peer.port());
                if pending.len() >= MAX_PENDING {
                    evict_oldest(pending);
                }
                let id = *next_id;
                *next_id = next_id.wrapping_add(1).max(1);
                if poll.registry().register(&mut stream, PollToken(id), Interest::READABLE).is_ok() {
                    let p = Pending { stream, peer, since: Instant::now(), buf: [0; COOKIE_LEN], got: 0 };
                    pending.insert(id, p);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                tracing::warn!("iperf3 accept: {e}");
                return;
            }
        }
    }
}

fn evict_oldest(pending: &mut HashMap<usize, Pending>) {
    if let Some((&id, p)) = pending.iter().min_by_key(|(_, p)| p.since) {
        tracing::info!("iperf3 {}: dropped: too many connections waiting for their cookie", p.peer);
        pending.remove(&id);
    }
}

/// Reads what is there of the cookie; returns the id when it is complete or the connection
/// is finished with (closed or in error: dispatch then drops it).
fn advance(id: usize, pending: &mut HashMap<usize, Pending>) -> Option<usize> {
    let p = pending.get_mut(&id)?;
    loop {
        match p.stream.read(&mut p.buf[p.got..]) {
            Ok(0) => return Some(id),
            Ok(n) => {
                p.got += n;
                if p.got == COOKIE_LEN {
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
    pending.retain(|_, p| {
        let alive = now.saturating_duration_since(p.since) < timeout;
        if !alive {
            tracing::info!("iperf3 {}: dropped: no cookie within {} s", p.peer, timeout.as_secs_f64());
        }
        alive
    });
}

fn dispatch(p: Pending, service: &Arc<Service>) {
    if p.got < COOKIE_LEN {
        tracing::info!("iperf3 {}: closed after {} bytes, before a whole cookie", p.peer, p.got);
        return;
    }
    let stream: TcpStream = p.stream.into();
    if stream.set_nonblocking(false).is_err() {
        return;
    }
    let Ok(probe) = stream.try_clone() else { return };
    match service.streams.deliver_tcp(&p.buf, p.peer.ip(), stream) {
        Routed::Delivered => {}
        Routed::Refused => {
            tracing::info!("iperf3 {}: data stream refused (its test takes no streams from it)", p.peer);
            deny(probe);
        }
        Routed::Unknown => match Cookie::decode(&p.buf) {
            Ok(cookie) => control(probe, p.peer, cookie, service),
            Err(e) => tracing::info!("iperf3 {}: not an iperf3 client: {e}", p.peer),
        },
    }
}

/// A new control connection: a test slot, or ACCESS_DENIED.
fn control(stream: TcpStream, peer: SocketAddr, cookie: Cookie, service: &Arc<Service>) {
    let Some(admission) = service.shared.try_admit() else {
        let running = service.shared.active.load(Relaxed);
        tracing::info!("iperf3 {peer}: refused: busy ({running} test(s) running)");
        deny(stream);
        return;
    };
    let service = service.clone();
    let spawned = std::thread::Builder::new().name(format!("iperf3 {peer}")).spawn(move || {
        session::serve(stream, peer, cookie, &service, admission);
    });
    if let Err(e) = spawned {
        tracing::warn!("cannot start an iperf3 session thread: {e}");
    }
}

/// Answers ACCESS_DENIED (the client says "the server is busy") and closes.
fn deny(mut stream: TcpStream) {
    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
    let _ = stream.write_all(&[State::AccessDenied.to_byte()]);
}
