//! The client side of one test: connect, hello, setup, data connections, start, measure while
//! watching the control connection, collect the server's results, summarise. Whatever fails,
//! a [`TestResult`] comes back with what was measured up to then.

use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use netio::DataSocketOpts;
use results::{HostInfo, Interval, SideMeasurement, Status, TestError, TestResult, TestSpec};
use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use wire::{Hello, HelloKind, Message, Token};

use crate::auth::{ClientKey, DataAuth};

use crate::control::Control;
use crate::meter::Timeline;
use crate::registry::{self, Data, Transport};
use crate::side::{run_side, DataSocket, End, Job, Signals};
use crate::stop::StopFlag;
use crate::summarize::{warnings, WarnContext};
use crate::udp_flow::{self, Buffers};
use crate::{protocol, Error};

/// How long the server may take to send its results after the client's side is done.
const RESULTS_TIMEOUT: Duration = Duration::from_secs(15);

/// Address family restriction (`-4` / `-6`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// IPv4 only.
    V4,
    /// IPv6 only.
    V6,
}

/// Where and how to reach the server.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Host name or address.
    pub host: String,
    /// Control port.
    pub port: u16,
    /// Local address to bind to.
    pub bind: Option<IpAddr>,
    /// Address family.
    pub family: Option<Family>,
    /// Deadline for connecting and for each handshake step.
    pub timeout: Duration,
    /// How long to keep retrying a server that answers `busy` (0 = fail at once).
    pub busy_wait: Duration,
    /// The pre-shared key to authenticate with (`None`: anonymous).
    pub key: Option<ClientKey>,
}

/// Receives live events of a test.
pub trait Observer {
    /// The test has started against `server`, whose self-description (from its acceptance)
    /// is `host`.
    fn on_start(&mut self, _label: &str, _spec: &TestSpec, _server: &str, _host: Option<&HostInfo>) {}
    /// An interval report from this end.
    fn on_interval(&mut self, _spec: &TestSpec, _interval: &Interval) {}
}

/// An observer that ignores everything.
#[derive(Debug, Default)]
pub struct Quiet;
impl Observer for Quiet {}

/// Resolves `opts` to one address of the wanted family.
pub fn resolve(opts: &ClientOptions) -> Result<SocketAddr, Error> {
    let host = opts.host.trim_start_matches('[').trim_end_matches(']');
    let addrs = (host, opts.port)
        .to_socket_addrs()
        .map_err(|source| Error::Connect { addr: opts.host.clone(), source })?;
    addrs
        .into_iter()
        .find(|a| match opts.family {
            Some(Family::V4) => a.is_ipv4(),
            Some(Family::V6) => a.is_ipv6(),
            None => true,
        })
        .ok_or_else(|| Error::Connect {
            addr: opts.host.clone(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no address of the requested family"),
        })
}

/// Runs one test. Never panics on peer input; failures are inside the result.
pub fn run_test(
    opts: &ClientOptions,
    spec: &TestSpec,
    observer: &mut dyn Observer,
    stop: &StopFlag,
) -> (TestResult, Option<HostInfo>) {
    let mut out = fresh_result(opts, spec);
    let mut session = Session { opts, spec, observer, stop, host: None, same_host: false };
    let outcome = while_busy(opts, stop, Duration::from_millis(100), || session.run(&mut out));
    conclude(&mut out, outcome, stop, session.same_host);
    let host = session.host.take();
    (out, host)
}

/// A new result of `spec` against the server of `opts`, started now.
pub(crate) fn fresh_result(opts: &ClientOptions, spec: &TestSpec) -> TestResult {
    let started_unix_ms =
        SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
    TestResult::new(
        registry::label(spec),
        spec.clone(),
        format!("{}:{}", opts.host, opts.port),
        started_unix_ms,
    )
}

/// Runs `attempt` again, `pause` apart, while the server says it is busy, until
/// `opts.busy_wait` has passed or `stop` is set; the last outcome.
pub(crate) fn while_busy(
    opts: &ClientOptions,
    stop: &StopFlag,
    pause: Duration,
    mut attempt: impl FnMut() -> Result<(), Error>,
) -> Result<(), Error> {
    let give_up = Instant::now() + opts.busy_wait;
    let mut outcome = attempt();
    while matches!(&outcome, Err(Error::Rejected(r)) if r.code == wire::ErrorCode::Busy)
        && Instant::now() < give_up
        && !stop.is_set()
    {
        std::thread::sleep(pause);
        outcome = attempt();
    }
    outcome
}

/// Completes `out` after a test's session ended with `outcome`: status and error, the
/// summary of whatever both ends measured, verification and warnings.
pub(crate) fn conclude(out: &mut TestResult, outcome: Result<(), Error>, stop: &StopFlag, same_host: bool) {
    if let Err(e) = outcome {
        out.status = if matches!(e, Error::Interrupted) { Status::Interrupted } else { Status::Failed };
        out.error = Some(TestError { code: e.code().into(), message: e.to_string() });
    }
    if stop.is_set() && out.status == Status::Completed {
        out.status = Status::Interrupted;
    }
    finish(out, same_host, &netio::host::host_info());
}

/// Sums up a measured result: summary, verification and warnings. `local_host` is the host
/// of the client end; `same_host` whether the server end ran on it too.
pub(crate) fn finish(out: &mut TestResult, same_host: bool, local_host: &HostInfo) {
    let spec = &out.spec;
    out.summary = registry::summarize(spec, &out.local, out.remote.as_ref());
    if out.status == Status::Failed && out.error.as_ref().is_none_or(|e| e.code != "verification") {
        // One rule for every test type: what was measured before the failure is kept,
        // marked as covering only the part that ran.
        out.summary.headline = out.summary.headline.map(results::Headline::cut_short);
    }
    if let (Status::Completed, Err(message)) = (out.status, registry::of(spec.test).verify(&out.summary)) {
        out.status = Status::Failed;
        out.error = Some(TestError { code: "verification".into(), message });
    }
    // An interrupted or failed test keeps every warning a complete one would have, from what
    // it measured (the same host, a saturated CPU, loopback retransmits): a reader of its
    // stored result needs them as much.
    let cx = WarnContext { same_host, local_host };
    out.warnings = warnings(spec, &out.summary, &out.local, out.remote.as_ref(), cx);
}

struct Session<'a> {
    opts: &'a ClientOptions,
    spec: &'a TestSpec,
    observer: &'a mut dyn Observer,
    stop: &'a StopFlag,
    host: Option<HostInfo>,
    same_host: bool,
}

impl Session<'_> {
    fn run(&mut self, out: &mut TestResult) -> Result<(), Error> {
        crate::limits::validate(self.spec, &crate::limits::Limits::default()).map_err(Error::Rejected)?;
        crate::limits::check_pin("cpu_local", self.spec.cpu_local).map_err(Error::Rejected)?;
        let addr = resolve(self.opts)?;
        out.server = addr.to_string();
        let (mut ctrl, key) = self.connect_control(addr)?;
        let (token, udp_ports) = self.handshake(&mut ctrl)?;
        let auth = DataAuth { token, key };
        let ty = registry::of(self.spec.test);
        let data = match ty.transport() {
            Transport::Udp => {
                let bufs = Buffers { sndbuf: self.spec.sndbuf, rcvbuf: self.spec.rcvbuf };
                let flows = udp_flow::client_flows(self.spec, addr.ip(), &udp_ports, self.opts.bind, bufs)?;
                udp_flow::announce(&mut ctrl, &flows, &auth, self.opts.timeout)?;
                Data::Udp(flows)
            }
            tcp => {
                let sockets = self.open_data(addr, &auth, ty.data_connections(self.spec))?;
                await_ready(&mut ctrl, self.opts.timeout)?;
                match tcp {
                    Transport::TcpPerTransaction => Data::Connect { server: addr, auth },
                    _ => Data::Tcp(sockets),
                }
            }
        };
        if self.stop.is_set() {
            return Err(Error::Interrupted);
        }
        let jobs = ty.jobs(self.spec, End::Client, data)?;
        ctrl.send(&Message::Start {})?;
        self.measure(&mut ctrl, jobs, out)
    }

    /// Connects, exchanges hellos and authenticates; the session key when keyed.
    fn connect_control(
        &mut self,
        addr: SocketAddr,
    ) -> Result<(Control, Option<wire::auth::SessionKey>), Error> {
        let sock = self.socket(addr, &DataSocketOpts::default())?;
        sock.connect_timeout(&SockAddr::from(addr), self.opts.timeout)
            .map_err(|source| Error::Connect { addr: addr.to_string(), source })?;
        let stream: TcpStream = sock.into();
        self.same_host =
            stream.local_addr().map(|l| l.ip() == addr.ip() || addr.ip().is_loopback()).unwrap_or(false);
        let mut ctrl = Control::client(stream);
        let key = handshake(&mut ctrl, addr, self.opts.key.as_ref(), self.opts.timeout)?;
        Ok((ctrl, key))
    }

    fn socket(&self, addr: SocketAddr, opts: &DataSocketOpts) -> Result<Socket, Error> {
        let io = |what| move |source| Error::Io { what, source };
        let sock = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))
            .map_err(io("creating a socket"))?;
        netio::sockopt::apply(&sock, opts)?;
        if let Some(ip) = self.opts.bind {
            sock.bind(&SockAddr::from(SocketAddr::new(ip, 0))).map_err(io("binding the local address"))?;
        }
        Ok(sock)
    }

    fn handshake(&mut self, ctrl: &mut Control) -> Result<(Token, Vec<u16>), Error> {
        ctrl.send(&Message::Setup { spec: protocol::request(self.spec) })?;
        match ctrl.recv_by(Instant::now() + self.opts.timeout)? {
            Message::Accepted(a) => {
                self.host = Some(protocol::host_info(a.host));
                let token = Token::from_hex(&a.token)
                    .ok_or_else(|| Error::Protocol { detail: "malformed token".into() })?;
                Ok((token, a.udp_ports))
            }
            Message::Error(r) => Err(Error::Rejected(r)),
            other => Err(Error::Protocol { detail: format!("expected accepted, got {}", other.name()) }),
        }
    }

    fn open_data(&self, addr: SocketAddr, auth: &DataAuth, count: u32) -> Result<Vec<DataSocket>, Error> {
        let opts = DataSocketOpts {
            sndbuf: self.spec.sndbuf,
            rcvbuf: self.spec.rcvbuf,
            nodelay: self.spec.nodelay,
            mss: self.spec.mss,
            congestion: self.spec.congestion.clone(),
        };
        let mut out = Vec::new();
        for index in 0..count {
            let sock = self.socket(addr, &opts)?;
            sock.connect_timeout(&SockAddr::from(addr), self.opts.timeout)
                .map_err(|source| Error::Connect { addr: addr.to_string(), source })?;
            let mut stream: TcpStream = sock.into();
            std::io::Write::write_all(&mut stream, &auth.hello(index))
                .map_err(|source| Error::Io { what: "sending a data hello", source })?;
            let report = netio::sockopt::report(&stream, &opts);
            out.push(DataSocket { index, stream, report });
        }
        Ok(out)
    }

    fn measure(&mut self, ctrl: &mut Control, jobs: Vec<Job>, out: &mut TestResult) -> Result<(), Error> {
        let timeline =
            Timeline::new(self.spec, Instant::now(), crate::limits::Limits::default().max_duration_ms);
        self.observer.on_start(&out.label, self.spec, &out.server, self.host.as_ref());
        let signals = Signals::default();
        let (tx, rx) = mpsc::channel::<Interval>();
        let (spec, sig) = (self.spec.clone(), signals.clone());
        let worker = std::thread::spawn(move || {
            run_side(jobs, &spec, spec.cpu_local, timeline, &sig, &mut |iv| {
                let _ = tx.send(iv.clone());
            })
        });
        let mut watch = Watch { remote: None, failure: None, stop_sent: false };
        while !worker.is_finished() {
            rx.try_iter().for_each(|iv| self.observer.on_interval(self.spec, &iv));
            self.watch_once(ctrl, &signals, &mut watch, &timeline);
        }
        rx.try_iter().for_each(|iv| self.observer.on_interval(self.spec, &iv));
        let run = worker.join().map_err(|_| Error::Protocol { detail: "the test thread panicked".into() })?;
        out.local = run.measurement;
        if let Some(e) = watch.failure {
            return Err(e);
        }
        // Only connected TCP streams tell the server that the client's side ended (EOF).
        let transport = registry::of(self.spec.test).transport();
        if transport != Transport::TcpConnections || self.stop.is_set() {
            let _ = ctrl.send(&Message::Stop { reason: "client done".into() });
        }
        out.remote = match watch.remote {
            Some(r) => Some(protocol::measurement(r)?),
            None => Some(wait_results(ctrl)?),
        };
        if let Some(e) = run.errors.first() {
            return Err(Error::Protocol { detail: e.clone() });
        }
        Ok(())
    }

    fn watch_once(&mut self, ctrl: &mut Control, signals: &Signals, w: &mut Watch, timeline: &Timeline) {
        if self.stop.is_set() && !w.stop_sent {
            w.stop_sent = true;
            signals.stop.set();
            let _ = ctrl.send(&Message::Stop { reason: "interrupted".into() });
        }
        // Short slices near the end: the end of the local side is noticed at once (sweep
        // overhead per point); long ones before, to stay out of the way of the test.
        if w.failure.is_some() || w.remote.is_some() {
            std::thread::sleep(Duration::from_millis(2));
            return;
        }
        let now = Instant::now();
        match ctrl.poll_by(now + timeline.watch_slice(now)) {
            Ok(None) => {}
            Ok(Some(Message::Results { side })) => {
                w.remote = Some(*side);
                if registry::of(self.spec.test).transport() == Transport::Udp {
                    // The server's senders are done: receivers here drain and finish.
                    signals.stop.set();
                }
            }
            Ok(Some(Message::Error(r))) => {
                signals.abort.set();
                w.failure = Some(Error::Rejected(r));
            }
            Ok(Some(other)) => tracing::debug!("ignoring {} during the test", other.name()),
            Err(e) => {
                signals.stop.set();
                signals.abort.set();
                w.failure = Some(match e {
                    Error::PeerClosed => {
                        Error::Protocol { detail: "the server vanished during the test".into() }
                    }
                    other => other,
                });
            }
        }
    }
}

struct Watch {
    remote: Option<wire::ctrl::SideReport>,
    failure: Option<Error>,
    stop_sent: bool,
}

fn await_ready(ctrl: &mut Control, timeout: Duration) -> Result<(), Error> {
    match ctrl.recv_by(Instant::now() + timeout)? {
        Message::Ready {} => Ok(()),
        Message::Error(r) => Err(Error::Rejected(r)),
        other => Err(Error::Protocol { detail: format!("expected ready, got {}", other.name()) }),
    }
}

fn wait_results(ctrl: &mut Control) -> Result<SideMeasurement, Error> {
    let deadline = Instant::now() + RESULTS_TIMEOUT;
    loop {
        match ctrl.recv_by(deadline)? {
            Message::Results { side } => return protocol::measurement(*side),
            Message::Error(r) => return Err(Error::Rejected(r)),
            other => tracing::debug!("ignoring {} while waiting for results", other.name()),
        }
    }
}

/// Exchanges hellos on a fresh control connection to `addr` and authenticates (with `key`, or
/// anonymously); the session key when keyed.
pub(crate) fn handshake(
    ctrl: &mut Control,
    addr: SocketAddr,
    key: Option<&ClientKey>,
    timeout: Duration,
) -> Result<Option<wire::auth::SessionKey>, Error> {
    let nc =
        netio::random_bytes::<32>().map_err(|source| Error::Io { what: "reading the OS RNG", source })?;
    ctrl.send_hello(&Hello::control(nc))?;
    let hello = ctrl.recv_hello(timeout).map_err(|e| match e {
        Error::Protocol { .. } => Error::Protocol { detail: format!("{addr} is not a tcplab server") },
        other => other,
    })?;
    protocol::check_server_hello(&hello, addr)?;
    let HelloKind::Server { nonce: ns } = hello.kind else {
        return Err(Error::Protocol { detail: format!("{addr} did not answer with a server hello") });
    };
    crate::auth::client(ctrl, key, (&nc, &ns), Instant::now() + timeout, &addr.to_string())
}
