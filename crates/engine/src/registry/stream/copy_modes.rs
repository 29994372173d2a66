//! `stream --zerocopy` and `--skip-rx-copy`: the same bulk loops with `MSG_ZEROCOPY` sends
//! (the payload never changes, so a buffer need not wait for its completion; completions are
//! collected so the kernel's accounting does not fill up) and `MSG_TRUNC` receives.

use std::io::ErrorKind;
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use netio::zerocopy;

use super::{paced, payload, refund, sock_name, CALL_SLICE};
use crate::control::is_timeout;
use crate::meter::WorkerCtx;
use crate::side::WorkerOutcome;

/// Writes with `MSG_ZEROCOPY` until the deadline, budget or stop, at most `rate_bps` (0 =
/// unlimited); then shuts down.
pub fn send_zerocopy(sock: TcpStream, len: usize, rate_bps: u64, ctx: &WorkerCtx) -> WorkerOutcome {
    let buf = payload(len);
    let _ = sock.set_write_timeout(Some(CALL_SLICE));
    let mut throttle = paced::Throttle::new(rate_bps, len, &ctx.timeline);
    let mut error = None;
    loop {
        let now = Instant::now();
        if ctx.should_stop_sending(now) {
            break;
        }
        if !paced::ready(&mut throttle, ctx, now) {
            continue;
        }
        let chunk = match &ctx.budget {
            Some(b) => b.claim(len as u64) as usize,
            None => len,
        };
        if chunk == 0 {
            break;
        }
        match zerocopy::send_zerocopy(&sock, &buf[..chunk]) {
            Ok(n) => {
                ctx.meter.add(n);
                refund(ctx, chunk - n);
                paced::took(&mut throttle, n);
            }
            Err(e) if netio::udp::is_enobufs(&e) => {
                refund(ctx, chunk);
                let _ = zerocopy::wait_completions(&sock, Duration::from_millis(10));
            }
            Err(e) if is_timeout(&e) => refund(ctx, chunk),
            Err(e) => {
                error = Some(format!("stream {}: MSG_ZEROCOPY send: {e}", sock_name(&sock)));
                break;
            }
        }
        // Completions are only collected: the payload is constant, so no buffer waits.
        let _ = zerocopy::read_completions(&sock);
    }
    ctx.meter.finish(&ctx.timeline, Instant::now());
    let _ = sock.shutdown(Shutdown::Write);
    WorkerOutcome { latency: None, error, busy_pct: None }
}

/// Receives with `MSG_TRUNC` until end of stream; refuses when the kernel copies anyway.
pub fn recv_skip(sock: TcpStream, len: usize, ctx: &WorkerCtx) -> WorkerOutcome {
    let mut buf = vec![0u8; len];
    let _ = sock.set_read_timeout(Some(CALL_SLICE));
    let (mut error, mut first) = (None, true);
    let mut last = Instant::now();
    zerocopy::mark(&mut buf);
    loop {
        match zerocopy::recv_trunc(&sock, &mut buf) {
            Ok(0) => break,
            Ok(n) if first && !zerocopy::honours_trunc(&buf, n) => {
                error = Some("--skip-rx-copy: this kernel copies TCP data despite MSG_TRUNC".into());
                break;
            }
            Ok(n) => {
                first = false;
                ctx.meter.add(n);
                last = Instant::now();
            }
            Err(e) if is_timeout(&e) => {
                if ctx.should_abandon(Instant::now()) {
                    break;
                }
            }
            Err(e) if e.kind() == ErrorKind::ConnectionReset => break,
            Err(e) => {
                error = Some(format!("stream {}: MSG_TRUNC receive: {e}", sock_name(&sock)));
                break;
            }
        }
    }
    ctx.meter.finish(&ctx.timeline, last);
    WorkerOutcome { latency: None, error, busy_pct: None }
}
