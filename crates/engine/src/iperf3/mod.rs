//! The client side of a test against a stock iperf3 server (`--iperf3`): iperf3's control
//! protocol (codec in `wire::iperf3`) around tcplab's own data engines. The data sockets are
//! opened here and handed to the test type's jobs from the registry, so the stream engine,
//! meters, TCP_INFO sampler and CPU window are the same as against a tcplab server. The
//! server's byte counts from the results exchange become the remote measurement.
//!
//! `stream` runs over TCP; `udp` over iperf3's UDP streams (`udp`: hello and reply), with
//! iperf3's datagram header and the receiver's accounting from `udp_data`.
//!
//! Sequence: cookie → PARAM_EXCHANGE → parameters → CREATE_STREAMS → data connections (each
//! with the cookie) → TEST_START, TEST_RUNNING → data → TEST_END (when this end's senders are
//! done, or at the deadline when it only receives) → EXCHANGE_RESULTS → our results, theirs →
//! DISPLAY_RESULTS → IPERF_DONE.

mod control;
pub mod convert;
mod udp;
pub(crate) mod udp_data;

use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use netio::DataSocketOpts;
use results::{HostInfo, Interval, Role, TestKind, TestResult, TestSpec};
use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use wire::iperf3::{frame, Cookie, Results, State};

use crate::client::{conclude, resolve, ClientOptions, Observer};
use crate::meter::Timeline;
use crate::registry::{self, Data, Transport};
use crate::side::{run_side, DataSocket, End, Job, Signals, WorkDebug};
use crate::stop::StopFlag;
use crate::Error;
use control::Ctrl;

/// iperf3's default port.
pub const DEFAULT_PORT: u16 = wire::iperf3::DEFAULT_PORT;
/// The local measurement's section holding the test's cookie (iperf3's `-J` shows it).
pub const COOKIE_SECTION: &str = "iperf3_cookie";
/// How long the server may take to answer TEST_END with its results.
const RESULTS_TIMEOUT: Duration = Duration::from_secs(15);
/// Longest a UDP receiver runs on after TEST_END while the server has not asked for results.
const UDP_TAIL_MAX: Duration = Duration::from_secs(2);

/// Runs one test against the iperf3 server at `opts`. Never panics on peer input; failures
/// are inside the result, with what was measured up to then.
pub fn run_test(
    opts: &ClientOptions,
    spec: &TestSpec,
    observer: &mut dyn Observer,
    stop: &StopFlag,
) -> (TestResult, Option<HostInfo>) {
    let mut out = crate::client::fresh_result(opts, spec);
    let mut session = Session { opts, spec, observer, stop, same_host: false };
    let outcome = crate::client::while_busy(opts, stop, Duration::from_millis(200), || session.run(&mut out));
    let same_host = session.same_host;
    conclude(&mut out, outcome, stop, same_host);
    (out, None)
}

struct Session<'a> {
    opts: &'a ClientOptions,
    spec: &'a TestSpec,
    observer: &'a mut dyn Observer,
    stop: &'a StopFlag,
    same_host: bool,
}

impl Session<'_> {
    fn run(&mut self, out: &mut TestResult) -> Result<(), Error> {
        let ty = registry::of(self.spec.test);
        let udp = self.spec.test == TestKind::UdpStream;
        if !udp && (ty.transport() != Transport::TcpConnections || self.spec.test != TestKind::TcpStream) {
            let why = format!("--iperf3 runs stream and udp tests only, not {}", registry::label(self.spec));
            return Err(Error::Unsupported(why));
        }
        crate::limits::validate(self.spec, &crate::limits::Limits::default()).map_err(Error::Rejected)?;
        let params = convert::params(self.spec).map_err(Error::Unsupported)?;
        let addr = resolve(self.opts)?;
        out.server = addr.to_string();
        let cookie = Cookie::from_random(
            netio::random_bytes::<36>().map_err(|source| Error::Io { what: "drawing a cookie", source })?,
        );
        let mut ctrl = self.connect_control(addr, &cookie)?;
        self.expect(&mut ctrl, State::ParamExchange)?;
        let json = params.encode().map_err(|e| Error::Protocol { detail: e.to_string() })?;
        ctrl.send_json(&json, frame::MAX_PARAMS_BYTES)?;
        self.expect(&mut ctrl, State::CreateStreams)?;
        // UDP sockets stay open until the end: a closed one would answer the server's last
        // datagrams with ICMP errors, which iperf3 servers count as a failed write.
        let (jobs, _udp_kept) = if udp {
            let count = params.data_connections();
            let socks = udp::open(self.spec, addr, self.opts.bind, count, self.opts.timeout)?;
            let kept = socks.iter().filter_map(|(s, _)| s.try_clone().ok()).collect::<Vec<_>>();
            (udp_data::jobs(self.spec, End::Client, false, socks), kept)
        } else {
            let sockets = self.open_data(addr, &cookie, params.data_connections())?;
            (ty.jobs(self.spec, End::Client, Data::Tcp(sockets))?, Vec::new())
        };
        self.expect(&mut ctrl, State::TestStart)?;
        self.expect(&mut ctrl, State::TestRunning)?;
        if self.stop.is_set() {
            return Err(Error::Interrupted);
        }
        let (jobs, senders) = count_senders(jobs);
        let measured = self.measure(&mut ctrl, jobs, &senders, out);
        out.local.sections.insert(COOKIE_SECTION.into(), cookie.as_str().into());
        measured
    }

    fn expect(&self, ctrl: &mut Ctrl, want: State) -> Result<(), Error> {
        let got = ctrl.recv_state(Instant::now() + self.opts.timeout, want.name()).map_err(|e| match e {
            Error::PeerClosed => Error::Protocol {
                detail: format!(
                    "the server closed the connection before {} (not an iperf3 server?)",
                    want.name()
                ),
            },
            other => other,
        })?;
        if got == want {
            return Ok(());
        }
        Err(Error::Protocol {
            detail: format!("the iperf3 server sent {} where {} belongs", got.name(), want.name()),
        })
    }

    /// A connected stream socket to `addr`: MPTCP with `mptcp` (iperf3 -m's data streams).
    fn socket(&self, addr: SocketAddr, opts: &DataSocketOpts, mptcp: bool) -> Result<TcpStream, Error> {
        let io = |what| move |source| Error::Io { what, source };
        let sock = if mptcp {
            netio::mptcp::socket(addr).map_err(io("creating an MPTCP socket"))?
        } else {
            Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))
                .map_err(io("creating a socket"))?
        };
        netio::sockopt::apply(&sock, opts)?;
        if let Some(ip) = self.opts.bind {
            sock.bind(&SockAddr::from(SocketAddr::new(ip, 0))).map_err(io("binding the local address"))?;
        }
        sock.connect_timeout(&SockAddr::from(addr), self.opts.timeout)
            .map_err(|source| Error::Connect { addr: addr.to_string(), source })?;
        Ok(sock.into())
    }

    fn connect_control(&mut self, addr: SocketAddr, cookie: &Cookie) -> Result<Ctrl, Error> {
        let stream = self.socket(addr, &DataSocketOpts::default(), false)?;
        self.same_host =
            stream.local_addr().map(|l| l.ip() == addr.ip() || addr.ip().is_loopback()).unwrap_or(false);
        let mut ctrl = Ctrl::new(stream);
        ctrl.send_bytes(&cookie.encode(), "sending the iperf3 cookie")?;
        Ok(ctrl)
    }

    fn open_data(&self, addr: SocketAddr, cookie: &Cookie, count: u32) -> Result<Vec<DataSocket>, Error> {
        let opts = crate::side::socket_opts(End::Client, self.spec);
        let mut out = Vec::with_capacity(count as usize);
        let mptcp = crate::registry::mptcp::asks(self.spec);
        for index in 0..count {
            let mut stream = self.socket(addr, &opts, mptcp)?;
            std::io::Write::write_all(&mut stream, &cookie.encode())
                .map_err(|source| Error::Io { what: "sending the cookie on a data connection", source })?;
            let report = netio::sockopt::report(&stream, &opts);
            out.push(DataSocket { index, stream, report });
        }
        Ok(out)
    }

    fn measure(
        &mut self,
        ctrl: &mut Ctrl,
        jobs: Vec<Job>,
        senders: &AtomicUsize,
        out: &mut TestResult,
    ) -> Result<(), Error> {
        let limits = crate::limits::Limits::default();
        let timeline = Timeline::new(self.spec, Instant::now(), limits.max_duration_ms);
        self.observer.on_start(&out.label, self.spec, &out.server, None);
        let signals = Signals::default();
        let (tx, rx) = mpsc::channel::<Interval>();
        let (spec, sig) = (self.spec.clone(), signals.clone());
        let worker = std::thread::spawn(move || {
            run_side(jobs, &spec, spec.cpu_local, timeline, &sig, &mut |iv| {
                let _ = tx.send(iv.clone());
            })
        });
        let mut watch = Watch::default();
        while !worker.is_finished() {
            rx.try_iter().for_each(|iv| self.observer.on_interval(self.spec, &iv));
            self.watch_once(ctrl, &signals, &mut watch, &timeline, senders);
        }
        rx.try_iter().for_each(|iv| self.observer.on_interval(self.spec, &iv));
        let run = worker.join().map_err(|_| Error::Protocol { detail: "the test thread panicked".into() })?;
        out.local = run.measurement;
        if let Some(e) = watch.failure {
            return Err(e);
        }
        if !watch.end_sent {
            ctrl.send_state(State::TestEnd)?;
        }
        self.exchange(ctrl, watch.exchange_seen, out)?;
        match run.errors.first() {
            Some(e) => Err(Error::Protocol { detail: e.clone() }),
            None => Ok(()),
        }
    }

    fn watch_once(
        &mut self,
        ctrl: &mut Ctrl,
        signals: &Signals,
        w: &mut Watch,
        timeline: &Timeline,
        senders: &AtomicUsize,
    ) {
        let now = Instant::now();
        let senders_done = senders.load(Ordering::Acquire) == 0;
        let ending = self.stop.is_set() || timeline.past_deadline(now) || self.spec.bytes_limit.is_some();
        // UDP receivers run on until the server has stopped sending (it asks for the results
        // once it has), so that datagrams in flight at TEST_END are counted, not lost.
        let udp = self.spec.test == TestKind::UdpStream;
        if w.end_sent && (!udp || w.exchange_seen || w.ended_at.is_some_and(|t| now > t + UDP_TAIL_MAX)) {
            signals.stop.set();
        }
        if !w.end_sent && w.failure.is_none() && senders_done && ending {
            if !udp {
                signals.stop.set();
            }
            w.end_sent = true;
            w.ended_at = Some(now);
            if let Err(e) = ctrl.send_state(State::TestEnd) {
                w.failure = Some(e);
            }
        }
        if w.failure.is_some() || w.exchange_seen {
            signals.stop.set();
            std::thread::sleep(Duration::from_millis(2));
            return;
        }
        match ctrl.poll_state(timeline.watch_slice(now)) {
            Ok(None) => {}
            Ok(Some(State::ExchangeResults)) if w.end_sent => w.exchange_seen = true,
            Ok(Some(s)) => tracing::debug!("ignoring iperf3 {} during the test", s.name()),
            Err(e) => {
                signals.stop.set();
                signals.abort.set();
                w.failure = Some(match e {
                    Error::PeerClosed => Error::Protocol {
                        detail: "the iperf3 server closed the connection during the test".into(),
                    },
                    other => other,
                });
            }
        }
    }

    /// EXCHANGE_RESULTS: ours first, then the server's; DISPLAY_RESULTS; IPERF_DONE.
    fn exchange(&self, ctrl: &mut Ctrl, seen: bool, out: &mut TestResult) -> Result<(), Error> {
        let deadline = Instant::now() + RESULTS_TIMEOUT;
        if !seen {
            let got = ctrl.recv_state(deadline, "EXCHANGE_RESULTS")?;
            if got != State::ExchangeResults {
                let detail = format!("the iperf3 server sent {} where EXCHANGE_RESULTS belongs", got.name());
                return Err(Error::Protocol { detail });
            }
        }
        let udp = self.spec.test == TestKind::UdpStream;
        let mine = convert::local_results(&out.local, self.spec.congestion.clone(), !udp);
        let json = mine.encode().map_err(|e| Error::Protocol { detail: e.to_string() })?;
        ctrl.send_json(&json, frame::MAX_RESULTS_BYTES)?;
        let theirs = ctrl.recv_json(frame::MAX_RESULTS_BYTES, deadline, "EXCHANGE_RESULTS")?;
        let theirs = Results::decode(&theirs).map_err(|e| Error::Protocol { detail: e.to_string() })?;
        out.remote = Some(
            convert::remote_measurement(&out.local, &theirs, udp)
                .map_err(|detail| Error::Protocol { detail })?,
        );
        let got = ctrl.recv_state(deadline, "DISPLAY_RESULTS")?;
        if got != State::DisplayResults {
            let detail = format!("the iperf3 server sent {} where DISPLAY_RESULTS belongs", got.name());
            return Err(Error::Protocol { detail });
        }
        ctrl.send_state(State::IperfDone)
    }
}

#[derive(Default)]
struct Watch {
    failure: Option<Error>,
    end_sent: bool,
    ended_at: Option<Instant>,
    exchange_seen: bool,
}

/// Wraps every sending job so that a shared counter says how many senders still run: TEST_END
/// goes out only once this end's senders have stopped (else the server's close could cut a
/// last write short).
fn count_senders(jobs: Vec<Job>) -> (Vec<Job>, Arc<AtomicUsize>) {
    let pending = Arc::new(AtomicUsize::new(jobs.iter().filter(|j| j.role == Role::Send).count()));
    let jobs = jobs
        .into_iter()
        .map(|job| {
            if job.role != Role::Send {
                return job;
            }
            let (work, left) = (job.work.0, pending.clone());
            let wrapped: crate::side::Work = Box::new(move |ctx| {
                let outcome = work(ctx);
                left.fetch_sub(1, Ordering::AcqRel);
                outcome
            });
            Job { work: WorkDebug(wrapped), ..job }
        })
        .collect();
    (jobs, pending)
}
