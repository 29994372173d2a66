//! UDP data streams in iperf3's datagram format (sender time, sequence number from 1), run
//! on tcplab's UDP machinery: the [`Pacer`] schedule, sendmmsg with UDP GSO, recvmmsg with
//! GRO, and the receiver's exact accounting ([`stats::datagrams`]: loss, reordering,
//! duplicates and RFC 3550 jitter). There are no end markers: the client ends the test on the
//! control connection, and both loops end on the session's stop. Shared by the client
//! (`--iperf3`) and the server (`server --iperf3`).

use std::io::{self, ErrorKind};
use std::net::UdpSocket;
use std::time::{Duration, Instant};

use netio::udp::{RecvBatch, MAX_GSO_BYTES, MAX_GSO_SEGMENTS};
use results::{Role, SocketReport, TestSpec};
use wire::iperf3::udp::Header;

use crate::meter::WorkerCtx;
use crate::pacing::Pacer;
use crate::side::{End, Job, WorkDebug, WorkerOutcome};

/// How long a blocked call waits before re-checking the stop.
const SLICE: Duration = Duration::from_millis(20);
/// Most datagrams per sendmmsg / recvmmsg without offload.
const MMSG_BATCH: usize = 64;
/// Messages per sendmmsg with GSO.
const GSO_MESSAGES: usize = 4;
/// Most datagrams coalesced into one GRO buffer.
const GRO_SEGMENTS: usize = 64;

/// One UDP stream's settings.
#[derive(Debug, Clone, Copy)]
pub struct Flow {
    /// Datagram size, header included.
    pub len: usize,
    /// Target rate, bit/s (0 = as fast as possible).
    pub rate_bps: u64,
    /// Datagrams sent back to back.
    pub burst: u32,
    /// 64-bit sequence numbers.
    pub counters_64bit: bool,
}

/// Jobs for `end`'s UDP streams, in stream order (with `--bidir` the client's sending
/// streams first, as iperf3 opens them).
pub fn jobs(
    spec: &TestSpec,
    end: End,
    counters_64bit: bool,
    socks: Vec<(UdpSocket, SocketReport)>,
) -> Vec<Job> {
    let flow =
        Flow { len: spec.send_len as usize, rate_bps: spec.rate_bps, burst: spec.burst, counters_64bit };
    socks
        .into_iter()
        .enumerate()
        .map(|(i, (sock, report))| {
            let index = i as u32;
            let role = crate::stream::role(spec, end, index);
            let work: crate::side::Work = Box::new(move |ctx: &WorkerCtx| {
                ctx.meter.with_udp(|u| u.socket = Some(report));
                match role {
                    Role::Send => send_loop(sock, flow, ctx),
                    _ => recv_loop(sock, flow, ctx),
                }
            });
            Job { index, role, socket: None, work: WorkDebug(work) }
        })
        .collect()
}

/// Most datagrams per call of a paced flow: a sender catching up after a stall sends a
/// short burst, not a socket buffer's worth at once.
const PACED_BATCH: usize = 16;

/// Datagrams per message and messages per call.
fn batching(sock: &UdpSocket, flow: &Flow) -> (usize, usize) {
    let (most, messages, plain) = if flow.rate_bps > 0 {
        (PACED_BATCH, 1, PACED_BATCH)
    } else {
        (MAX_GSO_SEGMENTS, GSO_MESSAGES, MMSG_BATCH)
    };
    let segments = (MAX_GSO_BYTES / flow.len.max(1)).min(most);
    if segments > 1 && netio::udp::set_gso(sock, flow.len as u16).is_ok() {
        (segments, messages)
    } else {
        (1, plain)
    }
}

/// Sends paced datagrams until the stop (or the deadline, or the byte budget).
pub fn send_loop(sock: UdpSocket, flow: Flow, ctx: &WorkerCtx) -> WorkerOutcome {
    netio::udp::precise_timers();
    let _ = sock.set_write_timeout(Some(SLICE));
    // A datagram dropped at this host's device queue is a failed send, not one sent.
    let _ = netio::udp::report_device_drops(&sock);
    let len = flow.len;
    let (mut segments, messages) = batching(&sock, &flow);
    let mut pacer = Pacer::new(flow.rate_bps, len as u32, flow.burst, segments * messages);
    let mut buf = crate::stream::payload(segments * messages * len);
    let start = ctx.timeline.start;
    let mut seq = 0u64;
    let mut last = Instant::now();
    loop {
        let now = Instant::now();
        if ctx.should_stop_sending(now) {
            break;
        }
        let since = now.saturating_duration_since(start);
        let due = pacer.due(since.as_nanos() as u64) as usize;
        if due == 0 {
            let next = start + Duration::from_nanos(pacer.next_ns());
            std::thread::sleep(next.saturating_duration_since(now).min(SLICE));
            continue;
        }
        let Some(n) = claim(ctx, due.min(segments * messages), len) else { break };
        for (i, d) in buf.chunks_mut(len).take(n).enumerate() {
            Header::at(since.as_micros() as u64, seq + 1 + i as u64).write(d, flow.counters_64bit);
        }
        match send(&sock, &buf[..n * len], segments * len) {
            Ok(bytes) => {
                let sent = bytes / len;
                seq += sent as u64;
                pacer.sent(sent as u64);
                ctx.meter.add_bytes(bytes as u64);
                ctx.meter.with_udp(|u| u.sender.sent = seq);
                refund(ctx, (n - sent) * len);
                last = now;
            }
            Err(e) => {
                refund(ctx, n * len);
                if segments > 1 && netio::udp::is_gso_refused(&e) {
                    let _ = netio::udp::set_gso(&sock, 0);
                    segments = 1;
                    continue;
                }
                // A failed call sent none of its first message's datagrams.
                ctx.count_udp_send_error(&e, n.min(segments));
            }
        }
    }
    ctx.meter.finish(&ctx.timeline, last);
    WorkerOutcome::default()
}

/// Sends `buf` as messages of at most `msg_bytes`; returns the bytes the kernel took.
fn send(sock: &UdpSocket, buf: &[u8], msg_bytes: usize) -> io::Result<usize> {
    let msgs: Vec<&[u8]> = buf.chunks(msg_bytes).collect();
    if msgs.len() == 1 {
        return sock.send(buf);
    }
    let taken = netio::udp::send_batch(sock, &msgs)?;
    Ok(msgs.iter().take(taken).map(|m| m.len()).sum())
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

/// Receives and accounts until the stop.
pub fn recv_loop(sock: UdpSocket, flow: Flow, ctx: &WorkerCtx) -> WorkerOutcome {
    let _ = netio::udp::enable_drop_count(&sock);
    let _ = sock.set_read_timeout(Some(SLICE));
    let buf =
        if netio::udp::enable_gro(&sock).is_ok() { (GRO_SEGMENTS * flow.len).min(65_536) } else { flow.len };
    let mut batch = RecvBatch::new((256 * 1024 / buf).clamp(1, MMSG_BATCH), buf);
    let start = ctx.timeline.start;
    let mut error = None;
    while !ctx.stop.is_set() && !ctx.should_abandon(Instant::now()) {
        match batch.recv(&sock) {
            Ok(_) => {
                let now = Instant::now();
                let arrival = now.saturating_duration_since(start).as_nanos() as u64;
                let bytes = account(&batch, arrival, flow.counters_64bit, ctx);
                ctx.meter.add_bytes(bytes);
                ctx.meter.finish(&ctx.timeline, now);
            }
            Err(e) if netio::udp::is_wait(&e) => {}
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => {}
            Err(e) => {
                error = Some(format!("iperf3 udp stream: receive: {e}"));
                break;
            }
        }
    }
    ctx.record_udp_drops(&sock, &batch);
    if ctx.meter.end(&ctx.timeline).is_none() {
        ctx.meter.finish(&ctx.timeline, Instant::now());
    }
    WorkerOutcome { error, ..WorkerOutcome::default() }
}

/// Counts one batch under one lock; returns the bytes of the datagrams with a header.
fn account(batch: &RecvBatch, arrival_ns: u64, counters_64bit: bool, ctx: &WorkerCtx) -> u64 {
    let mut bytes = 0u64;
    ctx.meter.with_udp(|u| {
        batch.for_each_datagram(|d| {
            // iperf3 numbers datagrams from 1; the account from 0.
            if let Ok(h) = Header::read(d, counters_64bit) {
                if h.seq > 0 {
                    u.account.record(h.seq - 1, h.sent_us().saturating_mul(1000), arrival_ns);
                    bytes += d.len() as u64;
                }
            }
        });
    });
    bytes
}
