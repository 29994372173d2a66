//! One test on the server, from hello to results. Every wait has a deadline; a vanished
//! client ends the test at once (hard stop) and the session returns.

use std::net::{IpAddr, SocketAddr, TcpStream};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use netio::DataSocketOpts;
use results::{SideMeasurement, TestSpec};
use wire::{ErrorCode, Hello, Message, Rejection, Token};

use super::routes::DataConn;
use super::{Admission, Shared};
use crate::control::Control;
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

/// Serves one control connection whose hello was already read.
pub(super) fn serve(stream: TcpStream, peer: SocketAddr, hello: Hello, shared: &Shared, mut slot: Admission) {
    let local = stream.local_addr().map(|a| a.ip().to_canonical()).unwrap_or(IpAddr::from([0, 0, 0, 0]));
    let mut ctrl = Control::new(stream);
    let mut test = None;
    match run(&mut ctrl, (peer, local), hello, shared, (&mut slot, &mut test)) {
        Ok(()) => tracing::info!("{peer}: finished {}", test.unwrap_or("test")),
        Err(Failure::Refused(r)) => {
            let what = test.map(|t| format!(" {t}")).unwrap_or_default();
            tracing::info!("{peer}: refused{what}: {r}");
            // Free the slot before the client hears why, so that its next attempt is admitted.
            slot.release();
            let _ = ctrl.send(&Message::Error(r));
        }
        Err(Failure::Lost(e)) => tracing::info!("{peer}: {} failed: {e}", test.unwrap_or("test")),
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
    hello: Hello,
    shared: &Shared,
    (slot, test): (&mut Admission, &mut Option<&'static str>),
) -> Result<(), Failure> {
    let timeout = shared.cfg.handshake_timeout;
    ctrl.send_hello(&Hello::server(netio::random_bytes::<32>().unwrap_or([0; 32])))?;
    protocol::check_client_hello(&hello).map_err(Failure::Refused)?;
    let spec = match ctrl.recv_by(Instant::now() + timeout)? {
        Message::Setup { spec } => protocol::spec(spec).map_err(Failure::Refused)?,
        other => return Err(out_of_state(&other, "setup")),
    };
    *test = Some(spec.test.id());
    crate::limits::validate(&spec, &shared.cfg.limits).map_err(Failure::Refused)?;
    check_congestion(&spec)?;
    crate::limits::check_pin("cpu_remote", spec.cpu_remote).map_err(Failure::Refused)?;
    let token = Token(netio::random_bytes::<16>().map_err(|e| internal(&e.to_string()))?);
    let (_route, rx) = shared.routes.register(token, peer.ip());
    let ty = registry::of(spec.test);
    let udp = ty.transport() == Transport::Udp;
    let udp_socks = if udp { udp_flow::bind_server(&spec, local)? } else { Vec::new() };
    let udp_ports = udp_flow::ports(&udp_socks)?;
    tracing::info!("{peer}: accepted {}", describe(&spec));
    ctrl.send(&Message::Accepted(protocol::accepted(token, &shared.host, udp_ports)))?;
    let data = match ty.transport() {
        Transport::Udp => {
            let deadline = Instant::now() + timeout;
            let bufs = Buffers { sndbuf: spec.remote_sndbuf, rcvbuf: spec.remote_rcvbuf };
            Data::Udp(udp_flow::await_hellos(udp_socks, token, peer.ip(), deadline, &spec, bufs)?)
        }
        Transport::TcpPerTransaction => Data::Accept(forward(rx)),
        Transport::TcpConnections => Data::Tcp(collect(&spec, &rx, ty.data_connections(&spec), timeout)?),
    };
    ctrl.send(&Message::Ready {})?;
    match ctrl.recv_by(Instant::now() + timeout.max(PREPARE))? {
        Message::Start {} => {}
        other => return Err(out_of_state(&other, "start")),
    }
    let jobs =
        ty.jobs(&spec, End::Server, data).map_err(|e| internal(&format!("preparing the test: {e}")))?;
    let side = measure(ctrl, &spec, jobs, shared)?;
    ctrl.send(&Message::Results { side: Box::new(protocol::report(side)) })?;
    slot.release();
    linger(ctrl);
    Ok(())
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

/// Collects the `want` data connections of a test, in stream order.
fn collect(
    spec: &TestSpec,
    rx: &Receiver<DataConn>,
    want: u32,
    timeout: Duration,
) -> Result<Vec<DataSocket>, Failure> {
    let deadline = Instant::now() + timeout;
    let opts = server_opts(spec);
    let mut sockets: Vec<Option<DataSocket>> = (0..want).map(|_| None).collect();
    for _ in 0..want {
        let left = deadline.saturating_duration_since(Instant::now());
        let conn = rx.recv_timeout(left).map_err(|_| timed_out("waiting for the data connections"))?;
        let slot = sockets.get_mut(conn.index as usize).filter(|s| s.is_none()).ok_or_else(|| {
            Failure::Refused(Rejection::field("stream", format!("unexpected stream number {}", conn.index)))
        })?;
        netio::sockopt::apply(&conn.stream, &opts).map_err(|e| internal(&e.to_string()))?;
        let report = netio::sockopt::report(&conn.stream, &opts);
        *slot = Some(DataSocket { index: conn.index, stream: conn.stream, report });
    }
    Ok(sockets.into_iter().flatten().collect())
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

/// Runs the server side while watching the control connection.
fn measure(
    ctrl: &mut Control,
    spec: &TestSpec,
    jobs: Vec<Job>,
    shared: &Shared,
) -> Result<SideMeasurement, Failure> {
    let signals = Signals::default();
    let timeline = Timeline::new(spec, Instant::now(), shared.cfg.limits.max_duration_ms);
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
                let _ = worker.join();
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
