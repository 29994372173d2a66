//! Interface configuration over rtnetlink, in the calling thread's network namespace: what
//! `ip link set` and `ip addr add` do, without needing iproute2 on the host.
//!
//! Messages are built and parsed by `netlink-packet-route` and sent on a blocking
//! `NETLINK_ROUTE` socket (`netlink-sys`); every request asks for an acknowledgement, so a
//! refusal comes back as the kernel's errno, named with what was asked.

use std::ffi::CString;
use std::io;
use std::net::{IpAddr, Ipv4Addr};

use netlink_packet_core::{
    NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_ACK, NLM_F_CREATE, NLM_F_EXCL, NLM_F_REQUEST,
};
use netlink_packet_route::address::{AddressAttribute, AddressMessage};
use netlink_packet_route::link::{LinkAttribute, LinkFlags, LinkMessage};
use netlink_packet_route::{AddressFamily, RouteNetlinkMessage};
use netlink_sys::{protocols::NETLINK_ROUTE, Socket, SocketAddr};

/// Largest reply read at once; acknowledgements of these requests are far smaller.
const RECV_BYTES: usize = 16 * 1024;
/// The sequence number of every request (one request per socket).
const SEQ: u32 = 1;
/// Replies read before giving up on an acknowledgement (other messages are not expected on a
/// socket that joined no group; this bounds the loop all the same).
const MAX_REPLIES: usize = 64;

/// What to change on one interface; `None` leaves a property as it is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkSettings {
    /// MTU in bytes.
    pub mtu: Option<u32>,
    /// Transmit queue length in packets.
    pub txqueuelen: Option<u32>,
    /// Bring the interface up (`true`) or down (`false`).
    pub up: Option<bool>,
}

/// The index of interface `name` in the calling thread's namespace.
pub fn index_of(name: &str) -> io::Result<u32> {
    let c = CString::new(name)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "interface name contains a NUL byte"))?;
    // SAFETY: `c` is a valid NUL-terminated string that outlives the call.
    let index = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if index == 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("interface {name}: {e}")));
    }
    Ok(index)
}

/// Applies `settings` to interface `name` (`ip link set NAME mtu … txqueuelen … up`).
pub fn set_link(name: &str, settings: &LinkSettings) -> io::Result<()> {
    let mut msg = LinkMessage::default();
    msg.header.index = index_of(name)?;
    if let Some(up) = settings.up {
        msg.header.change_mask = LinkFlags::Up;
        msg.header.flags = if up { LinkFlags::Up } else { LinkFlags::empty() };
    }
    msg.attributes.extend(settings.mtu.map(LinkAttribute::Mtu));
    msg.attributes.extend(settings.txqueuelen.map(LinkAttribute::TxQueueLen));
    request(RouteNetlinkMessage::SetLink(msg), 0)
        .map(drop)
        .map_err(|e| io::Error::new(e.kind(), format!("setting {name} to {settings}: {e}")))
}

/// Interface `name` as the kernel reports it (`ip link show NAME`).
pub fn link_state(name: &str) -> io::Result<LinkSettings> {
    let mut msg = LinkMessage::default();
    msg.header.index = index_of(name)?;
    let answers = request(RouteNetlinkMessage::GetLink(msg), 0)
        .map_err(|e| io::Error::new(e.kind(), format!("reading the state of {name}: {e}")))?;
    let link = answers.into_iter().find_map(|m| match m {
        RouteNetlinkMessage::NewLink(l) => Some(l),
        _ => None,
    });
    let link =
        link.ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("no answer about {name}")))?;
    let mut state =
        LinkSettings { up: Some(link.header.flags.contains(LinkFlags::Up)), ..Default::default() };
    for attribute in &link.attributes {
        match attribute {
            LinkAttribute::Mtu(m) => state.mtu = Some(*m),
            LinkAttribute::TxQueueLen(q) => state.txqueuelen = Some(*q),
            _ => {}
        }
    }
    Ok(state)
}

/// Adds a point-to-point address to interface `name`: `local` here, `peer` at the other end,
/// and the kernel's route to `peer` over it (`ip addr add LOCAL peer PEER/32 dev NAME`).
pub fn add_peer_address(name: &str, local: Ipv4Addr, peer: Ipv4Addr) -> io::Result<()> {
    let mut msg = AddressMessage::default();
    msg.header.family = AddressFamily::Inet;
    msg.header.prefix_len = 32;
    msg.header.index = index_of(name)?;
    msg.attributes =
        vec![AddressAttribute::Local(IpAddr::V4(local)), AddressAttribute::Address(IpAddr::V4(peer))];
    request(RouteNetlinkMessage::NewAddress(msg), NLM_F_CREATE | NLM_F_EXCL)
        .map(drop)
        .map_err(|e| io::Error::new(e.kind(), format!("adding address {local} peer {peer} to {name}: {e}")))
}

impl std::fmt::Display for LinkSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        parts.extend(self.mtu.map(|m| format!("mtu {m}")));
        parts.extend(self.txqueuelen.map(|q| format!("txqueuelen {q}")));
        parts.extend(self.up.map(|up| if up { "up" } else { "down" }.to_string()));
        f.write_str(&parts.join(" "))
    }
}

/// Sends one request with `flags` (besides request and ack) and waits for its acknowledgement;
/// returns the messages that came before it (a `GET`'s answer).
fn request(payload: RouteNetlinkMessage, flags: u16) -> io::Result<Vec<RouteNetlinkMessage>> {
    let mut socket = Socket::new(NETLINK_ROUTE)?;
    socket.bind_auto()?;
    socket.connect(&SocketAddr::new(0, 0))?;
    let mut header = NetlinkHeader::default();
    header.flags = NLM_F_REQUEST | NLM_F_ACK | flags;
    header.sequence_number = SEQ;
    let mut msg = NetlinkMessage::new(header, NetlinkPayload::from(payload));
    msg.finalize();
    let mut buf = vec![0u8; msg.buffer_len()];
    msg.serialize(&mut buf);
    socket.send(&buf, 0)?;
    let mut answers = Vec::new();
    for _ in 0..MAX_REPLIES {
        let mut reply = Vec::with_capacity(RECV_BYTES);
        socket.recv(&mut reply, 0)?;
        if let Some(result) = read_reply(&reply, SEQ, &mut answers) {
            return result.map(|()| answers);
        }
    }
    Err(io::Error::new(io::ErrorKind::TimedOut, "no acknowledgement from the kernel"))
}

/// Reads one datagram of replies to request `seq`: answers go to `answers`; returns the
/// outcome once the acknowledgement is there (`Ok` for an ACK, the kernel's errno for a
/// refusal), `None` while it is still to come.
fn read_reply(datagram: &[u8], seq: u32, answers: &mut Vec<RouteNetlinkMessage>) -> Option<io::Result<()>> {
    let mut rest = datagram;
    while !rest.is_empty() {
        let msg = match NetlinkMessage::<RouteNetlinkMessage>::deserialize(rest) {
            Ok(m) => m,
            Err(e) => {
                return Some(Err(io::Error::new(io::ErrorKind::InvalidData, format!("netlink reply: {e}"))))
            }
        };
        let len = (msg.header.length as usize).next_multiple_of(4);
        if msg.header.sequence_number == seq {
            match msg.payload {
                NetlinkPayload::Error(e) if e.code.is_none() => return Some(Ok(())),
                NetlinkPayload::Error(e) => return Some(Err(e.to_io())),
                NetlinkPayload::InnerMessage(m) => answers.push(m),
                _ => {}
            }
        }
        if len == 0 || len > rest.len() {
            break;
        }
        rest = &rest[len..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_read_as_the_ip_command_would_say_them() {
        let s = LinkSettings { mtu: Some(9000), txqueuelen: Some(10_000), up: Some(true) };
        assert_eq!(s.to_string(), "mtu 9000 txqueuelen 10000 up");
        assert_eq!(LinkSettings { up: Some(false), ..Default::default() }.to_string(), "down");
    }

    #[test]
    fn missing_interfaces_are_named() {
        let e = index_of("tcplab-none0").unwrap_err();
        assert!(e.to_string().contains("tcplab-none0"), "{e}");
        assert!(index_of("a\0b").is_err());
        let e = set_link("tcplab-none0", &LinkSettings { up: Some(true), ..Default::default() }).unwrap_err();
        assert!(e.to_string().contains("tcplab-none0"), "{e}");
    }

    #[test]
    fn garbage_and_foreign_replies_are_not_taken_for_an_ack() {
        let mut answers = Vec::new();
        assert!(matches!(read_reply(&[1, 2, 3], 1, &mut answers), Some(Err(_))));
        assert!(read_reply(&[], 1, &mut answers).is_none());
        assert!(answers.is_empty());
    }

    /// In a fresh namespace: loopback comes up, a TUN device gets its MTU, queue and a
    /// point-to-point address with the route to the peer, and the kernel reports each back.
    #[test]
    fn a_fresh_namespace_is_configured_without_iproute2() {
        if !crate::netns::is_root() {
            eprintln!("skipped: a fresh network namespace needs root");
            return;
        }
        let settings = LinkSettings { mtu: Some(1400), txqueuelen: Some(777), up: Some(true) };
        let (local, peer) = (Ipv4Addr::new(198, 18, 9, 1), Ipv4Addr::new(198, 18, 9, 2));
        let (_ns, (lo, tun, again, addrs, routes)) = crate::NetNs::create(|| {
            let lo_before = link_state("lo")?;
            set_link("lo", &LinkSettings { up: Some(true), ..Default::default() })?;
            let tun = crate::Tun::create("tcplabnl0", false)?;
            set_link(tun.name(), &settings)?;
            add_peer_address(tun.name(), local, peer)?;
            let again = add_peer_address(tun.name(), local, peer);
            let routes = std::fs::read_to_string("/proc/thread-self/net/route")?;
            let lo = (lo_before, link_state("lo")?);
            Ok((lo, link_state(tun.name())?, again, crate::path_counters::addresses()?, routes))
        })
        .unwrap();
        assert_eq!((lo.0.up, lo.1.up), (Some(false), Some(true)), "loopback starts down, is brought up");
        assert_eq!(tun, settings);
        let e = again.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists, "{e}");
        assert!(e.to_string().contains("198.18.9.1 peer 198.18.9.2 to tcplabnl0"), "{e}");
        let has =
            |ip: [u8; 4], dev: &str| addrs.iter().any(|a| a.ip == IpAddr::from(ip) && a.interface == dev);
        assert!(has([127, 0, 0, 1], "lo"), "{addrs:?}");
        assert!(has([198, 18, 9, 1], "tcplabnl0"), "{addrs:?}");
        // The route to the peer: 198.18.9.2 as /proc/net/route's little-endian hex.
        assert!(routes.lines().any(|l| l.starts_with("tcplabnl0\t020912C6")), "{routes}");
    }
}
