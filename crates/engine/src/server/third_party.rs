//! Server A's side of a third-party test: with `--allow-third-party`, run the requested test
//! as its client end against server B and send both ends' measurements back. A's limits
//! apply to the test, and A authenticates to B with a key of its own, if it has one. B must
//! answer the control handshake as a tcplab server before A sends it anything but its
//! fixed-size hello, so A cannot be used to talk to arbitrary services; and every way of not
//! reaching one (closed, filtered, another service) gets the same answer at the handshake
//! deadline, so A cannot be used to scan ports either.

use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use wire::ctrl::ThirdPartyRequest;
use wire::{ErrorCode, Message, Rejection};

use super::Shared;
use crate::client::{resolve, ClientOptions, Quiet};
use crate::control::Control;
use crate::limits::Policy;
use crate::stop::StopFlag;
use crate::{protocol, Error};

/// The refusal of a server started without the flag; it names the flag.
pub const OFF: &str =
    "third-party tests are off on this server: start it with `tcplab server --allow-third-party`";
/// Longest host name accepted for B.
const MAX_HOST_LEN: usize = 253;

/// Runs the third-party test `req` for the client on `ctrl`. The server's test slot is freed
/// before (by the session: A measures as a client, and B may be A itself: its loop-back
/// baseline); at most
/// `max_concurrent` third-party tests run at once. The asking client's key class (`policy`)
/// limits the test as it would its own; A reaches B with its own third-party key
/// ([`super::ServerConfig::third_party_key`]), or anonymously without one: the asking
/// client's key is never forwarded.
pub(super) fn serve(
    ctrl: &mut Control,
    req: ThirdPartyRequest,
    (shared, policy): (&Shared, &Policy),
) -> Result<(), Error> {
    if !shared.cfg.allow_third_party {
        return Err(Error::Rejected(Rejection::new(ErrorCode::Unsupported, OFF)));
    }
    let spec = protocol::spec(req.spec).map_err(Error::Rejected)?;
    crate::limits::check_policy(&spec, policy).map_err(Error::Rejected)?;
    crate::limits::validate(&spec, &shared.cfg.limits).map_err(Error::Rejected)?;
    check_target(&req.to_host, req.to_port)?;
    let _running = Running::take(shared)?;
    let opts = ClientOptions {
        host: req.to_host,
        port: req.to_port,
        bind: None,
        family: None,
        timeout: shared.cfg.handshake_timeout,
        busy_wait: std::time::Duration::ZERO,
        key: shared.cfg.third_party_key.clone(),
    };
    let started = Instant::now();
    let target = format!("{}:{}", opts.host, opts.port);
    let same_host = resolve(&opts).map(same_host).unwrap_or(false);
    let stop = StopFlag::new();
    let (spec2, stop2) = (spec.clone(), stop.clone());
    let worker = std::thread::spawn(move || crate::run_test(&opts, &spec2, &mut Quiet, &stop2));
    while !worker.is_finished() {
        match ctrl.poll_by(Instant::now() + std::time::Duration::from_millis(100)) {
            Ok(Some(Message::Stop { .. })) => stop.set(),
            Ok(_) => {}
            Err(_) => {
                // The asking client is gone: stop the test, and wait for it without spinning.
                stop.set();
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
    }
    let (mut result, host) =
        worker.join().map_err(|_| Error::Protocol { detail: "the test thread panicked".into() })?;
    if host.is_none() && unreachable(&result) {
        conceal(&mut result, &target);
        // A closed port fails at once, a silent one at the handshake deadline: answer both
        // at the deadline, so that A cannot be used to tell them apart.
        std::thread::sleep(
            (started + shared.cfg.handshake_timeout).saturating_duration_since(Instant::now()),
        );
    }
    let report = crate::third_party::report(result, host.as_ref(), same_host);
    ctrl.send(&Message::ThirdPartyResults(Box::new(report)))
}

/// Whether a failed test never reached a tcplab server at B (not connected, no hello, or
/// no sense made of it): what a port scan would learn from A.
fn unreachable(result: &results::TestResult) -> bool {
    const BEFORE_B_ANSWERED: [&str; 5] = ["io", "connect", "protocol", "timeout", "peer-vanished"];
    result.error.as_ref().is_some_and(|e| BEFORE_B_ANSWERED.contains(&e.code.as_str()))
}

/// One answer for every way of not reaching B.
fn conceal(result: &mut results::TestResult, target: &str) {
    result.error = Some(results::TestError {
        code: "connect".into(),
        message: format!("{target} is not a tcplab server A can reach (closed, filtered or another service)"),
    });
}

/// B must be named and on a real port; the rest (that it is a tcplab server) the handshake
/// checks.
fn check_target(host: &str, port: u16) -> Result<(), Error> {
    if host.is_empty()
        || host.len() > MAX_HOST_LEN
        || host.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(Error::Rejected(Rejection::field("to_host", "not a host name or address")));
    }
    if port == 0 {
        return Err(Error::Rejected(Rejection::field("to_port", "port 0 is not a server")));
    }
    Ok(())
}

/// Whether `addr` is this host: loop-back, or the address this host would send from.
fn same_host(addr: SocketAddr) -> bool {
    if addr.ip().is_loopback() {
        return true;
    }
    let any: IpAddr =
        if addr.is_ipv4() { [0, 0, 0, 0].into() } else { std::net::Ipv6Addr::UNSPECIFIED.into() };
    UdpSocket::bind((any, 0))
        .and_then(|s| s.connect(addr).and_then(|()| s.local_addr()))
        .is_ok_and(|local| local.ip() == addr.ip())
}

/// A third-party test counted while it runs.
struct Running<'a>(&'a Shared);

impl<'a> Running<'a> {
    fn take(shared: &'a Shared) -> Result<Running<'a>, Error> {
        shared
            .third_party
            .fetch_update(Relaxed, Relaxed, |n| (n < shared.cfg.max_concurrent).then_some(n + 1))
            .map(|_| Running(shared))
            .map_err(|_| {
                Error::Rejected(Rejection::new(
                    ErrorCode::Busy,
                    "the server is busy running third-party tests",
                ))
            })
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.third_party.fetch_sub(1, Relaxed);
    }
}
