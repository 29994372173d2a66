//! `tcplab archive audit`: the hosts, or the cells of an inventory's mesh, with no result
//! lately — as a text table or one JSON document ([`Hosts`], [`Cells`], shown through the
//! live printer).

use std::fmt::Write as _;

use crate::live::Shown;

/// One host and what it stored in the period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    /// Its name as recorded with its runs (or as expected).
    pub name: String,
    /// Runs it started in the period.
    pub runs: u64,
    /// Tests it stored in the period.
    pub tests: u64,
    /// Start of its newest test, if it ever stored one.
    pub last_unix_ms: Option<u64>,
}

/// The hosts' audit.
#[derive(Debug, Clone, Copy)]
pub struct Hosts<'a> {
    /// The hosts, missing ones first.
    pub rows: &'a [Host],
    /// Start of the period, ms since the Unix epoch.
    pub since_unix_ms: u64,
    /// Its length in hours (for the text).
    pub hours: f64,
}

impl Shown for Hosts<'_> {
    fn text(&self) -> String {
        let rows = self.rows;
        let width = rows.iter().map(|r| r.name.len()).max().unwrap_or(4).max(4);
        let mut out =
            format!("{:<width$}  {:<7}  {:>5}  {:>6}  last result\n", "host", "status", "runs", "tests");
        for r in rows {
            let status = if r.tests > 0 { "ok" } else { "missing" };
            let last = r.last_unix_ms.map_or_else(|| "never".to_string(), crate::tables::utc);
            let _ = writeln!(out, "{:<width$}  {status:<7}  {:>5}  {:>6}  {last}", r.name, r.runs, r.tests);
        }
        let missing = rows.iter().filter(|r| r.tests == 0).count();
        let _ =
            write!(out, "{missing} of {} host(s) with no result in the last {:.1} h", rows.len(), self.hours);
        out
    }

    fn json(&self) -> serde_json::Value {
        let items: Vec<serde_json::Value> = self
            .rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "kind": "host",
                    "name": r.name,
                    "missing": r.tests == 0,
                    "runs": r.runs,
                    "tests": r.tests,
                    "last_unix_ms": r.last_unix_ms,
                })
            })
            .collect();
        let missing: Vec<&str> = self.rows.iter().filter(|r| r.tests == 0).map(|r| r.name.as_str()).collect();
        serde_json::json!({ "since_unix_ms": self.since_unix_ms, "missing": missing, "rows": items })
    }
}

/// One cell of a mesh (an ordered sender → receiver pair, or a host's loop-back baseline)
/// and its newest completed result, ms since the Unix epoch.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Cell {
    /// The sending host's name.
    pub sender: String,
    /// The receiving host's name.
    pub receiver: String,
    /// Its newest completed result in the period.
    pub last_unix_ms: Option<u64>,
}

/// The mesh cells' audit.
#[derive(Debug, Clone, Copy)]
pub struct Cells<'a> {
    /// The inventory file, as given.
    pub inventory: &'a str,
    /// Start of the period, ms since the Unix epoch.
    pub since_unix_ms: u64,
    /// Every cell.
    pub cells: &'a [Cell],
}

impl Cells<'_> {
    /// How many cells have no result in the period.
    pub fn missing(&self) -> usize {
        self.cells.iter().filter(|c| c.last_unix_ms.is_none()).count()
    }
}

impl Shown for Cells<'_> {
    fn text(&self) -> String {
        let mut o =
            format!("{} of {} cells have no result in the period\n", self.missing(), self.cells.len());
        for c in self.cells.iter().filter(|c| c.last_unix_ms.is_none()) {
            let what = if c.sender == c.receiver { " (loop-back)" } else { "" };
            let _ = writeln!(o, "  missing: {} → {}{what}", c.sender, c.receiver);
        }
        o.trim_end().to_string()
    }

    fn json(&self) -> serde_json::Value {
        serde_json::json!({ "inventory": self.inventory, "since_unix_ms": self.since_unix_ms,
            "cells": self.cells, "missing": self.missing() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hosts_table_lists_each_host_and_counts_the_missing() {
        let rows = [
            Host { name: "gone".into(), runs: 0, tests: 0, last_unix_ms: None },
            Host { name: "a".into(), runs: 2, tests: 2, last_unix_ms: Some(0) },
        ];
        let h = Hosts { rows: &rows, since_unix_ms: 5, hours: 24.0 };
        let text = h.text();
        assert!(text.starts_with("host  status    runs   tests  last result\n"), "{text}");
        assert!(text.contains("gone  missing      0       0  never"), "{text}");
        assert!(text.ends_with("1 of 2 host(s) with no result in the last 24.0 h"), "{text}");
        let v = h.json();
        assert_eq!((v["missing"][0].as_str(), v["rows"][1]["runs"].as_u64()), (Some("gone"), Some(2)));
    }

    #[test]
    fn missing_cells_are_named_and_a_loop_back_is_said() {
        let cells = [
            Cell { sender: "a".into(), receiver: "a".into(), last_unix_ms: None },
            Cell { sender: "a".into(), receiver: "b".into(), last_unix_ms: Some(3) },
        ];
        let c = Cells { inventory: "fleet.toml", since_unix_ms: 1, cells: &cells };
        assert_eq!(c.text(), "1 of 2 cells have no result in the period\n  missing: a → a (loop-back)");
        assert_eq!(c.json()["missing"], 1);
        assert_eq!(c.json()["cells"][1]["last_unix_ms"], 3);
    }
}
