//! `udp-rr`: request/response over UDP (netperf UDP_RR). The client keeps `burst` numbered
//! requests in flight; the server answers each with a response carrying the request's number.
//! A request without a response within the timeout is counted lost and replaced by a new one,
//! so a lost datagram never stalls the test; a response arriving after its timeout is ignored.

use std::collections::VecDeque;
use std::io::ErrorKind;
use std::net::UdpSocket;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use results::{Metric, Role, Shape, SideMeasurement, Summary, TestKind, TestSpec};
use stats::LatencyHistogram;
use wire::udp::{Header, HEADER_LEN};
use wire::{Datagram, Rejection};

use crate::limits::check_datagram;
use crate::meter::WorkerCtx;
use crate::registry::{self, Data, Info, TestType, Transport};
use crate::side::{End, Job, WorkDebug, WorkerOutcome};
use crate::stream::payload;
use crate::udp_flow::UdpFlow;
use crate::Error;

/// Timeout before the first response has been timed.
const FIRST_TIMEOUT: Duration = Duration::from_millis(200);
/// Bounds of the adaptive timeout (8 × smoothed round trip).
const MIN_TIMEOUT: Duration = Duration::from_millis(10);
const MAX_TIMEOUT: Duration = Duration::from_secs(1);
const SLICE: Duration = Duration::from_millis(20);

/// Builds one job per flow.
pub fn jobs(spec: &TestSpec, end: End, flows: Vec<UdpFlow>) -> Vec<Job> {
    let (req, resp, burst) = (spec.request_len as usize, spec.response_len as usize, spec.burst as usize);
    flows
        .into_iter()
        .map(|flow| {
            let index = flow.index;
            let (role, work): (Role, crate::side::Work) = match end {
                End::Client => {
                    (Role::Request, Box::new(move |ctx: &WorkerCtx| client_loop(flow, req, resp, burst, ctx)))
                }
                End::Server => {
                    (Role::Respond, Box::new(move |ctx: &WorkerCtx| server_loop(flow, req, resp, ctx)))
                }
            };
            Job { index, role, socket: None, work: WorkDebug(work) }
        })
        .collect()
}

/// The requesting side's state.
struct Requester {
    sock: UdpSocket,
    request: Vec<u8>,
    next_seq: u64,
    in_flight: VecDeque<(u64, Instant)>,
    srtt_ns: Option<f64>,
}

impl Requester {
    fn send(&mut self, ctx: &WorkerCtx, now: Instant) {
        let sent_ns = now.saturating_duration_since(ctx.timeline.start).as_nanos() as u64;
        Header { seq: self.next_seq, sent_ns }.write(&mut self.request);
        match self.sock.send(&self.request) {
            Ok(_) => {
                self.in_flight.push_back((self.next_seq, now));
                self.next_seq += 1;
                ctx.meter.with_udp(|u| u.sender.sent = self.next_seq);
            }
            Err(e) => {
                ctx.meter.with_udp(|u| {
                    u.sender.send_errors += 1;
                    u.sender.enobufs += u64::from(netio::udp::is_enobufs(&e));
                });
                // Retried by the timeout path: keep the slot with a send time of now.
                self.in_flight.push_back((u64::MAX, now));
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }

    fn timeout(&self) -> Duration {
        match self.srtt_ns {
            Some(s) => Duration::from_nanos((8.0 * s) as u64).clamp(MIN_TIMEOUT, MAX_TIMEOUT),
            None => FIRST_TIMEOUT,
        }
    }

    /// Takes `seq` out of the in-flight list; returns its send time.
    fn answered(&mut self, seq: u64) -> Option<Instant> {
        let pos = self.in_flight.iter().position(|&(s, _)| s == seq)?;
        self.in_flight.remove(pos).map(|(_, at)| at)
    }
}

/// The requesting side of one flow.
fn client_loop(flow: UdpFlow, req: usize, resp: usize, burst: usize, ctx: &WorkerCtx) -> WorkerOutcome {
    ctx.meter.with_udp(|u| u.socket = Some(flow.report));
    let _ = flow.sock.set_read_timeout(Some(SLICE));
    let mut r = Requester {
        sock: flow.sock,
        request: payload(req.max(HEADER_LEN)),
        next_seq: 0,
        in_flight: VecDeque::with_capacity(burst),
        srtt_ns: None,
    };
    let mut hist = LatencyHistogram::new();
    let mut buf = vec![0u8; resp.max(HEADER_LEN)];
    let mut now = Instant::now();
    for _ in 0..burst {
        r.send(ctx, now);
    }
    let mut last = now;
    loop {
        let stopping = ctx.should_stop_sending(now);
        if (stopping && r.in_flight.is_empty()) || ctx.should_abandon(now) {
            break;
        }
        let got = match r.sock.recv(&mut buf) {
            Ok(n) => Some(n),
            Err(e) if netio::udp::is_wait(&e) => None,
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => None,
            Err(e) => {
                return outcome(ctx, hist, last, Some(format!("udp-rr flow {}: receive: {e}", flow.index)))
            }
        };
        now = Instant::now();
        if let Some(Ok(Datagram::Data(h))) = got.map(|n| wire::udp::classify(&buf[..n])) {
            if let Some(sent) = r.answered(h.seq) {
                let rtt = now.saturating_duration_since(sent);
                let rtt_ns = rtt.as_nanos() as f64;
                r.srtt_ns = Some(r.srtt_ns.map_or(rtt_ns, |s| s + (rtt_ns - s) / 8.0));
                if sent >= ctx.timeline.measure_from {
                    hist.record_ns(rtt.as_nanos() as u64);
                }
                ctx.meter.transactions.fetch_add(1, Relaxed);
                ctx.meter.add_bytes((req + resp) as u64);
                last = now;
                if !ctx.should_stop_sending(now) {
                    r.send(ctx, now);
                }
            }
        }
        expire(&mut r, ctx, now);
    }
    send_end(&r.sock, r.next_seq);
    outcome(ctx, hist, last, None)
}

/// Counts requests past their timeout as lost and replaces them (unless stopping).
fn expire(r: &mut Requester, ctx: &WorkerCtx, now: Instant) {
    let timeout = r.timeout();
    while r.in_flight.front().is_some_and(|&(_, at)| now.saturating_duration_since(at) >= timeout) {
        r.in_flight.pop_front();
        ctx.meter.with_udp(|u| u.sender.timeouts += 1);
        if !ctx.should_stop_sending(now) {
            r.send(ctx, now);
        }
    }
}

fn send_end(sock: &UdpSocket, sent: u64) {
    let mut marker = [0u8; HEADER_LEN];
    for _ in 0..crate::udp::END_MARKERS {
        wire::udp::write_end(&mut marker, sent, 0);
        let _ = sock.send(&marker);
    }
}

fn outcome(ctx: &WorkerCtx, hist: LatencyHistogram, last: Instant, error: Option<String>) -> WorkerOutcome {
    ctx.meter.finish(&ctx.timeline, last);
    WorkerOutcome { latency: Some(hist), error, busy_pct: None }
}

/// The responding side of one flow: answers every request until the client's end marker, a
/// stop, or the watchdog.
fn server_loop(flow: UdpFlow, req: usize, resp: usize, ctx: &WorkerCtx) -> WorkerOutcome {
    ctx.meter.with_udp(|u| u.socket = Some(flow.report));
    let sock = flow.sock;
    let _ = sock.set_read_timeout(Some(SLICE));
    let mut buf = vec![0u8; req.max(HEADER_LEN)];
    let mut response = payload(resp.max(HEADER_LEN));
    let mut last = Instant::now();
    loop {
        let now = Instant::now();
        if ctx.stop.is_set() || ctx.should_abandon(now) {
            break;
        }
        let n = match sock.recv(&mut buf) {
            Ok(n) => n,
            Err(e) if netio::udp::is_wait(&e) => continue,
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => continue,
            Err(e) => {
                ctx.meter.finish(&ctx.timeline, last);
                return WorkerOutcome {
                    latency: None,
                    error: Some(format!("udp-rr flow {}: receive: {e}", flow.index)),
                    busy_pct: None,
                };
            }
        };
        match wire::udp::classify(&buf[..n]) {
            Ok(Datagram::Data(_)) => {
                response[..HEADER_LEN].copy_from_slice(&buf[..HEADER_LEN]);
                if sock.send(&response).is_ok() {
                    ctx.meter.transactions.fetch_add(1, Relaxed);
                    ctx.meter.add_bytes((req + resp) as u64);
                    ctx.meter.with_udp(|u| u.sender.sent += 1);
                    last = Instant::now();
                }
            }
            Ok(Datagram::End { .. }) => break,
            _ => {}
        }
    }
    ctx.meter.finish(&ctx.timeline, last);
    WorkerOutcome::default()
}

/// The `udp-rr` test type.
#[derive(Debug)]
pub struct UdpRrTest;

impl TestType for UdpRrTest {
    fn info(&self) -> &'static Info {
        &Info {
            kind: TestKind::UdpRr,
            command: "udp-rr",
            netperf_name: "UDP_RR",
            about: "UDP request/response: transactions/s, latency, lost requests retried by timeout (netperf UDP_RR)",
            transport: Transport::Udp,
            headline: Metric::TransactionRate,
            shape: Shape::Transactions,
        }
    }

    fn defaults(&self) -> TestSpec {
        TestSpec { request_len: 64, response_len: 64, ..TestSpec::new(TestKind::UdpRr) }
    }

    fn label(&self, spec: &TestSpec) -> String {
        format!("udp-rr {}/{}", spec.request_len, spec.response_len)
    }

    fn check(&self, spec: &TestSpec) -> Result<(), Rejection> {
        check_datagram("request_len", spec.request_len)?;
        check_datagram("response_len", spec.response_len)
    }

    fn jobs(&self, spec: &TestSpec, end: End, data: Data) -> Result<Vec<Job>, Error> {
        match data {
            Data::Udp(flows) => Ok(jobs(spec, end, flows)),
            other => Err(registry::unexpected(self, &other)),
        }
    }

    fn summarize(
        &self,
        spec: &TestSpec,
        local: &SideMeasurement,
        remote: Option<&SideMeasurement>,
    ) -> Summary {
        crate::summarize::transactions(spec, local, remote, self.headline(), spec.burst)
    }
}
