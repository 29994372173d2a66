//! Units: bit rates and the checks applied to numeric inputs.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A link bit rate in bits per second (SI: 1 Mbit/s = 1,000,000 bit/s).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BitRate(pub u64);

/// SI prefixes used when reading and writing rates, largest first.
const PREFIXES: [(&str, u32); 4] = [("t", 12), ("g", 9), ("m", 6), ("k", 3)];

impl BitRate {
    /// A rate of `mbit` megabits per second.
    pub const fn from_mbit(mbit: u64) -> Self {
        Self(mbit * 1_000_000)
    }

    /// A rate of `gbit` gigabits per second.
    pub const fn from_gbit(gbit: u64) -> Self {
        Self(gbit * 1_000_000_000)
    }

    /// The rate in bits per second, as a float for rate arithmetic.
    pub fn bps_f64(self) -> f64 {
        self.0 as f64
    }

    /// Reads a rate: decimal number, optional SI prefix `k`, `m`, `g` or `t`, optional `bit`
    /// (`100m`, `100mbit`, `1.5g`, `149.76m`, `9600`). Case-insensitive. Returns `None` for
    /// anything else, for zero and for rates finer than 1 bit/s. `bps` is refused on purpose:
    /// tc reads it as bytes per second, most people as bits.
    pub fn parse(text: &str) -> Option<Self> {
        let lower = text.to_ascii_lowercase();
        let split = lower.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(lower.len());
        let (number, unit) = lower.split_at(split);
        let prefix = unit.strip_suffix("bit").unwrap_or(unit);
        let exponent = match prefix {
            "" => 0,
            other => PREFIXES.iter().find(|(p, _)| *p == other)?.1,
        };
        scaled_decimal(number, exponent).filter(|bps| *bps > 0).map(Self)
    }
}

/// `number × 10^exponent` for a plain decimal `number`, if it is a whole number that fits.
fn scaled_decimal(number: &str, exponent: u32) -> Option<u64> {
    let (int, frac) = match number.split_once('.') {
        Some((int, frac)) if !frac.is_empty() => (int, frac),
        Some(_) => return None,
        None => (number, ""),
    };
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() || !all_digits(int) || !all_digits(frac) {
        return None;
    }
    let scale = 10u64.checked_pow(exponent)?;
    let mut value = int.parse::<u64>().ok()?.checked_mul(scale)?;
    let mut place = scale;
    for digit in frac.bytes().map(|b| u64::from(b - b'0')) {
        place /= 10;
        if place == 0 && digit != 0 {
            return None;
        }
        value = value.checked_add(digit * place)?;
    }
    Some(value)
}

impl fmt::Display for BitRate {
    /// Shortest exact form with an SI prefix, e.g. `1g`, `149.76m`, `9600`; [`BitRate::parse`]
    /// reads it back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some((prefix, exponent)) = PREFIXES.iter().find(|(_, e)| self.0 >= 10u64.pow(*e)) else {
            return write!(f, "{}", self.0);
        };
        let scale = 10u64.pow(*exponent);
        let (int, rest) = (self.0 / scale, self.0 % scale);
        if rest == 0 {
            return write!(f, "{int}{prefix}");
        }
        let width = *exponent as usize;
        let frac = format!("{rest:0width$}");
        write!(f, "{int}.{}{prefix}", frac.trim_end_matches('0'))
    }
}

/// Checks that a rate in bits per second is finite and positive.
pub(crate) fn check_rate_bps(name: &'static str, rate_bps: f64) -> Result<f64> {
    if rate_bps.is_finite() && rate_bps > 0.0 {
        Ok(rate_bps)
    } else {
        Err(out_of_range(name, rate_bps, "a finite rate > 0 bit/s"))
    }
}

/// Checks that a duration is not zero and returns it in seconds.
pub(crate) fn check_duration(name: &'static str, duration: Duration) -> Result<f64> {
    if duration.is_zero() {
        Err(out_of_range(name, "0", "a duration > 0"))
    } else {
        Ok(duration.as_secs_f64())
    }
}

/// Checks that `p` is a probability in (0, 1].
pub(crate) fn check_probability(name: &'static str, p: f64) -> Result<f64> {
    if p > 0.0 && p <= 1.0 {
        Ok(p)
    } else {
        Err(out_of_range(name, p, "a probability in (0, 1]"))
    }
}

/// Checks that a count is not zero.
pub(crate) fn check_nonzero(name: &'static str, value: u64) -> Result<u64> {
    if value == 0 {
        Err(out_of_range(name, 0, "at least 1"))
    } else {
        Ok(value)
    }
}

/// A duration as whole nanoseconds, saturating (for serialisable outputs).
pub(crate) fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

/// Builds an [`Error::OutOfRange`].
pub(crate) fn out_of_range(name: &'static str, value: impl fmt::Display, expected: &'static str) -> Error {
    Error::OutOfRange { name, value: value.to_string(), expected }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_prefixed_and_fractional_rates() {
        assert_eq!(BitRate::parse("1g"), Some(BitRate(1_000_000_000)));
        assert_eq!(BitRate::parse("100Mbit"), Some(BitRate(100_000_000)));
        assert_eq!(BitRate::parse("149.76m"), Some(BitRate(149_760_000)));
        assert_eq!(BitRate::parse("9600"), Some(BitRate(9600)));
        assert_eq!(BitRate::parse("9600bit"), Some(BitRate(9600)));
        assert_eq!(BitRate::parse("1.50k"), Some(BitRate(1500)));
    }

    #[test]
    fn refuses_junk_zero_and_sub_bit_rates() {
        for bad in [
            "",
            "g",
            "0",
            "0m",
            "1.",
            ".5g",
            "1.5",
            "1.0001k",
            "1mbps",
            "1x",
            "-1m",
            "+1m",
            "1..2m",
            "99999999999t",
        ] {
            assert_eq!(BitRate::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn display_reads_back() {
        for bps in [1, 999, 1000, 1500, 149_760_000, 10_000_000_000, 599_040_000, u64::MAX] {
            let rate = BitRate(bps);
            assert_eq!(BitRate::parse(&rate.to_string()), Some(rate), "{rate}");
        }
        assert_eq!(BitRate(149_760_000).to_string(), "149.76m");
        assert_eq!(BitRate::from_gbit(1).to_string(), "1g");
    }
}
