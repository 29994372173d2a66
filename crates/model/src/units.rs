//! Units: the one reader of sizes and bit rates for every flag and spec of tcplab, the
//! [`BitRate`] type, and the checks applied to numeric inputs.
//!
//! # The convention
//!
//! * **Sizes** are bytes. `K`, `M`, `G`, `T` are powers of **1024**, and so are `KB`, `MB`,
//!   `GB`, `TB` and `KiB`, `MiB`, `GiB`, `TiB`: `8K` = `8KB` = `8KiB` = 8192 bytes. `B` or no
//!   unit is bytes. Case does not matter.
//! * **Rates** are bits per second. `k`, `M`, `G`, `T` are powers of **1000**, as in iperf3's
//!   `-b`: `100M` = 100,000,000 bit/s. Upper-case `K` means 1000 too (a rate has no binary
//!   form). The prefix may be followed by `bit` or `bit/s` (`100mbit`, `1Gbit/s`); no unit is
//!   bit/s. `bps` is refused: tc reads `mbps` as megabytes per second, most people as
//!   megabits. Case does not matter.
//!
//! Numbers are exact decimals (no floating point): `1.5K` = 1536 bytes, `149.76M` =
//! 149,760,000 bit/s. A value that is not a whole number of bytes or bit/s (`1.3K`, `0.5`),
//! negative, empty, too large for 64 bits, or followed by anything but a known unit is refused
//! with an [`Error::Quantity`] naming the text and the reason.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// What a text was read as, for error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Quantity {
    /// A number of bytes, [`parse_size`].
    Size,
    /// Bits per second, [`BitRate::parse`].
    Rate,
    /// A time, [`parse_duration`].
    Duration,
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Size => "size",
            Self::Rate => "rate",
            Self::Duration => "duration",
        })
    }
}

/// Why a size, rate or other number with a unit was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuantityReason {
    /// Nothing was given.
    #[error("empty")]
    Empty,
    /// A minus sign: sizes and rates are never negative.
    #[error("negative")]
    Negative,
    /// The text does not start with a decimal number (`K`, `nan`, `+1`, `.5`, `1.`).
    #[error("not a number (digits, optionally with a decimal point, then the unit)")]
    NotANumber,
    /// The number is followed by something that is not a unit of this quantity.
    #[error("unknown unit {unit:?} ({expected})")]
    UnknownUnit {
        /// The text after the number.
        unit: String,
        /// The units accepted, in words.
        expected: &'static str,
    },
    /// `bps`, which tc reads as bytes per second and most people as bits per second.
    #[error("'bps' is ambiguous (tc reads it as bytes per second): write bit/s as 100M or 100mbit")]
    AmbiguousBps,
    /// The value is not a whole number of the base unit (`1.3K` = 1331.2 bytes).
    #[error("not a whole number of {unit}")]
    Fraction {
        /// The base unit: `bytes`, `bit/s`, ….
        unit: &'static str,
    },
    /// The value does not fit in 64 bits.
    #[error("too large")]
    TooLarge,
    /// A bare number where the quantity needs a unit (`delay=20`: 20 what?).
    #[error("needs a unit ({expected})")]
    NeedsUnit {
        /// The units accepted, in words.
        expected: &'static str,
    },
}

/// Size units and their powers of 1024.
const SIZE_UNITS: &str = "B, K, M, G or T, in powers of 1024; KB and KiB are K too";
/// Rate units and their powers of 1000.
const RATE_UNITS: &str = "k, M, G or T, in powers of 1000, optionally followed by bit or bit/s";

/// Duration units.
const DURATION_UNITS: &str = "ns, us (µs), ms, s, m (minutes), h or d";

/// What a duration written as a bare number (`10`) means; `0` is zero whatever the unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BareNumber {
    /// Seconds, as iperf3's `-t 10` and every flag that took seconds before units.
    Seconds,
    /// Milliseconds, for sweep parameters whose name ends in `_ms`.
    Milliseconds,
    /// Refused: the value needs a unit (path specs, `--rtt`).
    NeedsUnit,
}

/// Reads a duration, the one duration grammar of every flag and spec: an exact decimal and a
/// unit, `ns`, `us` (or `µs`), `ms`, `s` (or `sec`), `m` (or `min`: minutes, never
/// milliseconds), `h`, `d`, case ignored, blanks allowed before the unit: `0.5ms`, `90s`,
/// `1m`, `2h`, `2.5 s`. A bare number is read as `bare` says. The value must be a whole
/// number of nanoseconds (`0.5ns` is refused) and fit in 64 bits of them (about 584 years).
pub fn parse_duration(text: &str, bare: BareNumber) -> Result<Duration> {
    let scale = |unit: &str, number: &str| duration_scale(unit, number, bare);
    read(text, Quantity::Duration, scale, "nanoseconds").map(Duration::from_nanos)
}

/// Nanoseconds per unit of a duration, `bare` for no unit.
fn duration_scale(unit: &str, number: &str, bare: BareNumber) -> std::result::Result<u64, QuantityReason> {
    const SECOND: u64 = 1_000_000_000;
    Ok(match unit.to_lowercase().as_str() {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" | "sec" => SECOND,
        "m" | "min" => 60 * SECOND,
        "h" => 3600 * SECOND,
        "d" => 86_400 * SECOND,
        "" => match bare {
            BareNumber::Seconds => SECOND,
            BareNumber::Milliseconds => 1_000_000,
            BareNumber::NeedsUnit if number.bytes().all(|b| b == b'0' || b == b'.') => 1,
            BareNumber::NeedsUnit => return Err(QuantityReason::NeedsUnit { expected: DURATION_UNITS }),
        },
        _ => return Err(QuantityReason::UnknownUnit { unit: unit.to_string(), expected: DURATION_UNITS }),
    })
}

/// Writes a duration in the grammar [`parse_duration`] reads, shortest exact form with the
/// largest unit up to seconds: `10s`, `0.5s`, `170ms`, `45us`, `3ns`, `0s`.
pub fn format_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    let units: [(u128, &str); 4] = [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us"), (1, "ns")];
    let (scale, unit) = units.into_iter().find(|(scale, _)| ns >= *scale).unwrap_or((1_000_000_000, "s"));
    let (int, rest) = (ns / scale, ns % scale);
    if rest == 0 {
        return format!("{int}{unit}");
    }
    let width = scale.ilog10() as usize;
    let frac = format!("{rest:0width$}");
    format!("{int}.{}{unit}", frac.trim_end_matches('0'))
}

/// Reads a size in bytes: `1500`, `1500B`, `8K` (8192), `64KB` (65536), `1.5MiB`, `4G`.
/// K, M, G, T, with or without `B` or `iB`, are powers of 1024; case is ignored.
pub fn parse_size(text: &str) -> Result<u64> {
    read(text, Quantity::Size, |unit, _| size_scale(unit), "bytes")
}

/// Reads `text` as a `quantity`: trimmed, a decimal number, optional blanks, a unit that
/// `scale` turns into the multiplier (given the number too) of the `base` unit.
fn read<S>(text: &str, quantity: Quantity, scale: S, base: &'static str) -> Result<u64>
where
    S: Fn(&str, &str) -> std::result::Result<u64, QuantityReason>,
{
    let fail = |reason| Error::Quantity { quantity, text: text.to_string(), reason };
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(fail(QuantityReason::Empty));
    }
    if trimmed.starts_with('-') {
        return Err(fail(QuantityReason::Negative));
    }
    let (number, unit) = split_number(trimmed);
    if number.is_empty() {
        return Err(fail(QuantityReason::NotANumber));
    }
    scale(unit.trim_start(), number).and_then(|scale| scale_decimal(number, scale, base)).map_err(fail)
}

/// The multiplier of a size unit.
fn size_scale(unit: &str) -> std::result::Result<u64, QuantityReason> {
    let power = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 1,
        "m" | "mb" | "mib" => 2,
        "g" | "gb" | "gib" => 3,
        "t" | "tb" | "tib" => 4,
        _ => return Err(QuantityReason::UnknownUnit { unit: unit.to_string(), expected: SIZE_UNITS }),
    };
    Ok(1024u64.pow(power))
}

/// The multiplier of a rate unit (`k`, `Mbit`, `gbit/s`, …).
fn rate_scale(unit: &str) -> std::result::Result<u64, QuantityReason> {
    let lower = unit.to_ascii_lowercase();
    if lower.ends_with("bps") {
        return Err(QuantityReason::AmbiguousBps);
    }
    let prefix = lower.strip_suffix("bit/s").or_else(|| lower.strip_suffix("bit")).unwrap_or(&lower);
    let power = match prefix {
        "" => 0,
        "k" => 1,
        "m" => 2,
        "g" => 3,
        "t" => 4,
        _ => return Err(QuantityReason::UnknownUnit { unit: unit.to_string(), expected: RATE_UNITS }),
    };
    Ok(1000u64.pow(power))
}

/// Splits `text` after its leading digits and decimal points: `("1.5", "MiB")`.
pub fn split_number(text: &str) -> (&str, &str) {
    let at = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    text.split_at(at)
}

/// Exactly `number × scale` for a plain decimal `number` (`12`, `1.5`, `0.25`; digits on both
/// sides of a point), if that is a whole number of the base `unit` and fits in a `u64`.
pub fn scale_decimal(
    number: &str,
    scale: u64,
    unit: &'static str,
) -> std::result::Result<u64, QuantityReason> {
    let (int, frac) = match number.split_once('.') {
        Some((int, frac)) => (int, frac),
        None => (number, ""),
    };
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() || !all_digits(int) || !all_digits(frac) || (number.contains('.') && frac.is_empty()) {
        return Err(QuantityReason::NotANumber);
    }
    let (int, frac) = (int.trim_start_matches('0'), frac.trim_end_matches('0'));
    if int.len() > 20 {
        return Err(QuantityReason::TooLarge);
    }
    if frac.len() > 18 {
        return Err(QuantityReason::Fraction { unit });
    }
    let mantissa = int.bytes().chain(frac.bytes()).fold(0u128, |acc, b| acc * 10 + u128::from(b - b'0'));
    let product = mantissa.checked_mul(u128::from(scale)).ok_or(QuantityReason::TooLarge)?;
    let divisor = 10u128.pow(frac.len() as u32);
    if product % divisor != 0 {
        return Err(QuantityReason::Fraction { unit });
    }
    u64::try_from(product / divisor).map_err(|_| QuantityReason::TooLarge)
}

/// A bit rate in bits per second (SI: 1 Mbit/s = 1,000,000 bit/s).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BitRate(pub u64);

/// SI prefixes used when writing rates, largest first.
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

    /// A rate of `bits_per_sec`, or `None` for zero (where zero means "no limit", as for a
    /// link, a rate is never zero).
    pub const fn positive(bits_per_sec: u64) -> Option<Self> {
        match bits_per_sec {
            0 => None,
            bps => Some(Self(bps)),
        }
    }

    /// The rate in bits per second.
    pub const fn bits_per_sec(self) -> u64 {
        self.0
    }

    /// The rate in bits per second, as a float for rate arithmetic.
    pub fn bps_f64(self) -> f64 {
        self.0 as f64
    }

    /// Reads a rate: `100M`, `100mbit`, `1Gbit/s`, `149.76m`, `64k`, `9600`, `0`. The prefixes
    /// k (or K), M, G, T are powers of 1000; no unit is bit/s; `bps` is refused. Zero is a rate
    /// here: callers for which it makes no sense refuse it themselves.
    pub fn parse(text: &str) -> Result<Self> {
        read(text, Quantity::Rate, |unit, _| rate_scale(unit), "bit/s").map(Self)
    }
}

impl FromStr for BitRate {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        Self::parse(text)
    }
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
    use proptest::prelude::*;

    fn rate(text: &str) -> Option<u64> {
        BitRate::parse(text).ok().map(|r| r.0)
    }

    fn reason(result: Result<impl fmt::Debug>) -> QuantityReason {
        match result {
            Err(Error::Quantity { reason, .. }) => reason,
            other => panic!("expected a quantity error, got {other:?}"),
        }
    }

    #[test]
    fn sizes_are_powers_of_1024() {
        assert_eq!(parse_size("1500"), Ok(1500));
        assert_eq!(parse_size("1500B"), Ok(1500));
        assert_eq!(parse_size("8K"), Ok(8192));
        assert_eq!(parse_size("8k"), Ok(8192));
        assert_eq!(parse_size("64KB"), Ok(65_536));
        assert_eq!(parse_size("64kib"), Ok(65_536));
        assert_eq!(parse_size("1.5M"), Ok(1_572_864));
        assert_eq!(parse_size("2MiB"), Ok(2 << 20));
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("1tb"), Ok(1 << 40));
        assert_eq!(parse_size(" 128 K "), Ok(131_072));
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("0.5K"), Ok(512));
        assert_eq!(parse_size("0.000000000000000000000000000000K"), Ok(0));
    }

    #[test]
    fn rates_are_powers_of_1000() {
        assert_eq!(rate("100M"), Some(100_000_000));
        assert_eq!(rate("100m"), Some(100_000_000));
        assert_eq!(rate("100mbit"), Some(100_000_000));
        assert_eq!(rate("1Gbit/s"), Some(1_000_000_000));
        assert_eq!(rate("64k"), Some(64_000));
        assert_eq!(rate("64K"), Some(64_000), "upper-case K is 1000 in a rate, as iperf3");
        assert_eq!(rate("149.76m"), Some(149_760_000));
        assert_eq!(rate("1.50k"), Some(1500));
        assert_eq!(rate("9600"), Some(9600));
        assert_eq!(rate("9600bit"), Some(9600));
        assert_eq!(rate("2t"), Some(2_000_000_000_000));
        assert_eq!(rate("0"), Some(0));
    }

    #[test]
    fn each_refusal_has_its_reason() {
        assert_eq!(reason(parse_size("")), QuantityReason::Empty);
        assert_eq!(reason(parse_size("  ")), QuantityReason::Empty);
        assert_eq!(reason(parse_size("-1")), QuantityReason::Negative);
        assert_eq!(reason(BitRate::parse("-1m")), QuantityReason::Negative);
        for bad in ["K", "nan", "NaN", "inf", "+1", ".5K", "1.K", "1..2K", "1.2.3m", "x"] {
            assert_eq!(reason(parse_size(bad)), QuantityReason::NotANumber, "{bad}");
        }
        let unknown = |unit: &str, expected| QuantityReason::UnknownUnit { unit: unit.into(), expected };
        assert_eq!(reason(parse_size("12Q")), unknown("Q", SIZE_UNITS));
        assert_eq!(reason(parse_size("1e6")), unknown("e6", SIZE_UNITS));
        assert_eq!(reason(parse_size("8Kb/s")), unknown("Kb/s", SIZE_UNITS));
        assert_eq!(reason(parse_size("8K 1")), unknown("K 1", SIZE_UNITS));
        assert_eq!(reason(BitRate::parse("10X")), unknown("X", RATE_UNITS));
        assert_eq!(reason(BitRate::parse("1MB")), unknown("MB", RATE_UNITS));
        assert_eq!(reason(BitRate::parse("1Mibit")), unknown("Mibit", RATE_UNITS));
        assert_eq!(reason(BitRate::parse("100mbps")), QuantityReason::AmbiguousBps);
        assert_eq!(reason(parse_size("1.3K")), QuantityReason::Fraction { unit: "bytes" });
        assert_eq!(reason(parse_size("0.5")), QuantityReason::Fraction { unit: "bytes" });
        assert_eq!(reason(BitRate::parse("1.5")), QuantityReason::Fraction { unit: "bit/s" });
        assert_eq!(reason(BitRate::parse("1.0001k")), QuantityReason::Fraction { unit: "bit/s" });
        let places = parse_size("15.9999999999999999999999999999T");
        assert_eq!(reason(places), QuantityReason::Fraction { unit: "bytes" });
        assert_eq!(reason(parse_size("16777216T")), QuantityReason::TooLarge);
        assert_eq!(reason(parse_size("18446744073709551616")), QuantityReason::TooLarge);
        assert_eq!(reason(BitRate::parse("99999999999t")), QuantityReason::TooLarge);
        assert_eq!(reason(parse_size("999999999999999999999999999999999999999T")), QuantityReason::TooLarge);
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(
            parse_size("16777215.999999999999T"),
            Err(Error::Quantity {
                quantity: Quantity::Size,
                text: "16777215.999999999999T".into(),
                reason: QuantityReason::Fraction { unit: "bytes" },
            })
        );
    }

    #[test]
    fn errors_name_the_text() {
        let message = parse_size("12Q").map_err(|e| e.to_string());
        assert_eq!(
            message,
            Err("invalid size \"12Q\": unknown unit \"Q\" (B, K, M, G or T, in powers of 1024; KB and KiB are K too)"
                .into())
        );
        let message = BitRate::parse("1.5").map_err(|e| e.to_string());
        assert_eq!(message, Err("invalid rate \"1.5\": not a whole number of bit/s".into()));
    }

    #[test]
    fn display_reads_back() {
        for bps in [0, 1, 999, 1000, 1500, 149_760_000, 10_000_000_000, 599_040_000, u64::MAX] {
            let rate = BitRate(bps);
            assert_eq!(BitRate::parse(&rate.to_string()), Ok(rate), "{rate}");
        }
        assert_eq!(BitRate(149_760_000).to_string(), "149.76m");
        assert_eq!(BitRate::from_gbit(1).to_string(), "1g");
        assert_eq!("1g".parse(), Ok(BitRate::from_gbit(1)));
    }

    #[test]
    fn one_duration_grammar() {
        use BareNumber::{Milliseconds, NeedsUnit, Seconds};
        let d = |t: &str, bare| parse_duration(t, bare).map_err(|e| e.to_string());
        assert_eq!(d("1m", NeedsUnit), Ok(Duration::from_secs(60)), "m is minutes");
        assert_eq!(d("90s", NeedsUnit), Ok(Duration::from_secs(90)));
        assert_eq!(d("0.5ms", NeedsUnit), Ok(Duration::from_micros(500)));
        assert_eq!(d("2h", NeedsUnit), Ok(Duration::from_secs(7200)));
        assert_eq!(d("7d", NeedsUnit), Ok(Duration::from_secs(7 * 86_400)));
        assert_eq!(d("45µs", NeedsUnit), Ok(Duration::from_micros(45)));
        assert_eq!(d(" 2.5 S ", NeedsUnit), Ok(Duration::from_millis(2500)));
        assert_eq!(d("1.5min", NeedsUnit), Ok(Duration::from_secs(90)));
        assert_eq!(d("10", Seconds), Ok(Duration::from_secs(10)));
        assert_eq!(d("0.25", Seconds), Ok(Duration::from_millis(250)));
        assert_eq!(d("500", Milliseconds), Ok(Duration::from_millis(500)));
        assert_eq!(d("0", NeedsUnit), Ok(Duration::ZERO), "zero needs no unit");
        let needs = "invalid duration \"20\": needs a unit (ns, us (µs), ms, s, m (minutes), h or d)";
        assert_eq!(d("20", NeedsUnit), Err(needs.into()));
        assert_eq!(
            d("0.5ns", Seconds),
            Err("invalid duration \"0.5ns\": not a whole number of nanoseconds".into())
        );
        assert_eq!(d("-1s", Seconds), Err("invalid duration \"-1s\": negative".into()));
        for bad in ["", "s", "1w", "1.2.3s", "1e3s", "nan", "99999999999d", "1 m s"] {
            assert!(d(bad, Seconds).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn durations_are_written_as_they_are_read() {
        for (ns, text) in
            [(0, "0s"), (3, "3ns"), (45_000, "45us"), (170_000_000, "170ms"), (2_500_000_000, "2.5s")]
        {
            let d = Duration::from_nanos(ns);
            assert_eq!(format_duration(d), text);
            assert_eq!(parse_duration(text, BareNumber::NeedsUnit), Ok(d));
        }
    }

    const SIZE_SUFFIXES: [(&str, u32); 9] =
        [("", 0), ("B", 0), ("K", 1), ("kb", 1), ("KiB", 1), ("M", 2), ("MB", 2), ("gib", 3), ("G", 3)];

    proptest! {
        #[test]
        fn durations_round_trip(ns in any::<u64>()) {
            let d = Duration::from_nanos(ns);
            prop_assert_eq!(parse_duration(&format_duration(d), BareNumber::NeedsUnit), Ok(d));
        }

        #[test]
        fn rates_round_trip(bps in any::<u64>()) {
            prop_assert_eq!(BitRate::parse(&BitRate(bps).to_string()), Ok(BitRate(bps)));
        }

        #[test]
        fn sizes_written_with_a_unit_read_back(units in 0u64..1_000_000, half in any::<bool>(), unit in 0..SIZE_SUFFIXES.len()) {
            let (suffix, power) = SIZE_SUFFIXES[unit];
            let scale = 1024u64.pow(power);
            let text = if half { format!("{units}.5{suffix}") } else { format!("{units}{suffix}") };
            let expected = units * scale + if half { scale / 2 } else { 0 };
            if half && power == 0 {
                prop_assert_eq!(reason(parse_size(&text)), QuantityReason::Fraction { unit: "bytes" });
            } else {
                prop_assert_eq!(parse_size(&text), Ok(expected));
            }
        }

        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,40}") {
            let _ = parse_size(&text);
            let _ = BitRate::parse(&text);
        }
    }
}
