//! The client side of one test: connect, hello, setup, data connections, start, measure while
//! watching the control connection, collect the server's results, summarise. Whatever fails,
//! a [`TestResult`] comes back with what was measured up to then.

use std::collections::VecDeque;
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use netio::DataSocketOpts;
use results::{HostInfo, Interval, Status, TestError, TestResult, TestSpec};
use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use wire::{Message, Token};

use crate::auth::{ClientKey, DataAuth};

use crate::control::Control;
use crate::meter::Timeline;
use crate::registry::transport::ClientEnd;
use crate::registry::{self, Data};
use crate::session::client::{self as machine, Action, Event, HandshakeAction, HandshakeEvent, Plan, State};
use crate::side::{run_side, DataSocket, End, Job, SideRun, Signals};
use crate::stop::StopFlag;
use crate::summarize::{warnings, WarnContext};
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
    while machine::retry_busy(&outcome, Instant::now(), give_up, stop.is_set()) {
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

/// What one attempt's actions act on: the control connection, the data and the test.
struct Attempt {
    ctrl: Control,
    addr: SocketAddr,
    key: Option<wire::auth::SessionKey>,
    data: Option<Data>,
    jobs: Option<Vec<Job>>,
    test: Option<Running>,
}

/// This end's side running on a thread of its own.
struct Running {
    worker: std::thread::JoinHandle<SideRun>,
    signals: Signals,
    timeline: Timeline,
    intervals: mpsc::Receiver<Interval>,
}

impl Session<'_> {
    /// One attempt: connect, authenticate, then drive [`machine::Client`] to its end.
    fn run(&mut self, out: &mut TestResult) -> Result<(), Error> {
        crate::limits::validate(self.spec, &crate::limits::Limits::default()).map_err(Error::Rejected)?;
        crate::limits::check_pin("cpu_local", self.spec.cpu_local).map_err(Error::Rejected)?;
        let addr = resolve(self.opts)?;
        out.server = addr.to_string();
        let (ctrl, key) = self.connect_control(addr)?;
        let transport = registry::of(self.spec.test).data();
        let plan = Plan {
            setup: protocol::request(self.spec),
            results_end_local: transport.traits().results_end_local,
            eof_ends: transport.traits().eof_ends,
        };
        let timeouts = machine::Timeouts { step: self.opts.timeout, results: RESULTS_TIMEOUT };
        let (mut m, first) = machine::Client::new(Instant::now(), timeouts, plan);
        let mut a = Attempt { ctrl, addr, key, data: None, jobs: None, test: None };
        let mut events = VecDeque::new();
        first.into_iter().for_each(|act| self.perform(&mut a, act, out, &mut events));
        while m.state() != State::Done {
            if self.stop.is_set() && !m.interrupted() {
                events.push_front(Event::Interrupt);
            }
            let event = events.pop_front().unwrap_or_else(|| self.wait(&mut a, &m, out));
            for act in m.handle(Instant::now(), event) {
                self.perform(&mut a, act, out, &mut events);
            }
        }
        let (result, remote) = m.outcome().unwrap_or((Err(Error::Interrupted), None));
        out.remote = remote;
        result
    }

    /// Performs `action`; what came of it goes to `events`.
    fn perform(
        &mut self,
        a: &mut Attempt,
        action: Action,
        out: &mut TestResult,
        events: &mut VecDeque<Event>,
    ) {
        match action {
            Action::Send(msg) => match (a.ctrl.send(&msg), *msg) {
                // A stop is a courtesy: the server ends the test on its own too.
                (Err(_), Message::Stop { .. }) | (Ok(()), _) => {}
                (Err(e), _) => events.push_back(Event::Failed(e)),
            },
            Action::OpenData(accepted) => match self.open(a, *accepted) {
                Ok(ready) => {
                    events.push_back(Event::DataOpen);
                    // A UDP test's announcement waited for `ready` already.
                    events.extend(ready.then(|| Event::Message(Box::new(Message::Ready {}))));
                }
                Err(e) => events.push_back(Event::Failed(e)),
            },
            Action::PrepareJobs => {
                let data =
                    a.data.take().ok_or_else(|| Error::Protocol { detail: "no data connections".into() });
                match data.and_then(|d| registry::of(self.spec.test).jobs(self.spec, End::Client, d)) {
                    Ok(jobs) => {
                        a.jobs = Some(jobs);
                        events.push_back(Event::JobsReady);
                    }
                    Err(e) => events.push_back(Event::Failed(e)),
                }
            }
            Action::StartTest => a.test = a.jobs.take().map(|jobs| self.start(jobs, out)),
            Action::StopLocal => a.test.iter().for_each(|t| t.signals.stop.set()),
            Action::AbortLocal => a.test.iter().for_each(|t| t.signals.abort.set()),
        }
    }

    /// Opens the data connections `accepted` asks for; whether `ready` came with them.
    fn open(&mut self, a: &mut Attempt, accepted: wire::ctrl::Accepted) -> Result<bool, Error> {
        self.host = Some(protocol::host_info(accepted.host));
        let token = Token::from_hex(&accepted.token)
            .ok_or_else(|| Error::Protocol { detail: "malformed token".into() })?;
        let auth = DataAuth { token, key: a.key.clone() };
        let (server, data_auth) = (a.addr, auth.clone());
        let connect = |n: u32| self.open_data(server, &data_auth, n);
        let end = ClientEnd {
            spec: self.spec,
            server,
            auth,
            udp_ports: &accepted.udp_ports,
            ctrl: &mut a.ctrl,
            bind: self.opts.bind,
            timeout: self.opts.timeout,
            connect: &connect,
        };
        let (data, ready) = registry::of(self.spec.test).data().open(end)?;
        a.data = Some(data);
        Ok(ready)
    }

    /// Starts this end's jobs on a thread of their own.
    fn start(&mut self, jobs: Vec<Job>, out: &TestResult) -> Running {
        let timeline =
            Timeline::new(self.spec, Instant::now(), crate::limits::Limits::default().max_duration_ms);
        self.observer.on_start(&out.label, self.spec, &out.server, self.host.as_ref());
        let signals = Signals::default();
        let (tx, intervals) = mpsc::channel::<Interval>();
        let (spec, sig) = (self.spec.clone(), signals.clone());
        let worker = std::thread::spawn(move || {
            run_side(jobs, &spec, spec.cpu_local, timeline, &sig, &mut |iv| {
                let _ = tx.send(iv.clone());
            })
        });
        Running { worker, signals, timeline, intervals }
    }

    /// Waits for what the machine's state waits for.
    fn wait(&mut self, a: &mut Attempt, m: &machine::Client, out: &mut TestResult) -> Event {
        match m.state() {
            State::AwaitAccepted | State::AwaitReady | State::AwaitResults => {
                let deadline = m.deadline().unwrap_or_else(Instant::now);
                match a.ctrl.recv_by(deadline) {
                    Ok(msg) => Event::Message(Box::new(msg)),
                    Err(Error::Timeout { .. }) => Event::Tick,
                    Err(e) => Event::Failed(e),
                }
            }
            State::Running => self.watch(a, m.watching(), out),
            State::OpeningData | State::Starting | State::Done => {
                Event::Failed(Error::Protocol { detail: "the client session waited for nothing".into() })
            }
        }
    }

    /// One look at the running test: its end, or a message from the server (read only
    /// while `watching`).
    fn watch(&mut self, a: &mut Attempt, watching: bool, out: &mut TestResult) -> Event {
        let Some(t) = a.test.as_ref() else {
            return Event::Failed(Error::Protocol { detail: "no test running".into() });
        };
        t.intervals.try_iter().for_each(|iv| self.observer.on_interval(self.spec, &iv));
        if t.worker.is_finished() {
            let Some(t) = a.test.take() else { return Event::Tick };
            t.intervals.try_iter().for_each(|iv| self.observer.on_interval(self.spec, &iv));
            let Ok(run) = t.worker.join() else {
                return Event::Failed(Error::Protocol { detail: "the test thread panicked".into() });
            };
            out.local = run.measurement;
            return Event::LocalDone(run.errors.into_iter().next());
        }
        if !watching {
            std::thread::sleep(Duration::from_millis(2));
            return Event::Tick;
        }
        // Short slices near the end: the end of the local side is noticed at once (sweep
        // overhead per point); long ones before, to stay out of the way of the test.
        let now = Instant::now();
        match a.ctrl.poll_by(now + t.timeline.watch_slice(now)) {
            Ok(None) => Event::Tick,
            Ok(Some(msg)) => Event::Message(Box::new(msg)),
            Err(e) => Event::Failed(e),
        }
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

    fn open_data(&self, addr: SocketAddr, auth: &DataAuth, count: u32) -> Result<Vec<DataSocket>, Error> {
        let opts = crate::side::socket_opts(End::Client, self.spec);
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
}

/// Exchanges hellos on a fresh control connection to `addr` and authenticates (with `key`, or
/// anonymously); the session key when keyed. The steps and their deadlines are
/// [`machine::Handshake`]'s.
pub(crate) fn handshake(
    ctrl: &mut Control,
    addr: SocketAddr,
    key: Option<&ClientKey>,
    timeout: Duration,
) -> Result<Option<wire::auth::SessionKey>, Error> {
    let nc =
        netio::random_bytes::<32>().map_err(|source| Error::Io { what: "reading the OS RNG", source })?;
    let (mut m, first) = machine::Handshake::new(Instant::now(), timeout, nc, key.cloned(), addr.to_string());
    let mut actions = first;
    loop {
        for action in actions {
            let sent = match action {
                HandshakeAction::SendHello(hello) => ctrl.send_hello(&hello),
                HandshakeAction::SendAuth(bytes) => ctrl.send_raw(&bytes),
            };
            sent?;
        }
        if let Some(outcome) = m.outcome() {
            return outcome;
        }
        let event = read_greeting(ctrl, &m).unwrap_or_else(|e| match e {
            Error::Timeout { .. } => HandshakeEvent::Tick,
            other => HandshakeEvent::Failed(other),
        });
        actions = m.handle(Instant::now(), event);
    }
}

/// The server's next handshake bytes: its hello, or its answer to the authentication (or
/// an error frame instead: it refused before authenticating, busy).
fn read_greeting(ctrl: &mut Control, m: &machine::Handshake) -> Result<HandshakeEvent, Error> {
    let deadline = m.deadline();
    if m.awaits_hello() {
        let mut buf = [0u8; wire::HELLO_LEN];
        ctrl.recv_raw(&mut buf, deadline)?;
        return Ok(HandshakeEvent::Hello(buf));
    }
    let mut head = [0u8; 4];
    ctrl.recv_raw(&mut head, deadline)?;
    if &head != wire::auth::SERVER_AUTH_MAGIC {
        ctrl.unread(&head);
        return Ok(HandshakeEvent::Message(Box::new(ctrl.recv_by(deadline)?)));
    }
    let mut whole = vec![0u8; wire::auth::SERVER_AUTH_LEN];
    whole[..4].copy_from_slice(&head);
    ctrl.recv_raw(&mut whole[4..], deadline)?;
    Ok(HandshakeEvent::AuthReply(whole))
}
