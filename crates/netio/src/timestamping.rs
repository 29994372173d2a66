//! `SO_TIMESTAMPING` software timestamps on a TCP socket: when the kernel handed a send's
//! last byte to the device (`TX_SOFTWARE`) or to the queueing layer (`TX_SCHED`), read from
//! the error queue and paired with the send by `OPT_ID` (the byte offset of its last byte),
//! and when the last segment a receive call copied had reached the stack (`RX_SOFTWARE`).
//! Software timestamps are `CLOCK_REALTIME`; [`realtime_ns`] reads the same clock.

use std::io;
use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};

use crate::cmsg::Control;

const SO_TIMESTAMPING: libc::c_int = crate::cmsg::SCM_TIMESTAMPING;
const TX_SOFTWARE: u32 = 1 << 1;
const RX_SOFTWARE: u32 = 1 << 3;
const SOFTWARE: u32 = 1 << 4;
const OPT_ID: u32 = 1 << 7;
const TX_SCHED: u32 = 1 << 8;
const OPT_TSONLY: u32 = 1 << 11;
const OPT_ID_TCP: u32 = 1 << 16;
const SO_EE_ORIGIN_TIMESTAMPING: u8 = 4;
const SCM_TSTAMP_SND: u32 = 0;
const SCM_TSTAMP_SCHED: u32 = 1;
const CMSG_SPACE: usize = 256;

/// Which point of the send path a transmit timestamp marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxPoint {
    /// Entering the queueing layer (`__dev_queue_xmit`).
    Sched,
    /// Handed to the device driver (`skb_tx_timestamp`).
    Software,
}

/// One transmit timestamp from the error queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxStamp {
    /// `OPT_ID`: byte offset of the last byte of the send it belongs to (from 0).
    pub id: u32,
    /// Where on the send path.
    pub point: TxPoint,
    /// `CLOCK_REALTIME`, ns.
    pub ns: i64,
}

fn set_flags(fd: RawFd, flags: u32) -> io::Result<()> {
    let v = flags as libc::c_int;
    let len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `v` outlives the call and `len` is its size.
    let rc = unsafe { libc::setsockopt(fd, libc::SOL_SOCKET, SO_TIMESTAMPING, (&raw const v).cast(), len) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Asks for `TX_SCHED` and `TX_SOFTWARE` timestamps of every send on `sock` (set before the
/// first byte, so that `OPT_ID` counts from 0). `OPT_ID_TCP` where the kernel has it (6.2+),
/// plain `OPT_ID` where not. The caller must drain them ([`read_tx`]): the error queue counts
/// against the receive buffer, and a full one stalls the connection.
pub fn enable_tx(sock: &TcpStream) -> io::Result<()> {
    let base = TX_SOFTWARE | TX_SCHED | SOFTWARE | OPT_ID | OPT_TSONLY;
    let fd = sock.as_raw_fd();
    set_flags(fd, base | OPT_ID_TCP).or_else(|_| set_flags(fd, base))
}

/// Asks for `RX_SOFTWARE` timestamps of what `sock` receives ([`recv_stamped`]).
pub fn enable_rx(sock: &TcpStream) -> io::Result<()> {
    set_flags(sock.as_raw_fd(), RX_SOFTWARE | SOFTWARE)
}

/// `CLOCK_REALTIME` now, ns (the clock of software timestamps).
pub fn realtime_ns() -> i64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime(2) into a timespec that outlives the call.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

/// Every transmit timestamp waiting on the error queue of `sock`, without blocking.
pub fn read_tx(sock: &TcpStream) -> io::Result<Vec<TxStamp>> {
    let mut out = Vec::new();
    // Bounded: the queue holds at most what the socket's buffer allows.
    for _ in 0..4096 {
        match read_one_tx(sock.as_raw_fd())? {
            None => break,
            Some(s) => out.extend(s),
        }
    }
    Ok(out)
}

/// One error-queue message: `None` when the queue is empty, `Some(None)` when it carried no
/// timestamp of ours.
fn read_one_tx(fd: RawFd) -> io::Result<Option<Option<TxStamp>>> {
    let Some(controls) = crate::cmsg::recv_errqueue(fd)? else { return Ok(None) };
    let ns = controls.iter().find_map(|c| match c {
        Control::Timestamping(ns) => Some(*ns),
        Control::ExtendedErr(_) => None,
    });
    let err = controls.iter().find_map(|c| match c {
        Control::ExtendedErr(e) if e.ee_origin == SO_EE_ORIGIN_TIMESTAMPING => Some(*e),
        _ => None,
    });
    let stamp = ns.zip(err).and_then(|(ns, e)| {
        let point = match e.ee_info {
            SCM_TSTAMP_SND => TxPoint::Software,
            SCM_TSTAMP_SCHED => TxPoint::Sched,
            _ => return None,
        };
        Some(TxStamp { id: e.ee_data, point, ns })
    });
    Ok(Some(stamp))
}

/// Receives up to `buf.len()` bytes (blocking as the socket is set) with the `RX_SOFTWARE`
/// timestamp of the last segment the call copied, when the kernel gave one.
pub fn recv_stamped(sock: &TcpStream, buf: &mut [u8]) -> io::Result<(usize, Option<i64>)> {
    let mut control = [0u64; CMSG_SPACE / 8];
    let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
    // SAFETY: all-zero is a valid msghdr.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &raw mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: `msg` points at `iov` (over `buf`) and `control`, which outlive the call.
    let rc = unsafe { libc::recvmsg(sock.as_raw_fd(), &raw mut msg, 0) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `msg` was just filled and `control` is alive.
    let ns = unsafe { crate::cmsg::controls(&msg) }.into_iter().find_map(|c| match c {
        Control::Timestamping(ns) if ns != 0 => Some(ns),
        _ => None,
    });
    Ok((rc as usize, ns))
}

/// The socket's `TCP_MAXSEG` (the MSS it sends with).
pub fn mss(sock: &TcpStream) -> io::Result<u32> {
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `v` and `len` outlive the call; `len` is `v`'s size.
    let rc = unsafe {
        libc::getsockopt(sock.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_MAXSEG, (&raw mut v).cast(), &mut len)
    };
    if rc == 0 {
        Ok(v.max(1) as u32)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The system calls a send goes through (`write`, `sendto`, `sendmsg`), for tracefs
/// filters on `raw_syscalls:sys_enter`.
pub const SEND_SYSCALLS: [libc::c_long; 3] = [libc::SYS_write, libc::SYS_sendto, libc::SYS_sendmsg];

/// The calling thread's id (for tracefs filters on `common_pid`).
pub fn thread_id() -> u32 {
    // SAFETY: gettid(2) has no preconditions.
    unsafe { libc::gettid() as u32 }
}

/// ns per tick of the CPU's time-stamp counter (the `x86-tsc` trace clock), measured once
/// against `CLOCK_MONOTONIC` over 20 ms; `None` off x86-64.
pub fn tsc_ns_per_tick() -> Option<f64> {
    static CAL: std::sync::OnceLock<Option<f64>> = std::sync::OnceLock::new();
    *CAL.get_or_init(calibrate_tsc)
}

#[cfg(target_arch = "x86_64")]
fn calibrate_tsc() -> Option<f64> {
    let mono = || {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_gettime(2) into a timespec that outlives the call.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        ts.tv_sec * 1_000_000_000 + ts.tv_nsec
    };
    // SAFETY: RDTSC reads a counter; it has no memory effects.
    let (m0, c0) = (mono(), unsafe { std::arch::x86_64::_rdtsc() });
    std::thread::sleep(std::time::Duration::from_millis(20));
    // SAFETY: as above.
    let (m1, c1) = (mono(), unsafe { std::arch::x86_64::_rdtsc() });
    let ticks = c1.checked_sub(c0).filter(|t| *t > 0)?;
    Some((m1 - m0) as f64 / ticks as f64)
}

#[cfg(not(target_arch = "x86_64"))]
fn calibrate_tsc() -> Option<f64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::TcpListener;

    /// Loopback: a stamped send yields transmit stamps whose id is its last byte's offset,
    /// and the receiver gets a receive stamp not after it returned.
    #[test]
    fn loopback_gives_tx_and_rx_software_stamps() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        enable_tx(&c).unwrap();
        enable_rx(&s).unwrap();
        // The kernel turns receive timestamps on with a deferred switch: the first segments
        // after enable_rx may come unstamped, so a few messages are allowed for it.
        let mut buf = [0u8; 100];
        let mut rx = None;
        for _ in 0..50 {
            c.write_all(&[7u8; 100]).unwrap();
            let (n, stamp) = recv_stamped(&s, &mut buf).unwrap();
            assert_eq!(n, 100);
            rx = stamp;
            if rx.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let after = realtime_ns();
        assert!(rx.is_some_and(|t| t <= after), "{rx:?}");
        std::thread::sleep(std::time::Duration::from_millis(20));
        let tx = read_tx(&c).unwrap();
        assert!(tx.iter().any(|t| t.id == 99 && t.point == TxPoint::Software), "{tx:?}");
        assert!(mss(&c).unwrap() > 1000);
    }
}
