//! CUBIC (RFC 9438) under loss (theory.md §6.1): time to regain the window after a loss and the
//! average window under random loss (RFC 8312 §5.1), next to Reno's Mathis bound.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::loss::{mathis_bps, LossPath, MathisConstant};
use crate::units::{check_duration, out_of_range};

/// CUBIC's scaling constant C, in segments per second³.
pub const C: f64 = 0.4;
/// CUBIC's multiplicative decrease factor β.
pub const BETA: f64 = 0.7;

/// Time for CUBIC to regain W_max after one loss.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CubicRecovery {
    /// `K = ∛(W_max · (1 − β) / C)`, in seconds.
    pub k_seconds: f64,
    /// K in round trips.
    pub k_rtts: f64,
}

/// K for a window of `w_max_segments` before the loss.
pub fn recovery(w_max_segments: f64, rtt: Duration) -> Result<CubicRecovery> {
    let rtt_s = check_duration("rtt", rtt)?;
    if !(w_max_segments.is_finite() && w_max_segments > 0.0) {
        return Err(out_of_range("w_max_segments", w_max_segments, "a finite window > 0"));
    }
    let k_seconds = (w_max_segments * (1.0 - BETA) / C).cbrt();
    Ok(CubicRecovery { k_seconds, k_rtts: k_seconds / rtt_s })
}

/// CUBIC's average window and goodput under random loss, with Reno's for comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CubicLimit {
    /// `(C(3+β) / (4(1−β)))^¼ · RTT^¾ / p^¾` segments (RTT in seconds).
    pub window_segments: f64,
    /// `window × MSS × 8 / RTT`.
    pub rate_bps: f64,
    /// The Mathis bound with C = √(3/2), as CUBIC's Reno-friendly estimate.
    pub reno_rate_bps: f64,
    /// True when the Reno estimate is larger, so CUBIC runs in its Reno-friendly region.
    pub reno_friendly: bool,
}

/// The coefficient `(C(3+β) / (4(1−β)))^¼` ≈ 1.054.
pub fn window_coefficient() -> f64 {
    (C * (3.0 + BETA) / (4.0 * (1.0 - BETA))).powf(0.25)
}

/// CUBIC's average window and goodput on `path`.
pub fn loss_limit(path: &LossPath) -> Result<CubicLimit> {
    let reno_rate_bps = mathis_bps(path, MathisConstant::AckEverySegment)?;
    let rtt_s = Duration::from_nanos(path.rtt_ns).as_secs_f64();
    let p = path.loss_probability;
    let window_segments = window_coefficient() * rtt_s.powf(0.75) / p.powf(0.75);
    let rate_bps = window_segments * path.mss_bytes as f64 * 8.0 / rtt_s;
    Ok(CubicLimit { window_segments, rate_bps, reno_rate_bps, reno_friendly: reno_rate_bps > rate_bps })
}
