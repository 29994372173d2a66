//! JSON numbers as iperf3's cJSON reads and writes them.
//!
//! iperf3 writes integers for counts and may write either spelling anywhere, so every numeric
//! field here accepts an integer or a floating-point spelling (truncated toward zero for
//! integer fields). On output, integers stay integers and a non-finite float (which
//! `serde_json` would write as `null`, a type cJSON's typed lookups refuse) is written as 0.

use serde::{Deserialize, Deserializer, Serializer};
use serde_json::Value;

/// An integer from any JSON number; `None` for other types.
pub(crate) fn int_of(v: &Value) -> Option<i64> {
    if let Some(i) = v.as_i64() {
        return Some(i);
    }
    if let Some(u) = v.as_u64() {
        // iperf3 3.12's cJSON prints a negative int64 as its unsigned twin (−1 as 2⁶⁴−1);
        // the two's-complement cast reads it back as iperf3 itself does.
        return Some(u as i64);
    }
    // `as` saturates at the i64 range and maps NaN to 0 (serde_json never yields NaN).
    v.as_f64().map(|f| f as i64)
}

/// Required integer field, either spelling.
pub(crate) fn de_int<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    let v = Value::deserialize(d)?;
    int_of(&v).ok_or_else(|| serde::de::Error::custom(format!("expected a number, found {v}")))
}

/// Required non-negative integer field (byte counts), either spelling.
pub(crate) fn de_count<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let n = de_int(d)?;
    u64::try_from(n).map_err(|_| serde::de::Error::custom(format!("expected a count, found {n}")))
}

/// Required float field, either spelling.
pub(crate) fn de_float<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let v = Value::deserialize(d)?;
    v.as_f64().ok_or_else(|| serde::de::Error::custom(format!("expected a number, found {v}")))
}

/// Optional integer: absent, or of the wrong type, is `None` (iperf3 3.18+ semantics).
pub(crate) fn de_opt_int<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    Ok(int_of(&Value::deserialize(d)?))
}

/// Optional float: wrong type is `None`.
pub(crate) fn de_opt_float<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Ok(Value::deserialize(d)?.as_f64())
}

/// Optional string: wrong type is `None`.
pub(crate) fn de_opt_string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => Some(s),
        _ => None,
    })
}

/// A flag: only JSON `true` sets it (`1` or `"yes"` do not, as in iperf3).
pub(crate) fn de_flag<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(Value::deserialize(d)? == Value::Bool(true))
}

/// Writes a float, with non-finite values as 0.
pub(crate) fn ser_float<S: Serializer>(f: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(finite(*f))
}

/// Writes an optional float, with non-finite values as 0 (only called when `Some`).
pub(crate) fn ser_opt_float<S: Serializer>(f: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(finite(f.unwrap_or(0.0)))
}

/// `f` if finite, else 0: cJSON has no NaN or infinity.
pub fn finite(f: f64) -> f64 {
    if f.is_finite() {
        f
    } else {
        0.0
    }
}

/// For `skip_serializing_if` on flags: iperf3 3.12 treats a flag's mere presence as set, so a
/// false flag must be absent, never `false`.
pub(crate) fn is_false(b: &bool) -> bool {
    !*b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_of_accepts_both_spellings() {
        assert_eq!(int_of(&serde_json::json!(5)), Some(5));
        assert_eq!(int_of(&serde_json::json!(5.9)), Some(5));
        assert_eq!(int_of(&serde_json::json!(-1)), Some(-1));
        assert_eq!(int_of(&serde_json::json!(1e30)), Some(i64::MAX));
        assert_eq!(int_of(&serde_json::json!(u64::MAX)), Some(-1));
        assert_eq!(int_of(&serde_json::json!("5")), None);
        assert_eq!(finite(f64::NAN), 0.0);
    }
}
