//! What one test type measures beyond the figures every test has: its own *sections*, in
//! its own shape, which only that type reads back (engine's registry), and its own *figures*,
//! labelled values every renderer shows as they are. A new test type with figures of its own
//! therefore needs no change here, on the wire or in the renderers.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A test type's own sections of a measurement or summary, by name (a file transfer's
/// `file`). Serialized in place, beside the common fields: `{"measured_s": …, "file": {…}}`.
pub type Sections = BTreeMap<String, serde_json::Value>;

/// A labelled value of a test type's own, for people and tables.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// What it is, in words (`receiver disk time`).
    pub label: String,
    /// Its value.
    pub value: FigureValue,
}

/// A figure's value, typed so that every renderer writes it in tcplab's units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "kebab-case")]
pub enum FigureValue {
    /// Bytes (rendered in KiB/MiB/GiB).
    Bytes(u64),
    /// A count of things.
    Count(u64),
    /// Seconds (rendered in µs/ms/s).
    Seconds(f64),
    /// Bits per second (rendered in kbit/s … Gbit/s).
    BitRate(f64),
    /// A share, 0–1 (rendered in %).
    Share(f64),
    /// Words.
    Text(String),
}

impl Figure {
    /// A figure labelled `label`.
    pub fn new(label: impl Into<String>, value: FigureValue) -> Figure {
        Figure { label: label.into(), value }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_tagged_by_kind() {
        let f = Figure::new("receiver disk time", FigureValue::Seconds(0.25));
        let json = serde_json::to_string(&f).unwrap_or_default();
        assert_eq!(json, r#"{"label":"receiver disk time","value":{"kind":"seconds","value":0.25}}"#);
    }
}
