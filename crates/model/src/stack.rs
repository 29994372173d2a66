//! Protocol stacks: IP version and transport, their headers, and how a message is cut into
//! packets (TCP segments of at most one MSS, or UDP datagrams fragmented by IP).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::overhead::{self, Overhead, OverheadItem};
use crate::units::out_of_range;

/// TCP header without options.
pub const TCP_HEADER_BYTES: u64 = 20;
/// The timestamp option as Linux sends it: NOP, NOP, kind 8 length 10.
pub const TCP_TIMESTAMPS_BYTES: u64 = 12;
/// Most option bytes a TCP header can hold.
pub const TCP_MAX_OPTION_BYTES: u64 = 40;
/// UDP header.
pub const UDP_HEADER_BYTES: u64 = 8;
/// IPv6 fragment extension header.
pub const IPV6_FRAGMENT_BYTES: u64 = 8;
/// Largest IP packet (IPv4 total length) or IPv6 payload (payload length field).
pub const MAX_IP_LENGTH_BYTES: u64 = 65_535;

/// IP version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ip {
    /// IPv4, 20-byte header without options.
    V4,
    /// IPv6, 40-byte header without extension headers.
    V6,
}

impl Ip {
    /// Header bytes per packet.
    pub fn header_bytes(self) -> u64 {
        match self {
            Self::V4 => 20,
            Self::V6 => 40,
        }
    }
}

/// Transport protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "protocol", rename_all = "kebab-case")]
pub enum Transport {
    /// TCP, with its options in every segment.
    Tcp {
        /// Whether every segment carries the 12-byte timestamp option.
        timestamps: bool,
        /// Further option bytes per segment (e.g. SACK blocks); the total is padded to a
        /// multiple of 4 and may not exceed 40.
        extra_option_bytes: u64,
    },
    /// UDP: one datagram per message, fragmented by IP when larger than the MTU.
    Udp,
}

/// IP version plus transport: the headers every packet carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Stack {
    /// IP version.
    pub ip: Ip,
    /// Transport protocol.
    pub transport: Transport,
}

/// `count` IP packets of `ip_len_bytes` each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PacketGroup {
    pub count: u64,
    pub ip_len_bytes: u64,
}

/// The packets one message becomes, with the stack's overhead in them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Packets {
    pub groups: Vec<PacketGroup>,
    pub items: Vec<OverheadItem>,
}

impl Stack {
    /// TCP over `ip`, with or without timestamps.
    pub fn tcp(ip: Ip, timestamps: bool) -> Self {
        Self { ip, transport: Transport::Tcp { timestamps, extra_option_bytes: 0 } }
    }

    /// UDP over `ip`.
    pub fn udp(ip: Ip) -> Self {
        Self { ip, transport: Transport::Udp }
    }

    /// TCP option bytes per segment, padded to a multiple of 4 (0 for UDP).
    pub fn tcp_option_bytes(&self) -> Result<u64> {
        let Transport::Tcp { timestamps, extra_option_bytes } = self.transport else {
            return Ok(0);
        };
        let ts = if timestamps { TCP_TIMESTAMPS_BYTES } else { 0 };
        let total = extra_option_bytes.saturating_add(ts).next_multiple_of(4);
        if total > TCP_MAX_OPTION_BYTES {
            return Err(out_of_range(
                "tcp_option_bytes",
                total,
                "at most 40 option bytes, timestamps included",
            ));
        }
        Ok(total)
    }

    /// Header bytes per packet (H): 40 for IPv4 + TCP, 52 with timestamps, 28 for IPv4 + UDP.
    pub fn header_bytes(&self) -> Result<u64> {
        let transport = match self.transport {
            Transport::Tcp { .. } => TCP_HEADER_BYTES + self.tcp_option_bytes()?,
            Transport::Udp => UDP_HEADER_BYTES,
        };
        Ok(self.ip.header_bytes() + transport)
    }

    /// Largest payload per packet at `mtu_bytes`: the MSS for TCP, the largest unfragmented
    /// datagram payload for UDP.
    pub fn max_payload_bytes(&self, mtu_bytes: u64) -> Result<u64> {
        let header_bytes = self.header_bytes()?;
        match mtu_bytes.checked_sub(header_bytes) {
            Some(payload) if payload > 0 => Ok(payload),
            _ => Err(Error::MtuTooSmall { mtu_bytes, header_bytes }),
        }
    }

    /// Cuts one application write of `message_bytes` into packets for `mtu_bytes`.
    pub(crate) fn packets(&self, message_bytes: u64, mtu_bytes: u64) -> Result<Packets> {
        match self.transport {
            Transport::Tcp { .. } => self.tcp_segments(message_bytes, mtu_bytes),
            Transport::Udp => self.udp_fragments(message_bytes, mtu_bytes),
        }
    }

    fn tcp_segments(&self, message_bytes: u64, mtu_bytes: u64) -> Result<Packets> {
        let mss = self.max_payload_bytes(mtu_bytes)?;
        let header = self.header_bytes()?;
        let (full, rest) = (message_bytes / mss, message_bytes % mss);
        let mut groups = Vec::new();
        if full > 0 {
            groups.push(PacketGroup { count: full, ip_len_bytes: mss + header });
        }
        if rest > 0 {
            groups.push(PacketGroup { count: 1, ip_len_bytes: rest + header });
        }
        let packets = full + u64::from(rest > 0);
        let per_packet = [
            (Overhead::IpHeader, self.ip.header_bytes()),
            (Overhead::TcpHeader, TCP_HEADER_BYTES),
            (Overhead::TcpOptions, self.tcp_option_bytes()?),
        ]
        .map(|(kind, bytes)| OverheadItem { kind, bytes: overhead::signed(bytes) });
        let mut items = Vec::new();
        overhead::add_scaled(&mut items, &per_packet, packets)?;
        Ok(Packets { groups, items })
    }

    /// Largest UDP payload of one datagram.
    pub fn max_datagram_payload_bytes(&self) -> u64 {
        let ip_header_in_limit = match self.ip {
            Ip::V4 => self.ip.header_bytes(),
            Ip::V6 => 0,
        };
        MAX_IP_LENGTH_BYTES - ip_header_in_limit - UDP_HEADER_BYTES
    }

    fn udp_fragments(&self, message_bytes: u64, mtu_bytes: u64) -> Result<Packets> {
        let max_bytes = self.max_datagram_payload_bytes();
        if message_bytes > max_bytes {
            return Err(Error::DatagramTooLarge { len_bytes: message_bytes, max_bytes });
        }
        let ip_header = self.ip.header_bytes();
        let datagram = message_bytes + UDP_HEADER_BYTES;
        let mut items =
            vec![OverheadItem { kind: Overhead::UdpHeader, bytes: overhead::signed(UDP_HEADER_BYTES) }];
        if datagram + ip_header <= mtu_bytes {
            overhead::add(&mut items, Overhead::IpHeader, overhead::signed(ip_header))?;
            let groups = vec![PacketGroup { count: 1, ip_len_bytes: datagram + ip_header }];
            return Ok(Packets { groups, items });
        }
        self.fragment(datagram, mtu_bytes, items)
    }

    /// Splits a datagram into IP fragments whose data (except the last) is a multiple of 8.
    fn fragment(&self, datagram: u64, mtu_bytes: u64, mut items: Vec<OverheadItem>) -> Result<Packets> {
        let ip_header = self.ip.header_bytes();
        let extension = match self.ip {
            Ip::V4 => 0,
            Ip::V6 => IPV6_FRAGMENT_BYTES,
        };
        let per_fragment = ip_header + extension;
        let room = mtu_bytes.saturating_sub(per_fragment) / 8 * 8;
        if room == 0 {
            return Err(Error::MtuTooSmall { mtu_bytes, header_bytes: per_fragment });
        }
        let count = datagram.div_ceil(room);
        let last = datagram - (count - 1) * room;
        let mut groups = Vec::new();
        if count > 1 {
            groups.push(PacketGroup { count: count - 1, ip_len_bytes: room + per_fragment });
        }
        groups.push(PacketGroup { count: 1, ip_len_bytes: last + per_fragment });
        overhead::add(&mut items, Overhead::IpHeader, overhead::signed(count * ip_header))?;
        let frag_headers = overhead::signed(count * extension);
        overhead::add(&mut items, Overhead::Ipv6Fragment, frag_headers)?;
        Ok(Packets { groups, items })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_bytes_per_stack() {
        assert_eq!(Stack::tcp(Ip::V4, false).header_bytes(), Ok(40));
        assert_eq!(Stack::tcp(Ip::V4, true).header_bytes(), Ok(52));
        assert_eq!(Stack::tcp(Ip::V6, true).header_bytes(), Ok(72));
        assert_eq!(Stack::udp(Ip::V4).header_bytes(), Ok(28));
    }

    #[test]
    fn options_are_padded_and_bounded() {
        let mut stack = Stack::tcp(Ip::V4, true);
        stack.transport = Transport::Tcp { timestamps: true, extra_option_bytes: 10 };
        assert_eq!(stack.tcp_option_bytes(), Ok(24));
        stack.transport = Transport::Tcp { timestamps: true, extra_option_bytes: 30 };
        assert!(stack.tcp_option_bytes().is_err());
    }

    #[test]
    fn udp_40000_bytes_over_ipv4_1500_is_28_fragments() {
        let packets = Stack::udp(Ip::V4).packets(40_000, 1500);
        let count = packets.map(|p| p.groups.iter().map(|g| g.count).sum::<u64>());
        // 40,008 datagram bytes in fragments of 1480.
        assert_eq!(count, Ok(28));
    }

    #[test]
    fn oversized_datagram_is_refused() {
        assert!(Stack::udp(Ip::V4).packets(65_508, 1500).is_err());
        assert!(Stack::udp(Ip::V4).packets(65_507, 1500).is_ok());
    }
}
