//! `tcplab server`: one listening port for control and data connections (like iperf3, so one
//! firewall hole suffices). A single acceptor thread reads each new connection's fixed-size
//! hello without blocking on any peer (`acceptor`); control connections get a session thread
//! (`session`); data connections are handed to the session whose token they present, if they
//! come from that session's peer address (`routes`). With [`ServerConfig::iperf3`] it also
//! serves iperf3 clients on a port of their own ([`iperf3`]).

mod acceptor;
pub mod end_trace;
pub mod iperf3;
pub mod pending;
pub mod quota;
mod record;
mod refusals;
pub(crate) mod routes;
mod session;
mod third_party;

pub use third_party::OFF as THIRD_PARTY_OFF;

/// The native port's greeting (hello, server hello, authentication), for tests and fuzzing
/// of the acceptor's state machine ([`pending::Progress`]).
pub const NATIVE_GREETING: pending::Greeting = acceptor::GREETING;

use std::io;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use results::HostInfo;

use crate::auth::KeyStore;
use crate::limits::{Limits, Policy, ANONYMOUS};
use crate::stop::StopFlag;

/// The default control port.
pub const DEFAULT_PORT: u16 = 9180;

/// How the server runs.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Address to listen on; `[::]` (the default) takes IPv4 clients too, and is `0.0.0.0`
    /// where IPv6 is unavailable ([`netio::listen::tcp`]).
    pub bind: SocketAddr,
    /// Serve one test, then exit.
    pub one_off: bool,
    /// Tests allowed at once; more get a `busy` error.
    pub max_concurrent: usize,
    /// Caps on what clients may ask.
    pub limits: Limits,
    /// Deadline for each handshake step (hello, setup, data connections); the client may
    /// take longer to prepare before `start` (a file test hashes its source then).
    pub handshake_timeout: Duration,
    /// Run third-party tests on request (`--allow-third-party`): this server as the client end
    /// against another tcplab server.
    pub allow_third_party: bool,
    /// The key this server shows to server B in a third-party test (`--third-party-key`);
    /// `None`: it reaches B anonymously. Never the asking client's key.
    pub third_party_key: Option<crate::auth::ClientKey>,
    /// Pre-shared keys (`--keys`): when set, only clients with one of them are served, under
    /// their key's class; `None`: anonymous clients only.
    pub keys: Option<Arc<KeyStore>>,
    /// What clients without a key may ask (class `anonymous`).
    pub anonymous: Policy,
    /// Also serve iperf3 clients on this address (`--iperf3`).
    pub iperf3: Option<SocketAddr>,
    /// Where tests served to iperf3 clients go (the CLI's archive).
    pub iperf3_served: Option<iperf3::ServedSink>,
    /// Records this end of a test whose client asks (`--allow-trace`); `None`: such a
    /// client is told why not, and the test runs untraced here.
    pub end_tracer: Option<std::sync::Arc<dyn end_trace::EndTracer>>,
    /// Listen with an MPTCP socket (`--mptcp`), which takes plain TCP clients too, so that
    /// `stream --mptcp` tests are served; without it they are refused.
    pub mptcp: bool,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            bind: SocketAddr::from((std::net::Ipv6Addr::UNSPECIFIED, DEFAULT_PORT)),
            one_off: false,
            max_concurrent: 1,
            limits: Limits::default(),
            handshake_timeout: Duration::from_secs(5),
            allow_third_party: false,
            third_party_key: None,
            keys: None,
            anonymous: Policy::open(ANONYMOUS),
            iperf3: None,
            iperf3_served: None,
            end_tracer: None,
            mptcp: false,
        }
    }
}

/// State shared by the acceptor and the sessions.
#[derive(Debug)]
struct Shared {
    cfg: ServerConfig,
    routes: routes::Routes,
    active: AtomicUsize,
    finished: AtomicU64,
    host: HostInfo,
    /// Third-party tests running.
    third_party: AtomicUsize,
    running: quota::Running,
    per_minute: quota::PerMinute,
    /// Authenticated control connections that have not asked for a test yet, per class.
    handshaking: quota::Running,
    /// Log lines of refusals, per source.
    refusals: refusals::Refusals,
}

/// A bound server, not yet accepting.
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    iperf3: Option<iperf3::Listeners>,
    shared: Arc<Shared>,
}

/// A server running on a background thread (embedded use: `tcplab run`, tests).
#[derive(Debug)]
pub struct ServerHandle {
    /// Where it listens.
    pub addr: SocketAddr,
    stop: StopFlag,
    thread: Option<JoinHandle<io::Result<()>>>,
}

impl Server {
    /// Binds the listening socket. A keyed server serves iperf3 clients (who cannot show a
    /// key) only under explicit anonymous caps: without them it refuses to start.
    pub fn bind(cfg: ServerConfig) -> io::Result<Server> {
        let unset = cfg.anonymous.unset_caps();
        if cfg.keys.is_some() && cfg.iperf3.is_some() && !unset.is_empty() {
            let msg = format!(
                "iperf3 clients cannot show a key: a keyed server serves them only under anonymous limits, and {} are not set",
                unset.join(", ")
            );
            return Err(io::Error::new(io::ErrorKind::InvalidInput, msg));
        }
        let listener =
            if cfg.mptcp { netio::mptcp::listen(cfg.bind)? } else { netio::listen::tcp(cfg.bind)? };
        let iperf3 = cfg.iperf3.map(|a| iperf3::Listeners::bind(a, cfg.mptcp)).transpose()?;
        let shared = Shared {
            cfg,
            routes: routes::Routes::default(),
            active: AtomicUsize::new(0),
            finished: AtomicU64::new(0),
            host: netio::host::host_info(),
            third_party: AtomicUsize::new(0),
            running: quota::Running::default(),
            per_minute: quota::PerMinute::default(),
            handshaking: quota::Running::default(),
            refusals: refusals::Refusals::default(),
        };
        Ok(Server { listener, iperf3, shared: Arc::new(shared) })
    }

    /// The bound address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Where it serves iperf3 clients, if it does.
    pub fn iperf3_addr(&self) -> Option<SocketAddr> {
        self.iperf3.as_ref().and_then(|l| l.local_addr().ok())
    }

    /// Accepts until `shutdown` is set (or, with `one_off`, after one test).
    pub fn run(self, shutdown: &StopFlag) -> io::Result<()> {
        let iperf3_stop = StopFlag::new();
        let iperf3 = match self.iperf3 {
            Some(l) => iperf3::spawn(l, self.shared.clone(), &iperf3_stop)?,
            None => Vec::new(),
        };
        let native = acceptor::run(self.listener, self.shared, shutdown);
        iperf3_stop.set();
        for t in iperf3 {
            let _ = t.join();
        }
        native
    }

    /// Runs on a background thread.
    pub fn spawn(self) -> io::Result<ServerHandle> {
        let addr = self.local_addr()?;
        let stop = StopFlag::new();
        let flag = stop.clone();
        let thread =
            std::thread::Builder::new().name("tcplab-server".into()).spawn(move || self.run(&flag))?;
        Ok(ServerHandle { addr, stop, thread: Some(thread) })
    }
}

impl ServerHandle {
    /// Stops accepting and waits for the acceptor to exit.
    pub fn shutdown(mut self) {
        self.stop.set();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.stop.set();
    }
}

impl Shared {
    /// Takes a test slot, if one is free.
    fn try_admit(self: &Arc<Self>) -> Option<Admission> {
        self.active
            .fetch_update(Relaxed, Relaxed, |n| (n < self.cfg.max_concurrent).then_some(n + 1))
            .ok()
            .map(|_| Admission { shared: Some(self.clone()) })
    }
}

/// A test slot; freed by [`Admission::release`] as soon as the results are sent, or on drop.
#[derive(Debug)]
struct Admission {
    shared: Option<Arc<Shared>>,
}

impl Admission {
    fn release(&mut self) {
        if let Some(s) = self.shared.take() {
            s.active.fetch_sub(1, Relaxed);
            s.finished.fetch_add(1, Relaxed);
        }
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        self.release();
    }
}
