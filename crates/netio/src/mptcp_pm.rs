//! The in-kernel MPTCP path manager, configured over generic netlink (family `mptcp_pm`, what
//! `ip mptcp limits` and `ip mptcp endpoint add` do, without iproute2), in the calling
//! thread's network namespace.
//!
//! The messages are small and fixed, so they are written here byte by byte (netlink header,
//! generic-netlink header, attributes) and sent on a blocking `NETLINK_GENERIC` socket; each
//! request asks for an acknowledgement, so a refusal comes back as the kernel's errno.

use std::io;
use std::net::Ipv4Addr;

use netlink_sys::{protocols::NETLINK_GENERIC, Socket, SocketAddr};

/// The generic-netlink controller (`GENL_ID_CTRL`).
const GENL_ID_CTRL: u16 = 0x10;
const CTRL_CMD_GETFAMILY: u8 = 3;
const CTRL_ATTR_FAMILY_ID: u16 = 1;
const CTRL_ATTR_FAMILY_NAME: u16 = 2;
const MPTCP_PM_NAME: &str = "mptcp_pm";
const MPTCP_PM_VER: u8 = 1;
const CMD_ADD_ADDR: u8 = 1;
const CMD_FLUSH_ADDRS: u8 = 4;
const CMD_SET_LIMITS: u8 = 5;
const CMD_GET_LIMITS: u8 = 6;
const ATTR_ADDR: u16 = 1;
const ATTR_RCV_ADD_ADDRS: u16 = 2;
const ATTR_SUBFLOWS: u16 = 3;
const ADDR_ATTR_FAMILY: u16 = 1;
const ADDR_ATTR_ID: u16 = 2;
const ADDR_ATTR_ADDR4: u16 = 3;
const ADDR_ATTR_FLAGS: u16 = 6;
const ADDR_ATTR_IF_IDX: u16 = 7;
const NLA_F_NESTED: u16 = 1 << 15;
const NLA_TYPE_MASK: u16 = 0x3fff;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const NLM_F_REQUEST: u16 = 1;
const NLM_F_ACK: u16 = 4;
const NLMSG_HDR: usize = 16;
const GENL_HDR: usize = 4;
const SEQ: u32 = 1;
const RECV_BYTES: usize = 16 * 1024;
/// Datagrams read before giving up on an acknowledgement.
const MAX_REPLIES: usize = 64;

/// The path manager's limits in one namespace (`ip mptcp limits`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Additional subflows per connection (the kernel allows 0 to 8).
    pub subflows: u32,
    /// ADD_ADDR announcements accepted from a peer per connection (0 to 8).
    pub add_addr_accepted: u32,
}

/// What an endpoint is used for (`MPTCP_PM_ADDR_FLAG_*`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EndpointFlags {
    /// Announce this address to the peer (ADD_ADDR): the server side's extra addresses.
    pub signal: bool,
    /// Open a subflow from this address: the client side's extra addresses.
    pub subflow: bool,
    /// Subflows on it are backups, used only when the others fail.
    pub backup: bool,
}

impl EndpointFlags {
    fn bits(self) -> u32 {
        u32::from(self.signal) | u32::from(self.subflow) << 1 | u32::from(self.backup) << 2
    }
}

/// A local address the path manager may use (`ip mptcp endpoint add ADDR id ID [dev DEV] FLAGS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoint {
    /// The address (one of this namespace's).
    pub addr: Ipv4Addr,
    /// Its id, 1 to 255 (0 is the initial subflow's).
    pub id: u8,
    /// What it is for.
    pub flags: EndpointFlags,
    /// Bind its subflows to this interface index.
    pub ifindex: Option<u32>,
}

/// Sets this namespace's limits.
pub fn set_limits(limits: Limits) -> io::Result<()> {
    let mut attrs = Vec::new();
    attr(&mut attrs, ATTR_RCV_ADD_ADDRS, &limits.add_addr_accepted.to_ne_bytes());
    attr(&mut attrs, ATTR_SUBFLOWS, &limits.subflows.to_ne_bytes());
    pm_request(CMD_SET_LIMITS, &attrs)
        .map(drop)
        .map_err(|e| io::Error::new(e.kind(), format!("setting MPTCP limits {limits:?}: {e}")))
}

/// This namespace's limits.
pub fn limits() -> io::Result<Limits> {
    let answers = pm_request(CMD_GET_LIMITS, &[])?;
    let mut out = Limits { subflows: 0, add_addr_accepted: 0 };
    for (kind, value) in answers.iter().flat_map(|a| parse_attrs(a)) {
        let Ok(v) = <[u8; 4]>::try_from(value) else { continue };
        match kind {
            ATTR_SUBFLOWS => out.subflows = u32::from_ne_bytes(v),
            ATTR_RCV_ADD_ADDRS => out.add_addr_accepted = u32::from_ne_bytes(v),
            _ => {}
        }
    }
    Ok(out)
}

/// Adds an endpoint.
pub fn add_endpoint(endpoint: &Endpoint) -> io::Result<()> {
    let mut addr = Vec::new();
    attr(&mut addr, ADDR_ATTR_FAMILY, &(libc::AF_INET as u16).to_ne_bytes());
    attr(&mut addr, ADDR_ATTR_ID, &[endpoint.id]);
    attr(&mut addr, ADDR_ATTR_ADDR4, &endpoint.addr.octets());
    attr(&mut addr, ADDR_ATTR_FLAGS, &endpoint.flags.bits().to_ne_bytes());
    if let Some(index) = endpoint.ifindex {
        attr(&mut addr, ADDR_ATTR_IF_IDX, &index.to_ne_bytes());
    }
    let mut attrs = Vec::new();
    attr(&mut attrs, ATTR_ADDR | NLA_F_NESTED, &addr);
    pm_request(CMD_ADD_ADDR, &attrs)
        .map(drop)
        .map_err(|e| io::Error::new(e.kind(), format!("adding MPTCP endpoint {endpoint:?}: {e}")))
}

/// Removes every endpoint of this namespace.
pub fn flush_endpoints() -> io::Result<()> {
    pm_request(CMD_FLUSH_ADDRS, &[]).map(drop)
}

/// Sends `cmd` to the `mptcp_pm` family; returns the attributes of each answer.
fn pm_request(cmd: u8, attrs: &[u8]) -> io::Result<Vec<Vec<u8>>> {
    let family = family_id(MPTCP_PM_NAME)?;
    request(family, cmd, MPTCP_PM_VER, attrs)
}

/// The id of generic-netlink family `name` (absent: the kernel has no MPTCP).
fn family_id(name: &str) -> io::Result<u16> {
    let mut attrs = Vec::new();
    let mut cname = name.as_bytes().to_vec();
    cname.push(0);
    attr(&mut attrs, CTRL_ATTR_FAMILY_NAME, &cname);
    let answers = request(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, &attrs)
        .map_err(|e| io::Error::new(e.kind(), format!("generic netlink family {name}: {e}")))?;
    answers
        .iter()
        .flat_map(|a| parse_attrs(a))
        .find_map(|(kind, v)| (kind == CTRL_ATTR_FAMILY_ID).then(|| <[u8; 2]>::try_from(v).ok()).flatten())
        .map(u16::from_ne_bytes)
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("no generic netlink family {name}")))
}

/// Appends one attribute (header, payload, padding to 4 bytes).
fn attr(buf: &mut Vec<u8>, kind: u16, payload: &[u8]) {
    let len = u16::try_from(4 + payload.len()).unwrap_or(u16::MAX);
    buf.extend_from_slice(&len.to_ne_bytes());
    buf.extend_from_slice(&kind.to_ne_bytes());
    buf.extend_from_slice(payload);
    buf.resize(buf.len().next_multiple_of(4), 0);
}

/// The attributes in `bytes` as (type, payload); a malformed tail is ignored.
fn parse_attrs(mut bytes: &[u8]) -> Vec<(u16, &[u8])> {
    let mut out = Vec::new();
    while bytes.len() >= 4 {
        let len = usize::from(u16::from_ne_bytes([bytes[0], bytes[1]]));
        let kind = u16::from_ne_bytes([bytes[2], bytes[3]]) & NLA_TYPE_MASK;
        if len < 4 || len > bytes.len() {
            break;
        }
        out.push((kind, &bytes[4..len]));
        bytes = &bytes[len.next_multiple_of(4).min(bytes.len())..];
    }
    out
}

/// One generic-netlink request to `family`, acknowledged; the attributes of each answer.
fn request(family: u16, cmd: u8, version: u8, attrs: &[u8]) -> io::Result<Vec<Vec<u8>>> {
    let mut socket = Socket::new(NETLINK_GENERIC)?;
    socket.bind_auto()?;
    socket.connect(&SocketAddr::new(0, 0))?;
    let len = u32::try_from(NLMSG_HDR + GENL_HDR + attrs.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "netlink request too long"))?;
    let mut msg = Vec::with_capacity(len as usize);
    msg.extend_from_slice(&len.to_ne_bytes());
    msg.extend_from_slice(&family.to_ne_bytes());
    msg.extend_from_slice(&(NLM_F_REQUEST | NLM_F_ACK).to_ne_bytes());
    msg.extend_from_slice(&SEQ.to_ne_bytes());
    msg.extend_from_slice(&0u32.to_ne_bytes());
    msg.extend_from_slice(&[cmd, version, 0, 0]);
    msg.extend_from_slice(attrs);
    socket.send(&msg, 0)?;
    let mut answers = Vec::new();
    for _ in 0..MAX_REPLIES {
        let mut reply = Vec::with_capacity(RECV_BYTES);
        socket.recv(&mut reply, 0)?;
        if let Some(result) = read_reply(&reply, &mut answers) {
            return result.map(|()| answers);
        }
    }
    Err(io::Error::new(io::ErrorKind::TimedOut, "no acknowledgement from the kernel"))
}

/// Reads one datagram: answers' attributes go to `answers`; the outcome once the
/// acknowledgement (or a refusal) is there, `None` while it is still to come.
fn read_reply(mut datagram: &[u8], answers: &mut Vec<Vec<u8>>) -> Option<io::Result<()>> {
    while datagram.len() >= NLMSG_HDR {
        let len = u32::from_ne_bytes([datagram[0], datagram[1], datagram[2], datagram[3]]) as usize;
        let kind = u16::from_ne_bytes([datagram[4], datagram[5]]);
        if len < NLMSG_HDR || len > datagram.len() {
            return Some(Err(io::Error::new(io::ErrorKind::InvalidData, "truncated netlink reply")));
        }
        let body = &datagram[NLMSG_HDR..len];
        match kind {
            NLMSG_ERROR => {
                let code = body.get(..4).map_or(0, |c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]]));
                return Some(if code == 0 { Ok(()) } else { Err(io::Error::from_raw_os_error(-code)) });
            }
            NLMSG_DONE => return Some(Ok(())),
            _ => answers.push(body.get(GENL_HDR..).unwrap_or_default().to_vec()),
        }
        datagram = &datagram[len.next_multiple_of(4).min(datagram.len())..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NetNs;

    #[test]
    fn attributes_are_padded_and_read_back() {
        let mut buf = Vec::new();
        attr(&mut buf, ADDR_ATTR_ID, &[7]);
        attr(&mut buf, ADDR_ATTR_FLAGS, &3u32.to_ne_bytes());
        assert_eq!(buf.len(), 8 + 8);
        assert_eq!(
            parse_attrs(&buf),
            vec![(ADDR_ATTR_ID, &[7u8][..]), (ADDR_ATTR_FLAGS, &3u32.to_ne_bytes()[..])]
        );
        assert!(parse_attrs(&[9, 0, 1, 0]).is_empty(), "a length past the end is not read");
    }

    #[test]
    fn limits_and_endpoints_are_set_in_a_fresh_namespace() {
        if !crate::netns::is_root() {
            eprintln!("skipped: needs root");
            return;
        }
        let (_ns, result) = NetNs::create(|| {
            set_limits(Limits { subflows: 2, add_addr_accepted: 1 })?;
            let got = limits()?;
            crate::netlink::set_link(
                "lo",
                &crate::netlink::LinkSettings { up: Some(true), ..Default::default() },
            )?;
            let endpoint = Endpoint {
                addr: Ipv4Addr::LOCALHOST,
                id: 1,
                flags: EndpointFlags { signal: true, ..Default::default() },
                ifindex: None,
            };
            add_endpoint(&endpoint)?;
            let again = add_endpoint(&endpoint).map_err(|e| e.to_string());
            flush_endpoints()?;
            Ok((got, again))
        })
        .unwrap();
        assert_eq!(result.0, Limits { subflows: 2, add_addr_accepted: 1 });
        assert!(
            result.1.is_err_and(|e| e.contains("adding MPTCP endpoint")),
            "a duplicate endpoint is refused"
        );
    }
}
