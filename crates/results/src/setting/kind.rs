//! The kind of a setting's value, how its flag writes it, and the range a server accepts.

use crate::sweep::ParamValue;

/// How a setting's value is written and stored ([`ParamValue`] holds it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// Bytes (`Int`); written with K/M/G, powers of 1024.
    Bytes,
    /// A plain count (`Int`).
    Count,
    /// A time, stored in milliseconds (`Int`); written in seconds as `-t` is.
    Millis,
    /// On or off (`Bool`).
    Bool,
    /// A name (`Text`), e.g. a congestion control.
    Text,
    /// Bits per second (`Int`); written with k/M/G, powers of 1000.
    Rate,
    /// `forward`, `reverse` or `bidir` (`Text`).
    Direction,
}

impl ValueKind {
    /// Whether values are numbers (so a range `FROM..TO` can list them).
    pub fn is_numeric(self) -> bool {
        matches!(self, ValueKind::Bytes | ValueKind::Count | ValueKind::Millis | ValueKind::Rate)
    }

    /// `v` as its flag writes it, the one writer of setting values for help, errors, reports
    /// and sweep axes: sizes `64K` (powers of 1024), rates `100M` (powers of 1000), times
    /// `2.5 s` (the duration grammar reads it back); a value no suffix writes exactly as digits.
    pub fn write(self, v: &ParamValue) -> String {
        let ParamValue::Int(n) = v else { return v.to_string() };
        match self {
            ValueKind::Bytes => exact_multiple(*n, 1024, &["K", "M", "G", "T"]),
            ValueKind::Rate => exact_multiple(*n, 1000, &["k", "M", "G", "T"]),
            ValueKind::Millis => seconds(*n),
            _ => n.to_string(),
        }
    }
}

/// `ms` milliseconds in seconds, exactly: `2.5 s`, `3600 s`, `0.001 s`.
fn seconds(ms: u64) -> String {
    let frac = format!("{:03}", ms % 1000);
    match frac.trim_end_matches('0') {
        "" => format!("{} s", ms / 1000),
        frac => format!("{}.{frac} s", ms / 1000),
    }
}

/// `n` with the largest suffix of `base` that divides it exactly.
fn exact_multiple(n: u64, base: u64, suffixes: &[&str]) -> String {
    let (mut v, mut unit) = (n, "");
    for s in suffixes {
        if v == 0 || v % base != 0 {
            break;
        }
        (v, unit) = (v / base, s);
    }
    format!("{v}{unit}")
}

/// The values a server accepts for a setting: a fixed range, or one from 1 to a cap of the
/// server's (`engine::limits::Limits`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// 1 to the largest read, write, request or response.
    Message,
    /// 1 to the largest socket buffer.
    Buffer,
    /// 1 to the most streams or flows.
    Parallel,
    /// 1 to the largest burst.
    Burst,
    /// From the first to the second, inclusive.
    Range(u64, u64),
}
