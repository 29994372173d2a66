//! Quantities with units — bit rates, probabilities, durations, byte and packet counts —
//! and their text forms as used in path specs (`100mbit`, `20ms`, `0.1%`, `64K`).
//!
//! Sizes and rates are read by `model::units`, the one reader of the workspace, so they mean
//! the same in a path spec as on every flag: sizes in powers of 1024 (`64K` = `64KB` =
//! 65,536 bytes), rates in powers of 1000 (`100M` = `100mbit` = 10⁸ bit/s). Durations and
//! packet counts use its exact decimal reading too, so `149.76mbit` is exactly 149,760,000
//! bit/s and `0.5ms` exactly 500 µs. Unit names are case-insensitive.

use model::units::{scale_decimal, split_number};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A link rate: the workspace's one rate type, never zero on a link ("unlimited" is
/// `Option::None`; [`parse_rate`] and [`BitRate::positive`] make only positive rates).
pub use model::BitRate;

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
    /// `64K`, `1500B`.
    Bytes(u64),
}

/// The reason of a `model::units` error, as a path spec's error text (the spec error names
/// the key and the value already).
fn reason(error: model::Error) -> String {
    match error {
        model::Error::Quantity { reason, .. } => reason.to_string(),
        other => other.to_string(),
    }
}

/// Reads a rate with the workspace's rate reader, [`model::BitRate::parse`] (`100mbit`,
/// `100M`, `149.76mbit`, `1g`, `9600bit`; powers of 1000), so a rate means the same in a path
/// spec as on `-b` and in `tcplab model`. Stricter here: a bare number is refused (`rate=100`
/// is far likelier a slip for 100mbit than a 100 bit/s link), and so is zero. "unlimited" is
/// handled by the spec parser.
pub fn parse_rate(text: &str) -> Result<BitRate, String> {
    if split_number(text.trim()).1.is_empty() {
        return Err("needs a unit: bit, kbit, mbit or gbit (or k, M, G)".into());
    }
    let rate = BitRate::parse(text).map_err(reason)?;
    BitRate::positive(rate.0).ok_or_else(|| "a rate must be above zero".into())
}

/// Reads a duration with the workspace's duration reader, [`model::units::parse_duration`]:
/// `20ms`, `0.5ms`, `100us`, `250ns`, `1s`, `1m` (a minute); a bare number needs a unit but a
/// bare `0` is zero.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    model::units::parse_duration(text, model::units::BareNumber::NeedsUnit).map_err(reason)
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

/// Reads a byte count with the workspace's size reader, [`model::units::parse_size`]:
/// `1500`, `1500B`, `64K` = `64KB` = `64KiB` (65,536), `1.5M`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    model::units::parse_size(text).map_err(reason)
}

/// Parses a queue amount: `100pkt` (also `p`, `pkts`) or a byte count with a unit (`64K`).
/// A bare number is rejected as ambiguous.
pub fn parse_amount(text: &str) -> Result<Amount, String> {
    let (number, unit) = split_number(text);
    match unit.to_ascii_lowercase().as_str() {
        "pkt" | "pkts" | "p" | "packets" => {
            scale_decimal(number, 1, "packets").map(Amount::Packets).map_err(|e| e.to_string())
        }
        "" => Err("needs a unit: pkt, B, K or M".into()),
        _ => parse_size(text).map(Amount::Bytes),
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
        assert_eq!(parse_rate("100M").map(BitRate::bits_per_sec), Ok(100_000_000));
        assert_eq!(parse_rate("64K").map(BitRate::bits_per_sec), Ok(64_000), "K is 1000 in a rate");
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
        assert_eq!(parse_size("1500"), Ok(1500));
        assert_eq!(parse_size("64K"), Ok(65_536));
        assert_eq!(parse_size("64KB"), Ok(65_536), "KB is 1024 bytes, as on -l and -w");
        assert_eq!(parse_size("64KiB"), Ok(65_536));
        assert_eq!(parse_size("1.5MB"), Ok(1_572_864));
        assert_eq!(
            parse_size("64X"),
            Err("unknown unit \"X\" (B, K, M, G or T, in powers of 1024; KB and KiB are K too)".into())
        );
        assert_eq!(parse_amount("100pkt"), Ok(Amount::Packets(100)));
        assert_eq!(parse_amount("21.25MB"), Ok(Amount::Bytes(22_282_240)));
        assert_eq!(parse_amount("64000B"), Ok(Amount::Bytes(64_000)));
        assert!(parse_amount("100").is_err());
        assert!(parse_amount("1.5pkt").is_err());
    }

    #[test]
    fn probability_serde_rejects_out_of_range() {
        assert!(serde_json::from_str::<Probability>("1.5").is_err());
        assert_eq!(serde_json::from_str::<Probability>("0.5").ok(), Probability::new(0.5));
    }
}
