//! Quantities with units — bit rates, probabilities, durations, byte and packet counts —
//! and their text forms as used in path specs (`100mbit`, `20ms`, `0.1%`, `64KB`).
//!
//! Rates are parsed by `model::units::BitRate::parse` (one parser for the workspace);
//! durations and sizes here. All are exact decimals (no floating point), so
//! `149.76mbit` is exactly 149,760,000 bit/s. Unit names are case-insensitive.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::num::NonZeroU64;
use std::time::Duration;

/// A link rate in bits per second (never zero; "unlimited" is `Option::None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BitRate(NonZeroU64);

impl BitRate {
    /// `bits_per_sec` bit/s, or `None` for zero.
    pub fn new(bits_per_sec: u64) -> Option<Self> {
        NonZeroU64::new(bits_per_sec).map(BitRate)
    }

    /// The rate in bits per second.
    pub fn bits_per_sec(self) -> u64 {
        self.0.get()
    }
}

impl fmt::Display for BitRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}bit", self.0)
    }
}

/// A probability in `[0, 1]`; construction and deserialization reject anything else.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct Probability(f64);

impl Probability {
    /// Never.
    pub const ZERO: Probability = Probability(0.0);
    /// Always.
    pub const ONE: Probability = Probability(1.0);

    /// `p` if it is a finite number in `[0, 1]`.
    pub fn new(p: f64) -> Option<Self> {
        (p.is_finite() && (0.0..=1.0).contains(&p)).then_some(Probability(p))
    }

    /// The probability as a number in `[0, 1]`.
    pub fn get(self) -> f64 {
        self.0
    }

    /// `1 - p`.
    pub fn complement(self) -> Self {
        Probability(1.0 - self.0)
    }

    /// True if the probability is zero.
    pub fn is_zero(self) -> bool {
        self.0 == 0.0
    }
}

impl TryFrom<f64> for Probability {
    type Error = String;
    fn try_from(p: f64) -> Result<Self, String> {
        Probability::new(p).ok_or_else(|| format!("probability {p} is not in [0, 1]"))
    }
}

impl From<Probability> for f64 {
    fn from(p: Probability) -> f64 {
        p.0
    }
}

/// A limit expressed either in packets or in bytes, as written after `queue=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Amount {
    /// `100pkt`.
    Packets(u64),
    /// `64KB`, `1500B`.
    Bytes(u64),
}

/// Splits `text` into its numeric part and its (possibly empty) unit suffix.
fn split_unit(text: &str) -> (&str, &str) {
    let at = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    text.split_at(at)
}

/// Parses a non-negative decimal `number` and multiplies it by `scale`, exactly.
/// Fails if the result is not a whole number or does not fit in a `u64`.
fn scaled_decimal(number: &str, scale: u64) -> Result<u64, String> {
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    let valid = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !valid(int) || !valid(frac) {
        return Err("expected a number".into());
    }
    if int.len() + frac.len() > 30 {
        return Err("number too long".into());
    }
    let digits: u128 = format!("{int}{frac}").parse().map_err(|_| String::from("expected a number"))?;
    let divisor = 10u128.pow(frac.len() as u32);
    let product = digits.checked_mul(u128::from(scale)).ok_or_else(|| String::from("value too large"))?;
    if product % divisor != 0 {
        return Err("not a whole number of the base unit".into());
    }
    u64::try_from(product / divisor).map_err(|_| String::from("value too large"))
}

/// Parses a rate with the one rate parser of the workspace, [`model::units::BitRate::parse`]
/// (`100mbit`, `100m`, `149.76mbit`, `1g`, `9600bit`), so a rate means the same in a path
/// spec as in `tcplab model`. Stricter here: a bare number is refused (is `rate=100` bits or
/// megabits?), and so is zero; `bps` is refused there already (tc reads it as bytes per
/// second). "unlimited" is handled by the spec parser.
pub fn parse_rate(text: &str) -> Result<BitRate, String> {
    if text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return Err("needs a unit: bit, kbit, mbit or gbit".into());
    }
    let rate = model::units::BitRate::parse(text).map_err(|e| e.to_string())?;
    BitRate::new(rate.0).ok_or_else(|| "a rate must be above zero".into())
}

impl From<BitRate> for model::units::BitRate {
    fn from(rate: BitRate) -> Self {
        model::units::BitRate(rate.bits_per_sec())
    }
}

/// Parses a duration: `20ms`, `0.5ms`, `85ms`, `100us`, `250ns`, `1s`; a bare `0` is zero.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let (number, unit) = split_unit(text);
    let scale = match unit.to_ascii_lowercase().as_str() {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "" if number == "0" => 1,
        "" => return Err("needs a unit: ns, us, ms or s".into()),
        other => return Err(format!("unknown time unit `{other}`")),
    };
    scaled_decimal(number, scale).map(Duration::from_nanos)
}

/// Parses a probability: `0.1%`, `20%`, `0.001`, `1e-4`.
pub fn parse_probability(text: &str) -> Result<Probability, String> {
    let (number, divisor) = match text.strip_suffix('%') {
        Some(n) => (n, 100.0),
        None => (text, 1.0),
    };
    let value: f64 =
        number.trim().parse().map_err(|_| String::from("expected a probability such as 0.1% or 0.001"))?;
    Probability::new(value / divisor).ok_or_else(|| "must be between 0 and 100%".into())
}

/// Parses a byte count: `1500`, `1500B`, `64KB` (1000), `64KiB` (1024), `1MB`, `1MiB`.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let (number, unit) = split_unit(text);
    let scale = byte_scale(unit).ok_or_else(|| format!("unknown size unit `{unit}`"))?;
    scaled_decimal(number, scale)
}

/// Multiplier of a byte unit; `None` if `unit` is not one.
fn byte_scale(unit: &str) -> Option<u64> {
    match unit.to_ascii_lowercase().as_str() {
        "" | "b" => Some(1),
        "kb" => Some(1_000),
        "kib" => Some(1_024),
        "mb" => Some(1_000_000),
        "mib" => Some(1_048_576),
        "gb" => Some(1_000_000_000),
        "gib" => Some(1_073_741_824),
        _ => None,
    }
}

/// Parses a queue amount: `100pkt` (also `p`, `pkts`) or a byte count with a unit (`64KB`).
/// A bare number is rejected as ambiguous.
pub fn parse_amount(text: &str) -> Result<Amount, String> {
    let (number, unit) = split_unit(text);
    match unit.to_ascii_lowercase().as_str() {
        "pkt" | "pkts" | "p" | "packets" => scaled_decimal(number, 1).map(Amount::Packets),
        "" => Err("needs a unit: pkt, B, KB or MB".into()),
        _ => parse_bytes(text).map(Amount::Bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_exact_decimals() {
        assert_eq!(parse_rate("149.76mbit").map(BitRate::bits_per_sec), Ok(149_760_000));
        assert_eq!(parse_rate("1Gbit").map(BitRate::bits_per_sec), Ok(1_000_000_000));
        assert_eq!(parse_rate("64kbit").map(BitRate::bits_per_sec), Ok(64_000));
        assert_eq!(parse_rate("9600bit").map(BitRate::bits_per_sec), Ok(9_600));
        assert!(parse_rate("1.5bit").is_err());
        assert!(parse_rate("0mbit").is_err());
        assert!(parse_rate("100").is_err());
        assert!(parse_rate("100furlongs").is_err());
        assert!(parse_rate("99999999999999999999gbit").is_err());
        assert_eq!(parse_rate("100m").map(BitRate::bits_per_sec), Ok(100_000_000));
        assert!(parse_rate("100mbps").is_err(), "bps is ambiguous (tc reads bytes)");
        assert!(parse_rate(".mbit").is_err());
        assert!(parse_rate("1.2.3mbit").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("20ms"), Ok(Duration::from_millis(20)));
        assert_eq!(parse_duration("0.5ms"), Ok(Duration::from_micros(500)));
        assert_eq!(parse_duration("85ms"), Ok(Duration::from_millis(85)));
        assert_eq!(parse_duration("7us"), Ok(Duration::from_micros(7)));
        assert_eq!(parse_duration("3ns"), Ok(Duration::from_nanos(3)));
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert!(parse_duration("5").is_err());
        assert!(parse_duration("0.5ns").is_err());
    }

    #[test]
    fn probabilities() {
        let p = |s| parse_probability(s).map(Probability::get);
        assert_eq!(p("0.1%"), Ok(0.001));
        assert_eq!(p("20%"), Ok(0.2));
        assert_eq!(p("0.25"), Ok(0.25));
        assert!(p("101%").is_err());
        assert!(p("-1%").is_err());
        assert!(p("NaN").is_err());
        assert!(p("inf").is_err());
        assert!(p("x").is_err());
    }

    #[test]
    fn sizes_and_amounts() {
        assert_eq!(parse_bytes("1500"), Ok(1500));
        assert_eq!(parse_bytes("64KB"), Ok(64_000));
        assert_eq!(parse_bytes("64KiB"), Ok(65_536));
        assert_eq!(parse_bytes("1.5MB"), Ok(1_500_000));
        assert_eq!(parse_amount("100pkt"), Ok(Amount::Packets(100)));
        assert_eq!(parse_amount("21.25MB"), Ok(Amount::Bytes(21_250_000)));
        assert!(parse_amount("100").is_err());
        assert!(parse_amount("1.5pkt").is_err());
    }

    #[test]
    fn probability_serde_rejects_out_of_range() {
        assert!(serde_json::from_str::<Probability>("1.5").is_err());
        assert_eq!(serde_json::from_str::<Probability>("0.5").ok(), Probability::new(0.5));
    }
}
