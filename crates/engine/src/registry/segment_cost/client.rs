//! The sending end of `segment-cost`: per size, for the size's share of the test's time, one
//! message of that size at a time (its first four bytes say the size), answered by a short
//! reply before the next, so segments never overlap. Each send is timed from the call to its
//! last byte's transmit timestamp (method A) and from the call's entry into the kernel to its
//! last transmit tracepoint (method B).

use std::collections::VecDeque;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use netio::timestamping::{self as ts, TxPoint};
use results::segment_cost::{CostSide, Dist, MethodRow, SizeRow, SECTION};
use stats::LatencyHistogram;

use super::probe::{Probe, Side};
use super::{message, REPLY_LEN};
use crate::meter::WorkerCtx;
use crate::rr::{failure, prepare_socket, read_full, write_all, Ended};
use crate::side::WorkerOutcome;

/// Sends waiting for their transmit timestamps; older ones are given up as unpaired.
const PENDING: usize = 16;
/// Messages between reads of the trace.
const POLL_EVERY: u64 = 256;

/// A send waiting for its timestamps.
#[derive(Debug)]
struct Pending {
    id: u32,
    t0: i64,
    sched: bool,
    soft: bool,
}

/// Method A's state over one size.
#[derive(Debug, Default)]
struct Stamps {
    pending: VecDeque<Pending>,
    soft: Vec<u64>,
    sched: Vec<u64>,
    unpaired: u64,
}

impl Stamps {
    /// Pairs what the error queue holds with the sends waiting.
    fn collect(&mut self, sock: &TcpStream) {
        for s in ts::read_tx(sock).unwrap_or_default() {
            let Some(p) = self.pending.iter_mut().find(|p| p.id == s.id) else { continue };
            let d = u64::try_from(s.ns - p.t0).unwrap_or(0);
            match s.point {
                TxPoint::Software if !p.soft => {
                    p.soft = true;
                    self.soft.push(d);
                }
                TxPoint::Sched if !p.sched => {
                    p.sched = true;
                    self.sched.push(d);
                }
                _ => {}
            }
        }
        while self.pending.len() > PENDING {
            self.evict();
        }
    }

    fn evict(&mut self) {
        if let Some(p) = self.pending.pop_front() {
            self.unpaired += u64::from(!p.soft && !p.sched);
        }
    }

    /// The size's row (software stamps where the device gave them, else scheduling ones).
    fn take(&mut self) -> (MethodRow, Option<&'static str>) {
        while !self.pending.is_empty() {
            self.evict();
        }
        let (samples, point) = match self.soft.is_empty() {
            false => (&mut self.soft, "TX_SOFTWARE"),
            true => (&mut self.sched, "TX_SCHED"),
        };
        let dist = Dist::of(samples);
        let row = MethodRow { dist, unpaired: self.unpaired, ..MethodRow::default() };
        *self = Stamps::default();
        (row, dist.map(|_| point))
    }
}

/// Runs every size in turn, `per_size` each from the test's start.
pub fn run(mut sock: TcpStream, sizes: Vec<u32>, per_size: Duration, ctx: &WorkerCtx) -> WorkerOutcome {
    prepare_socket(&sock, ctx);
    let mut side = CostSide { mss: ts::mss(&sock).unwrap_or(0), ..CostSide::default() };
    side.timestamping_off = ts::enable_tx(&sock).err().map(|e| format!("SO_TIMESTAMPING: {e}"));
    let mut probe =
        Probe::start(Side::Send, ts::thread_id()).map_err(|e| side.tracepoints_off = Some(e)).ok();
    let mut hist = LatencyHistogram::new();
    // Each size's share is fixed on the test's clock, so set-up time shortens the first
    // size, never the last.
    let (mut sent, mut result, start) = (0u64, Ok(()), ctx.timeline.start);
    for (i, &size) in sizes.iter().enumerate() {
        let until = start + per_size * (i as u32 + 1);
        let mut stamps = Stamps::default();
        if let Some(p) = probe.as_mut() {
            let _ = p.take(Side::Send);
        }
        let mut row = SizeRow { size, segments: size.div_ceil(side.mss.max(1)), ..SizeRow::default() };
        let mut x = Exchange {
            sent: &mut sent,
            stamps: &mut stamps,
            probe: probe.as_mut(),
            hist: &mut hist,
            messages: &mut row.messages,
        };
        result = one_size(&mut sock, size, until, ctx, &mut x);
        let (a, point) = stamps.take();
        row.timestamping = a;
        side.tx_point = side.tx_point.take().or(point.map(str::to_string));
        if let Some(p) = probe.as_mut() {
            row.tracepoints = p.take(Side::Send);
        }
        side.rows.push(row);
        if result.is_err() || ctx.should_stop_sending(Instant::now()) {
            break;
        }
    }
    ctx.meter.finish(&ctx.timeline, Instant::now());
    ctx.meter.set_section(SECTION, serde_json::to_value(&side).unwrap_or_default());
    let _ = sock.shutdown(Shutdown::Write);
    WorkerOutcome { latency: Some(hist), error: failure(result), busy_pct: None }
}

/// What one size's exchanges add to.
struct Exchange<'a> {
    sent: &'a mut u64,
    stamps: &'a mut Stamps,
    probe: Option<&'a mut Probe>,
    hist: &'a mut LatencyHistogram,
    messages: &'a mut u64,
}

/// Messages of `size` until `until` (or the test's end).
fn one_size(
    sock: &mut TcpStream,
    size: u32,
    until: Instant,
    ctx: &WorkerCtx,
    x: &mut Exchange,
) -> Result<(), Ended> {
    let msg = message(size);
    let mut reply = [0u8; REPLY_LEN];
    loop {
        let now = Instant::now();
        if now >= until || ctx.should_stop_sending(now) {
            return Ok(());
        }
        let t0 = ts::realtime_ns();
        write_all(sock, &msg, ctx)?;
        *x.sent += u64::from(size);
        let id = (*x.sent - 1) as u32;
        x.stamps.pending.push_back(Pending { id, t0, sched: false, soft: false });
        read_full(sock, &mut reply, ctx)?;
        let done = Instant::now();
        x.hist.record_ns(done.saturating_duration_since(now).as_nanos() as u64);
        ctx.meter.transactions.fetch_add(1, Relaxed);
        ctx.meter.add(size as usize + REPLY_LEN);
        x.stamps.collect(sock);
        *x.messages += 1;
        if *x.messages % POLL_EVERY == 0 {
            if let Some(p) = x.probe.as_mut() {
                p.poll();
            }
        }
    }
}
