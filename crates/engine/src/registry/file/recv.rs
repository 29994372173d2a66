//! The receiving end: bytes out of the socket by `read` (hashed unless `verify` is off, then
//! into the sink) or `skip-copy` (`MSG_TRUNC`: dropped in the kernel, counted only), with the
//! time in socket calls, hashing and the sink (its final sync included) kept apart.

use std::fs::{File, OpenOptions};
use std::io::{self, ErrorKind, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use netio::zerocopy;
use results::TestSpec;

use super::figures::FileSide;
use sha2::{Digest, Sha256};

use super::temp::{self, TempFile};
use super::FileSettings;
use crate::control::is_timeout;
use crate::meter::WorkerCtx;
use crate::side::{End, Work, WorkerOutcome};
use crate::stream::CALL_SLICE;
use crate::Error;

/// The smallest staging buffer of an `O_DIRECT` sink (fewer, larger device writes).
const DIRECT_STAGING: usize = 1 << 20;

/// Opens the sink (before the start where this end can) and returns the receiver's work.
pub fn job(spec: &TestSpec, end: End, s: &FileSettings, sock: TcpStream) -> Result<Work, Error> {
    // The server writes only to its own temporary directory; `dir` is the client's.
    let dir = match (&s.dir, end) {
        (Some(d), End::Client) => PathBuf::from(d),
        _ => std::env::temp_dir(),
    };
    let sink = Sink::open(s.sink, dir, spec.recv_len as usize)?;
    let how = How { skip: s.recv == "skip-copy", verify: s.verify, recv: s.recv, sink: s.sink };
    Ok(Box::new(move |ctx: &WorkerCtx| run(&sock, sink, how, ctx)))
}

/// How this receiver takes the bytes, from the settings.
#[derive(Debug, Clone, Copy)]
struct How {
    /// `skip-copy`: the kernel drops the data (nothing to hash).
    skip: bool,
    /// Hash what is read.
    verify: bool,
    /// The receive mode's name.
    recv: &'static str,
    /// The sink's name.
    sink: &'static str,
}

/// Where received bytes go, with the buffer they are read into.
#[derive(Debug)]
struct Sink {
    file: Option<File>,
    sync: bool,
    direct: bool,
    buf: Vec<u8>,
    /// Offset of the aligned part of `buf`.
    start: usize,
    /// Usable bytes from `start` (a multiple of the alignment for `direct`).
    cap: usize,
    /// Largest read.
    read_len: usize,
    /// Bytes staged and not yet written (`direct` only).
    fill: usize,
    disk: Duration,
    sync_time: Duration,
    _temp: Option<TempFile>,
}

fn direct_refused(dir: &std::path::Path, e: &io::Error) -> Error {
    let detail = format!(
        "--sink direct: the file system of {} does not support O_DIRECT ({e}); choose a directory on a disk file system",
        dir.display()
    );
    Error::Io { what: "opening the sink", source: io::Error::other(detail) }
}

impl Sink {
    fn open(kind: &str, dir: PathBuf, read_len: usize) -> Result<Sink, Error> {
        let io_err = |source| Error::Io { what: "opening the sink file", source };
        let mut sink = Sink {
            file: None,
            sync: kind == "fsync",
            direct: kind == "direct",
            buf: Vec::new(),
            start: 0,
            cap: read_len,
            read_len,
            fill: 0,
            disk: Duration::ZERO,
            sync_time: Duration::ZERO,
            _temp: None,
        };
        if kind != "null" {
            let temp = TempFile::in_dir(&dir).map_err(io_err)?;
            let file = if sink.direct {
                netio::file::create_direct(temp.path()).map_err(
                    |e| match netio::file::is_direct_unsupported(&e) {
                        true => direct_refused(&dir, &e),
                        false => io_err(e),
                    },
                )?
            } else {
                OpenOptions::new().write(true).create_new(true).open(temp.path()).map_err(io_err)?
            };
            sink._temp = Some(temp);
            if sink.direct {
                let align = netio::file::direct_alignment(&file);
                sink.cap = read_len.max(DIRECT_STAGING).div_ceil(align) * align;
                sink.buf = vec![0u8; sink.cap + align];
                sink.start = sink.buf.as_ptr().align_offset(align).min(align);
            }
            sink.file = Some(file);
        }
        if sink.buf.is_empty() {
            sink.buf = vec![0u8; read_len];
        }
        Ok(sink)
    }

    /// Where the next read goes.
    fn space(&mut self) -> &mut [u8] {
        let from = self.start + self.fill;
        let len = self.read_len.min(self.cap - self.fill);
        &mut self.buf[from..from + len]
    }

    /// The `n` bytes the last read put into [`Sink::space`].
    fn just_read(&self, n: usize) -> &[u8] {
        let from = self.start + self.fill;
        &self.buf[from..from + n]
    }

    /// Takes the `n` bytes just read.
    fn commit(&mut self, n: usize) -> io::Result<()> {
        let Some(file) = &mut self.file else { return Ok(()) };
        let t0 = Instant::now();
        if self.direct {
            self.fill += n;
            if self.fill == self.cap {
                file.write_all(&self.buf[self.start..self.start + self.cap])?;
                self.fill = 0;
            }
        } else {
            file.write_all(&self.buf[self.start..self.start + n])?;
        }
        self.disk += t0.elapsed();
        Ok(())
    }

    /// Writes what is staged (the part shorter than the alignment without `O_DIRECT`) and
    /// syncs when asked.
    fn finish(&mut self) -> io::Result<()> {
        let Some(file) = &mut self.file else { return Ok(()) };
        let t0 = Instant::now();
        if self.direct && self.fill > 0 {
            let align = self.buf.len() - self.cap;
            let whole = self.fill / align * align;
            file.write_all(&self.buf[self.start..self.start + whole])?;
            netio::file::clear_direct(file)?;
            file.write_all(&self.buf[self.start + whole..self.start + self.fill])?;
            self.fill = 0;
        }
        if self.sync {
            let s0 = Instant::now();
            file.sync_data()?;
            self.sync_time = s0.elapsed();
        }
        self.disk += t0.elapsed();
        // The written file is removed next; its pages need not stay cached.
        let _ = netio::file::drop_cache(file);
        Ok(())
    }
}

/// Time and counts of one receiver.
#[derive(Debug, Default)]
struct Tally {
    bytes: u64,
    net: Duration,
    hash: Duration,
}

fn run(sock: &TcpStream, mut sink: Sink, how: How, ctx: &WorkerCtx) -> WorkerOutcome {
    let _ = sock.set_read_timeout(Some(CALL_SLICE));
    let mut t = Tally::default();
    let mut hasher = (!how.skip && how.verify).then(Sha256::new);
    let mut result = receive(sock, &mut sink, how.skip, hasher.as_mut(), ctx, &mut t);
    if result.is_ok() {
        result = sink.finish();
    }
    ctx.meter.finish(&ctx.timeline, Instant::now());
    ctx.meter.set_section(
        super::SECTION,
        super::figures::to_section(&FileSide {
            mode: how.recv.into(),
            sink: Some(how.sink.into()),
            bytes: t.bytes,
            net_s: t.net.as_secs_f64(),
            disk_s: sink.disk.as_secs_f64(),
            sync_s: sink.sync_time.as_secs_f64(),
            hash_s: t.hash.as_secs_f64(),
            sha256: hasher.map(|h| temp::hex(&h.finalize())),
            ..FileSide::default()
        }),
    );
    let error = result.err().map(|e| format!("file receive ({}): {e}", how.recv));
    WorkerOutcome { error, ..WorkerOutcome::default() }
}

fn receive(
    sock: &TcpStream,
    sink: &mut Sink,
    skip: bool,
    mut hasher: Option<&mut Sha256>,
    ctx: &WorkerCtx,
    t: &mut Tally,
) -> io::Result<()> {
    let mut first = true;
    loop {
        let space = sink.space();
        if skip && first {
            zerocopy::mark(space);
        }
        let t0 = Instant::now();
        let got = match skip {
            false => (&mut &*sock).read(space),
            true => zerocopy::recv_trunc(sock, space),
        };
        t.net += t0.elapsed();
        match got {
            Ok(0) => return Ok(()),
            Ok(n) => {
                if skip {
                    if first && !zerocopy::honours_trunc(sink.just_read(n), n) {
                        return Err(io::Error::other(
                            "--recv skip-copy: this kernel copies TCP data despite MSG_TRUNC; use --recv read",
                        ));
                    }
                } else {
                    if let Some(h) = hasher.as_deref_mut() {
                        let h0 = Instant::now();
                        h.update(sink.just_read(n));
                        t.hash += h0.elapsed();
                    }
                    sink.commit(n)?;
                }
                first = false;
                t.bytes += n as u64;
                ctx.meter.add(n);
            }
            Err(e) if is_timeout(&e) => {
                if ctx.should_abandon(Instant::now()) {
                    return Ok(());
                }
            }
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}
