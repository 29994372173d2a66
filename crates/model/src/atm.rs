//! ATM links (theory.md §1): physical layers, AAL5 and AAL3/4 cell arithmetic, RFC 2684
//! encapsulation, Classical IP and LAN Emulation.

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::link::Frame;
use crate::overhead::{self, Overhead, OverheadItem};
use crate::units::BitRate;

/// Payload bytes carried by one ATM cell.
pub const CELL_PAYLOAD_BYTES: u64 = 48;
/// Bytes of one ATM cell on the wire (5 header + 48 payload).
pub const CELL_BYTES: u64 = 53;
/// Header bytes of one ATM cell.
pub const CELL_HEADER_BYTES: u64 = CELL_BYTES - CELL_PAYLOAD_BYTES;
/// Bytes of the AAL5 CPCS-PDU trailer (UU, CPI, length, CRC-32).
pub const AAL5_TRAILER_BYTES: u64 = 8;
/// Payload bytes per cell under AAL3/4 (48 minus the 2-byte SAR header and 2-byte trailer).
pub const AAL34_CELL_PAYLOAD_BYTES: u64 = 44;
/// AAL3/4 SAR header plus trailer, per cell.
pub const AAL34_SAR_BYTES: u64 = CELL_PAYLOAD_BYTES - AAL34_CELL_PAYLOAD_BYTES;
/// AAL3/4 CPCS header (4) plus trailer (4).
pub const AAL34_CPCS_BYTES: u64 = 8;
/// The AAL3/4 CPCS-PDU payload is padded to a multiple of this.
pub const AAL34_ALIGN_BYTES: u64 = 4;
/// Largest CPCS-SDU (IP packet plus encapsulation) of AAL5 and AAL3/4.
pub const MAX_SDU_BYTES: u64 = 65_535;
/// Default MTU of Classical IP over ATM (RFC 2225).
pub const CLIP_MTU_BYTES: u64 = 9180;
/// MTU of 802.3 LAN Emulation (1516-byte frames).
pub const LANE_MTU_BYTES: u64 = 1500;

/// Cells needed to carry one packet of `packet_bytes` after an encapsulation header of
/// `encap_bytes` (8 for RFC 2684 LLC/SNAP, 0 for VC-mux, 16 for LANE), AAL5 trailer included.
pub fn aal5_cells(packet_bytes: u64, encap_bytes: u64) -> u64 {
    packet_bytes.saturating_add(encap_bytes).saturating_add(AAL5_TRAILER_BYTES).div_ceil(CELL_PAYLOAD_BYTES)
}

/// Bytes on the wire (cells × 53) for one packet; see [`aal5_cells`].
pub fn aal5_wire_bytes(packet_bytes: u64, encap_bytes: u64) -> u64 {
    aal5_cells(packet_bytes, encap_bytes).saturating_mul(CELL_BYTES)
}

/// Bytes of the AAL3/4 CPCS-PDU for one packet: 4-byte header, packet and encapsulation
/// padded to a multiple of 4, 4-byte trailer.
pub fn aal34_cpcs_bytes(packet_bytes: u64, encap_bytes: u64) -> u64 {
    packet_bytes
        .saturating_add(encap_bytes)
        .div_ceil(AAL34_ALIGN_BYTES)
        .saturating_mul(AAL34_ALIGN_BYTES)
        .saturating_add(AAL34_CPCS_BYTES)
}

/// Cells needed to carry one packet under AAL3/4 (44 payload bytes per cell).
pub fn aal34_cells(packet_bytes: u64, encap_bytes: u64) -> u64 {
    aal34_cpcs_bytes(packet_bytes, encap_bytes).div_ceil(AAL34_CELL_PAYLOAD_BYTES)
}

/// ATM physical layers of the project's seeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phy {
    /// SONET STS-3c / SDH STM-1: 155.52 Mbit/s line, 149.76 Mbit/s payload (260 of 270
    /// columns).
    Oc3c,
    /// SONET STS-12c / SDH STM-4c: 622.08 Mbit/s line, 599.04 Mbit/s payload (1040 of 1080
    /// columns: 36 transport overhead, 1 path overhead, 3 fixed stuff).
    Oc12c,
    /// 100 Mbit/s TAXI (4B/5B at 125 Mbaud); the nominal rate is taken as the cell rate.
    Taxi100,
    /// 140 Mbit/s TAXI (4B/5B at 175 Mbaud); the nominal rate is taken as the cell rate.
    Taxi140,
}

impl Phy {
    /// The line rate, framing included.
    pub fn line_rate(self) -> BitRate {
        match self {
            Self::Oc3c => BitRate(155_520_000),
            Self::Oc12c => BitRate(622_080_000),
            Self::Taxi100 => BitRate::from_mbit(100),
            Self::Taxi140 => BitRate::from_mbit(140),
        }
    }

    /// The rate left for cells after physical framing (R_p).
    pub fn cell_rate(self) -> BitRate {
        let BitRate(line) = self.line_rate();
        match self {
            Self::Oc3c => BitRate(line / 270 * 260),
            Self::Oc12c => BitRate(line / 1080 * 1040),
            Self::Taxi100 | Self::Taxi140 => BitRate(line),
        }
    }

    /// The name used in link specs.
    pub fn name(self) -> &'static str {
        match self {
            Self::Oc3c => "oc3c",
            Self::Oc12c => "oc12c",
            Self::Taxi100 => "taxi100",
            Self::Taxi140 => "taxi140",
        }
    }
}

/// ATM adaptation layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Aal {
    /// AAL5: 48 payload bytes per cell, 8-byte trailer.
    Aal5,
    /// AAL3/4: 44 payload bytes per cell, 8 bytes of CPCS header and trailer.
    Aal34,
}

/// How IP packets are encapsulated in the AAL's SDU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Encapsulation {
    /// RFC 2684 LLC/SNAP header (8 bytes); the Classical IP default.
    LlcSnap,
    /// RFC 2684 VC multiplexing: no header.
    VcMux,
    /// 802.3 LAN Emulation: 2-byte LECID + 14-byte Ethernet header, no FCS.
    Lane,
}

impl Encapsulation {
    /// Bytes the encapsulation adds before the IP packet.
    pub fn header_bytes(self) -> u64 {
        match self {
            Self::LlcSnap => 8,
            Self::VcMux => 0,
            Self::Lane => 16,
        }
    }

    /// The item the encapsulation header is listed as (VC-mux adds no bytes, so no item).
    fn overhead(self) -> Overhead {
        match self {
            Self::Lane => Overhead::LaneHeader,
            Self::LlcSnap | Self::VcMux => Overhead::LlcSnap,
        }
    }
}

/// An ATM link carrying IP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Atm {
    /// Physical layer.
    pub phy: Phy,
    /// Adaptation layer.
    pub aal: Aal,
    /// Encapsulation of IP in the AAL.
    pub encapsulation: Encapsulation,
    /// Largest IP packet.
    pub mtu_bytes: u64,
}

impl Atm {
    /// Classical IP over ATM: AAL5, LLC/SNAP, MTU 9180.
    pub fn clip(phy: Phy) -> Self {
        Self { phy, aal: Aal::Aal5, encapsulation: Encapsulation::LlcSnap, mtu_bytes: CLIP_MTU_BYTES }
    }

    /// 802.3 LAN Emulation: AAL5, 16-byte LANE header, MTU 1500.
    pub fn lane(phy: Phy) -> Self {
        Self { phy, aal: Aal::Aal5, encapsulation: Encapsulation::Lane, mtu_bytes: LANE_MTU_BYTES }
    }

    /// Duration of one cell on the wire, in nanoseconds.
    pub fn cell_time_ns(&self) -> f64 {
        (CELL_BYTES * 8) as f64 * 1e9 / self.phy.cell_rate().bps_f64()
    }

    /// Cells for one IP packet of `ip_len_bytes` (saturating far beyond any valid length).
    pub fn cells(&self, ip_len_bytes: u64) -> u64 {
        let encap = self.encapsulation.header_bytes();
        match self.aal {
            Aal::Aal5 => aal5_cells(ip_len_bytes, encap),
            Aal::Aal34 => aal34_cells(ip_len_bytes, encap),
        }
    }

    /// Frames one IP packet (the caller has checked it against the MTU).
    pub(crate) fn frame(&self, ip_len_bytes: u64) -> Result<Frame> {
        let cells = self.cells(ip_len_bytes);
        let mut items = Vec::new();
        let encap = self.encapsulation.header_bytes();
        overhead::add(&mut items, self.encapsulation.overhead(), overhead::signed(encap))?;
        let sdu = ip_len_bytes + encap;
        match self.aal {
            Aal::Aal5 => aal5_items(&mut items, sdu, cells)?,
            Aal::Aal34 => aal34_items(&mut items, sdu, cells)?,
        }
        let headers = overhead::signed(cells * CELL_HEADER_BYTES);
        overhead::add(&mut items, Overhead::CellHeader, headers)?;
        Ok(Frame { ip_len_bytes, wire_bytes: cells * CELL_BYTES, cells: Some(cells), items })
    }
}

fn aal5_items(items: &mut Vec<OverheadItem>, sdu: u64, cells: u64) -> Result<()> {
    let pad = cells * CELL_PAYLOAD_BYTES - sdu - AAL5_TRAILER_BYTES;
    overhead::add(items, Overhead::Aal5Trailer, overhead::signed(AAL5_TRAILER_BYTES))?;
    overhead::add(items, Overhead::Aal5Pad, overhead::signed(pad))
}

fn aal34_items(items: &mut Vec<OverheadItem>, sdu: u64, cells: u64) -> Result<()> {
    let cpcs_pad = sdu.next_multiple_of(AAL34_ALIGN_BYTES) - sdu;
    let cpcs = sdu + cpcs_pad + AAL34_CPCS_BYTES;
    let sar_pad = cells * AAL34_CELL_PAYLOAD_BYTES - cpcs;
    for (kind, bytes) in [
        (Overhead::Aal34Cpcs, AAL34_CPCS_BYTES),
        (Overhead::Aal34Pad, cpcs_pad),
        (Overhead::Aal34Sar, cells * AAL34_SAR_BYTES),
        (Overhead::Aal34SarPad, sar_pad),
    ] {
        overhead::add(items, kind, overhead::signed(bytes))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_9180_llc_snap_takes_192_cells() {
        assert_eq!(aal5_cells(9180, 8), 192);
        assert_eq!(aal5_wire_bytes(9180, 8), 10_176);
    }

    #[test]
    fn lane_1500_takes_32_cells() {
        assert_eq!(aal5_cells(1500, 16), 32);
    }

    #[test]
    fn sonet_payload_rates() {
        assert_eq!(Phy::Oc3c.cell_rate(), BitRate(149_760_000));
        assert_eq!(Phy::Oc12c.cell_rate(), BitRate(599_040_000));
    }

    #[test]
    fn aal34_ip_9188_takes_209_cells() {
        assert_eq!(aal34_cpcs_bytes(9188, 0), 9196);
        assert_eq!(aal34_cells(9188, 0), 209);
    }

    #[test]
    fn frame_items_add_up_to_the_cells() {
        for aal in [Aal::Aal5, Aal::Aal34] {
            for ip_len in [1, 40, 41, 1500, 9180] {
                let link = Atm { aal, ..Atm::clip(Phy::Oc3c) };
                let frame = link.frame(ip_len).map(|f| {
                    let total = overhead::total_bytes(&f.items) + overhead::signed(ip_len);
                    (total, overhead::signed(f.wire_bytes))
                });
                assert!(matches!(frame, Ok((total, wire)) if total == wire));
            }
        }
    }
}
