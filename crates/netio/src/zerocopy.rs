//! Sending and receiving without the usual copy through user space: `sendfile`, `splice`
//! through a pipe, `MSG_ZEROCOPY` sends with their completions read from the socket's error
//! queue (counting the ones the kernel reports as copied after all), and receives with
//! `MSG_TRUNC`, which a TCP socket takes as "drop the data instead of copying it".

use std::fs::File;
use std::io;
use std::net::TcpStream;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

use crate::cmsg::Control;

/// `SOL_SOCKET` option that allows `MSG_ZEROCOPY` sends (Linux 4.14+).
const SO_ZEROCOPY: libc::c_int = 60;
/// `sock_extended_err::ee_origin` of a zero-copy completion.
const SO_EE_ORIGIN_ZEROCOPY: u8 = 5;
/// `ee_code` bit: the kernel copied the data after all (loopback, no scatter-gather).
const SO_EE_CODE_ZEROCOPY_COPIED: u8 = 1;

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn check_len(rc: libc::ssize_t) -> io::Result<usize> {
    usize::try_from(rc).map_err(|_| io::Error::last_os_error())
}

/// Sends up to `len` bytes of `file` from `*offset` with `sendfile(2)`, advancing `*offset`.
pub fn sendfile(sock: &TcpStream, file: &File, offset: &mut u64, len: usize) -> io::Result<usize> {
    let mut off = libc::off_t::try_from(*offset).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: both descriptors are open for the call; `off` is a valid off_t the kernel updates.
    let n = check_len(unsafe { libc::sendfile(sock.as_raw_fd(), file.as_raw_fd(), &raw mut off, len) })?;
    *offset = off as u64;
    Ok(n)
}

/// A pipe that carries file pages to a socket with two `splice(2)` calls and no copy.
#[derive(Debug)]
pub struct Splicer {
    read: OwnedFd,
    write: OwnedFd,
    /// Bytes in the pipe, not yet moved on to the socket.
    held: usize,
}

impl Splicer {
    /// A new pipe, enlarged to `capacity` bytes where the kernel allows it.
    pub fn new(capacity: usize) -> io::Result<Splicer> {
        let mut fds = [0 as RawFd; 2];
        // SAFETY: `fds` has room for the two descriptors pipe2 writes.
        check(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
        // SAFETY: pipe2 succeeded, so both descriptors are open and owned by nobody else.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let size = libc::c_int::try_from(capacity).unwrap_or(libc::c_int::MAX);
        // SAFETY: fcntl with an integer argument on an open descriptor; failure leaves the
        // default size, which only makes the calls smaller.
        let _ = unsafe { libc::fcntl(write.as_raw_fd(), libc::F_SETPIPE_SZ, size) };
        Ok(Splicer { read, write, held: 0 })
    }

    /// Moves up to `len` bytes of `file` from `*offset` to `sock`; returns how many reached
    /// the socket in this call (bytes still in the pipe go first on the next call).
    pub fn send(&mut self, file: &File, offset: &mut u64, len: usize, sock: &TcpStream) -> io::Result<usize> {
        if self.held == 0 && len > 0 {
            let mut off =
                libc::loff_t::try_from(*offset).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
            let flags = libc::SPLICE_F_MOVE | libc::SPLICE_F_MORE;
            // SAFETY: open descriptors; `off` is a valid loff_t the kernel updates.
            let n = check_len(unsafe {
                libc::splice(
                    file.as_raw_fd(),
                    &raw mut off,
                    self.write.as_raw_fd(),
                    std::ptr::null_mut(),
                    len,
                    flags,
                )
            })?;
            *offset = off as u64;
            self.held = n;
            if n == 0 {
                return Ok(0);
            }
        }
        let flags = libc::SPLICE_F_MOVE | libc::SPLICE_F_MORE;
        let null = std::ptr::null_mut();
        // SAFETY: open descriptors; no offsets (a pipe and a socket have none).
        let n = check_len(unsafe {
            libc::splice(self.read.as_raw_fd(), null, sock.as_raw_fd(), null, self.held, flags)
        })?;
        self.held -= n;
        Ok(n)
    }

    /// Bytes taken from the file that have not yet reached the socket.
    pub fn held(&self) -> usize {
        self.held
    }
}

/// Allows `MSG_ZEROCOPY` sends on `sock`.
pub fn enable_zerocopy(sock: &TcpStream) -> io::Result<()> {
    let one: libc::c_int = 1;
    let len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `one` outlives the call and `len` is its size.
    check(unsafe {
        libc::setsockopt(sock.as_raw_fd(), libc::SOL_SOCKET, SO_ZEROCOPY, (&raw const one).cast(), len)
    })
}

/// Sends `buf` with `MSG_ZEROCOPY`: the kernel pins its pages instead of copying them, so
/// the caller must leave `buf` unchanged until a [`Completion`] covers this send. Every
/// call that takes bytes gets the next send number (from 0), which completions refer to.
pub fn send_zerocopy(sock: &TcpStream, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: `buf` is valid for reads of its length for the duration of the call; the
    // kernel holds its own references to the pages afterwards.
    check_len(unsafe { libc::send(sock.as_raw_fd(), buf.as_ptr().cast(), buf.len(), libc::MSG_ZEROCOPY) })
}

/// Sends numbered `first..=last` have completed; `copied` when the kernel reports that it
/// copied their data after all (`SO_EE_CODE_ZEROCOPY_COPIED`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    /// First send number covered.
    pub first: u32,
    /// Last send number covered.
    pub last: u32,
    /// The kernel copied the data instead of sending the pinned pages.
    pub copied: bool,
}

impl Completion {
    /// Sends covered.
    pub fn sends(&self) -> u64 {
        u64::from(self.last.wrapping_sub(self.first)) + 1
    }
}

/// Waits up to `timeout` for the error queue of `sock` to hold something.
pub fn wait_completions(sock: &TcpStream, timeout: Duration) -> io::Result<bool> {
    let mut pfd = libc::pollfd { fd: sock.as_raw_fd(), events: 0, revents: 0 };
    let ms = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: one valid pollfd.
    let n = unsafe { libc::poll(&raw mut pfd, 1, ms) };
    check(n)?;
    Ok(n > 0 && pfd.revents & libc::POLLERR != 0)
}

/// Reads every completion waiting on the error queue of `sock` without blocking.
pub fn read_completions(sock: &TcpStream) -> io::Result<Vec<Completion>> {
    let mut out = Vec::new();
    while let Some(c) = read_one_completion(sock.as_raw_fd())? {
        out.extend(c);
    }
    Ok(out)
}

/// One error-queue message: `None` when the queue is empty, `Some(None)` for a message that
/// is not a zero-copy completion.
fn read_one_completion(fd: RawFd) -> io::Result<Option<Option<Completion>>> {
    let Some(controls) = crate::cmsg::recv_errqueue(fd)? else { return Ok(None) };
    Ok(Some(controls.into_iter().find_map(|c| match c {
        Control::ExtendedErr(err) if err.ee_origin == SO_EE_ORIGIN_ZEROCOPY && err.ee_errno == 0 => {
            let copied = err.ee_code & SO_EE_CODE_ZEROCOPY_COPIED != 0;
            Some(Completion { first: err.ee_info, last: err.ee_data, copied })
        }
        _ => None,
    })))
}

/// Receives up to `buf.len()` bytes with `MSG_TRUNC`: on TCP the kernel drops them instead
/// of copying them into `buf`. Returns the count; whether `buf` was left alone tells whether
/// the kernel honoured the flag (see [`honours_trunc`]).
pub fn recv_trunc(sock: &TcpStream, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: `buf` is valid for writes of its length, in case the kernel copies after all.
    check_len(unsafe { libc::recv(sock.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), libc::MSG_TRUNC) })
}

/// Fills `buf` with a marker before a [`recv_trunc`]; afterwards, [`honours_trunc`] on the
/// same buffer tells whether the kernel skipped the copy.
pub fn mark(buf: &mut [u8]) {
    buf.iter_mut().enumerate().for_each(|(i, b)| *b = 0xA5 ^ (i as u8));
}

/// Whether the first `n` bytes of a [`mark`]ed buffer are untouched after a [`recv_trunc`]
/// that returned `n` (data that happens to equal the marker is vanishingly unlikely over
/// more than a few bytes).
pub fn honours_trunc(buf: &[u8], n: usize) -> bool {
    buf.iter().take(n).enumerate().all(|(i, &b)| b == 0xA5 ^ (i as u8))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpListener;

    fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
        let a = TcpStream::connect(l.local_addr().unwrap_or_else(|e| panic!("{e}")))
            .unwrap_or_else(|e| panic!("{e}"));
        let (b, _) = l.accept().unwrap_or_else(|e| panic!("{e}"));
        (a, b)
    }

    #[test]
    fn a_completion_counts_its_range() {
        assert_eq!(Completion { first: 3, last: 7, copied: false }.sends(), 5);
        assert_eq!(Completion { first: u32::MAX, last: 0, copied: true }.sends(), 2);
    }

    #[test]
    fn zerocopy_sends_complete_on_loopback_as_copied() {
        let (a, mut b) = pair();
        enable_zerocopy(&a).unwrap_or_else(|e| panic!("{e}"));
        let data = vec![7u8; 64 * 1024];
        let mut sent = 0;
        while sent < data.len() {
            sent += send_zerocopy(&a, &data[sent..]).unwrap_or_else(|e| panic!("{e}"));
        }
        let mut got = vec![0u8; data.len()];
        b.read_exact(&mut got).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(got, data);
        let mut done = Vec::new();
        while done.iter().map(Completion::sends).sum::<u64>() == 0 {
            assert!(wait_completions(&a, Duration::from_secs(5)).unwrap_or(false), "no completion");
            done.extend(read_completions(&a).unwrap_or_else(|e| panic!("{e}")));
        }
        assert_eq!(done[0].first, 0);
        assert!(done.iter().all(|c| c.copied), "loopback delivers by copying: {done:?}");
    }

    #[test]
    fn trunc_receive_drops_tcp_data_without_copying() {
        let (mut a, b) = pair();
        a.write_all(&[1u8; 1000]).unwrap_or_else(|e| panic!("{e}"));
        let mut buf = vec![0u8; 1000];
        mark(&mut buf);
        let n = recv_trunc(&b, &mut buf).unwrap_or_else(|e| panic!("{e}"));
        assert!(n > 0);
        assert!(honours_trunc(&buf, n));
        buf[0] = 1;
        assert!(!honours_trunc(&buf, n), "a copied byte is noticed");
    }

    #[test]
    fn splice_and_sendfile_move_file_bytes() {
        let (a, mut b) = pair();
        let mut f = tempfile_in_tmp();
        f.write_all(&[9u8; 10_000]).unwrap_or_else(|e| panic!("{e}"));
        let mut off = 0;
        while off < 5000 {
            let want = 5000 - off as usize;
            sendfile(&a, &f, &mut off, want).unwrap_or_else(|e| panic!("{e}"));
        }
        let mut sp = Splicer::new(1 << 16).unwrap_or_else(|e| panic!("{e}"));
        let mut moved = 0;
        while moved < 5000 {
            let want = 10_000 - off as usize;
            moved += sp.send(&f, &mut off, want, &a).unwrap_or_else(|e| panic!("{e}"));
        }
        let mut got = vec![0u8; 10_000];
        b.read_exact(&mut got).unwrap_or_else(|e| panic!("{e}"));
        assert!(got.iter().all(|&x| x == 9));
    }

    fn tempfile_in_tmp() -> File {
        let path = std::env::temp_dir().join(format!("netio-zc-{}", std::process::id()));
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap_or_else(|e| panic!("{e}"));
        let _ = std::fs::remove_file(&path);
        f
    }
}
