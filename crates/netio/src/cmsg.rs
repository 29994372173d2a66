//! Control messages of `recvmsg(2)`: reading one message from a socket's error queue, and
//! copying out the control messages tcplab reads (extended errors: zero-copy completions and
//! transmit timestamps; `SCM_TIMESTAMPING` times), so that callers never walk raw headers.

use std::io;
use std::os::fd::RawFd;

/// `SO_TIMESTAMPING`, and the type of its control message.
pub(crate) const SCM_TIMESTAMPING: libc::c_int = 37;
/// Room for the control messages of one error-queue message, bytes.
const CONTROL_BYTES: usize = 256;

/// One control message, copied out.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Control {
    /// `IP_RECVERR` / `IPV6_RECVERR`.
    ExtendedErr(libc::sock_extended_err),
    /// `SCM_TIMESTAMPING`: the first (software) timestamp, ns.
    Timestamping(i64),
}

/// The control messages of a filled `msg` that tcplab reads.
///
/// # Safety
/// `msg` must have been filled by a successful `recvmsg(2)` whose control buffer is still
/// alive.
pub(crate) unsafe fn controls(msg: &libc::msghdr) -> Vec<Control> {
    let mut out = Vec::new();
    // SAFETY: per the caller; CMSG_FIRSTHDR/NXTHDR stay inside the control area.
    let mut cmsg = unsafe { libc::CMSG_FIRSTHDR(msg) };
    while !cmsg.is_null() {
        // SAFETY: `cmsg` is a header inside the control area (checked non-null).
        let (level, kind) = unsafe { ((*cmsg).cmsg_level, (*cmsg).cmsg_type) };
        let recverr = (level == libc::SOL_IP && kind == libc::IP_RECVERR)
            || (level == libc::SOL_IPV6 && kind == libc::IPV6_RECVERR);
        if recverr {
            // SAFETY: an IP(V6)_RECVERR message carries a sock_extended_err; it may be
            // unaligned in the buffer, so it is read unaligned.
            out.push(Control::ExtendedErr(unsafe { std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast()) }));
        } else if level == libc::SOL_SOCKET && kind == SCM_TIMESTAMPING {
            // SAFETY: SCM_TIMESTAMPING carries three timespecs; the first is read, unaligned.
            let ts: libc::timespec = unsafe { std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast()) };
            out.push(Control::Timestamping(ts.tv_sec * 1_000_000_000 + ts.tv_nsec));
        }
        // SAFETY: as above.
        cmsg = unsafe { libc::CMSG_NXTHDR(msg, cmsg) };
    }
    out
}

/// One message from the error queue of `fd`, without blocking: its control messages, or
/// `None` when the queue is empty.
pub(crate) fn recv_errqueue(fd: RawFd) -> io::Result<Option<Vec<Control>>> {
    let mut control = [0u64; CONTROL_BYTES / 8];
    // SAFETY: all-zero is a valid msghdr (no name, no data, no control yet).
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: `msg` points at `control`, which outlives the call; no data buffers.
    let rc = unsafe { libc::recvmsg(fd, &raw mut msg, libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        return match e.kind() {
            io::ErrorKind::WouldBlock => Ok(None),
            _ => Err(e),
        };
    }
    // SAFETY: `msg` was just filled and `control` is alive.
    Ok(Some(unsafe { controls(&msg) }))
}
