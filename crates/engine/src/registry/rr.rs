//! `tcp-rr`: request/response over one connection per flow (netperf TCP_RR). The client keeps
//! `burst` requests in flight, times each from its send to the end of its response, and stops
//! sending at the deadline; the server answers each `request_len` bytes with `response_len`
//! bytes until end of stream. With `writes-per-message` each message leaves in that many
//! write calls (the write-write-read pattern that stalls on Nagle and delayed ACKs).

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use results::{Metric, Role, Shape, SideMeasurement, Summary, TestKind, TestSpec};
use stats::LatencyHistogram;
use wire::Rejection;

use crate::control::is_timeout;
use crate::meter::WorkerCtx;
use crate::registry::{self, Data, Info, TestType, Transport, TypeOption};
use crate::side::{DataSocket, End, Job, WorkDebug, WorkerOutcome};
use crate::stream::{payload, sock_name, CALL_SLICE};
use crate::Error;

/// `writes-per-message`: each request and response is written in this many calls of about
/// equal size, as an application that writes a header and then a body. With Nagle on, a
/// piece waits for the ACK of the one before, and the peer, waiting for the whole message,
/// delays that ACK.
pub const WRITES: TypeOption = TypeOption {
    name: "writes-per-message",
    kind: results::setting::ValueKind::Count,
    about: "write each request and response in this many calls (a header, then the rest), 1 to 16",
};
/// The most write calls per message.
const MAX_WRITES: u64 = 16;

/// `writes-per-message` of `spec` (1 when unset).
fn writes(spec: &TestSpec) -> usize {
    match spec.options.get(WRITES.name) {
        Some(results::ParamValue::Int(n)) => usize::try_from((*n).clamp(1, MAX_WRITES)).unwrap_or(1),
        _ => 1,
    }
}

/// Builds one job per flow.
pub fn jobs(spec: &TestSpec, end: End, sockets: Vec<DataSocket>) -> std::io::Result<Vec<Job>> {
    let (req, resp, burst) = (spec.request_len as usize, spec.response_len as usize, spec.burst as usize);
    let pieces = writes(spec);
    let mut jobs = Vec::with_capacity(sockets.len());
    for ds in sockets {
        let index = ds.index;
        let (sock, probe) = ds.split()?;
        let (role, work): (Role, crate::side::Work) = match end {
            End::Client => {
                let shape = Exchange { req, resp, burst, pieces };
                (Role::Request, Box::new(move |ctx: &WorkerCtx| client_loop(sock, shape, ctx)))
            }
            End::Server => {
                let shape = Exchange { req, resp, burst: 1, pieces };
                (Role::Respond, Box::new(move |ctx: &WorkerCtx| server_loop(sock, shape, ctx)))
            }
        };
        jobs.push(Job { index, role, socket: Some(probe), work: WorkDebug(work) });
    }
    Ok(jobs)
}

/// Why a blocking exchange ended.
#[derive(Debug)]
pub(crate) enum Ended {
    /// Orderly end of stream.
    Eof,
    /// Hard stop or watchdog.
    Abandoned,
    /// An I/O error, described.
    Failed(String),
}

/// Reads exactly `buf.len()` bytes, re-checking the hard stop on timeouts (and on every
/// empty poll when the socket is non-blocking for `--busy-poll`).
pub(crate) fn read_full(sock: &mut TcpStream, buf: &mut [u8], ctx: &WorkerCtx) -> Result<(), Ended> {
    let mut got = 0;
    while got < buf.len() {
        match sock.read(&mut buf[got..]) {
            Ok(0) => return Err(Ended::Eof),
            Ok(n) => got += n,
            Err(e) if is_timeout(&e) => {
                if ctx.should_abandon(Instant::now()) {
                    return Err(Ended::Abandoned);
                }
                std::hint::spin_loop();
            }
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return Err(Ended::Eof),
            Err(e) => return Err(Ended::Failed(format!("{}: read: {e}", sock_name(sock)))),
        }
    }
    Ok(())
}

/// Writes all of `buf`; a full send buffer (a timeout, or an empty poll when non-blocking)
/// re-checks the hard stop and tries again.
pub(crate) fn write_all(sock: &mut TcpStream, buf: &[u8], ctx: &WorkerCtx) -> Result<(), Ended> {
    let mut sent = 0;
    while sent < buf.len() {
        match sock.write(&buf[sent..]) {
            Ok(0) => return Err(Ended::Eof),
            Ok(n) => sent += n,
            Err(e) if is_timeout(&e) => {
                if ctx.should_abandon(Instant::now()) {
                    return Err(Ended::Abandoned);
                }
                std::hint::spin_loop();
            }
            Err(e) => return Err(Ended::Failed(format!("{}: write: {e}", sock_name(sock)))),
        }
    }
    Ok(())
}

/// Writes `buf` in `pieces` calls of about equal size (fewer when it is shorter).
fn write_pieces(sock: &mut TcpStream, buf: &[u8], pieces: usize, ctx: &WorkerCtx) -> Result<(), Ended> {
    let chunk = buf.len().div_ceil(pieces.max(1)).max(1);
    for piece in buf.chunks(chunk) {
        write_all(sock, piece, ctx)?;
    }
    Ok(())
}

/// What one flow exchanges: message sizes, transactions in flight, write calls per message.
#[derive(Debug, Clone, Copy)]
pub struct Exchange {
    /// Request bytes.
    pub req: usize,
    /// Response bytes.
    pub resp: usize,
    /// Requests kept in flight.
    pub burst: usize,
    /// Write calls per message.
    pub pieces: usize,
}

/// Blocking calls with a timeout slice, or non-blocking ones for `--busy-poll`.
pub(crate) fn prepare_socket(sock: &TcpStream, ctx: &WorkerCtx) {
    if ctx.busy_poll {
        let _ = sock.set_nonblocking(true);
    } else {
        let _ = sock.set_read_timeout(Some(CALL_SLICE));
        let _ = sock.set_write_timeout(Some(CALL_SLICE));
    }
}

/// The requesting side of one flow.
pub fn client_loop(mut sock: TcpStream, shape: Exchange, ctx: &WorkerCtx) -> WorkerOutcome {
    let Exchange { req, resp, burst, pieces } = shape;
    let request = payload(req);
    let mut response = vec![0u8; resp];
    let mut hist = LatencyHistogram::new();
    let mut in_flight: VecDeque<Instant> = VecDeque::with_capacity(burst);
    prepare_socket(&sock, ctx);
    let mut result = Ok(());
    let mut now = Instant::now();
    for _ in 0..burst {
        if let Err(e) = write_pieces(&mut sock, &request, pieces, ctx) {
            result = Err(e);
            break;
        }
        in_flight.push_back(now);
    }
    while result.is_ok() {
        let Some(sent) = in_flight.pop_front() else { break };
        if let Err(e) = read_full(&mut sock, &mut response, ctx) {
            result = Err(e);
            break;
        }
        now = Instant::now();
        ctx.meter.transactions.fetch_add(1, Relaxed);
        ctx.meter.add(req + resp);
        if sent >= ctx.timeline.measure_from {
            hist.record_ns(now.saturating_duration_since(sent).as_nanos() as u64);
        }
        if !ctx.should_stop_sending(now) {
            result = write_pieces(&mut sock, &request, pieces, ctx);
            in_flight.push_back(now);
        }
    }
    ctx.meter.finish(&ctx.timeline, now);
    let _ = sock.shutdown(Shutdown::Write);
    WorkerOutcome { latency: Some(hist), error: failure(result), busy_pct: None }
}

/// The responding side of one flow.
pub fn server_loop(mut sock: TcpStream, shape: Exchange, ctx: &WorkerCtx) -> WorkerOutcome {
    let Exchange { req, resp, pieces, .. } = shape;
    let mut request = vec![0u8; req];
    let response = payload(resp);
    prepare_socket(&sock, ctx);
    let result = loop {
        if let Err(e) = read_full(&mut sock, &mut request, ctx) {
            break Err(e);
        }
        if let Err(e) = write_pieces(&mut sock, &response, pieces, ctx) {
            break Err(e);
        }
        ctx.meter.transactions.fetch_add(1, Relaxed);
        ctx.meter.add(req + resp);
    };
    ctx.meter.finish(&ctx.timeline, Instant::now());
    WorkerOutcome { latency: None, error: failure(result), busy_pct: None }
}

pub(crate) fn failure(result: Result<(), Ended>) -> Option<String> {
    match result {
        Err(Ended::Failed(e)) => Some(e),
        _ => None,
    }
}

/// The `tcp-rr` test type.
#[derive(Debug)]
pub struct TcpRrTest;

impl TestType for TcpRrTest {
    fn info(&self) -> &'static Info {
        &Info {
            kind: TestKind::TcpRr,
            command: "rr",
            netperf_name: "TCP_RR",
            about:
                "TCP request/response on one connection per flow: transactions/s and latency (netperf TCP_RR)",
            transport: Transport::TcpConnections,
            headline: Metric::TransactionRate,
            shape: Shape::Transactions,
        }
    }

    fn defaults(&self) -> TestSpec {
        TestSpec { nodelay: true, ..TestSpec::new(TestKind::TcpRr) }
    }

    fn label(&self, spec: &TestSpec) -> String {
        format!("rr {}/{}", spec.request_len, spec.response_len)
    }

    fn check(&self, spec: &TestSpec) -> Result<(), Rejection> {
        match spec.options.get(WRITES.name) {
            Some(results::ParamValue::Int(n)) if !(1..=MAX_WRITES).contains(n) => Err(Rejection::field(
                &format!("options.{}", WRITES.name),
                format!("{n} is not between 1 and {MAX_WRITES} write calls per message"),
            )),
            _ => Ok(()),
        }
    }

    fn options(&self) -> &'static [TypeOption] {
        &[WRITES]
    }

    fn jobs(&self, spec: &TestSpec, end: End, data: Data) -> Result<Vec<Job>, Error> {
        match data {
            Data::Tcp(sockets) => jobs(spec, end, sockets).map_err(crate::stream::prepare_error),
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

#[cfg(test)]
mod tests {
    use super::*;
    use results::ParamValue;

    #[test]
    fn writes_per_message_is_checked_and_defaults_to_one() {
        let mut spec = TcpRrTest.defaults();
        assert_eq!(writes(&spec), 1);
        assert!(TcpRrTest.check(&spec).is_ok());
        for (n, ok) in [(0, false), (1, true), (16, true), (17, false)] {
            spec.options.insert(WRITES.name.into(), ParamValue::Int(n));
            assert_eq!(TcpRrTest.check(&spec).is_ok(), ok, "{n}");
        }
        spec.options.insert(WRITES.name.into(), ParamValue::Int(3));
        assert_eq!(writes(&spec), 3);
    }
}
