//! The native port's acceptor. Every connection's greeting is read by [`super::pending`]
//! (without blocking on any one peer and without a thread per peer): a data hello (76
//! bytes, [`wire::DataHello`]) is handed to its test; a control hello (44 bytes) is answered
//! with the server hello, then the client's authentication ([`wire::auth::ClientAuth`]) is
//! read and judged here too. Only an authenticated client (or, on a server without keys, an
//! anonymous one) gets a session thread, and then under its class's handshake budget
//! ([`MAX_HANDSHAKES`] per key class until it asks for a test): a peer without a key never
//! holds anything a key holder needs. Exactly the greeting is read, so a crr request sent in
//! the same segment stays in the socket for its worker.

use std::io::{self, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use mio::net::TcpStream as MioStream;
use wire::auth::CLIENT_AUTH_LEN;
use wire::{DataHello, Hello, HelloKind, DATA_HELLO_LEN, HELLO_LEN, MACHINE_FLAG};

use super::pending::{Acceptor, Greeting, Pending, Stage};
use super::record::Record;
use super::{session, Shared};
use crate::auth;
use crate::session::greeting;
use crate::stop::StopFlag;

/// Authenticated control connections of one class allowed between authentication and
/// their test request at once.
pub const MAX_HANDSHAKES: u32 = 64;

/// How often the summaries of refusals not logged are written.
const FLUSH_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// A control hello and the authentication after it.
const CONTROL_GREETING: usize = HELLO_LEN + CLIENT_AUTH_LEN;

/// The native greeting.
pub const GREETING: Greeting = Greeting {
    max: if CONTROL_GREETING > DATA_HELLO_LEN { CONTROL_GREETING } else { DATA_HELLO_LEN },
    want: hello_len,
    next: answer_hello,
    logged_as: None,
    prefix: "",
};

fn hello_len(got: &[u8]) -> usize {
    const KIND: usize = 6;
    if got.len() >= HELLO_LEN && got[KIND] == 2 {
        DATA_HELLO_LEN
    } else {
        HELLO_LEN
    }
}

/// A control hello this server speaks is answered with the server hello (a fresh nonce),
/// followed by this machine's id when the client asked ([`wire::MACHINE_FLAG`]); then the
/// authentication follows. Anything else is complete as it is.
fn answer_hello(got: &[u8]) -> Option<Stage> {
    let hello = Hello::decode(got).ok()?;
    let HelloKind::Control { nonce: client_nonce } = hello.kind else { return None };
    if crate::protocol::check_client_hello(&hello).is_err() {
        return None;
    }
    let nonce = netio::random_bytes::<32>().ok()?;
    let boot_id = netio::host::boot_id();
    let answer = if hello.has(MACHINE_FLAG) && !boot_id.is_empty() {
        let mut out = Hello::server(nonce).with(MACHINE_FLAG).encode().to_vec();
        out.extend_from_slice(&wire::machine_id(&boot_id, &client_nonce));
        out
    } else {
        Hello::server(nonce).encode().to_vec()
    };
    Some(Stage { answer, end: CONTROL_GREETING })
}

/// Runs the accept loop until `shutdown` (or one-off completion).
pub fn run(listener: TcpListener, shared: Arc<Shared>, shutdown: &StopFlag) -> io::Result<()> {
    let mut acceptor = Acceptor::new(listener, GREETING)?;
    let mut flushed = std::time::Instant::now();
    while !shutdown.is_set() && !one_off_done(&shared) {
        acceptor.turn(shared.cfg.handshake_timeout, &shared.refusals, |p| dispatch(p, &shared))?;
        if flushed.elapsed() >= FLUSH_EVERY {
            shared.refusals.flush();
            flushed = std::time::Instant::now();
        }
    }
    shared.refusals.flush();
    Ok(())
}

fn one_off_done(shared: &Shared) -> bool {
    shared.cfg.one_off && shared.finished.load(Relaxed) > 0 && shared.active.load(Relaxed) == 0
}

fn dispatch(p: Pending, shared: &Arc<Shared>) {
    if !p.complete(&GREETING) {
        return;
    }
    let hello = match Hello::decode(&p.progress.buf) {
        Ok(h) => h,
        Err(e) => {
            tracing::debug!("{}: {e}", p.peer);
            return;
        }
    };
    match hello.kind {
        HelloKind::Control { nonce } => control(p, &hello, nonce, shared),
        HelloKind::Data { .. } => data(p, shared),
        HelloKind::Server { .. } => tracing::debug!("{}: sent a server hello", p.peer),
    }
}

fn data(p: Pending, shared: &Shared) {
    let Pending { stream, peer, progress, .. } = p;
    let buf = progress.buf;
    let Some(stream) = blocking(stream) else { return };
    let delivered = DataHello::decode(&buf)
        .map_err(|_| "malformed data hello")
        .and_then(|h| shared.routes.deliver(&h, peer.ip(), stream));
    if let Err(why) = delivered {
        tracing::debug!("{peer}: data connection refused: {why}");
    }
}

/// Judges a control connection's authentication and starts its session, or refuses it.
fn control(p: Pending, hello: &Hello, nc: [u8; 32], shared: &Arc<Shared>) {
    let Pending { mut stream, peer, progress, .. } = p;
    let (buf, second) = (progress.buf, progress.second);
    let mut rec = Record::new(peer);
    let ns = second.and_then(|s| Hello::decode(&s.answer).ok()).and_then(|h| match h.kind {
        HelloKind::Server { nonce } => Some(nonce),
        _ => None,
    });
    let Some(ns) = ns else {
        // Not answered: a protocol version this server does not speak (or no randomness).
        let refused = greeting::unanswered(hello, netio::random_bytes::<32>().unwrap_or([0; 32]));
        return refuse(&mut stream, refused, rec, shared);
    };
    let ring = shared.cfg.keys.as_ref().map(|k| k.current());
    let (client, out) =
        match greeting::authenticated(auth::judge(ring.as_deref(), (&nc, &ns), &buf[HELLO_LEN..])) {
            Ok(accepted) => accepted,
            Err(refused) => return refuse(&mut stream, refused, rec, shared),
        };
    rec.key = client.key_id.as_ref().map(|i| i.to_string());
    let policy = match &ring {
        Some(ring) if client.key_id.is_some() => ring.class(&client.class),
        _ => shared.cfg.anonymous.clone(),
    };
    let running = shared.active.load(Relaxed);
    let free = running < shared.cfg.max_concurrent;
    let handshake = free.then(|| shared.handshaking.try_start(&policy.class, Some(MAX_HANDSHAKES))).flatten();
    let Some(handshake) = handshake else {
        // Told instead of the answer to its authentication (the client reads either).
        let refused = greeting::busy(running, free, (&policy.class, MAX_HANDSHAKES));
        return refuse(&mut stream, refused, rec, shared);
    };
    if !send_now(&mut stream, &out) {
        return;
    }
    let Some(stream) = blocking(stream) else { return };
    let shared = shared.clone();
    let spawned = std::thread::Builder::new().name(format!("session {peer}")).spawn(move || {
        session::serve(stream, (peer, rec), (client, policy), &shared, handshake);
    });
    if let Err(e) = spawned {
        tracing::warn!("cannot start a session thread: {e}");
    }
}

/// Sends what a refused greeting is owed and logs why.
fn refuse(stream: &mut MioStream, refused: greeting::Refused, mut rec: Record, shared: &Shared) {
    send_now(stream, &refused.send);
    rec.key = refused.key_id.or(rec.key);
    rec.log_refused(&shared.refusals, &refused.reason);
}

/// Writes `bytes` without waiting (a fresh connection's send buffer takes them); false if
/// they did not all go.
fn send_now(stream: &mut MioStream, bytes: &[u8]) -> bool {
    bytes.is_empty() || stream.write(bytes).is_ok_and(|n| n == bytes.len())
}

fn blocking(stream: MioStream) -> Option<TcpStream> {
    let stream: TcpStream = stream.into();
    stream.set_nonblocking(false).ok()?;
    Some(stream)
}
