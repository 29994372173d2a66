//! Named overhead items: the itemised bytes a renderer lists next to a goodput figure.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// One kind of overhead, from the IP header down to the physical layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Overhead {
    /// IPv4 (20 bytes) or IPv6 (40 bytes) header.
    IpHeader,
    /// IPv6 fragment extension header (8 bytes per fragment).
    Ipv6Fragment,
    /// TCP header without options (20 bytes).
    TcpHeader,
    /// TCP options, padded to a multiple of 4 bytes (timestamps: 12).
    TcpOptions,
    /// UDP header (8 bytes per datagram).
    UdpHeader,
    /// Ethernet preamble and start-of-frame delimiter (8 bytes).
    Preamble,
    /// Ethernet MAC header (14 bytes).
    EthernetHeader,
    /// IEEE 802.1Q VLAN tag (4 bytes).
    VlanTag,
    /// Padding up to the 64-byte minimum Ethernet frame.
    EthernetPad,
    /// Ethernet frame check sequence (4 bytes).
    Fcs,
    /// Ethernet inter-frame gap (12 byte times).
    InterFrameGap,
    /// RFC 2684 LLC/SNAP header (8 bytes).
    LlcSnap,
    /// LAN Emulation header: 2-byte LECID plus 14-byte Ethernet header.
    LaneHeader,
    /// AAL5 CPCS-PDU trailer (8 bytes).
    Aal5Trailer,
    /// AAL5 padding to a whole number of cells.
    Aal5Pad,
    /// AAL3/4 CPCS header and trailer (4 + 4 bytes).
    Aal34Cpcs,
    /// AAL3/4 CPCS padding to a multiple of 4 bytes.
    Aal34Pad,
    /// AAL3/4 SAR header and trailer (2 + 2 bytes per cell).
    Aal34Sar,
    /// AAL3/4 unused payload in the last cell.
    Aal34SarPad,
    /// ATM cell headers (5 bytes per cell).
    CellHeader,
    /// Raw link: fixed per-packet overhead (may be negative).
    PacketOverhead,
    /// Raw link: padding to a whole number of cells.
    CellPad,
    /// Raw link: per-cell overhead.
    CellOverhead,
}

impl Overhead {
    /// A short human label for tables.
    pub fn label(self) -> &'static str {
        match self {
            Self::IpHeader => "IP header",
            Self::Ipv6Fragment => "IPv6 fragment header",
            Self::TcpHeader => "TCP header",
            Self::TcpOptions => "TCP options",
            Self::UdpHeader => "UDP header",
            Self::Preamble => "preamble + SFD",
            Self::EthernetHeader => "Ethernet header",
            Self::VlanTag => "802.1Q tag",
            Self::EthernetPad => "Ethernet pad",
            Self::Fcs => "FCS",
            Self::InterFrameGap => "inter-frame gap",
            Self::LlcSnap => "LLC/SNAP",
            Self::LaneHeader => "LANE header",
            Self::Aal5Trailer => "AAL5 trailer",
            Self::Aal5Pad => "AAL5 pad",
            Self::Aal34Cpcs => "AAL3/4 CPCS header+trailer",
            Self::Aal34Pad => "AAL3/4 CPCS pad",
            Self::Aal34Sar => "AAL3/4 SAR header+trailer",
            Self::Aal34SarPad => "AAL3/4 last-cell pad",
            Self::CellHeader => "cell headers",
            Self::PacketOverhead => "packet overhead",
            Self::CellPad => "cell pad",
            Self::CellOverhead => "cell overhead",
        }
    }
}

/// A number of overhead bytes of one kind. Negative only for a raw link's negative
/// per-packet overhead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverheadItem {
    /// What the bytes are.
    pub kind: Overhead,
    /// How many bytes.
    pub bytes: i64,
}

/// Adds `bytes` of `kind` to `items`, merging with an item of the same kind. Zero is dropped.
pub(crate) fn add(items: &mut Vec<OverheadItem>, kind: Overhead, bytes: i64) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    match items.iter_mut().find(|item| item.kind == kind) {
        Some(item) => {
            item.bytes = item.bytes.checked_add(bytes).ok_or(Error::Overflow { what: "overhead bytes" })?;
        }
        None => items.push(OverheadItem { kind, bytes }),
    }
    Ok(())
}

/// Adds every item of `more`, multiplied by `count`, to `items`.
pub(crate) fn add_scaled(items: &mut Vec<OverheadItem>, more: &[OverheadItem], count: u64) -> Result<()> {
    let overflow = Error::Overflow { what: "overhead bytes" };
    let count = i64::try_from(count).map_err(|_| overflow.clone())?;
    for item in more {
        let bytes = item.bytes.checked_mul(count).ok_or(overflow.clone())?;
        add(items, item.kind, bytes)?;
    }
    Ok(())
}

/// A byte count as an item value (all counts in this crate are far below `i64::MAX`).
pub(crate) fn signed(bytes: u64) -> i64 {
    i64::try_from(bytes).unwrap_or(i64::MAX)
}

/// The sum of all items.
pub fn total_bytes(items: &[OverheadItem]) -> i64 {
    items.iter().fold(0i64, |sum, item| sum.saturating_add(item.bytes))
}

/// Bytes of one kind in `items`, 0 when absent.
pub fn bytes_of(items: &[OverheadItem], kind: Overhead) -> i64 {
    items.iter().filter(|item| item.kind == kind).fold(0i64, |sum, item| sum.saturating_add(item.bytes))
}
