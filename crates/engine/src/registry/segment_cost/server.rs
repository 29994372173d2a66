//! The receiving end of `segment-cost`: reads one message at a time (its first four bytes
//! say its size, which must be one of the test's), times it from its last segment's receive
//! timestamp to the return of the call that completed it (method A) and each copied skb
//! from entering the stack to its copy (method B), then answers with a short reply.

use std::io::ErrorKind;
use std::net::TcpStream;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use netio::timestamping as ts;
use results::segment_cost::{CostSide, Dist, MethodRow, SizeRow, SECTION};

use super::probe::{Probe, Side};
use super::REPLY_LEN;
use crate::control::is_timeout;
use crate::meter::WorkerCtx;
use crate::rr::{failure, prepare_socket, write_all, Ended};
use crate::side::WorkerOutcome;
use crate::stream::sock_name;

/// One size's receive figures as they come.
#[derive(Debug, Default)]
struct Current {
    size: u32,
    messages: u64,
    samples: Vec<u64>,
    missing: u64,
}

/// Answers messages until the client closes.
pub fn run(mut sock: TcpStream, sizes: Vec<u32>, ctx: &WorkerCtx) -> WorkerOutcome {
    prepare_socket(&sock, ctx);
    let mut side = CostSide { mss: ts::mss(&sock).unwrap_or(0), ..CostSide::default() };
    side.timestamping_off = ts::enable_rx(&sock).err().map(|e| format!("SO_TIMESTAMPING: {e}"));
    let mut probe =
        Probe::start(Side::Receive, ts::thread_id()).map_err(|e| side.tracepoints_off = Some(e)).ok();
    let largest = sizes.iter().copied().max().unwrap_or(0) as usize;
    let mut buf = vec![0u8; largest.max(4)];
    let reply = [0u8; REPLY_LEN];
    let mut cur: Option<Current> = None;
    let result = loop {
        let (size, stamp) = match read_message(&sock, &mut buf, &sizes, ctx) {
            Ok(m) => m,
            Err(e) => break Err(e),
        };
        if cur.as_ref().is_some_and(|c| c.size != size) {
            finish(&mut side, cur.take(), probe.as_mut());
        }
        let c = cur.get_or_insert_with(|| Current { size, ..Current::default() });
        c.messages += 1;
        match stamp {
            Some(d) => c.samples.push(d),
            None => c.missing += 1,
        }
        if let Err(e) = write_all(&mut sock, &reply, ctx) {
            break Err(e);
        }
        ctx.meter.transactions.fetch_add(1, Relaxed);
        ctx.meter.add(size as usize + REPLY_LEN);
        if c.messages % 256 == 0 {
            if let Some(p) = probe.as_mut() {
                p.poll();
            }
        }
    };
    finish(&mut side, cur, probe.as_mut());
    ctx.meter.finish(&ctx.timeline, Instant::now());
    ctx.meter.set_section(SECTION, serde_json::to_value(&side).unwrap_or_default());
    WorkerOutcome { latency: None, error: failure(result), busy_pct: None }
}

/// Closes one size's row.
fn finish(side: &mut CostSide, cur: Option<Current>, probe: Option<&mut Probe>) {
    let Some(mut c) = cur else { return };
    let timestamping =
        MethodRow { dist: Dist::of(&mut c.samples), unpaired: c.missing, ..MethodRow::default() };
    let tracepoints = probe.map(|p| p.take(Side::Receive)).unwrap_or_default();
    let segments = c.size.div_ceil(side.mss.max(1));
    side.rows.push(SizeRow { size: c.size, messages: c.messages, segments, timestamping, tracepoints });
}

/// Reads one whole message: its size and, where the kernel stamped it, the time from its
/// last segment's receive timestamp to the return of the call that completed it.
fn read_message(
    sock: &TcpStream,
    buf: &mut [u8],
    sizes: &[u32],
    ctx: &WorkerCtx,
) -> Result<(u32, Option<u64>), Ended> {
    let mut got = 0usize;
    let mut want = None;
    loop {
        let (n, stamp) = match ts::recv_stamped(sock, &mut buf[got..]) {
            Ok((0, _)) => return Err(Ended::Eof),
            Ok(r) => r,
            Err(e) if is_timeout(&e) => {
                if ctx.should_abandon(Instant::now()) {
                    return Err(Ended::Abandoned);
                }
                continue;
            }
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return Err(Ended::Eof),
            Err(e) => return Err(Ended::Failed(format!("{}: read: {e}", sock_name(sock)))),
        };
        let returned = ts::realtime_ns();
        got += n;
        if want.is_none() && got >= 4 {
            let size = u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]);
            if !sizes.contains(&size) {
                return Err(Ended::Failed(format!(
                    "the peer sent a message of {size} bytes, not one of the test's sizes"
                )));
            }
            want = Some(size as usize);
        }
        match want {
            Some(w) if got == w => {
                let d = stamp.and_then(|t| u64::try_from(returned - t).ok());
                return Ok((w as u32, d));
            }
            Some(w) if got > w => {
                return Err(Ended::Failed("the peer sent a message before the reply to the last".into()));
            }
            _ => {}
        }
        if got == buf.len() {
            return Err(Ended::Failed("the peer sent more than the largest size".into()));
        }
    }
}
