//! The one number a test type is judged by, typed: what it measures, its unit, which way is
//! better, and its value — `None` when the test did not measure it (failed before the
//! measured window), never a made-up zero.

use serde::{Deserialize, Serialize};

/// What a headline measures. Each test type names one (engine's registry); everything that
/// stores, compares, sweeps or renders a headline reads it from here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Metric {
    /// Bytes delivered to the receiving application per second, over all directions, bit/s.
    Goodput,
    /// Request/response transactions completed per second.
    TransactionRate,
    /// Connect/request/response cycles completed per second.
    ConnectionRate,
}

/// Which way of a metric is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Better {
    /// Larger values are better (throughput, rates).
    Higher,
    /// Smaller values are better (latency, cost).
    Lower,
}

/// Every metric, for tables and lookups.
pub const METRICS: [Metric; 3] = [Metric::Goodput, Metric::TransactionRate, Metric::ConnectionRate];

impl Metric {
    /// Stable id, also the name of the archive column and of the repeat-until-confident
    /// estimate: `goodput_bps`, `trans_per_s`, `conn_per_s`.
    pub fn id(self) -> &'static str {
        match self {
            Metric::Goodput => "goodput_bps",
            Metric::TransactionRate => "trans_per_s",
            Metric::ConnectionRate => "conn_per_s",
        }
    }

    /// Name for a person.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Goodput => "goodput",
            Metric::TransactionRate => "transaction rate",
            Metric::ConnectionRate => "connection rate",
        }
    }

    /// Unit of the value.
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Goodput => "bit/s",
            Metric::TransactionRate => "trans/s",
            Metric::ConnectionRate => "conn/s",
        }
    }

    /// Which way is better.
    pub fn better(self) -> Better {
        match self {
            Metric::Goodput | Metric::TransactionRate | Metric::ConnectionRate => Better::Higher,
        }
    }

    /// Whether the value is a bit rate (rendered with k/M/G bit/s) rather than a count per
    /// second.
    pub fn is_bit_rate(self) -> bool {
        self.unit() == "bit/s"
    }

    /// The metric whose [`Metric::id`] is `id`.
    pub fn from_id(id: &str) -> Option<Metric> {
        METRICS.into_iter().find(|m| m.id() == id)
    }
}

/// A test's headline: the metric and, when measured, its value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Headline {
    /// What it measures.
    pub metric: Metric,
    /// The value in [`Metric::unit`]; `None` when nothing was measured.
    pub value: Option<f64>,
    /// The value was measured before the test failed: it covers only the part that ran
    /// (issue 28: a failed test keeps what it measured, marked, whatever its type).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

impl Headline {
    /// A measured headline.
    pub fn measured(metric: Metric, value: f64) -> Headline {
        Headline { metric, value: Some(value), partial: false }
    }

    /// A headline of `metric` that was not measured.
    pub fn unknown(metric: Metric) -> Headline {
        Headline { metric, value: None, partial: false }
    }

    /// This headline marked as measured before a failure (a value only: an unknown stays
    /// unknown, not "partly unknown").
    pub fn cut_short(self) -> Headline {
        Headline { partial: self.value.is_some(), ..self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_are_unique() {
        for m in METRICS {
            assert_eq!(Metric::from_id(m.id()), Some(m));
        }
        assert_eq!(Metric::from_id("bogus"), None);
        let json = serde_json::to_string(&Headline::unknown(Metric::ConnectionRate)).unwrap_or_default();
        assert_eq!(json, r#"{"metric":"connection-rate","value":null}"#);
    }
}
