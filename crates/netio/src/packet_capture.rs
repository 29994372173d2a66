//! AF_PACKET capture of one test's TCP segments: a `SOCK_DGRAM` packet socket (IP packets
//! without the link header) bound to one device or to all, a classic BPF filter attached
//! with `SO_ATTACH_FILTER` that keeps TCP to or from one port (IPv4 and IPv6), and a
//! `TPACKET_V2` receive ring the kernel fills without a system call per packet. The first
//! [`SNAP_BYTES`]-odd bytes of each packet are kept (headers with options); the original
//! length comes with them. Drops are read with `PACKET_STATISTICS`, never silent. A packet
//! on a loopback device passes it twice (sent, then received): only the received copy is
//! handed over, as tcpdump does.
//!
//! Needs root (`CAP_NET_RAW`). The socket sees the network namespace it was made in.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{fence, Ordering};

/// Bytes of a ring frame: the TPACKET_V2 header, the link address and about 176 bytes of
/// packet — IPv6 and TCP headers with every option fit.
const FRAME_BYTES: u32 = 256;
/// Bytes of a ring block.
const BLOCK_BYTES: u32 = 1 << 20;
/// Blocks in the ring (16 MiB: 65,536 frames, about half a second of loopback bulk).
const BLOCKS: u32 = 16;
/// Bytes of a packet kept at most (what a frame holds after its headers).
pub const SNAP_BYTES: u32 = 176;

const SOL_PACKET: libc::c_int = 263;
const PACKET_RX_RING: libc::c_int = 5;
const PACKET_STATISTICS: libc::c_int = 6;
const PACKET_VERSION: libc::c_int = 10;
const TPACKET_V2: libc::c_int = 1;
const TP_STATUS_USER: u32 = 1;
const SO_ATTACH_FILTER: libc::c_int = 26;
const ETH_P_ALL: u16 = 0x0003;
const PACKET_OUTGOING: u8 = 4;
const ARPHRD_LOOPBACK: u16 = 772;
/// `SKF_AD_OFF + SKF_AD_PKTTYPE`: a classic BPF load of this offset reads `skb->pkt_type`.
const SKF_AD_PKTTYPE: u32 = 0xffff_f000 + 4;
/// `SKF_AD_OFF + SKF_AD_HATYPE`: reads the device's type (`ARPHRD_*`).
const SKF_AD_HATYPE: u32 = 0xffff_f000 + 28;
/// Where the link address follows the frame header (TPACKET_ALIGN of the V2 header).
const SLL_OFFSET: usize = 32;

/// Why capture could not be set up or read.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A system call failed.
    #[error("AF_PACKET capture: {step}: {source}")]
    Sys {
        /// What was being done.
        step: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// The device does not exist.
    #[error("AF_PACKET capture: no device {0}")]
    NoDevice(String),
}

fn sys(step: &'static str) -> Error {
    Error::Sys { step, source: std::io::Error::last_os_error() }
}

/// One instruction of a classic BPF program (`struct sock_filter`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Insn {
    code: u16,
    jt: u8,
    jf: u8,
    k: u32,
}

#[repr(C)]
struct Fprog {
    len: u16,
    filter: *const Insn,
}

#[repr(C)]
struct TpacketReq {
    block_size: u32,
    block_nr: u32,
    frame_size: u32,
    frame_nr: u32,
}

#[repr(C)]
struct Tpacket2Hdr {
    status: u32,
    len: u32,
    snaplen: u32,
    mac: u16,
    net: u16,
    sec: u32,
    nsec: u32,
    vlan_tci: u16,
    vlan_tpid: u16,
    padding: [u8; 4],
}

#[repr(C)]
#[derive(Default)]
struct TpacketStats {
    packets: u32,
    drops: u32,
}

const fn insn(code: u16, jt: u8, jf: u8, k: u32) -> Insn {
    Insn { code, jt, jf, k }
}

/// The filter: IPv4 or IPv6 (no extension headers), TCP, source or destination port `port`.
/// The packet starts at its IP header (a `SOCK_DGRAM` socket). First, a packet a loopback
/// device sends (`PACKET_OUTGOING` on `ARPHRD_LOOPBACK`) is dropped in the kernel: it passes
/// the device again as received, and the sent copy would cost a ring frame and a copy for
/// nothing.
pub fn port_filter(port: u16) -> Vec<Insn> {
    let (ldb, ldh, ldh_x, ldx_msh) = (0x30, 0x28, 0x48, 0xb1);
    let (rsh, jeq, ret) = (0x74, 0x15, 0x06);
    let p = u32::from(port);
    // Jumps are relative, so the prefix below leaves the offsets of this body as they are.
    let body = [
        insn(ldb, 0, 0, 0),       // 0: A = first byte
        insn(rsh, 0, 0, 4),       // 1: A = IP version
        insn(jeq, 0, 7, 4),       // 2: v4 → 3, else → 10
        insn(ldb, 0, 0, 9),       // 3: A = protocol
        insn(jeq, 0, 13, 6),      // 4: TCP → 5, else drop
        insn(ldx_msh, 0, 0, 0),   // 5: X = IPv4 header length
        insn(ldh_x, 0, 0, 0),     // 6: A = source port
        insn(jeq, 9, 0, p),       // 7: → accept
        insn(ldh_x, 0, 0, 2),     // 8: A = destination port
        insn(jeq, 7, 8, p),       // 9: → accept, else drop
        insn(jeq, 0, 7, 6),       // 10: v6 → 11, else drop
        insn(ldb, 0, 0, 6),       // 11: A = next header
        insn(jeq, 0, 5, 6),       // 12: TCP → 13, else drop
        insn(ldh, 0, 0, 40),      // 13: A = source port
        insn(jeq, 2, 0, p),       // 14: → accept
        insn(ldh, 0, 0, 42),      // 15: A = destination port
        insn(jeq, 0, 1, p),       // 16: → accept, else drop
        insn(ret, 0, 0, 262_144), // 17: accept
        insn(ret, 0, 0, 0),       // 18: drop
    ];
    let to_drop = u8::try_from(body.len() - 1).unwrap_or(0);
    let mut program = vec![
        insn(ldb, 0, 0, SKF_AD_PKTTYPE),                   // A = skb->pkt_type
        insn(jeq, 0, 2, u32::from(PACKET_OUTGOING)),       // sent → 2, else → the body
        insn(ldh, 0, 0, SKF_AD_HATYPE),                    // A = the device's type
        insn(jeq, to_drop, 0, u32::from(ARPHRD_LOOPBACK)), // loopback → the final drop
    ];
    program.extend_from_slice(&body);
    program
}

/// One captured packet, borrowed from the ring.
#[derive(Debug, Clone, Copy)]
pub struct Packet<'a> {
    /// When the kernel took it, ns since 1970.
    pub unix_ns: u64,
    /// Its length on the device.
    pub original_len: u32,
    /// Its first bytes, from the IP header.
    pub data: &'a [u8],
}

/// What the kernel counted so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Packets that passed the filter (delivered and dropped).
    pub packets: u64,
    /// Packets the ring had no room for.
    pub drops: u64,
}

/// A capture socket with its ring.
#[derive(Debug)]
pub struct Capture {
    fd: OwnedFd,
    ring: *mut u8,
    ring_len: usize,
    frames: usize,
    next: usize,
    stats: Stats,
}

// SAFETY: the ring is owned by this value alone (mapped in `open`, unmapped in Drop) and
// only read or written through `&mut self`.
unsafe impl Send for Capture {}

impl Capture {
    /// Captures TCP to or from `port` on `device` (`None`: every device of this namespace).
    pub fn open(port: u16, device: Option<&str>) -> Result<Capture, Error> {
        let ifindex = device.map(device_index).transpose()?.unwrap_or(0);
        // SAFETY: socket(2) with constant arguments; the fd is owned at once.
        let raw = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        if raw < 0 {
            return Err(sys("socket(AF_PACKET)"));
        }
        // SAFETY: `raw` is a fresh descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        set(&fd, SOL_PACKET, PACKET_VERSION, &TPACKET_V2, "PACKET_VERSION")?;
        let req = TpacketReq {
            block_size: BLOCK_BYTES,
            block_nr: BLOCKS,
            frame_size: FRAME_BYTES,
            frame_nr: ring_frames(),
        };
        set(&fd, SOL_PACKET, PACKET_RX_RING, &req, "PACKET_RX_RING")?;
        let ring_len = (BLOCK_BYTES * BLOCKS) as usize;
        // SAFETY: mmap(2) of the ring the kernel just made for this socket; checked below.
        let ring = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                ring_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if ring == libc::MAP_FAILED {
            return Err(sys("mapping the ring"));
        }
        let cap = Capture {
            fd,
            ring: ring.cast(),
            ring_len,
            frames: ring_frames() as usize,
            next: 0,
            stats: Stats::default(),
        };
        let program = port_filter(port);
        let prog = Fprog { len: program.len() as u16, filter: program.as_ptr() };
        set(&cap.fd, libc::SOL_SOCKET, SO_ATTACH_FILTER, &prog, "SO_ATTACH_FILTER")?;
        cap.bind(ifindex)?;
        Ok(cap)
    }

    fn bind(&self, ifindex: u32) -> Result<(), Error> {
        // SAFETY: sockaddr_ll is plain data; all-zero is a valid value.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = ETH_P_ALL.to_be();
        sll.sll_ifindex = i32::try_from(ifindex).unwrap_or(0);
        let len = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
        // SAFETY: bind(2) with a sockaddr_ll that outlives the call and its true length.
        let rc = unsafe { libc::bind(self.fd.as_raw_fd(), (&raw const sll).cast(), len) };
        if rc < 0 {
            return Err(sys("bind"));
        }
        Ok(())
    }

    /// Hands every packet in the ring to `f`, waiting up to `timeout_ms` for the first;
    /// returns how many.
    pub fn poll(&mut self, timeout_ms: i32, f: &mut dyn FnMut(Packet<'_>)) -> Result<usize, Error> {
        let n = self.drain(f);
        if n > 0 || !self.wait(timeout_ms)? {
            return Ok(n);
        }
        Ok(self.drain(f))
    }

    /// Hands every packet in the ring to `f` without waiting; returns how many. A reader
    /// that drains now and then (rather than polling) costs no wake-up per packet.
    pub fn drain(&mut self, f: &mut dyn FnMut(Packet<'_>)) -> usize {
        let mut n = 0;
        // At most one pass over the ring: a reader never spins while the kernel fills it.
        while n < self.frames {
            let frame = self.frame(self.next);
            // SAFETY: `frame` points at a whole frame header inside the mapped ring.
            let status = unsafe { std::ptr::read_volatile(&raw const (*frame).status) };
            if status & TP_STATUS_USER == 0 {
                break;
            }
            fence(Ordering::Acquire);
            // SAFETY: the kernel handed this frame over (TP_STATUS_USER); it is ours to read.
            let h = unsafe { &*frame };
            let start = usize::from(h.net);
            let kept = (h.snaplen as usize).min((FRAME_BYTES as usize).saturating_sub(start));
            // SAFETY: `start + kept` stays inside this frame (checked against FRAME_BYTES).
            let data = unsafe { std::slice::from_raw_parts(frame.cast::<u8>().add(start), kept) };
            let unix_ns = u64::from(h.sec) * 1_000_000_000 + u64::from(h.nsec);
            // SAFETY: the kernel writes a sockaddr_ll at SLL_OFFSET of every V2 frame.
            let sll = unsafe {
                std::ptr::read_unaligned(frame.cast::<u8>().add(SLL_OFFSET).cast::<libc::sockaddr_ll>())
            };
            if !(sll.sll_pkttype == PACKET_OUTGOING && sll.sll_hatype == ARPHRD_LOOPBACK) {
                f(Packet { unix_ns, original_len: h.len, data });
            }
            fence(Ordering::Release);
            // SAFETY: as above; writing 0 (TP_STATUS_KERNEL) gives the frame back.
            unsafe { std::ptr::write_volatile(&raw mut (*frame).status, 0) };
            self.next = (self.next + 1) % self.frames;
            n += 1;
        }
        n
    }

    fn frame(&self, i: usize) -> *mut Tpacket2Hdr {
        // SAFETY: i < frames, and frames × FRAME_BYTES = ring_len (blocks hold whole frames).
        unsafe { self.ring.add(i * FRAME_BYTES as usize).cast() }
    }

    /// Waits for the socket to be readable; false on timeout.
    fn wait(&self, timeout_ms: i32) -> Result<bool, Error> {
        let mut p =
            libc::pollfd { fd: self.fd.as_raw_fd(), events: libc::POLLIN | libc::POLLERR, revents: 0 };
        // SAFETY: poll(2) on one pollfd that outlives the call.
        let rc = unsafe { libc::poll(&raw mut p, 1, timeout_ms) };
        match rc {
            0 => Ok(false),
            r if r > 0 => Ok(true),
            _ if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => Ok(false),
            _ => Err(sys("poll")),
        }
    }

    /// The kernel's counts so far (it resets them on each read; they are summed here).
    pub fn stats(&mut self) -> Result<Stats, Error> {
        let mut s = TpacketStats::default();
        let mut len = std::mem::size_of::<TpacketStats>() as libc::socklen_t;
        // SAFETY: getsockopt(2) into a tpacket_stats that outlives the call, with its size.
        let rc = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                SOL_PACKET,
                PACKET_STATISTICS,
                (&raw mut s).cast(),
                &raw mut len,
            )
        };
        if rc < 0 {
            return Err(sys("PACKET_STATISTICS"));
        }
        self.stats.packets += u64::from(s.packets);
        self.stats.drops += u64::from(s.drops);
        Ok(self.stats)
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `open`; nothing borrows it any more.
        unsafe { libc::munmap(self.ring.cast(), self.ring_len) };
    }
}

const fn ring_frames() -> u32 {
    BLOCK_BYTES / FRAME_BYTES * BLOCKS
}

fn set<T>(
    fd: &OwnedFd,
    level: libc::c_int,
    name: libc::c_int,
    v: &T,
    step: &'static str,
) -> Result<(), Error> {
    let len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: setsockopt(2) with a value that outlives the call and its size.
    let rc = unsafe { libc::setsockopt(fd.as_raw_fd(), level, name, (v as *const T).cast(), len) };
    if rc < 0 {
        return Err(Error::Sys { step, source: std::io::Error::last_os_error() });
    }
    Ok(())
}

fn device_index(name: &str) -> Result<u32, Error> {
    let c = std::ffi::CString::new(name).map_err(|_| Error::NoDevice(name.into()))?;
    // SAFETY: if_nametoindex(3) with a NUL-terminated string that outlives the call.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if i == 0 {
        return Err(Error::NoDevice(name.into()));
    }
    Ok(i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn every_jump_lands_inside_the_program() {
        let p = port_filter(5201);
        jumps_land_inside(&p);
        assert_eq!(p[p.len() - 2].code, 0x06);
        assert_eq!(p[p.len() - 1].k, 0);
        assert_eq!(3 + 1 + usize::from(p[3].jt), p.len() - 1, "a loopback's sent copy jumps to the drop");
        assert_eq!(1 + 1 + usize::from(p[1].jf), 4, "a received packet goes to the body");
    }

    fn jumps_land_inside(p: &[Insn]) {
        for (i, ins) in p.iter().enumerate() {
            if ins.code == 0x15 {
                assert!(
                    i + 1 + usize::from(ins.jt) < p.len() && i + 1 + usize::from(ins.jf) < p.len(),
                    "{i}"
                );
            }
        }
    }

    /// Root only: a loopback connection on the filtered port is captured, another is not.
    #[test]
    fn loopback_segments_of_the_port_are_captured() {
        if !crate::netns::is_root() {
            eprintln!("skipped: AF_PACKET capture needs root");
            return;
        }
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
        let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
        let port = listener.local_addr().map(|a| a.port()).unwrap_or_default();
        // On `lo` and on every device: the same packets, each once.
        let mut caps = [Some("lo"), None].map(|d| Capture::open(port, d).unwrap_or_else(|e| panic!("{e}")));
        for l in [&listener, &other] {
            let addr = l.local_addr().unwrap_or_else(|e| panic!("{e}"));
            let mut c = std::net::TcpStream::connect(addr).unwrap_or_else(|e| panic!("{e}"));
            let (mut s, _) = l.accept().unwrap_or_else(|e| panic!("{e}"));
            c.write_all(&[7u8; 3000]).unwrap_or_else(|e| panic!("{e}"));
            let mut buf = [0u8; 3000];
            s.read_exact(&mut buf).unwrap_or_else(|e| panic!("{e}"));
        }
        for cap in &mut caps {
            let mut seen: Vec<(u16, u16, u32)> = Vec::new();
            for _ in 0..20 {
                cap.poll(20, &mut |p| {
                    let sport = u16::from_be_bytes([p.data[20], p.data[21]]);
                    let dport = u16::from_be_bytes([p.data[22], p.data[23]]);
                    seen.push((sport, dport, p.original_len));
                })
                .unwrap_or_else(|e| panic!("{e}"));
            }
            assert!(seen.len() >= 3, "handshake and data: {seen:?}");
            assert!(seen.iter().all(|(s, d, _)| *s == port || *d == port), "{seen:?}");
            assert!(seen.iter().any(|(_, d, len)| *d == port && *len > 3000), "{seen:?}");
            let st = cap.stats().unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(st.drops, 0);
            // The filter dropped the sent copies in the kernel: every packet that passed it
            // was handed over, none twice.
            assert_eq!(st.packets, seen.len() as u64, "{seen:?}");
        }
    }
}
