//! `udp-stream`: paced UDP datagrams one way, the other or both (iperf3 `-u`), with exact
//! accounting on the receiver ([`stats::datagrams`]).
//!
//! The sender numbers datagrams without gaps (a failed send takes no number), paces them with
//! [`Pacer`], batches them with sendmmsg and UDP GSO unless `no_offload`, stops at the deadline,
//! budget or a stop, and then sends [`END_MARKERS`] end markers with its count. The receiver
//! reads batches with recvmmsg and UDP GRO, and drains after the end: it stops once it has every
//! datagram the end marker announced, or after a quiet spell once the sender should be done
//! (end marker seen, deadline passed, or stop), so the tail is counted, not guessed.

use std::io::{self, ErrorKind};
use std::net::UdpSocket;
use std::time::{Duration, Instant};

use netio::udp::{RecvBatch, MAX_GSO_BYTES, MAX_GSO_SEGMENTS};
use results::{Metric, Role, SideMeasurement, Summary, TestKind, TestSpec};
use wire::udp::{Header, HEADER_LEN};
use wire::{Datagram, Rejection};

use crate::limits::check_datagram;
use crate::meter::WorkerCtx;
use crate::pacing::Pacer;
use crate::registry::{self, Data, Info, TestType, Transport, TypeOption};
use crate::side::{End, Job, WorkDebug, WorkerOutcome};
use crate::stream::{payload, role};
use crate::udp_flow::UdpFlow;
use crate::udp_path::PathProbe;
use crate::Error;

/// End markers sent after the last datagram (each may be lost; one suffices).
pub const END_MARKERS: u32 = 8;
/// Spacing of the end markers.
const END_GAP: Duration = Duration::from_millis(2);
/// How long a receive call blocks before re-checking the end conditions.
const RECV_SLICE: Duration = Duration::from_millis(20);
/// Shortest quiet spell that ends the drain.
const MIN_QUIET: Duration = Duration::from_millis(250);
/// Longest drain after the sender should be done.
const MAX_DRAIN: Duration = Duration::from_secs(3);
/// Most messages per sendmmsg / recvmmsg.
const MMSG_BATCH: usize = 64;
/// Buffer bytes per flow and direction (bounds the server's memory: 128 flows × 2 × this).
const BATCH_BYTES: usize = 256 * 1024;
/// Most datagrams the kernel coalesces into one GRO buffer.
const GRO_SEGMENTS: usize = 64;
/// Messages per sendmmsg with GSO (each carrying up to [`MAX_GSO_SEGMENTS`] datagrams).
const GSO_MESSAGES: usize = 4;

/// The receiver's work per datagram, µs (`recv-delay-us`): it pauses that long for each
/// datagram it read, as a host that needs that long to take one in. Its socket fills
/// meanwhile and the kernel drops what does not fit (counted as socket drops).
pub const RECV_DELAY: TypeOption = TypeOption {
    name: "recv-delay-us",
    kind: results::setting::ValueKind::Count,
    about: "receivers pause this many µs per datagram read (a slow receiving host), at most 1000000",
};
/// The longest `recv-delay-us`.
const MAX_RECV_DELAY_US: u64 = 1_000_000;

/// `recv-delay-us` of `spec`, if set.
fn recv_delay(spec: &TestSpec) -> Option<Duration> {
    match spec.options.get(RECV_DELAY.name) {
        Some(results::ParamValue::Int(us)) if *us > 0 => {
            Some(Duration::from_micros((*us).min(MAX_RECV_DELAY_US)))
        }
        _ => None,
    }
}

/// Builds one job per flow.
pub fn jobs(spec: &TestSpec, end: End, flows: Vec<UdpFlow>) -> Vec<Job> {
    flows
        .into_iter()
        .map(|flow| {
            let role = role(spec, end, flow.index);
            let (index, spec) = (flow.index, spec.clone());
            let work: crate::side::Work = match role {
                Role::Send => Box::new(move |ctx: &WorkerCtx| send_loop(flow, &spec, ctx)),
                _ => Box::new(move |ctx: &WorkerCtx| recv_loop(flow, &spec, ctx)),
            };
            Job { index, role, socket: None, work: WorkDebug(work) }
        })
        .collect()
}

/// How a sender batches: datagrams per message and messages per call.
#[derive(Debug, Clone, Copy)]
struct Shape {
    segments: usize,
    messages: usize,
}

impl Shape {
    fn max_batch(self) -> usize {
        self.segments * self.messages
    }

    /// `self`, shrunk so it never carries more datagrams than `other` (the buffer's size).
    fn min_batch(self, other: Shape) -> Shape {
        Shape { messages: self.messages.min(other.max_batch()).max(1), ..self }
    }
}

/// Picks the batching and turns GSO on where it helps and the kernel has it.
fn shape(sock: &UdpSocket, spec: &TestSpec) -> Shape {
    let len = spec.send_len as usize;
    if spec.no_offload {
        return Shape { segments: 1, messages: 1 };
    }
    let segments = (MAX_GSO_BYTES / len.max(1)).min(MAX_GSO_SEGMENTS);
    // GSO needs the checksum offload that SO_NO_CHECK turns off.
    let gso = segments > 1 && !spec.no_checksum && netio::udp::set_gso(sock, spec.send_len as u16).is_ok();
    if gso {
        Shape { segments, messages: GSO_MESSAGES }
    } else {
        plain_batches(len)
    }
}

/// sendmmsg batches of single datagrams, within [`BATCH_BYTES`].
fn plain_batches(len: usize) -> Shape {
    Shape { segments: 1, messages: (BATCH_BYTES / len.max(1)).clamp(1, MMSG_BATCH) }
}

/// Sends paced datagrams until the deadline, budget or stop; then the end markers.
fn send_loop(flow: UdpFlow, spec: &TestSpec, ctx: &WorkerCtx) -> WorkerOutcome {
    netio::udp::precise_timers();
    let (sock, mut path) = (flow.sock, flow.path);
    ctx.meter.with_udp(|u| u.socket = Some(flow.report));
    let _ = sock.set_write_timeout(Some(RECV_SLICE));
    // A datagram dropped at this host's device queue is a failed send, not one sent.
    let _ = netio::udp::report_device_drops(&sock);
    let mut shape = shape(&sock, spec);
    let len = spec.send_len as usize;
    let mut pacer = Pacer::new(spec.rate_bps, spec.send_len, spec.burst, shape.max_batch());
    let mut buf = payload(shape.max_batch() * len);
    let mut seq = 0u64;
    let start = ctx.timeline.start;
    let ns = |at: Instant| at.saturating_duration_since(start).as_nanos() as u64;
    let mut last = Instant::now();
    loop {
        let now = Instant::now();
        if let Some(p) = &mut path {
            p.open_window(&ctx.timeline, now, || seq);
        }
        if ctx.should_stop_sending(now) {
            break;
        }
        let due = pacer.due(ns(now)) as usize;
        if due == 0 {
            sleep_until(start + Duration::from_nanos(pacer.next_ns()), ctx);
            continue;
        }
        let Some(n) = claim(ctx, due, len) else { break };
        for i in 0..n {
            Header { seq: seq + i as u64, sent_ns: ns(now) }.write(&mut buf[i * len..]);
        }
        match send(&sock, &buf[..n * len], len, shape) {
            Ok(sent) => {
                seq += sent as u64;
                pacer.sent(sent as u64);
                ctx.meter.add_bytes((sent * len) as u64);
                ctx.meter.with_udp(|u| u.sender.sent = seq);
                refund(ctx, (n - sent) * len);
                last = now;
            }
            Err(e) => {
                refund(ctx, n * len);
                if shape.segments > 1 && netio::udp::is_gso_refused(&e) {
                    // GSO refused by the route's device: fall back to plain batches.
                    let _ = netio::udp::set_gso(&sock, 0);
                    shape = plain_batches(len).min_batch(shape);
                    continue;
                }
                // sendmmsg fails only on its first message: that message's datagrams.
                ctx.count_udp_send_error(&e, n.min(shape.segments));
            }
        }
    }
    ctx.meter.finish(&ctx.timeline, last);
    record_path(ctx, path, Role::Send, seq);
    send_end_markers(&sock, seq, ns);
    WorkerOutcome::default()
}

/// Closes the flow's path window and stores it with the flow's counts.
fn record_path(ctx: &WorkerCtx, path: Option<PathProbe>, role: Role, datagrams: u64) {
    let window = path.and_then(|p| p.close(&ctx.timeline, role, datagrams));
    ctx.meter.with_udp(|u| u.path = window);
}

fn received(ctx: &WorkerCtx) -> u64 {
    ctx.meter.with_udp(|u| u.account.counts().received)
}

fn claim(ctx: &WorkerCtx, due: usize, len: usize) -> Option<usize> {
    let Some(b) = &ctx.budget else { return Some(due) };
    let got = b.claim((due * len) as u64) as usize;
    let n = got / len;
    refund(ctx, got - n * len);
    (n > 0).then_some(n)
}

fn refund(ctx: &WorkerCtx, bytes: usize) {
    if let (Some(b), true) = (&ctx.budget, bytes > 0) {
        b.refund(bytes as u64);
    }
}

fn sleep_until(at: Instant, ctx: &WorkerCtx) {
    let now = Instant::now();
    let cap = ctx.timeline.deadline.unwrap_or(ctx.timeline.watchdog);
    let until = at.min(cap).min(now + RECV_SLICE);
    if until > now {
        std::thread::sleep(until - now);
    }
}

/// Sends `buf` (whole datagrams of `len` bytes); returns how many datagrams the kernel took.
fn send(sock: &UdpSocket, buf: &[u8], len: usize, shape: Shape) -> io::Result<usize> {
    if shape.messages == 1 && shape.segments == 1 {
        return sock.send(buf).map(|_| 1);
    }
    let msg_bytes = shape.segments * len;
    let msgs: Vec<&[u8]> = buf.chunks(msg_bytes).collect();
    let taken = netio::udp::send_batch(sock, &msgs)?;
    Ok(msgs.iter().take(taken).map(|m| m.len() / len).sum())
}

fn send_end_markers(sock: &UdpSocket, sent: u64, ns: impl Fn(Instant) -> u64) {
    let mut marker = [0u8; HEADER_LEN];
    for _ in 0..END_MARKERS {
        wire::udp::write_end(&mut marker, sent, ns(Instant::now()));
        let _ = sock.send(&marker);
        std::thread::sleep(END_GAP);
    }
}

/// Receive-side batching: GRO buffers, recvmmsg batches, or one datagram per call.
fn recv_batch(sock: &UdpSocket, spec: &TestSpec) -> RecvBatch {
    let len = (spec.send_len as usize).max(HEADER_LEN);
    if spec.no_offload {
        return RecvBatch::new(1, len);
    }
    let buf = if netio::udp::enable_gro(sock).is_ok() { (GRO_SEGMENTS * len).min(65_536) } else { len };
    RecvBatch::new((BATCH_BYTES / buf).clamp(1, MMSG_BATCH), buf)
}

/// State of the receiver's ending.
#[derive(Debug)]
struct Drain {
    announced: Option<u64>,
    since: Option<Instant>,
    last_rx: Instant,
    quiet: Duration,
}

impl Drain {
    fn new(spec: &TestSpec) -> Drain {
        // A slow stream needs a longer quiet spell than the gap between its datagrams.
        let gap_s =
            if spec.rate_bps > 0 { f64::from(spec.send_len) * 8.0 / spec.rate_bps as f64 } else { 0.0 };
        let quiet = Duration::from_secs_f64((3.0 * gap_s).min(MAX_DRAIN.as_secs_f64())).max(MIN_QUIET);
        Drain { announced: None, since: None, last_rx: Instant::now(), quiet }
    }

    /// Whether to stop reading now, given the distinct datagrams counted so far.
    fn done(&mut self, unique: u64, ctx: &WorkerCtx, now: Instant) -> bool {
        if self.announced.is_some_and(|sent| unique >= sent) || ctx.should_abandon(now) {
            return true;
        }
        let sender_done = self.announced.is_some() || ctx.stop.is_set() || ctx.timeline.past_deadline(now);
        if !sender_done {
            return false;
        }
        let since = *self.since.get_or_insert(now);
        now.saturating_duration_since(self.last_rx.max(since)) >= self.quiet
            || now.saturating_duration_since(since) >= MAX_DRAIN
    }
}

/// Receives and accounts until the sender is done and the tail has drained.
fn recv_loop(flow: UdpFlow, spec: &TestSpec, ctx: &WorkerCtx) -> WorkerOutcome {
    let (sock, mut path) = (flow.sock, flow.path);
    ctx.meter.with_udp(|u| u.socket = Some(flow.report));
    let _ = netio::udp::enable_drop_count(&sock);
    let _ = sock.set_read_timeout(Some(RECV_SLICE));
    let mut batch = recv_batch(&sock, spec);
    let mut drain = Drain::new(spec);
    let (start, delay) = (ctx.timeline.start, recv_delay(spec));
    let mut error = None;
    loop {
        if let Some(p) = &mut path {
            p.open_window(&ctx.timeline, Instant::now(), || received(ctx));
        }
        match batch.recv(&sock) {
            Ok(_) => {
                let now = Instant::now();
                drain.last_rx = now;
                let arrival = now.saturating_duration_since(start).as_nanos() as u64;
                let (bytes, datagrams) = account_batch(&batch, arrival, ctx, &mut drain.announced);
                ctx.meter.add_bytes(bytes);
                ctx.meter.finish(&ctx.timeline, now);
                if let Some(d) = delay {
                    sleep_for(d * datagrams, ctx);
                }
            }
            Err(e) if netio::udp::is_wait(&e) => {}
            // An ICMP error for something we sent (hellos): not a receive problem.
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => {}
            Err(e) => {
                error = Some(format!("udp stream {}: receive: {e}", flow.index));
                break;
            }
        }
        let unique = ctx.meter.with_udp(|u| u.account.unique());
        if drain.done(unique, ctx, Instant::now()) {
            break;
        }
    }
    ctx.record_udp_drops(&sock, &batch);
    record_path(ctx, path, Role::Recv, received(ctx));
    if ctx.meter.end(&ctx.timeline).is_none() {
        ctx.meter.finish(&ctx.timeline, Instant::now());
    }
    WorkerOutcome { latency: None, error, busy_pct: None }
}

/// Sleeps `d` (a slow receiver's work), in slices that watch for a stop or the watchdog.
fn sleep_for(d: Duration, ctx: &WorkerCtx) {
    let until = Instant::now() + d;
    while Instant::now() < until && !ctx.stop.is_set() && !ctx.should_abandon(Instant::now()) {
        std::thread::sleep((until - Instant::now()).min(RECV_SLICE));
    }
}

/// Counts one batch under one lock; returns the payload bytes and the number of the data
/// datagrams.
fn account_batch(
    batch: &RecvBatch,
    arrival_ns: u64,
    ctx: &WorkerCtx,
    announced: &mut Option<u64>,
) -> (u64, u32) {
    let (mut bytes, mut datagrams) = (0u64, 0u32);
    ctx.meter.with_udp(|u| {
        batch.for_each_datagram(|d| match wire::udp::classify(d) {
            Ok(Datagram::Data(h)) => {
                u.account.record(h.seq, h.sent_ns, arrival_ns);
                bytes += d.len() as u64;
                datagrams += 1;
            }
            Ok(Datagram::End { sent, .. }) => *announced = Some(sent),
            Ok(Datagram::Hello(_)) | Err(_) => {}
        });
        if let Some(d) = batch.drops() {
            u.socket_drops = u.socket_drops.max(u64::from(d));
        }
    });
    (bytes, datagrams)
}

/// The `udp-stream` test type.
#[derive(Debug)]
pub struct UdpStreamTest;

impl TestType for UdpStreamTest {
    fn info(&self) -> &'static Info {
        &Info {
            kind: TestKind::UdpStream,
            command: "udp",
            netperf_name: "UDP_STREAM",
            about: "Paced UDP stream: achieved rate, loss, reordering, duplicates, jitter, receiver overrun (netperf UDP_STREAM, iperf3 -u)",
            transport: Transport::Udp,
            headline: Metric::Goodput,
            shape: results::Shape::UdpBulk,
        }
    }

    fn defaults(&self) -> TestSpec {
        let base = TestSpec::new(TestKind::UdpStream);
        TestSpec { send_len: 1460, recv_len: 1460, rate_bps: 1_000_000, ..base }
    }

    fn label(&self, spec: &TestSpec) -> String {
        format!("udp {}{}", spec.send_len, crate::stream::direction_suffix(spec.direction))
    }

    fn check(&self, spec: &TestSpec) -> Result<(), Rejection> {
        if let Some(results::ParamValue::Int(us)) = spec.options.get(RECV_DELAY.name) {
            if *us > MAX_RECV_DELAY_US {
                let field = results::setting::RECV_DELAY_US.id;
                return Err(Rejection::field(field, format!("{us} µs per datagram is more than 1 s")));
            }
        }
        check_datagram("send_len", spec.send_len)
    }

    fn options(&self) -> &'static [TypeOption] {
        std::slice::from_ref(&RECV_DELAY)
    }

    fn data_connections(&self, spec: &TestSpec) -> u32 {
        crate::stream::TcpStreamTest.data_connections(spec)
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
        crate::udp_summary::udp_bulk(spec, local, remote)
    }
}
