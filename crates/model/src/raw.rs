//! A raw rate model in the style of netem's `rate RATE [PACKETOVERHEAD [CELLSIZE
//! [CELLOVERHEAD]]]` (emulator-notes.md §2.2): add the packet overhead to the IP length, round
//! up to whole cells, charge each cell its size plus the cell overhead.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::link::Frame;
use crate::overhead::{self, Overhead};
use crate::units::BitRate;

/// Largest magnitude accepted for the per-packet overhead, cell size and cell overhead.
pub const MAX_OVERHEAD_BYTES: u64 = 65_535;
/// Default MTU of a raw link.
pub const DEFAULT_MTU_BYTES: u64 = 1500;

/// Cell model of a raw link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cells {
    /// Payload bytes per cell (netem CELLSIZE); at least 1.
    pub size_bytes: u64,
    /// Extra bytes charged per cell (netem CELLOVERHEAD).
    pub overhead_bytes: u64,
}

/// A link described only by its rate and overheads. AAL5 over VC-mux at OC-3c is
/// `rate 149.76m, overhead 8, cells 48 + 5`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Raw {
    /// Rate at which the charged bytes are sent.
    #[serde(rename = "rate_bps")]
    pub rate: BitRate,
    /// Bytes added to every IP packet (netem PACKETOVERHEAD); may be negative.
    pub overhead_bytes: i64,
    /// Optional cell model.
    pub cells: Option<Cells>,
    /// Largest IP packet.
    pub mtu_bytes: u64,
}

impl Raw {
    /// A link at `rate` with no overhead and a 1500-byte MTU.
    pub fn new(rate: BitRate) -> Self {
        Self { rate, overhead_bytes: 0, cells: None, mtu_bytes: DEFAULT_MTU_BYTES }
    }

    /// Frames one IP packet (the caller has validated the link and checked the MTU).
    pub(crate) fn frame(&self, ip_len_bytes: u64) -> Result<Frame> {
        let len = overhead::signed(ip_len_bytes).saturating_add(self.overhead_bytes);
        let len = u64::try_from(len)
            .ok()
            .filter(|len| *len > 0)
            .ok_or(Error::EmptyFrame { len_bytes: ip_len_bytes, overhead_bytes: self.overhead_bytes })?;
        let mut items = Vec::new();
        overhead::add(&mut items, Overhead::PacketOverhead, self.overhead_bytes)?;
        let Some(cells) = self.cells.filter(|c| c.size_bytes > 0) else {
            return Ok(Frame { ip_len_bytes, wire_bytes: len, cells: None, items });
        };
        let count = len.div_ceil(cells.size_bytes);
        let pad = count * cells.size_bytes - len;
        let cell_overhead = count * cells.overhead_bytes;
        overhead::add(&mut items, Overhead::CellPad, overhead::signed(pad))?;
        overhead::add(&mut items, Overhead::CellOverhead, overhead::signed(cell_overhead))?;
        Ok(Frame { ip_len_bytes, wire_bytes: len + pad + cell_overhead, cells: Some(count), items })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn netem_man_page_example_50_bytes_is_2_cells_106_bytes() {
        let link = Raw {
            cells: Some(Cells { size_bytes: 48, overhead_bytes: 5 }),
            ..Raw::new(BitRate::from_mbit(100))
        };
        let frame = link.frame(50);
        assert_eq!(frame.as_ref().map(|f| f.cells), Ok(Some(2)));
        assert_eq!(frame.map(|f| f.wire_bytes), Ok(106));
    }

    #[test]
    fn negative_overhead_cannot_empty_a_frame() {
        let link = Raw { overhead_bytes: -20, ..Raw::new(BitRate::from_mbit(100)) };
        assert_eq!(link.frame(21).map(|f| f.wire_bytes), Ok(1));
        assert!(matches!(link.frame(20), Err(Error::EmptyFrame { .. })));
    }
}
