//! One test on the server, from hello to results. Every wait has a deadline; a vanished
//! client ends the test at once (hard stop) and the session returns.

use std::net::{IpAddr, SocketAddr, TcpStream};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use netio::DataSocketOpts;
use results::{SideMeasurement, TestSpec};
use wire::{ErrorCode, Message, Rejection, Token};

use super::end_trace;
use super::record::Record;
use super::routes::DataConn;
use super::{quota, Admission, Shared};
use crate::auth::{self, DataAuth};
use crate::control::Control;
use crate::limits::Policy;
use crate::meter::Timeline;
use crate::registry::{self, Data, Transport};
use crate::side::{run_side, DataSocket, End, Job, Signals};
use crate::udp_flow::{self, Buffers};
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
/// `policy`); `handshake` counts it until it asks for a test.
pub(super) fn serve(
    stream: TcpStream,
    (peer, mut rec): (SocketAddr, Record),
    (client, policy): (auth::Peer, Policy),
    shared: &Arc<Shared>,
    handshake: quota::RunningSlot,
) {
    let local = stream.local_addr().map(|a| a.ip().to_canonical()).unwrap_or(IpAddr::from([0, 0, 0, 0]));
    let mut ctrl = Control::new(stream);
    let mut slot = None;
    let who = (&client, &policy);
    match run(&mut ctrl, (peer, local), who, shared, (&mut slot, handshake, &mut rec)) {
        Ok(()) => rec.log("finished", None),
        Err(Failure::Refused(r)) => {
            // Free the slot before the client hears why, so that its next attempt is admitted.
            if let Some(s) = slot.as_mut() {
                s.release();
            }
            let _ = ctrl.send(&Message::Error(r.clone()));
            rec.log_refused(&shared.refusals, &r.to_string());
        }
        Err(Failure::Lost(e)) => rec.log("failed", Some(&e.to_string())),
    }
}

/// Why a session ended early.
enum Failure {
    /// Tell the client why.
    Refused(Rejection),
    /// The client is gone or broke the protocol; nothing more to say.
    Lost(Error),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        match e {
            Error::Protocol { detail } => Failure::Refused(Rejection::new(ErrorCode::BadMessage, detail)),
            Error::Timeout { what } => {
                Failure::Refused(Rejection::new(ErrorCode::Timeout, format!("timed out {what}")))
            }
            Error::Rejected(r) => Failure::Refused(r),
            other => Failure::Lost(other),
        }
    }
}

fn run(
    ctrl: &mut Control,
    (peer, local): (SocketAddr, IpAddr),
    (client, policy): (&auth::Peer, &Policy),
    shared: &Arc<Shared>,
    (slot, handshake, rec): (&mut Option<Admission>, quota::RunningSlot, &mut Record),
) -> Result<(), Failure> {
    let timeout = shared.cfg.handshake_timeout;
    let asked = ctrl.recv_by(Instant::now() + timeout)?;
    drop(handshake);
    if slot.is_none() {
        *slot = Some(shared.try_admit().ok_or_else(|| Failure::Refused(super::busy()))?);
    }
    let spec = match asked {
        Message::Setup { spec } => protocol::spec(spec).map_err(Failure::Refused)?,
        Message::ThirdParty(req) => {
            rec.test = Some("third-party");
            super::third_party::serve(ctrl, req, (shared, policy), slot.as_mut())?;
            linger(ctrl);
            return Ok(());
        }
        other => return Err(out_of_state(&other, "setup")),
    };
    rec.test = Some(spec.test.id());
    crate::limits::check_policy(&spec, policy).map_err(Failure::Refused)?;
    crate::limits::validate(&spec, &shared.cfg.limits).map_err(Failure::Refused)?;
    check_congestion(&spec)?;
    crate::limits::check_pin("cpu_remote", spec.cpu_remote).map_err(Failure::Refused)?;
    let _running = admit(policy, peer.ip(), shared)?;
    let token = Token(netio::random_bytes::<16>().map_err(|e| internal(&e.to_string()))?);
    let auth = DataAuth { token, key: client.session.clone() };
    let (_route, rx) = shared.routes.register(auth.clone(), peer.ip());
    let ty = registry::of(spec.test);
    let udp = ty.transport() == Transport::Udp;
    let udp_socks = if udp { udp_flow::bind_server(&spec, local)? } else { Vec::new() };
    let udp_ports = udp_flow::ports(&udp_socks)?;
    let recording = start_trace(&spec, shared, ctrl);
    tracing::info!("{peer}: accepted {}", describe(&spec));
    ctrl.send(&Message::Accepted(protocol::accepted(token, &shared.host, udp_ports)))?;
    let data = match ty.transport() {
        Transport::Udp => {
            let deadline = Instant::now() + timeout;
            let bufs = Buffers { sndbuf: spec.remote_sndbuf, rcvbuf: spec.remote_rcvbuf };
            let gone = || ctrl.peer_gone();
            Data::Udp(udp_flow::await_hellos(udp_socks, &auth, peer.ip(), deadline, &spec, bufs, &gone)?)
        }
        Transport::TcpPerTransaction => Data::Accept(forward(rx)),
        Transport::TcpConnections => {
            Data::Tcp(collect(ctrl, &spec, &rx, ty.data_connections(&spec), timeout)?)
        }
    };
    ctrl.send(&Message::Ready {})?;
    await_start(ctrl, &data, Instant::now() + timeout.max(PREPARE))?;
    let jobs =
        ty.jobs(&spec, End::Server, data).map_err(|e| internal(&format!("preparing the test: {e}")))?;
    let mut side = measure(ctrl, &spec, jobs, policy.duration_cap_ms(&shared.cfg.limits), rec)?;
    if let Some(r) = recording {
        side.sections
            .insert(end_trace::SECTION.into(), r.map_or_else(|why| end_trace::refused(&why), |t| t.finish()));
    }
    rec.measured(&side);
    ctrl.send(&Message::Results { side: Box::new(protocol::report(side)) })?;
    if let Some(s) = slot.as_mut() {
        s.release();
    }
    linger(ctrl);
    Ok(())
}

/// Starts recording this end when the client asked (`None`: it did not); the error says why
/// this end is not traced.
fn start_trace(
    spec: &TestSpec,
    shared: &Shared,
    ctrl: &Control,
) -> Option<Result<Box<dyn end_trace::EndTrace>, String>> {
    if !spec.trace_server || registry::of(spec.test).transport() == Transport::Udp {
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

fn out_of_state(got: &Message, wanted: &str) -> Failure {
    if let Message::Error(r) = got {
        return Failure::Lost(Error::Rejected(r.clone()));
    }
    Failure::Refused(Rejection::new(ErrorCode::OutOfState, format!("expected {wanted}, got {}", got.name())))
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

fn server_opts(spec: &TestSpec) -> DataSocketOpts {
    DataSocketOpts {
        sndbuf: spec.remote_sndbuf,
        rcvbuf: spec.remote_rcvbuf,
        nodelay: spec.nodelay,
        mss: spec.mss,
        congestion: spec.congestion.clone(),
    }
}

/// Collects the `want` data connections of a test, in stream order, while the client is
/// still connected.
fn collect(
    ctrl: &Control,
    spec: &TestSpec,
    rx: &Receiver<DataConn>,
    want: u32,
    timeout: Duration,
) -> Result<Vec<DataSocket>, Failure> {
    let deadline = Instant::now() + timeout;
    let opts = server_opts(spec);
    let mut sockets: Vec<Option<DataSocket>> = (0..want).map(|_| None).collect();
    for _ in 0..want {
        let conn = next_conn(ctrl, rx, deadline)?;
        let slot = sockets.get_mut(conn.index as usize).filter(|s| s.is_none()).ok_or_else(|| {
            Failure::Refused(Rejection::field("stream", format!("unexpected stream number {}", conn.index)))
        })?;
        netio::sockopt::apply(&conn.stream, &opts).map_err(|e| internal(&e.to_string()))?;
        let report = netio::sockopt::report(&conn.stream, &opts);
        *slot = Some(DataSocket { index: conn.index, stream: conn.stream, report });
    }
    Ok(sockets.into_iter().flatten().collect())
}

/// The next data connection, unless the deadline passes or the client goes away first.
fn next_conn(ctrl: &Control, rx: &Receiver<DataConn>, deadline: Instant) -> Result<DataConn, Failure> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left.min(WATCH)) {
            Ok(conn) => return Ok(conn),
            Err(RecvTimeoutError::Disconnected) => {
                return Err(internal("the routing table dropped the test"))
            }
            Err(_) if left <= WATCH => return Err(timed_out("waiting for the data connections")),
            Err(_) if ctrl.peer_gone() => return Err(Failure::Lost(Error::PeerClosed)),
            Err(_) => {}
        }
    }
}

/// Waits for `start`. A client that closes its control connection, or one of its TCP data
/// connections, before starting ends the test at once.
fn await_start(ctrl: &mut Control, data: &Data, deadline: Instant) -> Result<(), Failure> {
    loop {
        let now = Instant::now();
        if now >= deadline {
            return Err(timed_out("waiting for start"));
        }
        match ctrl.poll_by((now + WATCH).min(deadline))? {
            Some(Message::Start {}) => return Ok(()),
            Some(other) => return Err(out_of_state(&other, "start")),
            None => {}
        }
        if let Data::Tcp(sockets) = data {
            if let Some(s) = sockets.iter().find(|s| crate::control::closed_by_peer(&s.stream)) {
                let why = format!("data connection {} closed before the test started", s.index);
                return Err(Failure::Refused(Rejection::new(ErrorCode::OutOfState, why)));
            }
        }
    }
}

/// The connections of a per-transaction test as they arrive, for the whole test.
fn forward(rx: Receiver<DataConn>) -> Receiver<TcpStream> {
    let (tx, conns) = std::sync::mpsc::channel();
    std::thread::spawn(move || rx.iter().try_for_each(|c| tx.send(c.stream)));
    conns
}

fn timed_out(what: &'static str) -> Failure {
    Failure::Refused(Rejection::new(ErrorCode::Timeout, format!("timed out {what}")))
}

/// Runs the server side while watching the control connection. A client lost during the
/// test ends it at once; what moved until then goes into `rec` (the log line says it).
fn measure(
    ctrl: &mut Control,
    spec: &TestSpec,
    jobs: Vec<Job>,
    max_ms: u64,
    rec: &mut Record,
) -> Result<SideMeasurement, Failure> {
    let signals = Signals::default();
    let timeline = Timeline::new(spec, Instant::now(), max_ms);
    let (spec2, sig2) = (spec.clone(), signals.clone());
    let worker =
        std::thread::spawn(move || run_side(jobs, &spec2, spec2.cpu_remote, timeline, &sig2, &mut |_| {}));
    while !worker.is_finished() {
        // Short slices near the end: the results go out as soon as the worker ends (sweep
        // overhead per point); long ones before, to stay out of the way of the test.
        let now = Instant::now();
        match ctrl.poll_by(now + timeline.watch_slice(now)) {
            Ok(Some(Message::Stop { reason })) => {
                tracing::debug!("{}: stop: {reason}", ctrl.peer());
                signals.stop.set();
            }
            Ok(Some(other)) => tracing::debug!("{}: ignoring {} during the test", ctrl.peer(), other.name()),
            Ok(None) => {}
            Err(e) => {
                tracing::info!("{}: control connection lost during the test: {e}", ctrl.peer());
                signals.stop.set();
                signals.abort.set();
                if let Ok(run) = worker.join() {
                    rec.measured(&run.measurement);
                }
                return Err(Failure::Lost(e));
            }
        }
    }
    let run = worker.join().map_err(|_| internal("the test thread panicked"))?;
    for e in &run.errors {
        tracing::debug!("{}: {e}", ctrl.peer());
    }
    Ok(run.measurement)
}

/// Waits briefly for the client to close, so its last reads are not cut by a reset.
fn linger(ctrl: &mut Control) {
    let _ = ctrl.poll_by(Instant::now() + LINGER);
}
