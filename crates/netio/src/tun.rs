//! TUN devices: layer-3 virtual interfaces whose packets a process reads and writes.
//!
//! A [`Tun`] is non-persistent: the device disappears when the file descriptor is closed,
//! including when the owning process is killed, so a crashed emulator leaves no device
//! behind. The device is created in the network namespace of the calling thread.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::time::Duration;

/// `_IOW('T', 202, int)`.
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
/// `_IOW('T', 208, unsigned int)`.
const TUNSETOFFLOAD: libc::c_ulong = 0x4004_54d0;
/// `_IOW('T', 216, int)`.
const TUNSETVNETHDRSZ: libc::c_ulong = 0x4004_54d8;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;
const IFF_VNET_HDR: libc::c_short = 0x4000;
/// Kernel hands unchecksummed packets.
const TUN_F_CSUM: libc::c_uint = 0x01;
/// TCP segmentation offload, IPv4.
const TUN_F_TSO4: libc::c_uint = 0x02;
/// TCP segmentation offload, IPv6.
const TUN_F_TSO6: libc::c_uint = 0x04;

/// Size of the legacy `struct virtio_net_hdr` in front of each packet with offload on.
pub const VNET_HDR_BYTES: usize = 10;

/// Longest interface name Linux accepts (IFNAMSIZ − 1).
pub const MAX_NAME_BYTES: usize = 15;

/// An open TUN device (`IFF_TUN | IFF_NO_PI`, optionally `IFF_VNET_HDR`), non-blocking.
#[derive(Debug)]
pub struct Tun {
    file: File,
    name: String,
    vnet_hdr: bool,
}

/// `struct ifreq` reduced to what TUNSETIFF reads: the name and the flags.
#[repr(C)]
struct IfReqFlags {
    name: [libc::c_char; 16],
    flags: libc::c_short,
    _pad: [u8; 22],
}

impl Tun {
    /// Creates the device `name` in the calling thread's network namespace. With
    /// `vnet_hdr`, every packet read or written starts with a [`VNET_HDR_BYTES`] header and
    /// TCP segmentation offload is enabled (64 KB super-packets cross user space).
    pub fn create(name: &str, vnet_hdr: bool) -> io::Result<Tun> {
        if name.is_empty() || name.len() > MAX_NAME_BYTES || name.bytes().any(|b| b == 0 || b == b'/') {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("bad interface name `{name}`")));
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open("/dev/net/tun")?;
        let mut req = IfReqFlags { name: [0; 16], flags: IFF_TUN | IFF_NO_PI, _pad: [0; 22] };
        if vnet_hdr {
            req.flags |= IFF_VNET_HDR;
        }
        for (dst, src) in req.name.iter_mut().zip(name.bytes()) {
            *dst = src as libc::c_char;
        }
        // SAFETY: TUNSETIFF reads a `struct ifreq` (40 bytes, name then flags); `req` has
        // that layout and outlives the call.
        check(unsafe { libc::ioctl(file.as_raw_fd(), TUNSETIFF as _, &mut req as *mut IfReqFlags) })?;
        let tun = Tun { file, name: name.to_string(), vnet_hdr };
        if vnet_hdr {
            tun.enable_offload()?;
        }
        Ok(tun)
    }

    fn enable_offload(&self) -> io::Result<()> {
        let size: libc::c_int = VNET_HDR_BYTES as libc::c_int;
        // SAFETY: TUNSETVNETHDRSZ reads one int through the pointer, valid for the call.
        check(unsafe {
            libc::ioctl(self.file.as_raw_fd(), TUNSETVNETHDRSZ as _, &size as *const libc::c_int)
        })?;
        let flags = TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6;
        // SAFETY: TUNSETOFFLOAD takes the flags by value.
        check(unsafe { libc::ioctl(self.file.as_raw_fd(), TUNSETOFFLOAD as _, flags as libc::c_ulong) })
    }

    /// The interface name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// True if packets carry a virtio-net header.
    pub fn has_vnet_hdr(&self) -> bool {
        self.vnet_hdr
    }

    /// Reads one packet into `buf`; `Ok(None)` when none is waiting.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        match (&self.file).read(buf) {
            Ok(n) => Ok(Some(n)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Writes one packet; a packet the kernel refuses (full queue, bad header) is an error.
    pub fn send(&self, packet: &[u8]) -> io::Result<()> {
        (&self.file).write(packet).map(|_| ())
    }

    /// Waits until a packet can be read or `timeout` passes (`None`: forever).
    pub fn wait_readable(&self, timeout: Option<Duration>) -> io::Result<bool> {
        wait_readable(self.file.as_fd(), timeout)
    }
}

impl AsFd for Tun {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }
}

/// Waits until `fd` is readable or `timeout` passes, with nanosecond resolution (ppoll).
pub fn wait_readable(fd: BorrowedFd<'_>, timeout: Option<Duration>) -> io::Result<bool> {
    let mut pfd = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    let ts = timeout.map(|t| libc::timespec {
        tv_sec: libc::time_t::try_from(t.as_secs()).unwrap_or(libc::time_t::MAX),
        tv_nsec: t.subsec_nanos() as libc::c_long,
    });
    let ts_ptr = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: one valid pollfd, an optional timespec that outlives the call, no sigmask.
    let n = unsafe { libc::ppoll(&mut pfd, 1, ts_ptr, std::ptr::null()) };
    match n {
        -1 if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => Ok(false),
        -1 => Err(io::Error::last_os_error()),
        0 => Ok(false),
        _ => Ok(true),
    }
}

/// Sets the calling thread's timer slack (default 50 µs) so short sleeps wake on time.
pub fn set_timer_slack(slack: Duration) -> io::Result<()> {
    let ns = libc::c_ulong::try_from(slack.as_nanos()).unwrap_or(libc::c_ulong::MAX).max(1);
    // SAFETY: PR_SET_TIMERSLACK takes the slack by value; the other arguments are unused.
    check(unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns, 0, 0, 0) })
}

/// Runs the calling thread under `SCHED_FIFO` at `priority` (1–99), so a busy machine
/// cannot delay it behind ordinary processes. Needs root; the kernel's real-time
/// throttling (`sched_rt_runtime_us`) still leaves other threads a share of each CPU.
pub fn set_realtime(priority: i32) -> io::Result<()> {
    let param = libc::sched_param { sched_priority: priority };
    // SAFETY: pid 0 is the calling thread; `param` is valid for the call.
    check(unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) })
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_lives_in_its_namespace_and_reads_nothing_yet() {
        if !crate::netns::is_root() {
            eprintln!("skipped: TUN devices need root");
            return;
        }
        let name = format!("tle{}-t", std::process::id());
        let (ns, tun) = crate::NetNs::create(|| Tun::create(&name, true)).unwrap();
        assert_eq!(tun.name(), name);
        assert!(tun.has_vnet_hdr());
        let mut buf = [0u8; 64];
        assert_eq!(tun.recv(&mut buf).unwrap(), None, "non-blocking, nothing queued (device down)");
        assert!(!tun.wait_readable(Some(Duration::from_millis(1))).unwrap());
        let devices = || std::fs::read_to_string("/proc/thread-self/net/dev").unwrap();
        assert!(ns.run(devices).unwrap().contains(&name), "device visible inside its namespace");
        assert!(!devices().contains(&name), "and not outside");
    }

    #[test]
    fn rejects_bad_names() {
        assert!(Tun::create("", false).is_err());
        assert!(Tun::create("a-name-that-is-too-long", false).is_err());
        assert!(Tun::create("a/b", false).is_err());
    }
}
