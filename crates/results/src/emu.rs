//! What the link emulator saw during a test run over an emulated path (`--path`): per
//! direction, packets and bytes offered, delivered and dropped by cause, and how late the
//! emulator released packets compared with the model's schedule.

use serde::{Deserialize, Serialize};

/// The emulated path and its per-direction counters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmuReport {
    /// The path spec as given (e.g. `transatlantic` or `rate=100mbit,delay=20ms`).
    pub path: String,
    /// TCP super-packets (TUN offload) crossed the emulator; counters are still per segment.
    #[serde(default)]
    pub offload: bool,
    /// Client → server (`up`) and server → client (`down`).
    pub directions: Vec<EmuDirection>,
    /// The second path's counters, when there is one (`--path2`: MPTCP's second subflow
    /// travels it), in the same form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub second_path: Option<Box<EmuReport>>,
}

/// Release lateness p99 above which the emulator may have limited a result, µs: about one
/// 64 KB super-packet's serialization time at 1 Gbit/s, so the link sat idle that long.
pub const LATE_P99_US: f64 = 500.0;

impl EmuReport {
    /// The directions whose release lateness p99 exceeded [`LATE_P99_US`].
    pub fn late_directions(&self) -> impl Iterator<Item = &EmuDirection> {
        self.directions.iter().filter(|d| d.lateness_p99_us.is_some_and(|p| p > LATE_P99_US))
    }
}

/// A count of packets and of their bytes (IP packet lengths).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EmuTally {
    /// Packets.
    pub packets: u64,
    /// Bytes.
    pub bytes: u64,
}

/// Counters of one direction of the emulated link, for the whole emulator session.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EmuDirection {
    /// `up` (client → server) or `down`.
    pub direction: String,
    /// Packets read from the sending side's device.
    pub offered: EmuTally,
    /// Packets delivered to the receiving side (each once, however many copies).
    pub delivered: EmuTally,
    /// Dropped by the random loss model.
    pub drops_loss_model: EmuTally,
    /// Refused by the full queue.
    pub drops_queue_overflow: EmuTally,
    /// Discarded because cells were lost.
    pub drops_cell_loss: EmuTally,
    /// Extra copies delivered by the duplication stage.
    pub duplicates: EmuTally,
    /// Bytes put on the emulated wire (framing and cell tax included).
    pub wire_bytes: u64,
    /// Cells lost.
    pub lost_cells: u64,
    /// Mean release lateness (actual − scheduled), microseconds.
    pub lateness_mean_us: f64,
    /// Largest release lateness, microseconds.
    pub lateness_max_us: f64,
    /// Median release lateness, microseconds (upper end of a 12.5 %-wide bucket); absent in
    /// results stored before it was measured, or when nothing was released.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lateness_p50_us: Option<f64>,
    /// 99th percentile of release lateness, microseconds (as the median).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lateness_p99_us: Option<f64>,
}
