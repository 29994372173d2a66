//! What the path carried, as the kernel counts it: the packet and byte counters of the network
//! interface a socket's traffic uses (`/proc/thread-self/net/dev`) and the namespace's UDP
//! counters (`/proc/thread-self/net/snmp`, `Udp:` rows).
//!
//! These count *packets as the interface handled them* (skbs), not datagrams: a UDP GSO send of
//! 40 datagrams crosses loopback as one skb and is counted once (docs/udp.md). They also count
//! every other program's traffic on that interface, so a delta over a window is "this test and
//! whatever else ran then". The files are read through `thread-self`, so a thread that entered
//! another network namespace reads that namespace's counters (`/sys/class/net` would show the
//! namespace sysfs was mounted in).
//!
//! The interface is found by address ([`route_interface`]): the loopback device when the peer
//! is this host (Linux delivers local traffic over it, whatever address is used), else the
//! interface that holds the socket's local address — the source address the kernel picked for
//! the route, so normally the egress device (policy routing that sends traffic out of a
//! different device than the one holding its source address is not seen).

use std::io;
use std::net::{IpAddr, SocketAddr};

/// Counters of one interface (`/proc/net/dev`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IfCounters {
    /// Packets received.
    pub rx_packets: u64,
    /// Bytes received (network-layer headers included).
    pub rx_bytes: u64,
    /// Packets transmitted.
    pub tx_packets: u64,
    /// Bytes transmitted.
    pub tx_bytes: u64,
}

/// The namespace's UDP counters (`/proc/net/snmp`, `Udp:`; UDP-Lite not included).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UdpMib {
    /// `InDatagrams`: skbs delivered to UDP sockets (a GRO-coalesced train counts once).
    pub in_datagrams: u64,
    /// `OutDatagrams`: skbs sent by UDP sockets (a GSO send counts once).
    pub out_datagrams: u64,
    /// `InErrors`: receive errors, receive-buffer drops included.
    pub in_errors: u64,
    /// `RcvbufErrors`: skbs dropped because a socket's receive buffer was full.
    pub receive_buffer_errors: u64,
}

/// Both at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PathSnapshot {
    /// The interface's counters.
    pub interface: IfCounters,
    /// The namespace's UDP counters, when `/proc/net/snmp` could be read.
    pub udp: Option<UdpMib>,
}

/// One address of one interface of this host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IfAddress {
    /// Interface name.
    pub interface: String,
    /// The address.
    pub ip: IpAddr,
    /// The interface is a loopback device (`IFF_LOOPBACK`).
    pub loopback: bool,
}

/// Parses one interface's line of `/proc/net/dev`; `None` if it is not there or malformed.
pub fn parse_net_dev(text: &str, interface: &str) -> Option<IfCounters> {
    let line = text.lines().find_map(|l| {
        let (name, rest) = l.split_once(':')?;
        (name.trim() == interface).then_some(rest)
    })?;
    let v: Vec<u64> = line.split_ascii_whitespace().map(|w| w.parse().ok()).collect::<Option<_>>()?;
    // rx: bytes packets errs drop fifo frame compressed multicast; tx: bytes packets ...
    if v.len() < 16 {
        return None;
    }
    Some(IfCounters { rx_bytes: v[0], rx_packets: v[1], tx_bytes: v[8], tx_packets: v[9] })
}

/// Parses the `Udp:` header and value rows of `/proc/net/snmp`.
pub fn parse_snmp_udp(text: &str) -> Option<UdpMib> {
    let mut rows = text.lines().filter_map(|l| l.strip_prefix("Udp:"));
    let names: Vec<&str> = rows.next()?.split_ascii_whitespace().collect();
    let values: Vec<&str> = rows.next()?.split_ascii_whitespace().collect();
    if names.len() != values.len() {
        return None;
    }
    let get = |want: &str| -> Option<u64> {
        let i = names.iter().position(|n| *n == want)?;
        values.get(i)?.parse().ok()
    };
    Some(UdpMib {
        in_datagrams: get("InDatagrams")?,
        out_datagrams: get("OutDatagrams")?,
        in_errors: get("InErrors")?,
        receive_buffer_errors: get("RcvbufErrors")?,
    })
}

/// Reads `interface`'s counters and the UDP counters of the calling thread's namespace now.
pub fn snapshot(interface: &str) -> io::Result<PathSnapshot> {
    let dev = std::fs::read_to_string("/proc/thread-self/net/dev")?;
    let counters = parse_net_dev(&dev, interface).ok_or_else(|| {
        io::Error::new(io::ErrorKind::NotFound, format!("interface {interface} not in /proc/net/dev"))
    })?;
    let udp = std::fs::read_to_string("/proc/thread-self/net/snmp").ok().and_then(|t| parse_snmp_udp(&t));
    Ok(PathSnapshot { interface: counters, udp })
}

/// The interface a connected socket's traffic to `peer` uses, from this host's addresses: the
/// loopback device when `peer` is one of them (or a loopback address), else the interface that
/// holds `local`.
pub fn route_interface(addrs: &[IfAddress], local: IpAddr, peer: IpAddr) -> Option<String> {
    let (local, peer) = (local.to_canonical(), peer.to_canonical());
    let peer_is_here = peer.is_loopback() || addrs.iter().any(|a| a.ip == peer);
    let pick = |a: &&IfAddress| if peer_is_here { a.loopback } else { a.ip == local };
    addrs.iter().find(pick).map(|a| a.interface.clone())
}

/// [`route_interface`] for a socket's local address and its peer, with this host's addresses.
pub fn interface_of(local: SocketAddr, peer: SocketAddr) -> io::Result<String> {
    let addrs = addresses()?;
    route_interface(&addrs, local.ip(), peer.ip()).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!("no interface holds {} (peer {})", local.ip(), peer.ip()),
        )
    })
}

/// This host's interface addresses (IPv4 and IPv6) in the calling thread's namespace
/// (`getifaddrs`).
pub fn addresses() -> io::Result<Vec<IfAddress>> {
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs writes a list head into `head`; freed below with freeifaddrs.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let mut out = Vec::new();
    let mut cur = head;
    while !cur.is_null() {
        // SAFETY: `cur` is a node of the list getifaddrs returned, not yet freed.
        let node = unsafe { &*cur };
        if let Some(a) = address_of(node) {
            out.push(a);
        }
        cur = node.ifa_next;
    }
    // SAFETY: `head` came from getifaddrs and is freed once; no reference into it survives.
    unsafe { libc::freeifaddrs(head) };
    Ok(out)
}

fn address_of(node: &libc::ifaddrs) -> Option<IfAddress> {
    if node.ifa_addr.is_null() || node.ifa_name.is_null() {
        return None;
    }
    // SAFETY: ifa_name is a NUL-terminated string owned by the list.
    let name = unsafe { std::ffi::CStr::from_ptr(node.ifa_name) }.to_string_lossy().into_owned();
    // SAFETY: ifa_addr points to a sockaddr whose family says how long it is.
    let family = i32::from(unsafe { (*node.ifa_addr).sa_family });
    let ip = match family {
        libc::AF_INET => {
            // SAFETY: an AF_INET address is a sockaddr_in.
            let sin = unsafe { std::ptr::read_unaligned(node.ifa_addr.cast::<libc::sockaddr_in>()) };
            IpAddr::from(u32::from_be(sin.sin_addr.s_addr).to_be_bytes())
        }
        libc::AF_INET6 => {
            // SAFETY: an AF_INET6 address is a sockaddr_in6.
            let sin6 = unsafe { std::ptr::read_unaligned(node.ifa_addr.cast::<libc::sockaddr_in6>()) };
            IpAddr::from(sin6.sin6_addr.s6_addr)
        }
        _ => return None,
    };
    let loopback = node.ifa_flags & libc::IFF_LOOPBACK as libc::c_uint != 0;
    Some(IfAddress { interface: name, ip, loopback })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NET_DEV: &str = "Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 40028000    1000    0    0    0     0          0         0 40028000    1000    0    0    0     0       0          0
  eth0:123456789012 98765    1    2    0     0          0         5 555 44    0    0    0     0       0          0
";

    const SNMP: &str = "Ip: Forwarding DefaultTTL
Ip: 1 64
Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors
Udp: 205 3 795 1000 795 0 0 0 0
UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors
UdpLite: 9 9 9 9 9 9 9 9 9
";

    #[test]
    fn net_dev_lines_are_read_by_name_even_when_the_number_touches_the_colon() {
        let lo = parse_net_dev(NET_DEV, "lo").unwrap();
        assert_eq!(
            lo,
            IfCounters { rx_packets: 1000, rx_bytes: 40_028_000, tx_packets: 1000, tx_bytes: 40_028_000 }
        );
        let eth = parse_net_dev(NET_DEV, "eth0").unwrap();
        assert_eq!(
            (eth.rx_bytes, eth.rx_packets, eth.tx_bytes, eth.tx_packets),
            (123_456_789_012, 98_765, 555, 44)
        );
        assert_eq!(parse_net_dev(NET_DEV, "eth"), None);
        assert_eq!(parse_net_dev("  lo: 1 2 3\n", "lo"), None, "too few columns");
        assert_eq!(parse_net_dev("  lo: 1 2 x 4 5 6 7 8 9 10 11 12 13 14 15 16\n", "lo"), None);
    }

    #[test]
    fn snmp_udp_row_is_read_by_column_name_and_udplite_is_not_taken() {
        let m = parse_snmp_udp(SNMP).unwrap();
        assert_eq!(
            m,
            UdpMib { in_datagrams: 205, out_datagrams: 1000, in_errors: 795, receive_buffer_errors: 795 }
        );
        assert_eq!(parse_snmp_udp("Udp: InDatagrams OutDatagrams\nUdp: 1\n"), None, "ragged rows");
        assert_eq!(parse_snmp_udp("Ip: 1 2\n"), None);
    }

    fn addr(interface: &str, ip: &str, loopback: bool) -> IfAddress {
        IfAddress { interface: interface.into(), ip: ip.parse().unwrap(), loopback }
    }

    #[test]
    fn local_peers_go_over_loopback_and_remote_ones_over_the_interface_holding_the_source() {
        let addrs =
            [addr("lo", "127.0.0.1", true), addr("lo", "::1", true), addr("eth0", "192.0.2.2", false)];
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(route_interface(&addrs, ip("127.0.0.1"), ip("127.0.0.1")).as_deref(), Some("lo"));
        assert_eq!(route_interface(&addrs, ip("::1"), ip("::1")).as_deref(), Some("lo"));
        // Talking to this host's own Ethernet address still goes over loopback.
        assert_eq!(route_interface(&addrs, ip("192.0.2.2"), ip("192.0.2.2")).as_deref(), Some("lo"));
        assert_eq!(route_interface(&addrs, ip("192.0.2.2"), ip("192.0.2.9")).as_deref(), Some("eth0"));
        // A dual-stack socket shows IPv4 as IPv4-mapped IPv6.
        assert_eq!(
            route_interface(&addrs, ip("::ffff:192.0.2.2"), ip("::ffff:192.0.2.9")).as_deref(),
            Some("eth0")
        );
        assert_eq!(route_interface(&addrs, ip("10.0.0.1"), ip("10.0.0.2")), None);
    }

    #[test]
    fn this_host_has_a_loopback_address_and_its_counters_read() {
        let addrs = addresses().unwrap();
        let lo = addrs.iter().find(|a| a.ip == IpAddr::from([127, 0, 0, 1])).unwrap();
        assert!(lo.loopback, "{addrs:?}");
        let local: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let name = interface_of(local, local).unwrap();
        assert_eq!(name, lo.interface);
        let s = snapshot(&name).unwrap();
        assert!(s.udp.is_some());
        assert!(snapshot("no-such-interface").is_err());
    }

    /// The experiment behind docs/udp.md "What a count counts": in a fresh namespace (its
    /// loopback carries nothing else), 50 GSO sends of 40 datagrams each, read without and
    /// with UDP GRO on the receiving socket.
    #[test]
    fn loopback_counts_a_gso_send_as_one_packet() {
        if !crate::netns::is_root() {
            eprintln!("skipped: a fresh network namespace needs root");
            return;
        }
        let up = crate::netlink::LinkSettings { up: Some(true), ..Default::default() };
        let (ns, ()) = crate::NetNs::create(|| crate::netlink::set_link("lo", &up)).unwrap();
        for gro in [false, true] {
            let (before, after, received) = ns.run(|| gso_over_loopback(gro)).unwrap();
            let (lo, udp) = (after.interface, after.udp.unwrap());
            let (lo0, udp0) = (before.interface, before.udp.unwrap());
            assert_eq!(received, 50 * 40 * 100, "every datagram arrived (gro {gro})");
            assert_eq!(lo.tx_packets - lo0.tx_packets, 50, "one skb per GSO send, not one per datagram");
            assert_eq!(lo.rx_packets - lo0.rx_packets, 50);
            assert_eq!(lo.tx_bytes - lo0.tx_bytes, 50 * (40 * 100 + 28), "one IPv4 + UDP header per skb");
            assert_eq!(udp.out_datagrams - udp0.out_datagrams, 50, "OutDatagrams counts skbs too");
            // Without UDP_GRO the kernel splits the train at the socket; with it, the train is
            // delivered (and counted) whole.
            let delivered = if gro { 50 } else { 50 * 40 };
            assert_eq!(udp.in_datagrams - udp0.in_datagrams, delivered, "gro {gro}");
        }
    }

    fn gso_over_loopback(gro: bool) -> (PathSnapshot, PathSnapshot, usize) {
        use std::net::UdpSocket;
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        tx.connect(rx.local_addr().unwrap()).unwrap();
        rx.set_read_timeout(Some(std::time::Duration::from_secs(2))).unwrap();
        if gro {
            crate::udp::enable_gro(&rx).unwrap();
        }
        crate::udp::set_gso(&tx, 100).unwrap();
        let train = [7u8; 40 * 100];
        let mut buf = [0u8; 65_536];
        let before = snapshot("lo").unwrap();
        let mut received = 0;
        for _ in 0..50 {
            assert_eq!(tx.send(&train).unwrap(), train.len());
            let mut left = train.len();
            while left > 0 {
                let n = rx.recv(&mut buf).unwrap();
                left -= n;
                received += n;
            }
        }
        (before, snapshot("lo").unwrap(), received)
    }
}
