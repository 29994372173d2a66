//! Renderers of results: human text ([`text`], UDP rows in [`udp`]), one JSON document ([`json`]), NDJSON
//! events ([`ndjson`]), CSV ([`csv`]), sweep grids ([`grid`]), repetition blocks
//! ([`confidence`]), run comparisons ([`compare`]) and reports of whole runs
//! ([`DOCUMENTS`]: a self-contained [`html`] page with [`plot`]s, [`markdown`]) and the tables
//! of `tcplab model` ([`model`]). Only this
//! crate knows output formats; each is a pure function of `results` values, so it is
//! snapshot-testable.
#![forbid(unsafe_code)]

pub mod compare;
pub mod confidence;
pub mod csv;
pub mod emu;
pub mod findings;
pub mod grid;
pub mod html;
pub mod json;
pub mod markdown;
pub mod model;
pub mod ndjson;
pub mod param_grid;
pub mod plot;
pub mod tables;
pub mod text;
pub mod udp;
pub mod units;

#[cfg(test)]
mod fixture;
#[cfg(test)]
mod snapshot_tests;

/// Output formats of live test commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Tables for people.
    Text,
    /// One JSON document at the end.
    Json,
    /// One JSON event per line as things happen.
    JsonStream,
}

/// A renderer of whole runs into one document.
pub type Document = fn(&[results::RunRecord]) -> String;

/// Report formats of whole runs: one line per format (id, renderer).
pub const DOCUMENTS: &[(&str, Document)] = &[("html", html::document), ("markdown", markdown::document)];

/// The renderer of report format `id`.
pub fn document(id: &str) -> Option<Document> {
    DOCUMENTS.iter().find(|(name, _)| *name == id).map(|(_, f)| *f)
}
