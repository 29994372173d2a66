//! Goodput of a link for a stack and an application message size, with every overhead byte
//! itemised (theory.md §1.2, §2, §3).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::link::{Frame, Link};
use crate::overhead::{self, OverheadItem};
use crate::stack::{Stack, Transport};
use crate::units::out_of_range;

/// Largest message the model accepts (1 TiB), which keeps every count far from overflow.
pub const MAX_MESSAGE_BYTES: u64 = 1 << 40;

/// What one application write of `message_bytes` costs on the link when it is sent as its own
/// packets, and the goodput when such writes follow each other back to back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Goodput {
    /// Application bytes in the write.
    pub message_bytes: u64,
    /// IP packets (segments or fragments) the write becomes.
    pub packets: u64,
    /// Cells, on a cell-based link.
    pub cells: Option<u64>,
    /// Link bytes for the whole write: `message_bytes` + the items.
    pub wire_bytes: u64,
    /// Nominal line rate of the link.
    pub line_rate_bps: u64,
    /// Rate at which wire bytes are sent (149.76 Mbit/s on OC-3c).
    pub payload_rate_bps: u64,
    /// Application bytes per second × 8.
    pub goodput_bps: f64,
    /// `message_bytes / wire_bytes`: the fraction of the payload rate that is goodput.
    pub efficiency: f64,
    /// Writes per second.
    pub messages_per_s: f64,
    /// Packets per second.
    pub packets_per_s: f64,
    /// Link time of one write, in nanoseconds.
    pub wire_time_ns: f64,
    /// Every overhead byte of the write, by kind, headers first.
    pub items: Vec<OverheadItem>,
}

impl Goodput {
    /// Bytes of one overhead kind in this write (0 when absent).
    pub fn overhead_bytes(&self, kind: overhead::Overhead) -> i64 {
        overhead::bytes_of(&self.items, kind)
    }
}

/// Goodput of back-to-back writes of `message_bytes`, each sent as its own packets
/// (TCP_NODELAY or request/response; every UDP write is its own datagram):
/// `wire(M) = ⌊M/MSS⌋·wire(MSS+H) + [M mod MSS > 0]·wire((M mod MSS)+H)`.
pub fn message_goodput(link: &Link, stack: &Stack, message_bytes: u64) -> Result<Goodput> {
    link.validate()?;
    if !(1..=MAX_MESSAGE_BYTES).contains(&message_bytes) {
        return Err(out_of_range("message_bytes", message_bytes, "1 ..= 2^40"));
    }
    let packets = stack.packets(message_bytes, link.mtu_bytes())?;
    let mut tally = Tally { packets: 0, cells: None, wire_bytes: 0, items: packets.items };
    for group in &packets.groups {
        tally.add(group.count, &link.frame(group.ip_len_bytes)?)?;
    }
    Ok(tally.finish(link, message_bytes))
}

/// Goodput of full-size packets: one MSS per TCP segment (bulk transfer), or the largest
/// unfragmented UDP datagram. This is the link's limit for the stack.
pub fn max_goodput(link: &Link, stack: &Stack) -> Result<Goodput> {
    link.validate()?;
    let payload = stack.max_payload_bytes(link.mtu_bytes())?;
    message_goodput(link, stack, payload)
}

struct Tally {
    packets: u64,
    cells: Option<u64>,
    wire_bytes: u64,
    items: Vec<OverheadItem>,
}

impl Tally {
    fn add(&mut self, count: u64, frame: &Frame) -> Result<()> {
        let overflow = Error::Overflow { what: "wire bytes" };
        let wire = frame.wire_bytes.checked_mul(count).ok_or(overflow.clone())?;
        self.wire_bytes = self.wire_bytes.checked_add(wire).ok_or(overflow.clone())?;
        self.packets = self.packets.checked_add(count).ok_or(overflow.clone())?;
        if let Some(cells) = frame.cells {
            let cells = cells.checked_mul(count).ok_or(overflow.clone())?;
            let total = self.cells.unwrap_or(0).checked_add(cells).ok_or(overflow)?;
            self.cells = Some(total);
        }
        overhead::add_scaled(&mut self.items, &frame.items, count)
    }

    fn finish(self, link: &Link, message_bytes: u64) -> Goodput {
        let rate = link.payload_rate().bps_f64();
        let wire_bits = self.wire_bytes as f64 * 8.0;
        let messages_per_s = rate / wire_bits;
        Goodput {
            message_bytes,
            packets: self.packets,
            cells: self.cells,
            wire_bytes: self.wire_bytes,
            line_rate_bps: link.line_rate().0,
            payload_rate_bps: link.payload_rate().0,
            goodput_bps: messages_per_s * message_bytes as f64 * 8.0,
            efficiency: message_bytes as f64 / self.wire_bytes as f64,
            messages_per_s,
            packets_per_s: messages_per_s * self.packets as f64,
            wire_time_ns: wire_bits / rate * 1e9,
            items: self.items,
        }
    }
}

/// One point of the goodput-versus-message-size curve (theory.md §2), flat for tables and CSV.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// Application bytes per write.
    pub message_bytes: u64,
    /// Packets per write when each write is sent on its own.
    pub packets: u64,
    /// Link bytes per write when each write is sent on its own.
    pub wire_bytes: u64,
    /// Goodput when each write is its own segments (TCP_NODELAY, request/response, UDP).
    pub goodput_bps: f64,
    /// Goodput when writes are coalesced into full-size segments (bulk TCP with Nagle): the
    /// link limit, whatever the write size. Equal to `goodput_bps` for UDP.
    pub coalesced_goodput_bps: f64,
}

/// The goodput curve over `sizes` (bytes per write), in the order given.
pub fn curve(link: &Link, stack: &Stack, sizes: &[u64]) -> Result<Vec<CurvePoint>> {
    let coalesced = match stack.transport {
        Transport::Tcp { .. } => Some(max_goodput(link, stack)?.goodput_bps),
        Transport::Udp => None,
    };
    sizes
        .iter()
        .map(|&size| {
            let point = message_goodput(link, stack, size)?;
            Ok(CurvePoint {
                message_bytes: size,
                packets: point.packets,
                wire_bytes: point.wire_bytes,
                goodput_bps: point.goodput_bps,
                coalesced_goodput_bps: coalesced.unwrap_or(point.goodput_bps),
            })
        })
        .collect()
}

/// The reverse-direction load of pure ACKs while the forward direction runs at its limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AckLoad {
    /// Data segments acknowledged by one ACK (2 with delayed ACKs).
    pub segments_per_ack: u64,
    /// IP length of a pure ACK (40, or 52 with timestamps).
    pub ack_ip_bytes: u64,
    /// Link bytes of one pure ACK (84 on Ethernet, 106 = 2 cells on ATM with LLC/SNAP).
    pub ack_wire_bytes: u64,
    /// Cells of one pure ACK, on a cell-based link.
    pub ack_cells: Option<u64>,
    /// Link bytes of one full-size data segment.
    pub segment_wire_bytes: u64,
    /// ACK bits per second on the reverse link.
    pub ack_rate_bps: f64,
    /// Fraction of the reverse link's capacity the ACKs take.
    pub reverse_fraction: f64,
    /// Itemised overhead of one pure ACK on the link.
    pub ack_items: Vec<OverheadItem>,
}

/// ACK load for a TCP stack whose receiver sends one pure ACK per `segments_per_ack` full
/// segments, the same link in both directions.
pub fn ack_load(link: &Link, stack: &Stack, segments_per_ack: u64) -> Result<AckLoad> {
    if matches!(stack.transport, Transport::Udp) {
        return Err(out_of_range("transport", "udp", "tcp (UDP sends no ACKs)"));
    }
    if segments_per_ack == 0 {
        return Err(out_of_range("segments_per_ack", 0, "at least 1"));
    }
    let data = max_goodput(link, stack)?;
    let ack_ip_bytes = stack.header_bytes()?;
    let ack = link.frame(ack_ip_bytes)?;
    let acks_per_s = data.packets_per_s / segments_per_ack as f64;
    let ack_rate_bps = acks_per_s * ack.wire_bytes as f64 * 8.0;
    Ok(AckLoad {
        segments_per_ack,
        ack_ip_bytes,
        ack_wire_bytes: ack.wire_bytes,
        ack_cells: ack.cells,
        segment_wire_bytes: data.wire_bytes,
        ack_rate_bps,
        reverse_fraction: ack_rate_bps / link.payload_rate().bps_f64(),
        ack_items: ack.items,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ethernet::Ethernet;
    use crate::stack::Ip;
    use crate::units::BitRate;

    fn gigabit() -> Link {
        Link::Ethernet(Ethernet::new(BitRate::from_gbit(1)))
    }

    #[test]
    fn udp_full_datagram_at_1g() {
        let g = max_goodput(&gigabit(), &Stack::udp(Ip::V4));
        assert_eq!(g.as_ref().map(|g| g.message_bytes), Ok(1472));
        let mbit = g.map(|g| g.goodput_bps / 1e6).unwrap_or(0.0);
        assert!((mbit - 957.087).abs() < 0.001, "{mbit}");
    }

    #[test]
    fn fragmented_datagram_counts_every_fragment() {
        let g = message_goodput(&gigabit(), &Stack::udp(Ip::V4), 40_000);
        // 40,008 datagram bytes: 27 fragments of 1480 + 20, and one of 48 + 20.
        assert_eq!(g.as_ref().map(|g| g.packets), Ok(28));
        assert_eq!(g.map(|g| g.wire_bytes), Ok(27 * 1538 + 68 + 38));
    }

    #[test]
    fn refuses_bad_messages_and_udp_acks() {
        let tcp = Stack::tcp(Ip::V4, false);
        assert!(message_goodput(&gigabit(), &tcp, 0).is_err());
        assert!(message_goodput(&gigabit(), &tcp, MAX_MESSAGE_BYTES + 1).is_err());
        assert!(message_goodput(&gigabit(), &tcp, MAX_MESSAGE_BYTES).is_ok());
        assert!(message_goodput(&gigabit(), &Stack::udp(Ip::V4), 70_000).is_err());
        assert!(ack_load(&gigabit(), &Stack::udp(Ip::V4), 2).is_err());
        assert!(ack_load(&gigabit(), &tcp, 0).is_err());
    }
}
