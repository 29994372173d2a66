//! Per-direction counters of a link: what was offered, delivered, dropped and duplicated.
//!
//! At any instant `offered = delivered + drops (all causes) + in flight`, where a packet is
//! in flight from its admission until [`crate::Link::poll_departure`] returns it.

use serde::{Deserialize, Serialize};

/// A count of packets and their bytes (packet lengths as offered, not wire bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Tally {
    /// Packets.
    pub packets: u64,
    /// Bytes of those packets.
    pub bytes: u64,
}

impl Tally {
    /// Counts one packet of `len_bytes`.
    pub fn add(&mut self, len_bytes: u64) {
        self.packets += 1;
        self.bytes += len_bytes;
    }

    /// Counts `packets` packets of `len_bytes` in all.
    pub fn add_many(&mut self, packets: u64, len_bytes: u64) {
        self.packets += packets;
        self.bytes += len_bytes;
    }
}

/// Drops by cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Drops {
    /// Dropped by the random loss model (Bernoulli or Gilbert-Elliott) at the link's entry.
    pub loss_model: Tally,
    /// Refused by the full drop-tail queue.
    pub queue_overflow: Tally,
    /// PDUs that lost cells, counted when they reach the far end and fail reassembly.
    pub cell_loss: Tally,
}

impl Drops {
    /// All drops together.
    pub fn total(&self) -> Tally {
        Tally {
            packets: self.loss_model.packets + self.queue_overflow.packets + self.cell_loss.packets,
            bytes: self.loss_model.bytes + self.queue_overflow.bytes + self.cell_loss.bytes,
        }
    }
}

/// Counters of one link direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Counters {
    /// Packets handed to [`crate::Link::enqueue`].
    pub offered: Tally,
    /// Packets delivered (each counted once, however many copies).
    pub delivered: Tally,
    /// Packets dropped, by cause.
    pub drops: Drops,
    /// Extra copies delivered by the duplication stage.
    pub duplicates: Tally,
    /// Bytes scheduled on the wire by the serializer, counted at admission (overheads and
    /// cells included; a corrupted PDU counts only the cells it still sends).
    pub wire_bytes: u64,
    /// Cells lost at random (with partial packet discard only the first per PDU counts).
    pub lost_cells: u64,
}
