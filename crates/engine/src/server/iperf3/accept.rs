//! The iperf3 port's TCP acceptor. Every connection starts with a 37-byte cookie (control
//! and data alike), read by [`crate::server::pending`] (without blocking on any one peer,
//! within the handshake timeout, at most [`crate::server::pending::MAX_PENDING`] waiting).
//! Nothing else is read before a test slot is taken: a cookie a running test knows is a data
//! stream, any other opens a test ([`Slot`]), or is told ACCESS_DENIED when no slot is free,
//! as a busy iperf3 server does.

use std::io::{self, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use wire::iperf3::{Cookie, State, COOKIE_LEN};

use super::streams::{CookieBytes, Routed};
use super::{session, Service};
use crate::server::pending::{one_stage, Acceptor, Greeting, Pending};
use crate::server::quota::RunningSlot;
use crate::server::{Admission, Shared};
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
        acceptor
            .turn(service.shared.cfg.handshake_timeout, &service.shared.refusals, |p| dispatch(p, service))?;
    }
    Ok(())
}

fn dispatch(p: Pending, service: &Arc<Service>) {
    if !p.complete(&COOKIE) {
        let line = format!("iperf3 {}: closed after {} bytes, before a whole cookie", p.peer, p.progress.got);
        service.shared.refusals.log(p.peer.ip(), &line);
        return;
    }
    let Pending { stream, peer, progress, .. } = p;
    let buf = progress.buf;
    let Ok(cookie_bytes) = CookieBytes::try_from(&buf[..COOKIE_LEN]) else { return };
    let stream: TcpStream = stream.into();
    if stream.set_nonblocking(false).is_err() {
        return;
    }
    let Ok(probe) = stream.try_clone() else { return };
    match service.streams.deliver_tcp(&cookie_bytes, peer.ip(), stream) {
        Routed::Delivered => {}
        Routed::Refused => {
            let line = format!("iperf3 {peer}: data stream refused (its test takes no streams from it)");
            service.shared.refusals.log(peer.ip(), &line);
            deny(probe);
        }
        Routed::Unknown => match Cookie::decode(&cookie_bytes) {
            Ok(cookie) => control(probe, peer, cookie, service),
            Err(e) => {
                service.shared.refusals.log(peer.ip(), &format!("iperf3 {peer}: not an iperf3 client: {e}"))
            }
        },
    }
}

/// A new control connection: a test slot, or ACCESS_DENIED.
fn control(stream: TcpStream, peer: SocketAddr, cookie: Cookie, service: &Arc<Service>) {
    let slot = match Slot::take(&service.shared, peer) {
        Ok(slot) => slot,
        Err(why) => {
            service.shared.refusals.log(peer.ip(), &format!("iperf3 {peer}: refused: {why}"));
            deny(stream);
            return;
        }
    };
    let service = service.clone();
    let spawned = std::thread::Builder::new().name(format!("iperf3 {peer}")).spawn(move || {
        session::serve(stream, peer, cookie, &service, slot);
    });
    if let Err(e) = spawned {
        tracing::warn!("cannot start an iperf3 session thread: {e}");
    }
}

/// What an iperf3 test holds while it runs. iperf3 clients are anonymous: each counts in
/// the anonymous class (`--anon-max-concurrent`, `--anon-tests-per-minute`, shared with
/// native anonymous clients). On a server without keys it also takes one of the server's
/// test slots (`--max-concurrent`, shared with native clients); on a keyed server it never
/// does: those slots are the key holders'.
pub(super) struct Slot {
    admission: Option<Admission>,
    running: Option<RunningSlot>,
}

impl Slot {
    /// Counts a test from `peer`, or says why not.
    pub fn take(shared: &Arc<Shared>, peer: SocketAddr) -> Result<Slot, String> {
        let anon = &shared.cfg.anonymous;
        let running = shared.running.try_start(&anon.class, anon.max_concurrent).ok_or_else(|| {
            let n = anon.max_concurrent.unwrap_or(0);
            format!("busy ({n} anonymous test(s) running, {} max-concurrent {n})", anon.whose())
        })?;
        if let Some(n) = anon.tests_per_minute {
            shared.per_minute.take(&anon.class, peer.ip(), n, Instant::now()).map_err(|wait| {
                let next = wait.as_secs_f64().ceil();
                format!("over {} (tests-per-minute {n}); next in {next:.0} s", anon.whose())
            })?;
        }
        let admission = match shared.cfg.keys {
            Some(_) => None,
            None => Some(
                shared
                    .try_admit()
                    .ok_or_else(|| format!("busy ({} test(s) running)", shared.active.load(Relaxed)))?,
            ),
        };
        Ok(Slot { admission, running: Some(running) })
    }

    /// Frees what the test held (once its results are sent).
    pub fn release(&mut self) {
        if let Some(a) = self.admission.as_mut() {
            a.release();
        }
        self.running = None;
    }
}

/// Answers ACCESS_DENIED (the client says "the server is busy") and closes.
fn deny(mut stream: TcpStream) {
    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
    let _ = stream.write_all(&[State::AccessDenied.to_byte()]);
}
