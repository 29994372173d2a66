//! `stream --zerocopy` and `--skip-rx-copy`: the same bulk loops with `MSG_ZEROCOPY` sends
//! (the payload never changes, so a buffer need not wait for its completion; completions are
//! collected so the kernel's accounting does not fill up) and `MSG_TRUNC` receives.

use std::io::ErrorKind;
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use netio::zerocopy;
use results::extra::{Figure, FigureValue};
use results::SideMeasurement;

use super::{paced, payload, refund, sock_name, CALL_SLICE};
use crate::control::is_timeout;
use crate::meter::WorkerCtx;
use crate::registry::file::figures::ZeroCopyCounts;
use crate::side::WorkerOutcome;

/// The section in which each zero-copy sender leaves its counts, suffixed with its stream
/// number (`zerocopy-0`, …).
pub const SECTION_PREFIX: &str = "zerocopy-";
/// How long a sender waits, after its last send, for the completions still to come.
const DRAIN: Duration = Duration::from_millis(200);

/// Adds what `completions` say to `counts`.
fn tally(counts: &mut ZeroCopyCounts, completions: &[zerocopy::Completion]) {
    for c in completions {
        counts.completed += c.sends();
        if c.copied {
            counts.copied += c.sends();
        }
    }
}

/// Writes with `MSG_ZEROCOPY` until the deadline, budget or stop, at most `rate_bps` (0 =
/// unlimited); then shuts down, and leaves its send and completion counts (how many the
/// kernel copied after all) as a section.
pub fn send_zerocopy(
    sock: TcpStream,
    len: usize,
    rate_bps: u64,
    index: u32,
    ctx: &WorkerCtx,
) -> WorkerOutcome {
    let buf = payload(len);
    let _ = sock.set_write_timeout(Some(CALL_SLICE));
    let mut throttle = paced::Throttle::new(rate_bps, len, &ctx.timeline);
    let mut error = None;
    let mut counts = ZeroCopyCounts::default();
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
                counts.sends += u64::from(n > 0);
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
        // Completions are only counted: the payload is constant, so no buffer waits.
        tally(&mut counts, &zerocopy::read_completions(&sock).unwrap_or_default());
    }
    ctx.meter.finish(&ctx.timeline, Instant::now());
    let _ = sock.shutdown(Shutdown::Write);
    let until = Instant::now() + DRAIN;
    while counts.completed < counts.sends && Instant::now() < until {
        let _ = zerocopy::wait_completions(&sock, Duration::from_millis(10));
        tally(&mut counts, &zerocopy::read_completions(&sock).unwrap_or_default());
    }
    if let Ok(section) = serde_json::to_value(counts) {
        ctx.meter.set_section(&format!("{SECTION_PREFIX}{index}"), section);
    }
    WorkerOutcome { latency: None, error, busy_pct: None }
}

/// The zero-copy counts of every sender of `sides`, added up; `None` when none sent that way.
pub fn counts(sides: &[Option<&SideMeasurement>]) -> Option<ZeroCopyCounts> {
    let mut total: Option<ZeroCopyCounts> = None;
    let sections = sides.iter().flatten().flat_map(|m| m.sections.iter());
    for (_, value) in sections.filter(|(name, _)| name.starts_with(SECTION_PREFIX)) {
        let Ok(c) = serde_json::from_value::<ZeroCopyCounts>(value.clone()) else { continue };
        // A peer's counts are input: keep them consistent (copied within completed within sent).
        let c = ZeroCopyCounts {
            completed: c.completed.min(c.sends),
            copied: c.copied.min(c.completed.min(c.sends)),
            ..c
        };
        let t = total.get_or_insert_with(ZeroCopyCounts::default);
        t.sends = t.sends.saturating_add(c.sends);
        t.completed = t.completed.saturating_add(c.completed);
        t.copied = t.copied.saturating_add(c.copied);
    }
    total
}

/// What the zero-copy counts say, as figures: how many completions the kernel copied after
/// all, as `file --send zerocopy` reports it.
pub fn figures(z: &ZeroCopyCounts) -> Vec<Figure> {
    let mut out = vec![
        Figure::new("MSG_ZEROCOPY sends", FigureValue::Count(z.sends)),
        Figure::new("MSG_ZEROCOPY completions", FigureValue::Count(z.completed)),
        Figure::new("completions the kernel copied after all", FigureValue::Count(z.copied)),
    ];
    if let Some(frac) = z.zero_copied_frac() {
        out.push(Figure::new("truly zero-copy", FigureValue::Share(frac)));
    }
    if z.completed > 0 && z.copied == z.completed {
        let note = "the kernel copied every MSG_ZEROCOPY send after all (loopback and devices without \
                    scatter-gather always copy): no copy was saved";
        out.push(Figure::new("note", FigureValue::Text(note.into())));
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    fn side(sections: &[(&str, serde_json::Value)]) -> SideMeasurement {
        let sections = sections.iter().map(|(n, v)| (n.to_string(), v.clone())).collect();
        SideMeasurement { sections, ..SideMeasurement::default() }
    }

    #[test]
    fn counts_add_up_every_sender_and_keep_a_peers_numbers_consistent() {
        let z = |s: u64, c: u64, k: u64| serde_json::json!({"sends": s, "completed": c, "copied": k});
        let local = side(&[("zerocopy-0", z(10, 8, 8)), ("file", z(1, 1, 1))]);
        let remote = side(&[("zerocopy-1", z(5, 9, 20)), ("zerocopy-2", serde_json::json!("junk"))]);
        let total = counts(&[Some(&local), Some(&remote)]).unwrap();
        assert_eq!(total, ZeroCopyCounts { sends: 15, completed: 13, copied: 13 });
        assert_eq!(counts(&[Some(&side(&[])), None]), None);
        let f = figures(&total);
        assert!(f.iter().any(|f| f.label == "note"), "every completion copied: {f:?}");
        let some = figures(&ZeroCopyCounts { sends: 4, completed: 4, copied: 1 });
        assert!(!some.iter().any(|f| f.label == "note"));
    }
}
