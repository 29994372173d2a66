//! ATM adaptation layer 5 cell arithmetic (theory.md §1.2).

/// Payload bytes carried by one ATM cell.
pub const CELL_PAYLOAD_BYTES: u64 = 48;
/// Bytes of one ATM cell on the wire (5 header + 48 payload).
pub const CELL_BYTES: u64 = 53;
/// Bytes of the AAL5 CPCS-PDU trailer (UU, CPI, length, CRC-32).
pub const AAL5_TRAILER_BYTES: u64 = 8;

/// Cells needed to carry one packet of `packet_bytes` after an encapsulation header of
/// `encap_bytes` (8 for RFC 2684 LLC/SNAP, 0 for VC-mux, 16 for LANE), AAL5 trailer included.
pub fn aal5_cells(packet_bytes: u64, encap_bytes: u64) -> u64 {
    (packet_bytes + encap_bytes + AAL5_TRAILER_BYTES).div_ceil(CELL_PAYLOAD_BYTES)
}

/// Bytes on the wire (cells × 53) for one packet; see [`aal5_cells`].
pub fn aal5_wire_bytes(packet_bytes: u64, encap_bytes: u64) -> u64 {
    aal5_cells(packet_bytes, encap_bytes) * CELL_BYTES
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
}
