//! Window-limited throughput and the bandwidth-delay product (theory.md §4).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::units::{check_duration, check_nonzero, check_rate_bps, nanos};

/// Largest window a TCP header can advertise without window scaling.
pub const MAX_UNSCALED_WINDOW_BYTES: u64 = 65_535;
/// Largest window-scale shift (RFC 7323).
pub const MAX_WINDOW_SCALE: u8 = 14;

/// The bandwidth-delay product of a path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bdp {
    /// Rate of the path.
    pub rate_bps: f64,
    /// Round-trip time.
    pub rtt_ns: u64,
    /// `rate × RTT / 8`.
    pub bdp_bytes: f64,
    /// Segment size used to count segments.
    pub mss_bytes: u64,
    /// `bdp_bytes / mss_bytes` (not rounded).
    pub bdp_segments: f64,
    /// Smallest window-scale shift able to advertise the BDP; `None` beyond shift 14.
    pub min_window_scale: Option<u8>,
}

/// The bandwidth-delay product at `rate_bps` and `rtt`, counted in segments of `mss_bytes`.
pub fn bdp(rate_bps: f64, rtt: Duration, mss_bytes: u64) -> Result<Bdp> {
    let rate_bps = check_rate_bps("rate_bps", rate_bps)?;
    let rtt_s = check_duration("rtt", rtt)?;
    let mss_bytes = check_nonzero("mss_bytes", mss_bytes)?;
    let bdp_bytes = rate_bps * rtt_s / 8.0;
    Ok(Bdp {
        rate_bps,
        rtt_ns: nanos(rtt),
        bdp_bytes,
        mss_bytes,
        bdp_segments: bdp_bytes / mss_bytes as f64,
        min_window_scale: min_window_scale(bdp_bytes.ceil() as u64),
    })
}

/// Smallest shift `s` with `65,535 × 2^s ≥ window_bytes`, or `None` if even 14 is too small.
pub fn min_window_scale(window_bytes: u64) -> Option<u8> {
    (0..=MAX_WINDOW_SCALE).find(|shift| MAX_UNSCALED_WINDOW_BYTES << shift >= window_bytes)
}

/// What bounds throughput for a given window: the window itself or the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Bound {
    /// `window / RTT` is below the link's rate.
    Window,
    /// The link's rate is below `window / RTT`.
    Link,
}

/// Throughput allowed by a window over a round trip, and whether the link caps it first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowLimit {
    /// Window in force (the least of cwnd, advertised window and send buffer in flight).
    pub window_bytes: u64,
    /// Round-trip time.
    pub rtt_ns: u64,
    /// `window × 8 / RTT`.
    pub window_rate_bps: f64,
    /// The link's goodput limit, if given.
    pub link_rate_bps: Option<f64>,
    /// The lesser of the two.
    pub limit_bps: f64,
    /// Which one is the lesser.
    pub bound: Bound,
}

/// `throughput ≤ W / RTT`, capped by `link_rate_bps` when given (e.g. from
/// [`crate::goodput::max_goodput`]).
pub fn window_limit(window_bytes: u64, rtt: Duration, link_rate_bps: Option<f64>) -> Result<WindowLimit> {
    let rtt_s = check_duration("rtt", rtt)?;
    let window_bytes = check_nonzero("window_bytes", window_bytes)?;
    let link_rate_bps = link_rate_bps.map(|rate| check_rate_bps("link_rate_bps", rate)).transpose()?;
    let window_rate_bps = window_bytes as f64 * 8.0 / rtt_s;
    let (limit_bps, bound) = match link_rate_bps {
        Some(link) if link < window_rate_bps => (link, Bound::Link),
        _ => (window_rate_bps, Bound::Window),
    };
    Ok(WindowLimit { window_bytes, rtt_ns: nanos(rtt), window_rate_bps, link_rate_bps, limit_bps, bound })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_scale_bounds() {
        assert_eq!(min_window_scale(65_535), Some(0));
        assert_eq!(min_window_scale(65_536), Some(1));
        assert_eq!(min_window_scale(65_535 << 14), Some(14));
        assert_eq!(min_window_scale((65_535 << 14) + 1), None);
    }

    #[test]
    fn refuses_zero_and_non_finite_inputs() {
        let rtt = Duration::from_millis(1);
        assert!(bdp(f64::NAN, rtt, 1448).is_err());
        assert!(bdp(1e9, Duration::ZERO, 1448).is_err());
        assert!(bdp(1e9, rtt, 0).is_err());
        assert!(window_limit(0, rtt, None).is_err());
        assert!(window_limit(1, rtt, Some(f64::INFINITY)).is_err());
    }
}
