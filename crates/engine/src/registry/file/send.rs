//! The sending end: the prepared source through the socket by `write`, `sendfile`, `splice`
//! or `MSG_ZEROCOPY`, with the time in socket calls apart from the time reading the file.

use std::fs::File;
use std::io::{self, Write};
use std::net::{Shutdown, TcpStream};
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

use netio::zerocopy::{self, Splicer};
use results::TestSpec;

use super::figures::{FileSide, ZeroCopyCounts};
use super::temp::{self, Source};
use super::FileSettings;
use crate::control::is_timeout;
use crate::meter::WorkerCtx;
use crate::side::{End, Work, WorkerOutcome};
use crate::stream::CALL_SLICE;
use crate::Error;

/// Buffers a zero-copy sender cycles through (each stays untouched until its sends complete).
const ZEROCOPY_BUFFERS: usize = 16;
/// Longest wait for one zero-copy completion before the sender gives up.
const COMPLETION_WAIT: Duration = Duration::from_secs(5);

/// Prepares the source (before the start) and returns the sender's work.
pub fn job(spec: &TestSpec, _end: End, s: &FileSettings, sock: TcpStream) -> Result<Work, Error> {
    let chunk = spec.send_len as usize;
    let src = temp::source(s.src.as_deref(), spec.bytes_limit.unwrap_or(0), chunk, s.verify)
        .map_err(|source| Error::Io { what: "preparing the file to send", source })?;
    if s.send == "zerocopy" {
        zerocopy::enable_zerocopy(&sock)
            .map_err(|source| Error::Io { what: "--send zerocopy: SO_ZEROCOPY (Linux 4.14+)", source })?;
    }
    let mode = s.send;
    Ok(Box::new(move |ctx: &WorkerCtx| run(&sock, &src, mode, chunk, ctx)))
}

/// Time and counts of one sender.
#[derive(Debug, Default)]
struct Tally {
    bytes: u64,
    net: Duration,
    disk: Duration,
    zerocopy: Option<ZeroCopyCounts>,
}

impl Tally {
    fn sent(&mut self, ctx: &WorkerCtx, n: usize) {
        self.bytes += n as u64;
        ctx.meter.add(n);
    }
}

fn run(sock: &TcpStream, src: &Source, mode: &'static str, chunk: usize, ctx: &WorkerCtx) -> WorkerOutcome {
    let _ = sock.set_write_timeout(Some(CALL_SLICE));
    let mut t = Tally::default();
    let result = match mode {
        "sendfile" => by_sendfile(sock, src, chunk, ctx, &mut t),
        "splice" => by_splice(sock, src, chunk, ctx, &mut t),
        "zerocopy" => by_zerocopy(sock, src, chunk, ctx, &mut t),
        _ => by_write(sock, src, chunk, ctx, &mut t),
    };
    ctx.meter.finish(&ctx.timeline, Instant::now());
    let _ = sock.shutdown(Shutdown::Write);
    ctx.meter.set_section(
        super::SECTION,
        super::figures::to_section(&FileSide {
            mode: mode.into(),
            bytes: t.bytes,
            prepare_s: src.prepare_s,
            net_s: t.net.as_secs_f64(),
            disk_s: t.disk.as_secs_f64(),
            sha256: src.sha256.clone(),
            zerocopy: t.zerocopy,
            source_changed: src.changed(),
            ..FileSide::default()
        }),
    );
    WorkerOutcome {
        error: result.err().map(|e| format!("file send ({mode}): {e}")),
        ..WorkerOutcome::default()
    }
}

fn shrank() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "the source shrank during the send")
}

/// Runs `call` once, adding its time to `clock`.
fn timed<T>(clock: &mut Duration, call: impl FnOnce() -> T) -> T {
    let t0 = Instant::now();
    let out = call();
    *clock += t0.elapsed();
    out
}

/// Reads the next piece of the source at `off` into `buf`, timed as disk time.
fn read_piece(file: &File, buf: &mut [u8], off: u64, disk: &mut Duration) -> io::Result<usize> {
    match timed(disk, || file.read_at(buf, off))? {
        0 => Err(shrank()),
        n => Ok(n),
    }
}

fn by_write(sock: &TcpStream, src: &Source, chunk: usize, ctx: &WorkerCtx, t: &mut Tally) -> io::Result<()> {
    let mut buf = vec![0u8; chunk];
    let mut off = 0u64;
    while off < src.size {
        let want = (src.size - off).min(chunk as u64) as usize;
        let n = read_piece(&src.file, &mut buf[..want], off, &mut t.disk)?;
        let mut at = 0;
        while at < n {
            if ctx.should_stop_sending(Instant::now()) {
                return Ok(());
            }
            match timed(&mut t.net, || (&mut &*sock).write(&buf[at..n])) {
                Ok(k) => {
                    at += k;
                    t.sent(ctx, k);
                }
                Err(e) if is_timeout(&e) => {}
                Err(e) => return Err(e),
            }
        }
        off += n as u64;
    }
    Ok(())
}

fn by_sendfile(
    sock: &TcpStream,
    src: &Source,
    chunk: usize,
    ctx: &WorkerCtx,
    t: &mut Tally,
) -> io::Result<()> {
    let mut off = 0u64;
    while off < src.size && !ctx.should_stop_sending(Instant::now()) {
        let want = (src.size - off).min(chunk as u64) as usize;
        match timed(&mut t.net, || zerocopy::sendfile(sock, &src.file, &mut off, want)) {
            Ok(0) => return Err(shrank()),
            Ok(k) => t.sent(ctx, k),
            Err(e) if is_timeout(&e) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn by_splice(sock: &TcpStream, src: &Source, chunk: usize, ctx: &WorkerCtx, t: &mut Tally) -> io::Result<()> {
    let mut pipe = Splicer::new(chunk.max(1 << 16))?;
    let mut off = 0u64;
    while (off < src.size || pipe.held() > 0) && !ctx.should_stop_sending(Instant::now()) {
        let want = (src.size - off).min(chunk as u64) as usize;
        match timed(&mut t.net, || pipe.send(&src.file, &mut off, want, sock)) {
            Ok(0) if pipe.held() == 0 => return Err(shrank()),
            Ok(k) => t.sent(ctx, k),
            Err(e) if is_timeout(&e) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Which zero-copy sends have completed, by send number.
#[derive(Debug, Default)]
struct Completions {
    done: Vec<bool>,
    counts: ZeroCopyCounts,
}

impl Completions {
    /// A send took data: it gets the next number.
    fn sent(&mut self) -> u32 {
        self.done.push(false);
        self.counts.sends += 1;
        (self.done.len() - 1) as u32
    }

    fn reap(&mut self, sock: &TcpStream) -> io::Result<()> {
        for c in zerocopy::read_completions(sock)? {
            for id in c.first..=c.last {
                if let Some(d) = self.done.get_mut(id as usize).filter(|d| !**d) {
                    *d = true;
                    self.counts.completed += 1;
                    self.counts.copied += u64::from(c.copied);
                }
            }
        }
        Ok(())
    }

    fn all_done(&self, ids: std::ops::Range<u32>) -> bool {
        ids.into_iter().all(|id| self.done.get(id as usize).copied().unwrap_or(true))
    }

    /// Waits until sends `ids` have completed (their buffer may then change).
    fn wait_for(&mut self, sock: &TcpStream, ids: std::ops::Range<u32>, ctx: &WorkerCtx) -> io::Result<()> {
        let give_up = Instant::now() + COMPLETION_WAIT;
        self.reap(sock)?;
        while !self.all_done(ids.clone()) {
            if Instant::now() >= give_up || ctx.abort.is_set() {
                let msg = format!("MSG_ZEROCOPY completions for sends {ids:?} did not arrive");
                return Err(io::Error::new(io::ErrorKind::TimedOut, msg));
            }
            zerocopy::wait_completions(sock, Duration::from_millis(50))?;
            self.reap(sock)?;
        }
        Ok(())
    }
}

fn by_zerocopy(
    sock: &TcpStream,
    src: &Source,
    chunk: usize,
    ctx: &WorkerCtx,
    t: &mut Tally,
) -> io::Result<()> {
    let mut bufs = vec![vec![0u8; chunk]; ZEROCOPY_BUFFERS];
    let mut sends: Vec<std::ops::Range<u32>> = vec![0..0; ZEROCOPY_BUFFERS];
    let mut zc = Completions::default();
    let mut off = 0u64;
    let mut result = Ok(());
    for slot in (0..ZEROCOPY_BUFFERS).cycle() {
        if off >= src.size || ctx.should_stop_sending(Instant::now()) {
            break;
        }
        if let Err(e) = zc.wait_for(sock, sends[slot].clone(), ctx) {
            result = Err(e);
            break;
        }
        let want = (src.size - off).min(chunk as u64) as usize;
        let sent = read_piece(&src.file, &mut bufs[slot][..want], off, &mut t.disk)
            .and_then(|n| send_buffer(sock, &bufs[slot][..n], ctx, t, &mut zc));
        match sent {
            Ok((n, ids)) => {
                sends[slot] = ids;
                off += n as u64;
            }
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    let last = zc.done.len() as u32;
    let drained = zc.wait_for(sock, 0..last, ctx);
    t.zerocopy = Some(zc.counts);
    result.and(drained)
}

/// Sends all of `buf` with `MSG_ZEROCOPY` (unless stopped); returns the bytes sent and the
/// send numbers used.
fn send_buffer(
    sock: &TcpStream,
    buf: &[u8],
    ctx: &WorkerCtx,
    t: &mut Tally,
    zc: &mut Completions,
) -> io::Result<(usize, std::ops::Range<u32>)> {
    let first = zc.done.len() as u32;
    let mut at = 0;
    while at < buf.len() && !ctx.should_stop_sending(Instant::now()) {
        match timed(&mut t.net, || zerocopy::send_zerocopy(sock, &buf[at..])) {
            Ok(k) => {
                zc.sent();
                at += k;
                t.sent(ctx, k);
            }
            // Too many completions pending (optmem): collect them and try again.
            Err(e) if netio::udp::is_enobufs(&e) => {
                zerocopy::wait_completions(sock, Duration::from_millis(10))?;
                zc.reap(sock)?;
            }
            Err(e) if is_timeout(&e) => {}
            Err(e) => return Err(e),
        }
    }
    Ok((at, first..zc.done.len() as u32))
}
