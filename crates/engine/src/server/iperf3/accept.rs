//! The iperf3 port's TCP acceptor. Every connection starts with a 37-byte cookie (control
//! and data alike), read by [`crate::server::pending`] (without blocking on any one peer,
//! within the handshake timeout, at most [`crate::server::pending::MAX_PENDING`] waiting).
//! Nothing else is read before a test slot is taken: a cookie a running test knows is a data
//! stream, any other opens a test, or is told ACCESS_DENIED when every slot is taken, as a
//! busy iperf3 server does.

use std::io::{self, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use wire::iperf3::{Cookie, State, COOKIE_LEN};

use super::streams::{CookieBytes, Routed};
use super::{session, Service};
use crate::server::pending::{one_stage, Acceptor, Greeting, Pending};
use crate::stop::StopFlag;

/// iperf3's cookie.
const COOKIE: Greeting = Greeting {
    max: COOKIE_LEN,
    want: |_| COOKIE_LEN,
    next: one_stage,
    logged_as: Some("cookie"),
    prefix: "iperf3 ",
};

/// Runs the accept loop until `shutdown`.
pub fn run(listener: TcpListener, service: &Arc<Service>, shutdown: &StopFlag) -> io::Result<()> {
    let mut acceptor = Acceptor::new(listener, COOKIE)?;
    while !shutdown.is_set() {
        acceptor.turn(service.shared.cfg.handshake_timeout, |p| dispatch(p, service))?;
    }
    Ok(())
}

fn dispatch(p: Pending, service: &Arc<Service>) {
    if !p.complete(&COOKIE) {
        tracing::info!("iperf3 {}: closed after {} bytes, before a whole cookie", p.peer, p.got);
        return;
    }
    let Pending { stream, peer, buf, .. } = p;
    let Ok(cookie_bytes) = CookieBytes::try_from(&buf[..COOKIE_LEN]) else { return };
    let stream: TcpStream = stream.into();
    if stream.set_nonblocking(false).is_err() {
        return;
    }
    let Ok(probe) = stream.try_clone() else { return };
    match service.streams.deliver_tcp(&cookie_bytes, peer.ip(), stream) {
        Routed::Delivered => {}
        Routed::Refused => {
            tracing::info!("iperf3 {peer}: data stream refused (its test takes no streams from it)");
            deny(probe);
        }
        Routed::Unknown => match Cookie::decode(&cookie_bytes) {
            Ok(cookie) => control(probe, peer, cookie, service),
            Err(e) => tracing::info!("iperf3 {peer}: not an iperf3 client: {e}"),
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
