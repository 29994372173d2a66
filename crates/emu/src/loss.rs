//! Packet loss models applied at the link's entry: none, Bernoulli, Gilbert-Elliott.
//!
//! Gilbert-Elliott follows the parametrisation netem uses (emulator-notes.md §2.2):
//! `p` = P(good → bad), `r` = P(bad → good), `loss_in_bad` = 1 − h, `loss_in_good` = 1 − k.
//! Each packet is first lost (or not) with the loss probability of the current state, then
//! the chain makes its transition. The stationary loss rate is
//! `(r·(1−k) + p·(1−h)) / (p + r)`.

use crate::rng::Rng;
use crate::units::Probability;
use serde::{Deserialize, Serialize};

/// The four Gilbert-Elliott parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GilbertElliott {
    /// P(good → bad) per packet.
    pub p: Probability,
    /// P(bad → good) per packet.
    pub r: Probability,
    /// Loss probability in the bad state (1 − h).
    pub loss_in_bad: Probability,
    /// Loss probability in the good state (1 − k).
    pub loss_in_good: Probability,
}

impl GilbertElliott {
    /// The netem defaults for the parameters left out: `r = 1 − p`, `1 − h = 100 %`,
    /// `1 − k = 0`. With `p` alone the chain is memoryless: Bernoulli loss with rate `p`.
    pub fn with_defaults(
        p: Probability,
        r: Option<Probability>,
        loss_in_bad: Option<Probability>,
        loss_in_good: Option<Probability>,
    ) -> Self {
        GilbertElliott {
            p,
            r: r.unwrap_or(p.complement()),
            loss_in_bad: loss_in_bad.unwrap_or(Probability::ONE),
            loss_in_good: loss_in_good.unwrap_or(Probability::ZERO),
        }
    }

    /// Stationary probability of the bad state, `p / (p + r)`; the chain starts in the
    /// good state and stays there when `p = 0`.
    pub fn stationary_bad(&self) -> f64 {
        let (p, r) = (self.p.get(), self.r.get());
        if p == 0.0 {
            0.0
        } else {
            p / (p + r)
        }
    }

    /// Long-run packet loss rate, `(r·(1−k) + p·(1−h)) / (p + r)`.
    pub fn mean_loss(&self) -> f64 {
        let bad = self.stationary_bad();
        bad * self.loss_in_bad.get() + (1.0 - bad) * self.loss_in_good.get()
    }
}

/// Which loss model a link applies to every packet it is offered.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "model")]
pub enum LossModel {
    /// No random loss.
    #[default]
    None,
    /// Independent loss with probability `p`.
    Bernoulli {
        /// Loss probability per packet.
        p: Probability,
    },
    /// Two-state Markov loss (bursts).
    GilbertElliott(GilbertElliott),
}

impl LossModel {
    /// Long-run loss rate of the model.
    pub fn mean_loss(&self) -> f64 {
        match self {
            LossModel::None => 0.0,
            LossModel::Bernoulli { p } => p.get(),
            LossModel::GilbertElliott(ge) => ge.mean_loss(),
        }
    }
}

/// A loss model with its state and random stream.
#[derive(Debug, Clone)]
pub struct Loss {
    model: LossModel,
    bad: bool,
    rng: Rng,
}

impl Loss {
    /// A fresh loss process (Gilbert-Elliott starts in the good state).
    pub fn new(model: LossModel, seed: u64) -> Self {
        Loss { model, bad: false, rng: Rng::new(seed) }
    }

    /// Decides whether the next packet is lost.
    pub fn next_is_lost(&mut self) -> bool {
        match self.model {
            LossModel::None => false,
            LossModel::Bernoulli { p } => self.rng.chance(p.get()),
            LossModel::GilbertElliott(ge) => self.gilbert_elliott(&ge),
        }
    }

    fn gilbert_elliott(&mut self, ge: &GilbertElliott) -> bool {
        let (loss, leave) = if self.bad { (ge.loss_in_bad, ge.r) } else { (ge.loss_in_good, ge.p) };
        let lost = self.rng.chance(loss.get());
        if self.rng.chance(leave.get()) {
            self.bad = !self.bad;
        }
        lost
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prob(p: f64) -> Probability {
        Probability::new(p).unwrap()
    }

    fn loss_rate(model: LossModel, n: u64, seed: u64) -> f64 {
        let mut l = Loss::new(model, seed);
        (0..n).filter(|_| l.next_is_lost()).count() as f64 / n as f64
    }

    #[test]
    fn none_never_loses() {
        assert_eq!(loss_rate(LossModel::None, 1000, 1), 0.0);
    }

    #[test]
    fn bernoulli_rate_within_five_sigma() {
        let (n, p) = (200_000u64, 0.01);
        let rate = loss_rate(LossModel::Bernoulli { p: prob(p) }, n, 11);
        let sigma = (p * (1.0 - p) / n as f64).sqrt();
        assert!((rate - p).abs() < 5.0 * sigma, "rate {rate}");
    }

    #[test]
    fn simple_gilbert_matches_notes_example() {
        // emulator-notes.md: p = 0.1 %, r = 20 % → 0.50 % loss, bursts of 5 on average.
        let ge = GilbertElliott::with_defaults(prob(0.001), Some(prob(0.2)), None, None);
        assert!((ge.mean_loss() - 0.001 / 0.201).abs() < 1e-12);
        let mut l = Loss::new(LossModel::GilbertElliott(ge), 5);
        let (mut lost, mut bursts, mut prev) = (0u64, 0u64, false);
        let n = 2_000_000;
        for _ in 0..n {
            let now = l.next_is_lost();
            lost += u64::from(now);
            bursts += u64::from(now && !prev);
            prev = now;
        }
        let rate = lost as f64 / n as f64;
        assert!((rate - ge.mean_loss()).abs() / ge.mean_loss() < 0.05, "rate {rate}");
        let mean_burst = lost as f64 / bursts as f64;
        assert!((mean_burst - 5.0).abs() < 0.3, "burst {mean_burst}");
    }

    #[test]
    fn general_gilbert_elliott_stationary_rate() {
        let ge =
            GilbertElliott { p: prob(0.01), r: prob(0.1), loss_in_bad: prob(0.5), loss_in_good: prob(0.002) };
        let expected = (0.1 * 0.002 + 0.01 * 0.5) / 0.11;
        assert!((ge.mean_loss() - expected).abs() < 1e-12);
        let rate = loss_rate(LossModel::GilbertElliott(ge), 2_000_000, 3);
        assert!((rate - expected).abs() / expected < 0.05, "rate {rate}");
    }

    #[test]
    fn gilbert_elliott_with_p_alone_is_bernoulli() {
        let ge = GilbertElliott::with_defaults(prob(0.02), None, None, None);
        assert!((ge.mean_loss() - 0.02).abs() < 1e-12);
        let rate = loss_rate(LossModel::GilbertElliott(ge), 200_000, 4);
        assert!((rate - 0.02).abs() < 5.0 * (0.02 * 0.98 / 200_000.0f64).sqrt());
    }
}
