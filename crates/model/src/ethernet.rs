//! Ethernet framing (theory.md §3): preamble, header, optional 802.1Q tag, FCS, gap.

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::link::Frame;
use crate::overhead::{self, Overhead, OverheadItem};
use crate::units::BitRate;

/// Preamble plus start-of-frame delimiter.
pub const PREAMBLE_BYTES: u64 = 8;
/// MAC header: destination, source, EtherType.
pub const HEADER_BYTES: u64 = 14;
/// IEEE 802.1Q tag.
pub const VLAN_TAG_BYTES: u64 = 4;
/// Frame check sequence (CRC-32).
pub const FCS_BYTES: u64 = 4;
/// Minimum inter-frame gap, in byte times.
pub const INTER_FRAME_GAP_BYTES: u64 = 12;
/// Minimum frame from header to FCS, tag included (IEEE 802.3).
pub const MIN_FRAME_BYTES: u64 = 64;
/// The standard MTU.
pub const DEFAULT_MTU_BYTES: u64 = 1500;
/// The usual jumbo-frame MTU.
pub const JUMBO_MTU_BYTES: u64 = 9000;

/// An Ethernet link: the rate is the MAC data rate, all framing bytes count against it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ethernet {
    /// MAC data rate (1 Gbit/s for 1000BASE-T).
    #[serde(rename = "rate_bps")]
    pub rate: BitRate,
    /// Largest IP packet.
    pub mtu_bytes: u64,
    /// Whether every frame carries an 802.1Q tag.
    pub vlan: bool,
}

impl Ethernet {
    /// An untagged link at `rate` with the standard 1500-byte MTU.
    pub fn new(rate: BitRate) -> Self {
        Self { rate, mtu_bytes: DEFAULT_MTU_BYTES, vlan: false }
    }

    /// Wire bytes per frame besides the IP packet, when no padding is needed (38, or 42
    /// tagged).
    pub fn overhead_bytes(&self) -> u64 {
        PREAMBLE_BYTES + HEADER_BYTES + self.tag_bytes() + FCS_BYTES + INTER_FRAME_GAP_BYTES
    }

    fn tag_bytes(&self) -> u64 {
        if self.vlan {
            VLAN_TAG_BYTES
        } else {
            0
        }
    }

    /// Frames one IP packet of `ip_len_bytes` (the caller has checked it against the MTU).
    /// Short packets are padded to the 64-byte minimum frame: a pure ACK takes 84 bytes of
    /// wire time.
    pub(crate) fn frame(&self, ip_len_bytes: u64) -> Result<Frame> {
        let min_payload = MIN_FRAME_BYTES - HEADER_BYTES - self.tag_bytes() - FCS_BYTES;
        let pad = min_payload.saturating_sub(ip_len_bytes);
        let mut items: Vec<OverheadItem> = Vec::new();
        for (kind, bytes) in [
            (Overhead::Preamble, PREAMBLE_BYTES),
            (Overhead::EthernetHeader, HEADER_BYTES),
            (Overhead::VlanTag, self.tag_bytes()),
            (Overhead::EthernetPad, pad),
            (Overhead::Fcs, FCS_BYTES),
            (Overhead::InterFrameGap, INTER_FRAME_GAP_BYTES),
        ] {
            overhead::add(&mut items, kind, overhead::signed(bytes))?;
        }
        Ok(Frame { ip_len_bytes, wire_bytes: ip_len_bytes + pad + self.overhead_bytes(), cells: None, items })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_frame_costs_mtu_plus_38_or_42() {
        let mut eth = Ethernet::new(BitRate::from_gbit(1));
        assert_eq!(eth.frame(1500).map(|f| f.wire_bytes), Ok(1538));
        eth.vlan = true;
        assert_eq!(eth.frame(1500).map(|f| f.wire_bytes), Ok(1542));
    }

    #[test]
    fn pure_ack_fills_minimum_frame() {
        let eth = Ethernet::new(BitRate::from_gbit(1));
        let ack = eth.frame(40);
        assert_eq!(ack.as_ref().map(|f| f.wire_bytes), Ok(84));
        let pad = ack.map(|f| overhead::bytes_of(&f.items, Overhead::EthernetPad));
        assert_eq!(pad, Ok(6));
    }
}
