//! One test on the server, from the request to the results, over the sockets: the waits,
//! threads and slots that [`crate::session::server`]'s state machine asks for. Every wait
//! has the machine's deadline; a vanished client ends the test at once (hard stop) and the
//! session returns.

use std::collections::VecDeque;
use std::net::{IpAddr, SocketAddr, TcpStream, UdpSocket};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use results::{SideMeasurement, TestSpec};
use wire::ctrl::{Accepted, ThirdPartyRequest};
use wire::{ErrorCode, Message, Rejection, Token};

use super::end_trace;
use super::record::Record;
use super::routes::{DataConn, RouteGuard};
use super::{quota, Admission, Shared};
use crate::auth::{self, DataAuth};
use crate::control::Control;
use crate::limits::Policy;
use crate::meter::Timeline;
use crate::registry::transport::ServerEnd;
use crate::registry::{self, Data};
use crate::session::server::{self as machine, Action, Event, Failure, Outcome, Rules, State, Timeouts};
use crate::side::{run_side, DataSocket, End, SideRun, Signals};
use crate::udp_flow;
use crate::{protocol, Error};

/// How long the client has to close after the results before the session ends anyway.
const LINGER: Duration = Duration::from_secs(2);
/// How long the client may prepare between `ready` and `start` (a file test's sender reads
/// and hashes its whole source then; a vanished client is still noticed at once).
const PREPARE: Duration = Duration::from_secs(120);
/// How often a wait for data connections or for `start` checks that the client is still
/// there (a client that vanished frees its slot at once, not at the deadline).
const WATCH: Duration = Duration::from_millis(100);

/// Serves one control connection that has authenticated (`client`, whose tests fall under
/// `policy`); `handshake` counts it until it asks for a test. The session's states,
/// deadlines and refusals are [`machine::Server`]'s; this drives it over the sockets.
pub(super) fn serve(
    stream: TcpStream,
    (peer, rec): (SocketAddr, Record),
    (client, policy): (auth::Peer, Policy),
    shared: &Arc<Shared>,
    handshake: quota::RunningSlot,
) {
    let local = stream.local_addr().map(|a| a.ip().to_canonical()).unwrap_or(IpAddr::from([0, 0, 0, 0]));
    let timeouts = Timeouts { handshake: shared.cfg.handshake_timeout, prepare: PREPARE, linger: LINGER };
    let rules = Rules { policy: policy.clone(), limits: shared.cfg.limits.clone() };
    let mut machine = machine::Server::new(Instant::now(), timeouts, rules);
    let mut d = Driver {
        ctrl: Control::new(stream),
        who: (peer, local),
        client,
        policy,
        shared,
        rec,
        handshake: Some(handshake),
        slot: None,
        test: None,
        third_party: None,
    };
    let mut events = VecDeque::new();
    while !machine.is_done() {
        let event = events.pop_front().unwrap_or_else(|| d.wait(&machine));
        events.extend(machine.handle(Instant::now(), event).into_iter().filter_map(|a| d.perform(a)));
    }
    match machine.state() {
        State::Done(Outcome::Refused(r)) => d.rec.log_refused(&shared.refusals, &r.to_string()),
        State::Done(Outcome::Lost(why)) => d.rec.log("failed", Some(why)),
        _ => d.rec.log("finished", None),
    }
}

/// The sockets, slots and threads of one session: what [`machine::Server`]'s actions act on.
struct Driver<'a> {
    ctrl: Control,
    /// The client's address and the local address it reached.
    who: (SocketAddr, IpAddr),
    client: auth::Peer,
    policy: Policy,
    shared: &'a Arc<Shared>,
    rec: Record,
    handshake: Option<quota::RunningSlot>,
    slot: Option<Admission>,
    test: Option<Test>,
    third_party: Option<ThirdPartyRequest>,
}

/// A test from its acceptance on.
struct Test {
    spec: TestSpec,
    auth: DataAuth,
    /// Routes its data connections here while the session lasts.
    _route: RouteGuard,
    /// Counts it against its class while the session lasts.
    _running: quota::RunningSlot,
    rx: Option<Receiver<DataConn>>,
    udp_socks: Vec<UdpSocket>,
    recording: Option<Result<Box<dyn end_trace::EndTrace>, String>>,
    data: Option<Data>,
    worker: Option<(JoinHandle<SideRun>, Signals, Timeline)>,
    side: Option<SideMeasurement>,
}

impl Driver<'_> {
    /// Performs `action`; what came of it, when the machine asked for an answer or it failed.
    fn perform(&mut self, action: Action) -> Option<Event> {
        match action {
            Action::Send(msg) => return self.send(&msg),
            Action::ReleaseHandshake => self.handshake = None,
            Action::Named(test) => self.rec.test = Some(test),
            Action::TakeSlot => {
                self.slot = self.shared.try_admit();
                return Some(Event::Slot(self.slot.is_some()));
            }
            Action::ReleaseSlot => {
                if let Some(s) = self.slot.as_mut() {
                    s.release();
                }
            }
            Action::Prepare(spec) => {
                return Some(match self.prepare(*spec) {
                    Ok(accepted) => Event::Prepared(Ok(Box::new(accepted))),
                    Err(Failure::Refused(r)) => Event::Prepared(Err(r)),
                    Err(lost) => Event::Failed(lost),
                })
            }
            Action::CollectData(_) | Action::Close => {}
            Action::StartTest => return self.start().err().map(Event::Failed),
            Action::StopTest => self.stop(false),
            Action::AbortTest => self.stop(true),
            Action::RunThirdParty(req) => self.third_party = Some(*req),
            Action::SendResults => return self.send_results(),
        }
        None
    }

    /// Waits for what the machine's state waits for, until its deadline.
    fn wait(&mut self, m: &machine::Server) -> Event {
        let deadline = m.deadline().unwrap_or_else(|| Instant::now() + WATCH);
        match m.state() {
            State::AwaitRequest => match self.ctrl.recv_by(deadline) {
                Ok(msg) => Event::Message(Box::new(msg)),
                Err(Error::Timeout { .. }) => Event::Tick,
                Err(e) => Event::Failed(e.into()),
            },
            State::AwaitData => self.await_data(deadline),
            State::AwaitStart => self.await_start(deadline),
            State::Running => self.watch(),
            State::ThirdParty => self.run_third_party(),
            State::Linger => match self.ctrl.poll_by(deadline) {
                Ok(Some(msg)) => Event::Message(Box::new(msg)),
                Ok(None) => Event::Tick,
                Err(_) => Event::Closed,
            },
            State::AwaitSlot(_) | State::Preparing | State::Done(_) => {
                Event::Failed(internal("the session waited for nothing"))
            }
        }
    }

    fn send(&mut self, msg: &Message) -> Option<Event> {
        self.ctrl.send(msg).err().map(|e| Event::Failed(e.into()))
    }

    /// The checks that need this host, the data sockets and the acceptance to send.
    fn prepare(&mut self, spec: TestSpec) -> Result<Accepted, Failure> {
        let (peer, local) = self.who;
        check_congestion(&spec)?;
        if let Some(r) = registry::mptcp::refusal(&spec, self.shared.cfg.mptcp) {
            return Err(Failure::Refused(r));
        }
        crate::limits::check_pin("cpu_remote", spec.cpu_remote).map_err(Failure::Refused)?;
        let running = admit(&self.policy, peer.ip(), self.shared)?;
        let token = Token(netio::random_bytes::<16>().map_err(|e| internal(&e.to_string()))?);
        let auth = DataAuth { token, key: self.client.session.clone() };
        let (route, rx) = self.shared.routes.register(auth.clone(), peer.ip());
        let udp_socks = registry::of(spec.test).data().bind(&spec, local)?;
        let udp_ports = udp_flow::ports(&udp_socks)?;
        let recording = start_trace(&spec, self.shared, &self.ctrl);
        tracing::info!("{peer}: accepted {}", describe(&spec));
        let accepted = protocol::accepted(token, &self.shared.host, udp_ports);
        self.test = Some(Test {
            spec,
            auth,
            _route: route,
            _running: running,
            rx: Some(rx),
            udp_socks,
            recording,
            data: None,
            worker: None,
            side: None,
        });
        Ok(accepted)
    }

    /// Waits for the test's data connections (TCP) or hellos (UDP) until `deadline`.
    fn await_data(&mut self, deadline: Instant) -> Event {
        let Some(t) = self.test.as_mut() else { return Event::Failed(internal("no test to collect for")) };
        let Some(rx) = t.rx.take() else { return Event::Failed(internal("collecting twice")) };
        let (ctrl, spec) = (&self.ctrl, &t.spec);
        let collect = |rx: &Receiver<DataConn>, want: u32| collect(ctrl, spec, rx, want, deadline);
        let end = ServerEnd {
            spec,
            auth: &t.auth,
            peer: self.who.0.ip(),
            deadline,
            udp_socks: std::mem::take(&mut t.udp_socks),
            conns: rx,
            ctrl,
            collect: &collect,
        };
        let data = registry::of(t.spec.test).data().accept(end);
        match data {
            Ok(data) => {
                t.data = Some(data);
                Event::DataReady
            }
            Err(event) => event,
        }
    }

    /// Waits for `start` until `deadline`. A client that closes its control connection, or
    /// one of its TCP data connections, before starting ends the test at once.
    fn await_start(&mut self, deadline: Instant) -> Event {
        loop {
            let now = Instant::now();
            if now >= deadline {
                return Event::Tick;
            }
            match self.ctrl.poll_by((now + WATCH).min(deadline)) {
                Ok(Some(msg)) => return Event::Message(Box::new(msg)),
                Ok(None) => {}
                Err(e) => return Event::Failed(e.into()),
            }
            if let Some(Data::Tcp(sockets)) = self.test.as_ref().and_then(|t| t.data.as_ref()) {
                if let Some(s) = sockets.iter().find(|s| crate::control::closed_by_peer(&s.stream)) {
                    return Event::DataClosed(s.index);
                }
            }
        }
    }

    /// Starts the test's jobs on a thread of their own.
    fn start(&mut self) -> Result<(), Failure> {
        let max_ms = self.policy.duration_cap_ms(&self.shared.cfg.limits);
        let t = self.test.as_mut().ok_or_else(|| internal("no test to start"))?;
        let data = t.data.take().ok_or_else(|| internal("no data connections"))?;
        let jobs = registry::of(t.spec.test)
            .jobs(&t.spec, End::Server, data)
            .map_err(|e| internal(&format!("preparing the test: {e}")))?;
        let signals = Signals::default();
        let timeline = Timeline::new(&t.spec, Instant::now(), max_ms);
        let (spec, sig) = (t.spec.clone(), signals.clone());
        let worker =
            std::thread::spawn(move || run_side(jobs, &spec, spec.cpu_remote, timeline, &sig, &mut |_| {}));
        t.worker = Some((worker, signals, timeline));
        Ok(())
    }

    /// Stops the test: when the client asks (the jobs finish and report), or at once when
    /// it is gone (what moved until then goes into the log line).
    fn stop(&mut self, abort: bool) {
        let Some(t) = self.test.as_mut() else { return };
        if !abort {
            if let Some((_, signals, _)) = &t.worker {
                signals.stop.set();
            }
            return;
        }
        if let Some((worker, signals, _)) = t.worker.take() {
            signals.stop.set();
            signals.abort.set();
            if let Ok(run) = worker.join() {
                self.rec.measured(&run.measurement);
            }
        }
    }

    /// Watches the control connection while the test runs; [`Event::Measured`] when it ends.
    fn watch(&mut self) -> Event {
        let Some(t) = self.test.as_mut() else { return Event::Failed(internal("no test running")) };
        let Some((worker, _, timeline)) = t.worker.as_ref() else {
            return Event::Failed(internal("no test running"));
        };
        while !worker.is_finished() {
            // Short slices near the end: the results go out as soon as the worker ends
            // (sweep overhead per point); long ones before, to stay out of the way of the test.
            let now = Instant::now();
            match self.ctrl.poll_by(now + timeline.watch_slice(now)) {
                Ok(Some(msg @ Message::Stop { .. })) => return Event::Message(Box::new(msg)),
                Ok(Some(other)) => {
                    tracing::debug!("{}: ignoring {} during the test", self.ctrl.peer(), other.name())
                }
                Ok(None) => {}
                Err(e) => {
                    tracing::info!("{}: control connection lost during the test: {e}", self.ctrl.peer());
                    return Event::Failed(Failure::Lost(e.to_string()));
                }
            }
        }
        self.measured()
    }

    /// Takes the ended test's measurement (and this end's trace).
    fn measured(&mut self) -> Event {
        let Some(t) = self.test.as_mut() else { return Event::Failed(internal("no test running")) };
        let Some((worker, ..)) = t.worker.take() else { return Event::Failed(internal("no test running")) };
        let Ok(run) = worker.join() else { return Event::Failed(internal("the test thread panicked")) };
        for e in &run.errors {
            tracing::debug!("{}: {e}", self.ctrl.peer());
        }
        let mut side = run.measurement;
        if let Some(r) = t.recording.take() {
            side.sections.insert(
                end_trace::SECTION.into(),
                r.map_or_else(|why| end_trace::refused(&why), |t| t.finish()),
            );
        }
        self.rec.measured(&side);
        t.side = Some(side);
        Event::Measured
    }

    fn send_results(&mut self) -> Option<Event> {
        let side = self.test.as_mut().and_then(|t| t.side.take());
        let Some(side) = side else { return Some(Event::Failed(internal("no results to send"))) };
        self.send(&Message::Results { side: Box::new(protocol::report(side)) })
    }

    /// Runs the third-party test the client asked for; [`Event::Measured`] once its results
    /// are sent.
    fn run_third_party(&mut self) -> Event {
        let Some(req) = self.third_party.take() else {
            return Event::Failed(internal("no third-party test"));
        };
        match super::third_party::serve(&mut self.ctrl, req, (self.shared, &self.policy)) {
            Ok(()) => Event::Measured,
            Err(e) => Event::Failed(e.into()),
        }
    }
}

/// Starts recording this end when the client asked (`None`: it did not); the error says why
/// this end is not traced.
fn start_trace(
    spec: &TestSpec,
    shared: &Shared,
    ctrl: &Control,
) -> Option<Result<Box<dyn end_trace::EndTrace>, String>> {
    if !spec.trace_server || !registry::of(spec.test).data().traits().traceable {
        return None;
    }
    let Some(tracer) = &shared.cfg.end_tracer else { return Some(Err(end_trace::OFF.into())) };
    let port = ctrl.local_port();
    Some(
        tracer
            .start(spec, port)
            .inspect_err(|e| tracing::info!("{}: not tracing this end: {e}", ctrl.peer())),
    )
}

/// Counts the test against its class: concurrent tests and tests per minute from `ip`.
fn admit(policy: &Policy, ip: IpAddr, shared: &Shared) -> Result<quota::RunningSlot, Failure> {
    let refuse = |message: String, retry: Duration| {
        Failure::Refused(Rejection {
            code: ErrorCode::Limit,
            message,
            field: None,
            retry_after_ms: Some(retry.as_millis() as u64),
        })
    };
    let Some(running) = shared.running.try_start(&policy.class, policy.max_concurrent) else {
        let n = policy.max_concurrent.unwrap_or(0);
        let msg = format!("a test beyond {n} at a time exceeds {} (max-concurrent {n})", policy.whose());
        return Err(refuse(msg, Duration::from_secs(1)));
    };
    if let Some(n) = policy.tests_per_minute {
        if let Err(wait) = shared.per_minute.take(&policy.class, ip, n, Instant::now()) {
            let msg = format!(
                "a test beyond {n} a minute from {ip} exceeds {} (tests-per-minute {n}); next in {:.0} s",
                policy.whose(),
                wait.as_secs_f64().ceil()
            );
            return Err(refuse(msg, wait));
        }
    }
    Ok(running)
}

/// `tcp-stream, 2 streams, 10 s`: what a log line says of an accepted test.
pub(super) fn describe(spec: &TestSpec) -> String {
    let length = match spec.bytes_limit {
        Some(n) => format!("{n} bytes"),
        None => format!("{} s", spec.duration_ms as f64 / 1000.0),
    };
    let flows = if spec.parallel == 1 { "1 flow".to_string() } else { format!("{} flows", spec.parallel) };
    format!("{}, {flows}, {length}", spec.test.id())
}

fn internal(what: &str) -> Failure {
    Failure::Refused(Rejection::new(ErrorCode::Internal, what.to_string()))
}

fn check_congestion(spec: &TestSpec) -> Result<(), Failure> {
    let Some(cc) = &spec.congestion else { return Ok(()) };
    let available = netio::host::congestion_available();
    if available.iter().any(|a| a == cc) {
        return Ok(());
    }
    let msg = format!(
        "congestion control '{cc}' is not available on the server (available: {})",
        available.join(", ")
    );
    Err(Failure::Refused(Rejection {
        field: Some("congestion".into()),
        ..Rejection::new(ErrorCode::Unsupported, msg)
    }))
}

/// Collects the `want` data connections of a test, in stream order, while the client is
/// still connected; [`Event::Tick`] at `deadline`.
fn collect(
    ctrl: &Control,
    spec: &TestSpec,
    rx: &Receiver<DataConn>,
    want: u32,
    deadline: Instant,
) -> Result<Vec<DataSocket>, Event> {
    let opts = crate::side::socket_opts(End::Server, spec);
    let mut sockets: Vec<Option<DataSocket>> = (0..want).map(|_| None).collect();
    for _ in 0..want {
        let conn = next_conn(ctrl, rx, deadline)?;
        let slot = sockets.get_mut(conn.index as usize).filter(|s| s.is_none()).ok_or_else(|| {
            let why = format!("unexpected stream number {}", conn.index);
            Event::Failed(Failure::Refused(Rejection::field("stream", why)))
        })?;
        netio::sockopt::apply(&conn.stream, &opts).map_err(|e| Event::Failed(internal(&e.to_string())))?;
        let report = netio::sockopt::report(&conn.stream, &opts);
        *slot = Some(DataSocket { index: conn.index, stream: conn.stream, report });
    }
    Ok(sockets.into_iter().flatten().collect())
}

/// The next data connection, unless the deadline passes or the client goes away first.
fn next_conn(ctrl: &Control, rx: &Receiver<DataConn>, deadline: Instant) -> Result<DataConn, Event> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left.min(WATCH)) {
            Ok(conn) => return Ok(conn),
            Err(RecvTimeoutError::Disconnected) => {
                return Err(Event::Failed(internal("the routing table dropped the test")))
            }
            Err(_) if left.is_zero() => return Err(Event::Tick),
            Err(_) if ctrl.peer_gone() => {
                return Err(Event::Failed(Failure::Lost(Error::PeerClosed.to_string())))
            }
            Err(_) => {}
        }
    }
}
