//! Tracepoint events through `perf_event_open(2)`: one event on every online CPU, filtered
//! in the kernel like a tracefs event, each CPU's samples (`CLOCK_MONOTONIC` time and the
//! raw record) in a ring mapped into this process. Reading a ring is a few loads and a copy
//! per record: the kernel formats nothing, where a tracefs `trace_pipe` reader pays for the
//! kernel turning every event into text. Records the kernel could not store (a full ring) are
//! counted from its `PERF_RECORD_LOST` records.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{fence, Ordering};

const PERF_TYPE_TRACEPOINT: u32 = 2;
const PERF_SAMPLE_TIME: u64 = 1 << 2;
const PERF_SAMPLE_RAW: u64 = 1 << 10;
/// `disabled`, `watermark`, `use_clockid` bits of the attribute's flags word.
const FLAG_DISABLED: u64 = 1;
const FLAG_WATERMARK: u64 = 1 << 14;
const FLAG_USE_CLOCKID: u64 = 1 << 25;
/// `PERF_ATTR_SIZE_VER5`: the attribute up to `clockid` and beyond, as this file fills it.
const ATTR_SIZE: usize = 112;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;
const IOC_ENABLE: libc::c_ulong = 0x2400;
const IOC_DISABLE: libc::c_ulong = 0x2401;
const IOC_SET_FILTER: libc::c_ulong = 0x4008_2406;
const RECORD_LOST: u32 = 2;
const RECORD_SAMPLE: u32 = 9;
/// Offsets in the ring's first page (`struct perf_event_mmap_page`).
const DATA_HEAD: usize = 1024;
const DATA_TAIL: usize = 1032;

/// One tracepoint on every CPU.
#[derive(Debug)]
pub struct TracepointRings {
    rings: Vec<Ring>,
    lost: u64,
    scratch: Vec<u8>,
}

#[derive(Debug)]
struct Ring {
    fd: OwnedFd,
    base: *mut u8,
    len: usize,
    data: usize,
    size: usize,
}

// SAFETY: a ring's mapping is owned by it alone and used from one thread at a time.
unsafe impl Send for Ring {}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: `base`/`len` are the mapping made in `Ring::map`, unmapped once here.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

impl TracepointRings {
    /// Opens tracepoint `id` (tracefs `events/<system>/<event>/id`) on every online CPU with
    /// the tracefs filter `filter`, each ring `pages` pages (a power of two) of samples; not
    /// enabled yet ([`TracepointRings::enable`]).
    pub fn open(id: u64, filter: &str, pages: usize) -> io::Result<TracepointRings> {
        let cpus = online_cpus()?;
        let mut rings = Vec::with_capacity(cpus.len());
        for cpu in cpus {
            rings.push(Ring::open(id, cpu, filter, pages)?);
        }
        Ok(TracepointRings { rings, lost: 0, scratch: Vec::new() })
    }

    /// Starts (or stops) recording on every CPU.
    pub fn enable(&self, on: bool) -> io::Result<()> {
        for r in &self.rings {
            // SAFETY: a perf event fd and an argument-less ioctl.
            check(unsafe { libc::ioctl(r.fd.as_raw_fd(), if on { IOC_ENABLE } else { IOC_DISABLE }, 0) })?;
        }
        Ok(())
    }

    /// Hands every sample waiting in the rings to `f(time_ns, raw)`, oldest first per CPU;
    /// returns how many.
    pub fn drain(&mut self, f: &mut dyn FnMut(u64, &[u8])) -> usize {
        let mut n = 0;
        for r in &self.rings {
            n += r.drain(&mut self.scratch, &mut self.lost, f);
        }
        n
    }

    /// Samples the kernel could not store, so far.
    pub fn lost(&self) -> u64 {
        self.lost
    }
}

impl Ring {
    fn open(id: u64, cpu: i32, filter: &str, pages: usize) -> io::Result<Ring> {
        let mut attr = [0u8; ATTR_SIZE];
        let page = page_size();
        let put = |a: &mut [u8], at: usize, v: &[u8]| a[at..at + v.len()].copy_from_slice(v);
        put(&mut attr, 0, &PERF_TYPE_TRACEPOINT.to_ne_bytes());
        put(&mut attr, 4, &(ATTR_SIZE as u32).to_ne_bytes());
        put(&mut attr, 8, &id.to_ne_bytes());
        put(&mut attr, 16, &1u64.to_ne_bytes()); // every event
        put(&mut attr, 24, &(PERF_SAMPLE_TIME | PERF_SAMPLE_RAW).to_ne_bytes());
        put(&mut attr, 40, &(FLAG_DISABLED | FLAG_WATERMARK | FLAG_USE_CLOCKID).to_ne_bytes());
        put(&mut attr, 48, &u32::try_from(pages * page / 4).unwrap_or(u32::MAX).to_ne_bytes());
        put(&mut attr, 92, &libc::CLOCK_MONOTONIC.to_ne_bytes());
        // SAFETY: perf_event_open(2) with an attribute of the size it declares; pid -1 and a
        // CPU: every task on that CPU.
        let fd = unsafe {
            libc::syscall(libc::SYS_perf_event_open, attr.as_ptr(), -1, cpu, -1, PERF_FLAG_FD_CLOEXEC)
        };
        let fd = i32::try_from(fd).map_err(|_| io::Error::other("perf_event_open: bad fd"))?;
        check(fd)?;
        // SAFETY: a new descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let c = std::ffi::CString::new(filter).map_err(|_| io::Error::other("a filter with a NUL"))?;
        // SAFETY: a perf event fd and a NUL-terminated filter that outlives the call.
        check(unsafe { libc::ioctl(fd.as_raw_fd(), IOC_SET_FILTER, c.as_ptr()) })?;
        Ring::map(fd, page, pages)
    }

    fn map(fd: OwnedFd, page: usize, pages: usize) -> io::Result<Ring> {
        let len = (pages + 1) * page;
        // SAFETY: mapping a perf event's ring: a fresh shared mapping of `len` bytes.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Ring { fd, base: base.cast(), len, data: page, size: pages * page })
    }

    fn word(&self, at: usize) -> *mut u64 {
        // SAFETY: `at` is DATA_HEAD or DATA_TAIL, inside the mapping's first page.
        unsafe { self.base.add(at).cast() }
    }

    fn drain(&self, scratch: &mut Vec<u8>, lost: &mut u64, f: &mut dyn FnMut(u64, &[u8])) -> usize {
        // SAFETY: the kernel writes data_head; read it volatile, then fence before the data.
        let head = unsafe { std::ptr::read_volatile(self.word(DATA_HEAD)) };
        fence(Ordering::Acquire);
        // SAFETY: only this reader writes data_tail.
        let mut tail = unsafe { std::ptr::read_volatile(self.word(DATA_TAIL)) };
        let mut n = 0;
        while tail + 8 <= head {
            self.copy(tail, 8, scratch);
            let kind = u32::from_ne_bytes([scratch[0], scratch[1], scratch[2], scratch[3]]);
            let size = usize::from(u16::from_ne_bytes([scratch[6], scratch[7]]));
            if size < 8 || tail + size as u64 > head {
                break;
            }
            self.copy(tail, size, scratch);
            let body = &scratch[8..];
            match kind {
                RECORD_SAMPLE if body.len() >= 12 => {
                    let time = u64::from_ne_bytes(body[..8].try_into().unwrap_or_default());
                    let raw_len = u32::from_ne_bytes(body[8..12].try_into().unwrap_or_default()) as usize;
                    if let Some(raw) = body.get(12..12 + raw_len) {
                        f(time, raw);
                        n += 1;
                    }
                }
                RECORD_LOST if body.len() >= 16 => {
                    *lost += u64::from_ne_bytes(body[8..16].try_into().unwrap_or_default());
                }
                _ => {}
            }
            tail += size as u64;
        }
        fence(Ordering::Release);
        // SAFETY: hands the space back to the kernel.
        unsafe { std::ptr::write_volatile(self.word(DATA_TAIL), tail) };
        n
    }

    /// Copies `len` bytes of the ring from position `at` (wrapping) into `out`.
    fn copy(&self, at: u64, len: usize, out: &mut Vec<u8>) {
        out.clear();
        let start = (at % self.size as u64) as usize;
        let first = len.min(self.size - start);
        // SAFETY: both ranges lie inside the data area of the mapping.
        unsafe {
            let data = self.base.add(self.data);
            out.extend_from_slice(std::slice::from_raw_parts(data.add(start), first));
            out.extend_from_slice(std::slice::from_raw_parts(data, len - first));
        }
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096)
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The online CPUs (`/sys/devices/system/cpu/online`: `0-3,5`).
fn online_cpus() -> io::Result<Vec<i32>> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online")?;
    let mut out = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let bad = |_| io::Error::other(format!("cpu list '{}'", text.trim()));
        let (a, b): (i32, i32) = (a.parse().map_err(bad)?, b.parse().map_err(bad)?);
        out.extend(a..=b.min(a + 4096));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As root: `sched:sched_switch`-free check on a TCP tracepoint: a loopback connection
    /// makes tcp_probe samples that arrive with their raw records.
    #[test]
    fn tcp_probe_samples_arrive_through_the_rings() {
        let Ok(id) = std::fs::read_to_string("/sys/kernel/tracing/events/tcp/tcp_probe/id") else {
            eprintln!("skipped: no tracefs tcp_probe here (not root, or no tracefs)");
            return;
        };
        let id: u64 = id.trim().parse().unwrap();
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let rings = TracepointRings::open(id, &format!("sport == {port} || dport == {port}"), 8);
        let mut rings = match rings {
            Ok(r) => r,
            Err(e) => {
                eprintln!("skipped: perf_event_open refused: {e}");
                return;
            }
        };
        rings.enable(true).unwrap();
        let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        let (mut s, _) = l.accept().unwrap();
        use std::io::{Read, Write};
        let mut buf = [0u8; 1000];
        for _ in 0..20 {
            c.write_all(&buf).unwrap();
            s.read_exact(&mut buf).unwrap();
        }
        rings.enable(false).unwrap();
        let mut samples = Vec::new();
        rings.drain(&mut |t, raw| samples.push((t, raw.len())));
        assert!(samples.len() >= 10, "{} samples", samples.len());
        assert!(samples.iter().all(|(t, len)| *t > 0 && *len >= 100), "{samples:?}");
        assert_eq!(rings.lost(), 0);
    }
}
