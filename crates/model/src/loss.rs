//! Loss-limited TCP throughput (theory.md §5): Mathis et al. 1997, Padhye et al. 1998 and the
//! RFC 5348 (TFRC) form, plus Reno's recovery time after one loss.
//!
//! These are reference bounds for Reno-like behaviour; Mathis and Mahdavi (ACM CCR 49(5),
//! 2019) argue the macroscopic model no longer describes modern stacks.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::units::{check_duration, check_nonzero, check_probability, check_rate_bps, nanos};

/// The constant C of the Mathis formula.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MathisConstant {
    /// Every segment ACKed: C = √(3/2) ≈ 1.22.
    AckEverySegment,
    /// Delayed ACKs (one per two segments): C = √(3/4) ≈ 0.87.
    DelayedAck,
    /// C = 1, as some sources use.
    One,
}

impl MathisConstant {
    /// The value of C.
    pub fn value(self) -> f64 {
        match self {
            Self::AckEverySegment => 1.5f64.sqrt(),
            Self::DelayedAck => 0.75f64.sqrt(),
            Self::One => 1.0,
        }
    }
}

/// A TCP path as the loss models see it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LossPath {
    /// Segment payload (MSS as used, e.g. 1448 with timestamps).
    pub mss_bytes: u64,
    /// Round-trip time in nanoseconds.
    pub rtt_ns: u64,
    /// Segment loss probability.
    pub loss_probability: f64,
}

impl LossPath {
    /// A path with `mss_bytes`, `rtt` and loss probability `p`.
    pub fn new(mss_bytes: u64, rtt: Duration, p: f64) -> Self {
        Self { mss_bytes, rtt_ns: nanos(rtt), loss_probability: p }
    }

    /// Checks the inputs; returns (MSS in bits, RTT in seconds, p).
    fn checked(&self) -> Result<(f64, f64, f64)> {
        let mss = check_nonzero("mss_bytes", self.mss_bytes)?;
        let rtt_s = check_duration("rtt", Duration::from_nanos(self.rtt_ns))?;
        let p = check_probability("loss_probability", self.loss_probability)?;
        Ok((mss as f64 * 8.0, rtt_s, p))
    }
}

/// Mathis et al.: `BW ≤ (MSS / RTT) · C / √p`, in bits per second.
pub fn mathis_bps(path: &LossPath, c: MathisConstant) -> Result<f64> {
    let (mss_bits, rtt_s, p) = path.checked()?;
    Ok(mss_bits / rtt_s * c.value() / p.sqrt())
}

/// The loss rate a Mathis-bounded flow can tolerate at a target rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LossBudget {
    /// Largest segment loss probability that still allows the target.
    pub loss_probability: f64,
    /// `1 / p`: segments between losses.
    pub segments_per_loss: f64,
    /// Time between losses when sending `segments_per_loss` MSS-sized segments at the target.
    pub seconds_between_losses: f64,
}

/// Inverts Mathis: `p = (MSS · C / (RTT · target))²`.
pub fn mathis_loss_budget(
    mss_bytes: u64,
    rtt: Duration,
    target_bps: f64,
    c: MathisConstant,
) -> Result<LossBudget> {
    let mss_bits = check_nonzero("mss_bytes", mss_bytes)? as f64 * 8.0;
    let rtt_s = check_duration("rtt", rtt)?;
    let target_bps = check_rate_bps("target_bps", target_bps)?;
    let p = (mss_bits * c.value() / (rtt_s * target_bps)).powi(2);
    let segments_per_loss = 1.0 / p;
    Ok(LossBudget {
        loss_probability: p,
        segments_per_loss,
        seconds_between_losses: segments_per_loss * mss_bits / target_bps,
    })
}

/// Parameters of the Padhye (PFTK) approximation beyond the path.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Padhye {
    /// Segments per ACK, b (2 with delayed ACKs).
    pub segments_per_ack: u64,
    /// Retransmission timeout T0, in nanoseconds.
    pub rto_ns: u64,
    /// Largest window W_max, if the receiver's window caps the rate.
    pub max_window_bytes: Option<u64>,
}

/// Padhye, Firoiu, Towsley, Kurose, approximate form, in bits per second:
/// `min(W_max/RTT, MSS / (RTT·√(2bp/3) + T0·min(1, 3·√(3bp/8))·p·(1 + 32p²)))`.
pub fn padhye_bps(path: &LossPath, params: &Padhye) -> Result<f64> {
    let (mss_bits, rtt_s, p) = path.checked()?;
    let b = check_nonzero("segments_per_ack", params.segments_per_ack)? as f64;
    let t0_s = Duration::from_nanos(params.rto_ns).as_secs_f64();
    let timeout_term = t0_s * (3.0 * (3.0 * b * p / 8.0).sqrt()).min(1.0) * p * (1.0 + 32.0 * p * p);
    let rate = mss_bits / (rtt_s * (2.0 * b * p / 3.0).sqrt() + timeout_term);
    let window_rate = params
        .max_window_bytes
        .map(|w| check_nonzero("max_window_bytes", w).map(|w| w as f64 * 8.0 / rtt_s))
        .transpose()?;
    Ok(window_rate.map_or(rate, |w| w.min(rate)))
}

/// The RFC 5348 §3.1 (TFRC) throughput equation: Padhye with b = 1 and T0 = 4·RTT.
pub fn tfrc_bps(path: &LossPath) -> Result<f64> {
    let params =
        Padhye { segments_per_ack: 1, rto_ns: path.rtt_ns.saturating_mul(4), max_window_bytes: None };
    padhye_bps(path, &params)
}

/// Time for Reno to grow back to its window after one loss.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recovery {
    /// Round trips needed (W/2 with one segment of growth per RTT).
    pub rtts: f64,
    /// The same in seconds.
    pub seconds: f64,
}

/// Reno after one loss at a window of `window_segments`: halved, then +1 segment per RTT,
/// so W/2 round trips.
pub fn reno_recovery(window_segments: f64, rtt: Duration) -> Result<Recovery> {
    let rtt_s = check_duration("rtt", rtt)?;
    if !(window_segments.is_finite() && window_segments > 0.0) {
        return Err(crate::units::out_of_range("window_segments", window_segments, "a finite window > 0"));
    }
    let rtts = window_segments / 2.0;
    Ok(Recovery { rtts, seconds: rtts * rtt_s })
}

/// Every loss model side by side for one path, as `tcplab model loss` shows them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The path.
    pub path: LossPath,
    /// Mathis with C = √(3/2) (every segment ACKed), bit/s.
    pub mathis_bps: f64,
    /// Mathis with C = √(3/4) (delayed ACKs), bit/s.
    pub mathis_delayed_ack_bps: f64,
    /// Padhye with the given parameters, bit/s.
    pub padhye: Padhye,
    /// The Padhye rate, bit/s.
    pub padhye_bps: f64,
    /// RFC 5348 (TFRC) form, bit/s.
    pub tfrc_bps: f64,
    /// CUBIC's average window and rate under random loss.
    pub cubic: crate::cubic::CubicLimit,
}

/// Runs Mathis (both constants), Padhye, TFRC and CUBIC on `path`.
pub fn compare(path: &LossPath, padhye: Padhye) -> Result<Comparison> {
    Ok(Comparison {
        path: *path,
        mathis_bps: mathis_bps(path, MathisConstant::AckEverySegment)?,
        mathis_delayed_ack_bps: mathis_bps(path, MathisConstant::DelayedAck)?,
        padhye,
        padhye_bps: padhye_bps(path, &padhye)?,
        tfrc_bps: tfrc_bps(path)?,
        cubic: crate::cubic::loss_limit(path)?,
    })
}
