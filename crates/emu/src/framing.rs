//! How many bytes a packet occupies on the wire: a per-packet overhead and an optional
//! cell layer (ATM AAL5, or netem's generic cell model).
//!
//! AAL5 arithmetic is delegated to `model::atm`, so the emulator charges exactly what the
//! theory crate computes (theory.md §1.2).

use model::atm;
use serde::{Deserialize, Serialize};
use std::num::NonZeroU32;

/// RFC 2684 / LANE encapsulation in front of an IP packet inside an AAL5 PDU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Encap {
    /// RFC 2684 LLC/SNAP (Classical IP over ATM): 8 bytes.
    Llc,
    /// RFC 2684 VC multiplexing: 0 bytes.
    VcMux,
    /// LAN Emulation 802.3: 2-byte LE header + 14-byte Ethernet header, 16 bytes.
    Lane,
}

impl Encap {
    /// Encapsulation bytes added before the AAL5 trailer.
    pub fn bytes(self) -> u64 {
        match self {
            Encap::Llc => 8,
            Encap::VcMux => 0,
            Encap::Lane => 16,
        }
    }
}

/// The cell layer under the packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum CellFormat {
    /// ATM AAL5: 48-byte payloads in 53-byte cells, 8-byte trailer, padding.
    Aal5 {
        /// Encapsulation header.
        encap: Encap,
    },
    /// netem's cell model: round up to whole cells of `payload_bytes`, each charged
    /// `payload_bytes + overhead_bytes` on the wire.
    Generic {
        /// Payload bytes per cell (`CELLSIZE`).
        payload_bytes: NonZeroU32,
        /// Extra bytes per cell (`CELLOVERHEAD`).
        overhead_bytes: u32,
    },
}

/// Wire framing of one link direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Framing {
    /// Bytes added to every packet (e.g. 38 for Ethernet: preamble, header, FCS, gap),
    /// before segmentation into cells if there is a cell layer.
    pub overhead_bytes: u32,
    /// Optional cell layer.
    pub cells: Option<CellFormat>,
}

/// Cells and wire bytes for one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WireSize {
    /// Number of cells (0 without a cell layer).
    pub cells: u64,
    /// Bytes on the wire, all cells included.
    pub wire_bytes: u64,
    /// Bytes on the wire per cell (0 without a cell layer).
    pub cell_wire_bytes: u64,
}

impl Framing {
    /// Cells and wire bytes of a packet of `len_bytes` (the IP packet as read from TUN).
    pub fn wire_size(&self, len_bytes: u64) -> WireSize {
        let framed = len_bytes.saturating_add(u64::from(self.overhead_bytes));
        match self.cells {
            None => WireSize { cells: 0, wire_bytes: framed, cell_wire_bytes: 0 },
            Some(CellFormat::Aal5 { encap }) => WireSize {
                cells: atm::aal5_cells(framed, encap.bytes()),
                wire_bytes: atm::aal5_wire_bytes(framed, encap.bytes()),
                cell_wire_bytes: atm::CELL_BYTES,
            },
            Some(CellFormat::Generic { payload_bytes, overhead_bytes }) => {
                let cells = framed.div_ceil(u64::from(payload_bytes.get()));
                let per_cell = u64::from(payload_bytes.get()) + u64::from(overhead_bytes);
                WireSize { cells, wire_bytes: cells.saturating_mul(per_cell), cell_wire_bytes: per_cell }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aal5(encap: Encap) -> Framing {
        Framing { overhead_bytes: 0, cells: Some(CellFormat::Aal5 { encap }) }
    }

    #[test]
    fn plain_overhead() {
        let eth = Framing { overhead_bytes: 38, cells: None };
        assert_eq!(eth.wire_size(1500).wire_bytes, 1538);
        assert_eq!(eth.wire_size(1500).cells, 0);
    }

    #[test]
    fn aal5_matches_theory_table() {
        assert_eq!(aal5(Encap::Llc).wire_size(9180).cells, 192);
        assert_eq!(aal5(Encap::Llc).wire_size(9180).wire_bytes, 10_176);
        assert_eq!(aal5(Encap::VcMux).wire_size(9180).cells, 192);
        assert_eq!(aal5(Encap::Lane).wire_size(1500).wire_bytes, 1_696);
        // Pure ACK: 2 cells with LLC/SNAP, 1 with VC-mux (theory.md §1.5).
        assert_eq!(aal5(Encap::Llc).wire_size(40).cells, 2);
        assert_eq!(aal5(Encap::VcMux).wire_size(40).cells, 1);
    }

    #[test]
    fn generic_cells_match_netem_man_page() {
        // tc-netem(8): cell size 48, cell overhead 5 — a 50-byte packet is 2 cells, 106 bytes.
        let f = Framing {
            overhead_bytes: 0,
            cells: Some(CellFormat::Generic {
                payload_bytes: NonZeroU32::new(48).unwrap(),
                overhead_bytes: 5,
            }),
        };
        let w = f.wire_size(50);
        assert_eq!((w.cells, w.wire_bytes, w.cell_wire_bytes), (2, 106, 53));
    }
}
