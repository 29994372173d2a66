//! `tcp-crr`: connect, request, response, close — one connection per transaction (netperf
//! TCP_CRR). Each connection opens with the test's data hello, sent in the same write as the
//! request; the server answers and closes first, so TIME_WAIT stays on the server side and the
//! client does not run out of ephemeral ports.

use std::io::Write;
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use results::{Metric, Role, Shape, SideMeasurement, Summary, TestKind, TestSpec};
use stats::LatencyHistogram;

use crate::auth::DataAuth;

use crate::meter::WorkerCtx;
use crate::registry::{self, Data, Info, TestType, Transport};
use crate::rr::{failure, read_full, Ended};
use crate::side::{End, Job, WorkDebug, WorkerOutcome};
use crate::stream::{payload, CALL_SLICE};
use crate::Error;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Client flows: each loops connect → request → response → close.
pub fn client_jobs(spec: &TestSpec, server: SocketAddr, auth: &DataAuth) -> Vec<Job> {
    (0..spec.parallel)
        .map(|index| {
            let (req, resp) = (spec.request_len as usize, spec.response_len as usize);
            let nodelay = spec.nodelay;
            let hello = auth.hello(index);
            let work: crate::side::Work =
                Box::new(move |ctx: &WorkerCtx| client_loop(server, hello, (req, resp, nodelay), ctx));
            Job { index, role: Role::Request, socket: None, work: WorkDebug(work) }
        })
        .collect()
}

/// Server workers: each takes accepted connections from `rx` and answers one request on each.
pub fn server_jobs(spec: &TestSpec, rx: Receiver<TcpStream>) -> Vec<Job> {
    let rx = Arc::new(Mutex::new(rx));
    (0..spec.parallel)
        .map(|index| {
            let (rx, req, resp) = (rx.clone(), spec.request_len as usize, spec.response_len as usize);
            let nodelay = spec.nodelay;
            let work: crate::side::Work =
                Box::new(move |ctx: &WorkerCtx| server_loop(&rx, (req, resp, nodelay), ctx));
            Job { index, role: Role::Respond, socket: None, work: WorkDebug(work) }
        })
        .collect()
}

fn client_loop(
    server: SocketAddr,
    hello: [u8; wire::DATA_HELLO_LEN],
    (req, resp, nodelay): (usize, usize, bool),
    ctx: &WorkerCtx,
) -> WorkerOutcome {
    let mut first = hello.to_vec();
    first.extend_from_slice(&payload(req));
    let mut response = vec![0u8; resp];
    let mut hist = LatencyHistogram::new();
    let mut result = Ok(());
    let mut now = Instant::now();
    while result.is_ok() && !ctx.should_stop_sending(now) {
        let sent = now;
        result = one_transaction(server, (&first, nodelay), &mut response, ctx);
        now = Instant::now();
        if result.is_ok() {
            ctx.meter.transactions.fetch_add(1, Relaxed);
            ctx.meter.add(req + resp);
            if sent >= ctx.timeline.measure_from {
                hist.record_ns(now.saturating_duration_since(sent).as_nanos() as u64);
            }
        }
    }
    ctx.meter.finish(&ctx.timeline, now);
    WorkerOutcome { latency: Some(hist), error: failure(result), busy_pct: None }
}

fn one_transaction(
    server: SocketAddr,
    (first, nodelay): (&[u8], bool),
    response: &mut [u8],
    ctx: &WorkerCtx,
) -> Result<(), Ended> {
    let mut sock = TcpStream::connect_timeout(&server, CONNECT_TIMEOUT)
        .map_err(|e| Ended::Failed(format!("connecting to {server}: {e}")))?;
    let _ = sock.set_nodelay(nodelay);
    let _ = sock.set_read_timeout(Some(CALL_SLICE));
    sock.write_all(first).map_err(|e| Ended::Failed(format!("{server}: write: {e}")))?;
    match read_full(&mut sock, response, ctx) {
        Err(Ended::Eof) => Err(Ended::Failed(format!("{server}: closed before the response"))),
        other => other,
    }
}

fn server_loop(
    rx: &Mutex<Receiver<TcpStream>>,
    (req, resp, nodelay): (usize, usize, bool),
    ctx: &WorkerCtx,
) -> WorkerOutcome {
    let mut request = vec![0u8; req];
    let response = payload(resp);
    let mut error = None;
    loop {
        let next = match rx.lock() {
            Ok(rx) => rx.recv_timeout(Duration::from_millis(50)),
            Err(_) => break,
        };
        match next {
            Ok(mut sock) => {
                let _ = sock.set_nodelay(nodelay);
                if let Err(e) = answer(&mut sock, &mut request, &response, ctx) {
                    error = failure(Err(e));
                }
            }
            Err(RecvTimeoutError::Timeout) if ctx.stop.is_set() || ctx.should_abandon(Instant::now()) => {
                break
            }
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    ctx.meter.finish(&ctx.timeline, Instant::now());
    WorkerOutcome { latency: None, error, busy_pct: None }
}

fn answer(sock: &mut TcpStream, request: &mut [u8], response: &[u8], ctx: &WorkerCtx) -> Result<(), Ended> {
    let _ = sock.set_read_timeout(Some(CALL_SLICE));
    read_full(sock, request, ctx)?;
    sock.write_all(response).map_err(|e| Ended::Failed(format!("crr write: {e}")))?;
    ctx.meter.transactions.fetch_add(1, Relaxed);
    ctx.meter.add(request.len() + response.len());
    let _ = sock.shutdown(Shutdown::Both);
    Ok(())
}

/// The `tcp-crr` test type.
#[derive(Debug)]
pub struct TcpCrrTest;

impl TestType for TcpCrrTest {
    fn info(&self) -> &'static Info {
        &Info {
            kind: TestKind::TcpCrr,
            command: "crr",
            netperf_name: "TCP_CRR",
            about: "TCP connect/request/response, one connection per transaction: connections/s and latency (netperf TCP_CRR)",
            transport: Transport::TcpPerTransaction,
            headline: Metric::ConnectionRate,
            shape: Shape::Transactions,
        }
    }

    fn defaults(&self) -> TestSpec {
        TestSpec { nodelay: true, ..TestSpec::new(TestKind::TcpCrr) }
    }

    fn label(&self, spec: &TestSpec) -> String {
        format!("crr {}/{}", spec.request_len, spec.response_len)
    }

    fn data_connections(&self, _spec: &TestSpec) -> u32 {
        0
    }

    fn jobs(&self, spec: &TestSpec, end: End, data: Data) -> Result<Vec<Job>, Error> {
        match (end, data) {
            (End::Client, Data::Connect { server, auth }) => Ok(client_jobs(spec, server, &auth)),
            (End::Server, Data::Accept(rx)) => Ok(server_jobs(spec, rx)),
            (_, other) => Err(registry::unexpected(self, &other)),
        }
    }

    fn summarize(
        &self,
        spec: &TestSpec,
        local: &SideMeasurement,
        remote: Option<&SideMeasurement>,
    ) -> Summary {
        crate::summarize::transactions(spec, local, remote, self.headline(), 1)
    }
}
