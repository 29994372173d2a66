//! The native port's acceptor: each connection's 44-byte hello (76 with the tag of a data
//! hello, [`wire::DataHello`]) is read by [`super::pending`] (without blocking on any one
//! peer, within the handshake timeout, at most [`super::pending::MAX_PENDING`] waiting), then
//! dispatched. Exactly the hello is read, so a crr request sent in the same segment stays in
//! the socket for its worker.

use std::io::{self, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use wire::{DataHello, Hello, HelloKind, Message, Rejection, DATA_HELLO_LEN, HELLO_LEN};

use super::pending::{Acceptor, Greeting, Pending};
use super::{session, Shared};
use crate::stop::StopFlag;

/// Control connections allowed to be in the handshake (hello to setup) at once.
pub const MAX_HANDSHAKES: usize = 64;

/// The native hello: a data hello (kind byte 2) carries its tag too.
const HELLO: Greeting = Greeting { max: DATA_HELLO_LEN, want: hello_len, logged_as: None, prefix: "" };

fn hello_len(got: &[u8]) -> usize {
    const KIND: usize = 6;
    if got.len() >= HELLO_LEN && got[KIND] == 2 {
        DATA_HELLO_LEN
    } else {
        HELLO_LEN
    }
}

/// Runs the accept loop until `shutdown` (or one-off completion).
pub fn run(listener: TcpListener, shared: Arc<Shared>, shutdown: &StopFlag) -> io::Result<()> {
    let mut acceptor = Acceptor::new(listener, HELLO)?;
    while !shutdown.is_set() && !one_off_done(&shared) {
        acceptor.turn(shared.cfg.handshake_timeout, |p| dispatch(p, &shared))?;
    }
    Ok(())
}

fn one_off_done(shared: &Shared) -> bool {
    shared.cfg.one_off && shared.finished.load(Relaxed) > 0 && shared.active.load(Relaxed) == 0
}

fn dispatch(p: Pending, shared: &Arc<Shared>) {
    if !p.complete(&HELLO) {
        return;
    }
    let Pending { stream, peer, buf, .. } = p;
    let hello = match Hello::decode(&buf) {
        Ok(h) => h,
        Err(e) => {
            tracing::debug!("{peer}: {e}");
            return;
        }
    };
    let stream: std::net::TcpStream = stream.into();
    if stream.set_nonblocking(false).is_err() {
        return;
    }
    match hello.kind {
        HelloKind::Control { .. } => control(stream, peer, hello, shared),
        HelloKind::Data { .. } => {
            let delivered = DataHello::decode(&buf)
                .map_err(|_| "malformed data hello")
                .and_then(|h| shared.routes.deliver(&h, peer.ip(), stream));
            if let Err(why) = delivered {
                tracing::debug!("{peer}: data connection refused: {why}");
            }
        }
        HelloKind::Server { .. } => tracing::debug!("{peer}: sent a server hello"),
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
