//! UDP fast paths and counters: sendmmsg / recvmmsg batches, UDP GSO (`UDP_SEGMENT`) and GRO
//! (`UDP_GRO`), the receive-buffer drop counter (`SO_RXQ_OVFL` per datagram, `/proc/net/udp`
//! per socket), `SO_NO_CHECK`, `IP_RECVERR` (drops at this host's device queue reported to the
//! sender), and timer slack for accurate pacing.

use std::io;
use std::net::UdpSocket;
use std::os::fd::{AsRawFd, RawFd};

/// `SOL_UDP` option: send buffers as segments of this size (Linux 4.18+).
const UDP_SEGMENT: libc::c_int = 103;
/// `SOL_UDP` option: coalesce received datagrams of one flow (Linux 5.0+).
const UDP_GRO: libc::c_int = 104;
/// `SOL_SOCKET` option: attach the socket's drop count to every received datagram.
const SO_RXQ_OVFL: libc::c_int = 40;
/// `SOL_SOCKET` option: send without UDP checksum (IPv4 only).
const SO_NO_CHECK: libc::c_int = 11;
/// Most segments one GSO send may carry (the kernel's `UDP_MAX_SEGMENTS` on older kernels).
pub const MAX_GSO_SEGMENTS: usize = 64;
/// Largest GSO buffer: one IPv4 packet's worth of UDP payload.
pub const MAX_GSO_BYTES: usize = 65_507;
/// Room for the control messages of one received datagram (GRO size + drop count).
const CMSG_SPACE: usize = 64;

fn set_int(fd: RawFd, level: libc::c_int, name: libc::c_int, value: libc::c_int) -> io::Result<()> {
    let len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `value` outlives the call and `len` is its size.
    let rc = unsafe { libc::setsockopt(fd, level, name, (&raw const value).cast(), len) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Makes the kernel split every send into datagrams of `segment` bytes (UDP GSO).
/// `segment` 0 turns it off.
pub fn set_gso(sock: &UdpSocket, segment: u16) -> io::Result<()> {
    set_int(sock.as_raw_fd(), libc::SOL_UDP, UDP_SEGMENT, segment.into())
}

/// Asks for coalesced receives (UDP GRO); each coalesced buffer comes with its segment size.
pub fn enable_gro(sock: &UdpSocket) -> io::Result<()> {
    set_int(sock.as_raw_fd(), libc::SOL_UDP, UDP_GRO, 1)
}

/// Attaches the socket's receive-buffer drop count to every received datagram.
pub fn enable_drop_count(sock: &UdpSocket) -> io::Result<()> {
    set_int(sock.as_raw_fd(), libc::SOL_SOCKET, SO_RXQ_OVFL, 1)
}

/// Has the kernel report a datagram its device queue dropped to the sender, as ENOBUFS
/// (`IP_RECVERR` / `IPV6_RECVERR`). Without it Linux counts the drop (`SndbufErrors`) and
/// tells the sender the datagram left: a sender faster than its link then "sends" what
/// never reached the wire, and the loss is blamed on the path.
pub fn report_device_drops(sock: &UdpSocket) -> io::Result<()> {
    let (level, name) = match sock.local_addr()? {
        std::net::SocketAddr::V4(_) => (libc::SOL_IP, libc::IP_RECVERR),
        std::net::SocketAddr::V6(_) => (libc::SOL_IPV6, libc::IPV6_RECVERR),
    };
    set_int(sock.as_raw_fd(), level, name, 1)
}

/// Sends without UDP checksums (`SO_NO_CHECK`). IPv6 requires the checksum, so the kernel
/// only honours this on IPv4 sockets.
pub fn disable_checksum(sock: &UdpSocket) -> io::Result<()> {
    set_int(sock.as_raw_fd(), libc::SOL_SOCKET, SO_NO_CHECK, 1)
}

/// Lowers the calling thread's timer slack to 1 µs so that short sleeps end on time (the
/// default 50 µs slack would bunch a 1 Mbit/s stream of small datagrams).
pub fn precise_timers() {
    // SAFETY: prctl with integer arguments only.
    let _ = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong, 0, 0, 0) };
}

/// Whether a call with a timeout (or on a non-blocking socket) found nothing to do: it would
/// block, timed out, or was interrupted. Loops try again.
pub fn is_wait(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted)
}

/// Whether a send failed because a queue on this host was full (ENOBUFS): loss on the
/// sending host, not in the network.
pub fn is_enobufs(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ENOBUFS)
}

/// Whether a segmented (GSO) send was refused by the route's device or the kernel: EIO (no
/// checksum offload), EINVAL, or EMSGSIZE, which Linux 6 returns when one segment and its
/// headers exceed the route's MTU (a 16 KiB datagram over a 9180-byte ATM MTU must leave as
/// IP fragments, which GSO cannot make).
pub fn is_gso_refused(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EIO) | Some(libc::EINVAL) | Some(libc::EMSGSIZE))
}

/// Sends each buffer as one message (or, with GSO on, as a train of segments) in one
/// `sendmmsg` call; returns how many buffers the kernel took.
pub fn send_batch(sock: &UdpSocket, bufs: &[&[u8]]) -> io::Result<usize> {
    let mut iovs: Vec<libc::iovec> =
        bufs.iter().map(|b| libc::iovec { iov_base: b.as_ptr() as *mut _, iov_len: b.len() }).collect();
    // SAFETY: all-zero is a valid mmsghdr (null pointers, zero lengths).
    let mut msgs: Vec<libc::mmsghdr> = (0..iovs.len()).map(|_| unsafe { std::mem::zeroed() }).collect();
    for (m, iov) in msgs.iter_mut().zip(iovs.iter_mut()) {
        m.msg_hdr.msg_iov = iov;
        m.msg_hdr.msg_iovlen = 1;
    }
    // SAFETY: `msgs` points at `iovs`, which point at `bufs`; all outlive the call.
    let n = unsafe { libc::sendmmsg(sock.as_raw_fd(), msgs.as_mut_ptr(), msgs.len() as libc::c_uint, 0) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Reusable buffers for `recvmmsg`.
#[derive(Debug)]
pub struct RecvBatch {
    bufs: Vec<Vec<u8>>,
    cmsgs: Vec<[u64; CMSG_SPACE / 8]>,
    lens: Vec<usize>,
    segments: Vec<usize>,
    count: usize,
    drops: Option<u32>,
}

impl RecvBatch {
    /// Room for `msgs` messages of up to `buf_len` bytes each.
    pub fn new(msgs: usize, buf_len: usize) -> RecvBatch {
        let msgs = msgs.max(1);
        RecvBatch {
            bufs: vec![vec![0u8; buf_len.max(1)]; msgs],
            cmsgs: vec![[0u64; CMSG_SPACE / 8]; msgs],
            lens: vec![0; msgs],
            segments: vec![0; msgs],
            count: 0,
            drops: None,
        }
    }

    /// Receives at least one message (blocking up to the socket's read timeout) and as many
    /// more as are queued, up to the batch size; returns how many.
    pub fn recv(&mut self, sock: &UdpSocket) -> io::Result<usize> {
        let n = self.bufs.len();
        let mut iovs: Vec<libc::iovec> = self
            .bufs
            .iter_mut()
            .map(|b| libc::iovec { iov_base: b.as_mut_ptr().cast(), iov_len: b.len() })
            .collect();
        // SAFETY: all-zero is a valid mmsghdr.
        let mut msgs: Vec<libc::mmsghdr> = (0..n).map(|_| unsafe { std::mem::zeroed() }).collect();
        for ((m, iov), c) in msgs.iter_mut().zip(iovs.iter_mut()).zip(self.cmsgs.iter_mut()) {
            m.msg_hdr.msg_iov = iov;
            m.msg_hdr.msg_iovlen = 1;
            m.msg_hdr.msg_control = c.as_mut_ptr().cast();
            m.msg_hdr.msg_controllen = CMSG_SPACE as _;
        }
        // SAFETY: every pointer in `msgs` refers to buffers owned by `self` or the locals above,
        // all alive for the call; lengths match the buffers.
        let got = unsafe {
            libc::recvmmsg(
                sock.as_raw_fd(),
                msgs.as_mut_ptr(),
                n as libc::c_uint,
                libc::MSG_WAITFORONE,
                std::ptr::null_mut(),
            )
        };
        if got < 0 {
            self.count = 0;
            return Err(io::Error::last_os_error());
        }
        self.count = got as usize;
        for (i, m) in msgs.iter().take(self.count).enumerate() {
            self.lens[i] = (m.msg_len as usize).min(self.bufs[i].len());
            let (segment, drops) = read_cmsgs(&m.msg_hdr);
            self.segments[i] = segment.unwrap_or(0);
            if drops.is_some() {
                self.drops = drops;
            }
        }
        Ok(self.count)
    }

    /// Calls `f` for every datagram of the last receive, splitting coalesced (GRO) buffers.
    pub fn for_each_datagram(&self, mut f: impl FnMut(&[u8])) {
        for i in 0..self.count {
            let data = &self.bufs[i][..self.lens[i]];
            match self.segments[i] {
                0 => f(data),
                seg => data.chunks(seg).for_each(&mut f),
            }
        }
    }

    /// The latest receive-buffer drop count the kernel attached (`SO_RXQ_OVFL`).
    pub fn drops(&self) -> Option<u32> {
        self.drops
    }
}

/// GRO segment size and drop count from a received message's control data.
fn read_cmsgs(hdr: &libc::msghdr) -> (Option<usize>, Option<u32>) {
    let (mut segment, mut drops) = (None, None);
    // SAFETY: `hdr` was filled by recvmmsg; CMSG_FIRSTHDR/NXTHDR stay within msg_controllen.
    let mut c = unsafe { libc::CMSG_FIRSTHDR(hdr) };
    while !c.is_null() {
        // SAFETY: `c` is a valid cmsghdr inside the control buffer.
        let (level, kind) = unsafe { ((*c).cmsg_level, (*c).cmsg_type) };
        // SAFETY: the data of both messages we asked for is a 4-byte integer.
        let value = unsafe { std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<u32>()) };
        if level == libc::SOL_UDP && kind == UDP_GRO {
            segment = Some(value as usize);
        } else if level == libc::SOL_SOCKET && kind == SO_RXQ_OVFL {
            drops = Some(value);
        }
        // SAFETY: as above.
        c = unsafe { libc::CMSG_NXTHDR(hdr, c) };
    }
    (segment, drops)
}

/// The kernel's receive-buffer drop counter of `sock`, from `/proc/net/udp` and `udp6`.
pub fn socket_drops(sock: &UdpSocket) -> io::Result<u64> {
    let inode = socket_inode(sock.as_raw_fd())?;
    for table in ["/proc/net/udp", "/proc/net/udp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        if let Some(d) = drops_of_inode(&text, inode) {
            return Ok(d);
        }
    }
    Err(io::Error::new(io::ErrorKind::NotFound, "socket not found in /proc/net/udp"))
}

fn socket_inode(fd: RawFd) -> io::Result<u64> {
    // SAFETY: all-zero is a valid stat buffer; fstat fills it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a valid, writable stat.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st.st_ino)
}

/// The `drops` column of the row whose `inode` column matches, in `/proc/net/udp` format.
pub fn drops_of_inode(table: &str, inode: u64) -> Option<u64> {
    table.lines().skip(1).find_map(|line| {
        let cols: Vec<&str> = line.split_whitespace().collect();
        let ino: u64 = cols.get(9)?.parse().ok()?;
        (ino == inode).then(|| cols.last()?.parse().ok()).flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops
  123: 0100007F:A1B2 0100007F:C3D4 01 00000000:00000000 00:00000000 00000000     0        0 445566 2 0000000000000000 17
  124: 00000000:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 778899 2 0000000000000000 0
";

    #[test]
    fn drops_are_read_by_inode() {
        assert_eq!(drops_of_inode(TABLE, 445566), Some(17));
        assert_eq!(drops_of_inode(TABLE, 778899), Some(0));
        assert_eq!(drops_of_inode(TABLE, 1), None);
        assert_eq!(drops_of_inode("garbage\n1 2 3", 1), None);
    }

    #[test]
    fn batches_cross_loopback_with_gso_and_gro_and_the_drop_counter_reads() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        tx.connect(rx.local_addr().unwrap()).unwrap();
        rx.set_read_timeout(Some(std::time::Duration::from_secs(2))).unwrap();
        enable_drop_count(&rx).unwrap();
        let gro = enable_gro(&rx).is_ok();
        let a = [1u8; 100];
        let b = [2u8; 300];
        assert_eq!(send_batch(&tx, &[&a, &a]).unwrap(), 2);
        if set_gso(&tx, 100).is_ok() {
            assert_eq!(send_batch(&tx, &[&b]).unwrap(), 1);
        }
        let mut batch = RecvBatch::new(8, 65_536);
        let mut sizes = Vec::new();
        while sizes.len() < 2 {
            batch.recv(&rx).unwrap();
            batch.for_each_datagram(|d| sizes.push(d.len()));
        }
        assert!(sizes.iter().all(|&s| s == 100), "{sizes:?} (gro {gro})");
        assert_eq!(socket_drops(&rx).unwrap(), 0);
    }
}
