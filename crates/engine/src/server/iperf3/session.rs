//! One iperf3 client, from its cookie to IPERF_DONE: PARAM_EXCHANGE → CREATE_STREAMS →
//! TEST_START, TEST_RUNNING → (client) TEST_END → EXCHANGE_RESULTS → DISPLAY_RESULTS. Every
//! wait has a deadline, and a watchdog (duration + omit + 40 s, as iperf3's) ends a test the
//! client never ends. A refusal is sent as SERVER_ERROR with iperf3's error number.

use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use results::{SideMeasurement, SocketReport, TestSpec};
use wire::iperf3::{frame, Cookie, Params, Protocol, Results, State};

use super::accept::Slot;
use super::ctl::Ctl;
use super::jobs::{self, Handles};
use super::plan::{self, errno, Plan, Refusal};
use super::served::{self, Finished};
use super::streams::Registration;
use super::{report, Service};
use crate::meter::Timeline;
use crate::side::{run_side, DataSocket, End, Job, Signals};
use crate::Error;

/// Largest results document a client may send (its streams' totals: a few KB).
const MAX_CLIENT_RESULTS: usize = 1024 * 1024;
/// How long the client has to send its results once asked.
const RESULTS_WAIT: Duration = Duration::from_secs(10);
/// How long the server waits for IPERF_DONE after DISPLAY_RESULTS.
const DONE_WAIT: Duration = Duration::from_secs(5);
/// Past the planned end, how long before the watchdog ends the test (iperf3's 40 s).
const WATCHDOG_GRACE: Duration = Duration::from_secs(40);
/// Senders stop by themselves this long after the planned end if TEST_END never comes.
const SENDER_GRACE_MS: u64 = 5_000;

/// Why a session ended early.
enum Failure {
    /// Tell the client (SERVER_ERROR).
    Refused(Refusal),
    /// The client is gone or broke the protocol; nothing more to say.
    Lost(Error),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure::Lost(e)
    }
}

fn refused(i_errno: i32, why: impl ToString) -> Failure {
    Failure::Refused(Refusal::new(i_errno, why.to_string()))
}

/// Serves one control connection whose cookie was read.
pub(super) fn serve(stream: TcpStream, peer: SocketAddr, cookie: Cookie, service: &Service, mut slot: Slot) {
    let mut reg = service.streams.register(cookie.encode(), peer.ip());
    let mut ctl = Ctl::new(stream);
    match run(&mut ctl, (peer, &cookie), &mut reg, service, &mut slot) {
        Ok(served) => {
            tracing::info!("iperf3 {peer}: finished {}", served.result.label);
            if let Some(sink) = &service.shared.cfg.iperf3_served {
                (sink.0)(served);
            }
        }
        Err(Failure::Refused(r)) => {
            // The message can quote the client's parameters: logged escaped and quoted.
            let line = format!("iperf3 {peer}: refused: {:?} (iperf3 error {})", r.message, r.i_errno);
            service.shared.refusals.log(peer.ip(), &line);
            slot.release();
            let _ = ctl.send_error(r.i_errno);
        }
        Err(Failure::Lost(e)) => {
            tracing::info!("iperf3 {peer}: test ended early: {e}");
            // Free the slot before the connection closes: the client may try again at once.
            slot.release();
        }
    }
}

fn run(
    ctl: &mut Ctl,
    (peer, cookie): (SocketAddr, &Cookie),
    reg: &mut Registration,
    service: &Service,
    slot: &mut Slot,
) -> Result<served::Served, Failure> {
    let cfg = &service.shared.cfg;
    let plan = exchange_params(ctl, cfg.handshake_timeout, service)?;
    // The version is the client's own text: logged escaped and quoted.
    tracing::info!(
        "iperf3 {peer}: accepted {} from iperf3 {:?}",
        crate::server::session::describe(&plan.spec),
        plan.client_version.as_deref().unwrap_or("(version unknown)")
    );
    let (jobs, handles) = open_streams(ctl, reg, &plan, peer, cfg.handshake_timeout)?;
    ctl.send_state(State::TestStart)?;
    ctl.send_state(State::TestRunning)?;
    let started_unix_ms = unix_ms();
    let server = measure(ctl, &plan, jobs, &handles, cfg.anonymous.duration_cap_ms(&cfg.limits))?;
    ctl.send_state(State::ExchangeResults)?;
    let body = ctl.recv_frame(MAX_CLIENT_RESULTS, Instant::now() + RESULTS_WAIT)?;
    let client_results = Results::decode(&body).map_err(|e| refused(errno::RECV_RESULTS, e))?;
    let local = ctl.stream().local_addr().map_err(|source| Error::Io { what: "control address", source })?;
    let text = plan.server_output.then(|| report::text(&server, peer, local));
    let ours = report::results(&plan, &server, &service.shared.host.congestion_default, text);
    let json = ours.encode().map_err(|e| Error::Protocol { detail: e.to_string() })?;
    ctl.send_frame(&json)?;
    ctl.send_state(State::DisplayResults)?;
    slot.release();
    wait_done(ctl);
    let listen = service.listen.to_string();
    let finished = Finished {
        plan: &plan,
        client: peer,
        cookie,
        started_unix_ms,
        server,
        client_results: &client_results,
        listen,
    };
    Ok(served::record(finished))
}

/// PARAM_EXCHANGE: reads the parameters (at most 8 KiB, within the handshake timeout) and
/// checks them.
fn exchange_params(ctl: &mut Ctl, timeout: Duration, service: &Service) -> Result<Plan, Failure> {
    ctl.send_state(State::ParamExchange)?;
    let body = match ctl.recv_frame(frame::MAX_PARAMS_BYTES, Instant::now() + timeout) {
        Ok(b) => b,
        Err(Error::Protocol { detail }) => return Err(refused(errno::RECV_PARAMS, detail)),
        Err(e) => return Err(Failure::Lost(e)),
    };
    let params = Params::decode(&body).map_err(|e| refused(errno::RECV_PARAMS, e))?;
    let mut plan = plan::plan(&params, &service.shared.cfg.limits).map_err(Failure::Refused)?;
    if let Some(r) = crate::registry::mptcp::refusal(&plan.spec, service.shared.cfg.mptcp) {
        return Err(refused(plan::errno::UNIMPLEMENTED, r.message));
    }
    // iperf3 clients cannot show a key: they get what anonymous clients may ask.
    crate::limits::check_policy(&plan.spec, &service.shared.cfg.anonymous)
        .map_err(|r| Failure::Refused(plan::refusal(&plan.spec, r)))?;
    drop_unavailable_congestion(&mut plan.spec);
    Ok(plan)
}

/// iperf3 servers go on without a congestion control the kernel lacks (a warning, not an
/// error); so does this one.
fn drop_unavailable_congestion(spec: &mut TestSpec) {
    if let Some(cc) = spec.congestion.take() {
        if netio::host::congestion_available().contains(&cc) {
            spec.congestion = Some(cc);
        } else {
            tracing::info!("congestion control {cc:?} is not available here: using the default");
        }
    }
}

/// CREATE_STREAMS: takes the client's data streams, in order, within the handshake timeout.
fn open_streams(
    ctl: &mut Ctl,
    reg: &mut Registration,
    plan: &Plan,
    peer: SocketAddr,
    timeout: Duration,
) -> Result<(Vec<Job>, Handles), Failure> {
    let want = crate::registry::of(plan.spec.test).data_connections(&plan.spec) as usize;
    let opts = crate::side::socket_opts(End::Server, &plan.spec);
    let deadline = Instant::now() + timeout;
    if plan.protocol == Protocol::Udp {
        let rx = reg.open_udp(peer.ip());
        ctl.send_state(State::CreateStreams)?;
        let socks = collect(&rx, want, deadline);
        reg.close();
        let socks = socks?.into_iter().map(|s| udp_options(s, plan)).collect::<Result<Vec<_>, _>>()?;
        return Ok((jobs::udp(plan, socks), Handles::default()));
    }
    let rx = reg.open_tcp();
    ctl.send_state(State::CreateStreams)?;
    let conns = collect(&rx, want, deadline);
    reg.close();
    let mut sockets = Vec::with_capacity(want);
    for (i, stream) in conns?.into_iter().enumerate() {
        netio::sockopt::apply(&stream, &opts).map_err(|e| refused(errno::SET_CONGESTION, e))?;
        let report = netio::sockopt::report(&stream, &opts);
        sockets.push(DataSocket { index: i as u32, stream, report });
    }
    jobs::tcp(plan, sockets).map_err(|e| refused(errno::STREAM_ACCEPT, e))
}

fn collect<T>(rx: &Receiver<T>, want: usize, deadline: Instant) -> Result<Vec<T>, Failure> {
    let mut got = Vec::with_capacity(want);
    while got.len() < want {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(s) => got.push(s),
            Err(_) => {
                let msg = format!("{} of {want} data streams arrived in time", got.len());
                return Err(refused(errno::STREAM_ACCEPT, msg));
            }
        }
    }
    Ok(got)
}

/// Socket buffers as asked (`-w`), and at least one datagram plus 1 KiB, as iperf3 does.
fn udp_options(sock: UdpSocket, plan: &Plan) -> Result<(UdpSocket, SocketReport), Failure> {
    let floor = plan.spec.send_len.saturating_add(1024);
    let bufs = plan.spec.buffers(End::Server).at_least(floor);
    let report =
        crate::udp_flow::apply(&sock, &plan.spec, bufs).map_err(|e| refused(errno::STREAM_ACCEPT, e))?;
    Ok((sock, report))
}

/// Runs the server's side until the client's TEST_END (or a failure, or the watchdog).
fn measure(
    ctl: &mut Ctl,
    plan: &Plan,
    jobs: Vec<Job>,
    handles: &Handles,
    max_ms: u64,
) -> Result<SideMeasurement, Failure> {
    let mut spec = plan.spec.clone();
    if spec.duration_ms > 0 {
        // The client ends the test; the server's senders only stop by themselves if it never does.
        spec.duration_ms += SENDER_GRACE_MS;
    }
    let start = Instant::now();
    let timeline = Timeline::new(&spec, start, max_ms);
    let planned = if plan.spec.duration_ms > 0 { plan.spec.duration_ms } else { max_ms };
    let watchdog = start + Duration::from_millis(planned) + WATCHDOG_GRACE;
    let signals = Signals::default();
    let sig = signals.clone();
    let worker =
        std::thread::spawn(move || run_side(jobs, &spec, spec.cpu_remote, timeline, &sig, &mut |_| {}));
    let ended = await_test_end(ctl, watchdog);
    signals.stop.set();
    if ended.is_err() {
        signals.abort.set();
    }
    handles.shutdown();
    let run = worker
        .join()
        .map_err(|_| Failure::Lost(Error::Protocol { detail: "the test thread panicked".into() }))?;
    ended?;
    for e in &run.errors {
        tracing::debug!("iperf3 stream: {e}");
    }
    Ok(run.measurement)
}

/// Waits for TEST_END on the control connection.
fn await_test_end(ctl: &mut Ctl, watchdog: Instant) -> Result<(), Failure> {
    loop {
        if Instant::now() >= watchdog {
            return Err(refused(errno::DURATION_EXPIRED, "the client did not end the test in time"));
        }
        match ctl.poll_state(watchdog.min(Instant::now() + Duration::from_millis(200))) {
            Ok(Some(State::TestEnd)) => return Ok(()),
            Ok(Some(State::ClientTerminate)) => {
                return Err(Failure::Lost(Error::Protocol { detail: "the client was interrupted".into() }))
            }
            Ok(Some(other)) => {
                return Err(refused(errno::MESSAGE, format!("unexpected {} during the test", other.name())))
            }
            Ok(None) => {}
            Err(Error::Protocol { detail }) => return Err(refused(errno::MESSAGE, detail)),
            Err(e) => return Err(Failure::Lost(e)),
        }
    }
}

/// Waits briefly for IPERF_DONE, so the client's last reads are not cut by a reset.
fn wait_done(ctl: &mut Ctl) {
    let deadline = Instant::now() + DONE_WAIT;
    while let Ok(Some(state)) = ctl.poll_state(deadline) {
        if state == State::IperfDone {
            return;
        }
    }
}

fn unix_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}
