//! Random cell loss under a packet (AAL5 PDU) and what a switch does with the rest of it.
//!
//! Each cell of a PDU is lost independently with probability `p`, at the entry of the link
//! (a switch port feeding it), so a lost cell never occupies the link. A PDU with any lost
//! cell fails reassembly at the receiver (AAL5 length/CRC-32 check) and is discarded there:
//! the PDU loss rate is `1 − (1 − p)^cells`. What the corrupted PDU still costs the link
//! depends on the switch's discard policy:
//!
//! * [`Discard::None`] — the surviving cells cross the link: `cells − lost` cells charged.
//! * [`Discard::Partial`] (PPD) — after the first lost cell the switch drops every further
//!   cell of the PDU except the last (end-of-message) cell, which it forwards so that the
//!   receiver can delimit the PDU: `first_lost + 1` cells charged (`cells − 1` if the lost
//!   cell was the last one).
//!
//! Early Packet Discard (EPD) needs no option here: the link's queue admits or refuses
//! whole packets, which is what EPD achieves in a cell switch, so no partial PDU ever
//! enters the queue because it was full.

use crate::rng::Rng;
use crate::units::Probability;
use serde::{Deserialize, Serialize};

/// What a switch does with the remaining cells of a PDU that lost a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Discard {
    /// Forward the surviving cells (they waste link capacity).
    #[default]
    None,
    /// Partial Packet Discard: drop the rest of the PDU except its last cell.
    Partial,
}

/// Cell-loss configuration.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CellLoss {
    /// Loss probability of each cell.
    pub probability: Probability,
    /// Policy for the rest of a PDU that lost a cell.
    pub discard: Discard,
}

impl CellLoss {
    /// Probability that a PDU of `cells` cells loses at least one: `1 − (1 − p)^cells`.
    pub fn pdu_loss(&self, cells: u64) -> f64 {
        let exp = i32::try_from(cells).unwrap_or(i32::MAX);
        1.0 - self.probability.complement().get().powi(exp)
    }
}

/// The fate of one PDU's cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellFate {
    /// No cell lost: all cells are charged and the PDU is delivered.
    Intact,
    /// At least one cell lost: the PDU will be discarded at the receiver.
    Corrupt {
        /// Cells lost at random (with PPD, only the first one is drawn).
        lost_cells: u64,
        /// Cells that still cross the link and are charged by the serializer.
        charged_cells: u64,
    },
}

/// Draws cell losses from its own random stream.
#[derive(Debug, Clone)]
pub struct CellLosses {
    config: CellLoss,
    rng: Rng,
}

impl CellLosses {
    /// A cell-loss process seeded with `seed`.
    pub fn new(config: CellLoss, seed: u64) -> Self {
        CellLosses { config, rng: Rng::new(seed) }
    }

    /// Decides the fate of a PDU of `cells` cells.
    pub fn draw(&mut self, cells: u64) -> CellFate {
        let p = self.config.probability.get();
        if p == 0.0 {
            return CellFate::Intact;
        }
        match self.config.discard {
            Discard::None => self.draw_independent(cells, p),
            Discard::Partial => self.draw_partial(cells, p),
        }
    }

    fn draw_independent(&mut self, cells: u64, p: f64) -> CellFate {
        let lost = (0..cells).filter(|_| self.rng.chance(p)).count() as u64;
        if lost == 0 {
            CellFate::Intact
        } else {
            CellFate::Corrupt { lost_cells: lost, charged_cells: cells - lost }
        }
    }

    fn draw_partial(&mut self, cells: u64, p: f64) -> CellFate {
        match (0..cells).find(|_| self.rng.chance(p)) {
            None => CellFate::Intact,
            Some(first) => CellFate::Corrupt {
                lost_cells: 1,
                charged_cells: if first + 1 == cells { first } else { first + 1 },
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn losses(p: f64, discard: Discard, seed: u64) -> CellLosses {
        CellLosses::new(CellLoss { probability: Probability::new(p).unwrap(), discard }, seed)
    }

    fn pdu_loss_rate(l: &mut CellLosses, cells: u64, n: u64) -> f64 {
        let lost = (0..n).filter(|_| l.draw(cells) != CellFate::Intact).count();
        lost as f64 / n as f64
    }

    #[test]
    fn pdu_loss_rate_is_one_minus_survival_to_the_cells() {
        for discard in [Discard::None, Discard::Partial] {
            let mut l = losses(0.001, discard, 21);
            let expected = 1.0 - 0.999f64.powi(192);
            let n = 40_000;
            let rate = pdu_loss_rate(&mut l, 192, n);
            let sigma = (expected * (1.0 - expected) / n as f64).sqrt();
            assert!((rate - expected).abs() < 5.0 * sigma, "{discard:?} {rate}");
            assert!((l.config.pdu_loss(192) - expected).abs() < 1e-12);
        }
    }

    #[test]
    fn charged_cells_follow_the_discard_policy() {
        let mut none = losses(0.05, Discard::None, 1);
        let mut ppd = losses(0.05, Discard::Partial, 1);
        for _ in 0..1000 {
            if let CellFate::Corrupt { lost_cells, charged_cells } = none.draw(32) {
                assert_eq!(lost_cells + charged_cells, 32);
            }
            if let CellFate::Corrupt { lost_cells, charged_cells } = ppd.draw(32) {
                assert_eq!(lost_cells, 1);
                assert!(charged_cells <= 31);
            }
        }
    }

    #[test]
    fn certain_loss_with_ppd_charges_only_the_end_of_message_cell() {
        let mut ppd = losses(1.0, Discard::Partial, 1);
        assert_eq!(ppd.draw(10), CellFate::Corrupt { lost_cells: 1, charged_cells: 1 });
        assert_eq!(ppd.draw(1), CellFate::Corrupt { lost_cells: 1, charged_cells: 0 });
    }

    #[test]
    fn zero_probability_is_always_intact() {
        let mut l = losses(0.0, Discard::None, 1);
        assert_eq!(l.draw(192), CellFate::Intact);
    }
}
