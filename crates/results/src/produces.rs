//! What a test type produces, as the type declares it (engine's registry) and as its results
//! carry it: its metrics, the summary tables it is a row of, the plots drawn of its intervals
//! and how its live interval lines are laid out. The reports render from this declaration,
//! never from the test's kind, so a new type is shown by naming views that exist; a new view
//! is one variant here and its renderer in `report` (the compiler finds every renderer).

use serde::{Deserialize, Serialize};

use crate::headline::Metric;

/// A summary table of the reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SummaryTable {
    /// One row per bulk TCP direction: goodput, sender rate, retransmits, RTT, limits.
    Streams,
    /// One row per UDP direction: target and achieved rates, datagram accounting, jitter.
    Datagrams,
    /// One row per request/response test: sizes, flows, transactions, rate, latency.
    Transactions,
}

/// A plot of a test's intervals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Plot {
    /// Goodput per interval, and the sender's RTT, cwnd and retransmits.
    StreamTimeline,
    /// Goodput and datagram loss per interval.
    DatagramTimeline,
    /// The headline rate per interval.
    TransactionTimeline,
}

/// The columns of live interval lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IntervalLayout {
    /// iperf3's TCP columns: transfer, bitrate, retransmits, cwnd, RTT.
    Bulk,
    /// iperf3's UDP columns: transfer, bitrate, jitter, lost/total.
    Datagrams,
    /// Transactions and transactions per second.
    Transactions,
}

/// A test type's declaration of what it produces.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Produces {
    /// Its metrics, the headline first; each knows its unit and which way is better.
    #[serde(default)]
    pub metrics: Vec<Metric>,
    /// The summary tables its results are rows of.
    #[serde(default)]
    pub tables: Vec<SummaryTable>,
    /// The plots drawn of its intervals.
    #[serde(default)]
    pub plots: Vec<Plot>,
    /// How its live interval lines are laid out; `None`: it prints none.
    #[serde(default)]
    pub intervals: Option<IntervalLayout>,
}

impl Produces {
    /// Whether nothing is declared (a record written before declarations existed).
    pub fn is_empty(&self) -> bool {
        self.metrics.is_empty() && self.tables.is_empty() && self.plots.is_empty() && self.intervals.is_none()
    }

    /// What `s` holds, read as a declaration: its bulk directions, UDP directions or
    /// transactions, each with its table, plot and interval columns.
    pub fn held_by(s: &crate::summary::Summary) -> Produces {
        let views = [
            (!s.directions.is_empty(), SummaryTable::Streams, Plot::StreamTimeline, IntervalLayout::Bulk),
            (!s.udp.is_empty(), SummaryTable::Datagrams, Plot::DatagramTimeline, IntervalLayout::Datagrams),
            (
                s.rr.is_some(),
                SummaryTable::Transactions,
                Plot::TransactionTimeline,
                IntervalLayout::Transactions,
            ),
        ];
        let held: Vec<_> = views.into_iter().filter(|v| v.0).collect();
        Produces {
            metrics: s.headline.map(|h| h.metric).into_iter().collect(),
            tables: held.iter().map(|v| v.1).collect(),
            plots: held.iter().map(|v| v.2).collect(),
            intervals: held.first().map(|v| v.3),
        }
    }

    /// Whether results are rows of `table`.
    pub fn has_table(&self, table: SummaryTable) -> bool {
        self.tables.contains(&table)
    }

    /// Whether `plot` is drawn of its intervals.
    pub fn has_plot(&self, plot: Plot) -> bool {
        self.plots.contains(&plot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_declaration_round_trips_in_kebab_case() {
        let p = Produces {
            metrics: vec![Metric::Goodput],
            tables: vec![SummaryTable::Datagrams],
            plots: vec![Plot::DatagramTimeline],
            intervals: Some(IntervalLayout::Datagrams),
        };
        let json = serde_json::to_string(&p).unwrap_or_default();
        assert_eq!(
            json,
            r#"{"metrics":["goodput"],"tables":["datagrams"],"plots":["datagram-timeline"],"intervals":"datagrams"}"#
        );
        assert_eq!(serde_json::from_str::<Produces>(&json).ok(), Some(p));
        assert!(serde_json::from_str::<Produces>("{}").is_ok_and(|p| p.is_empty()));
    }
}
