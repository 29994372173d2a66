//! The emulator's counters as result data ([`results::EmuReport`]).

use results::{EmuDirection, EmuReport, EmuTally};

use super::shared::{Shared, Stats};
use crate::counters::Tally;
use crate::spec::Direction;

/// The report of both directions so far.
pub fn build(spec: &str, offload: bool, shared: &Shared) -> EmuReport {
    let directions = Direction::BOTH.iter().map(|&d| direction(d, &shared.stats(d))).collect();
    EmuReport { path: spec.to_string(), offload, directions, second_path: None }
}

fn direction(direction: Direction, s: &Stats) -> EmuDirection {
    let c = &s.counters;
    EmuDirection {
        direction: direction.to_string(),
        offered: tally(c.offered),
        delivered: tally(c.delivered),
        drops_loss_model: tally(c.drops.loss_model),
        drops_queue_overflow: tally(c.drops.queue_overflow),
        drops_cell_loss: tally(c.drops.cell_loss),
        duplicates: tally(c.duplicates),
        wire_bytes: c.wire_bytes,
        lost_cells: c.lost_cells,
        lateness_mean_us: s.mean_lateness().as_secs_f64() * 1e6,
        lateness_max_us: s.late_max_ns as f64 / 1e3,
        lateness_p50_us: s.lateness.percentile_us(50.0),
        lateness_p99_us: s.lateness.percentile_us(99.0),
    }
}

fn tally(t: Tally) -> EmuTally {
    EmuTally { packets: t.packets, bytes: t.bytes }
}
