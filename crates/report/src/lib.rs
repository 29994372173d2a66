//! Renderers of results. Every format of stored runs (`show`, `export`, `report`,
//! `history`) is registered once in [`render`] ([`renderers`], [`by_name`]); the archive's own
//! views (the history list, one run's text summary) are in [`archive`]. The parts: human text
//! ([`text`], UDP rows in [`udp`]), one JSON document ([`json`]), NDJSON events ([`ndjson`]),
//! CSV ([`csv`]), sweep grids ([`grid`]), repetition blocks ([`confidence`]), run comparisons
//! ([`compare`]), reports of whole runs (a self-contained [`html`] page with [`plot`]s,
//! [`markdown`]) and the tables of `tcplab model` ([`model`]). Only this crate knows output
//! formats; each is a pure function of `results` values, so it is snapshot-testable.
#![forbid(unsafe_code)]

pub mod archive;
pub mod audit;
pub mod cases;
pub mod cc;
pub mod compare;
pub mod confidence;
pub mod csv;
pub mod emu;
pub mod figures;
pub mod findings;
pub mod grid;
pub mod html;
pub mod iperf3_json;
pub mod json;
pub mod live;
pub mod markdown;
pub mod mesh;
pub mod model;
pub mod ndjson;
pub mod param_grid;
pub mod plot;
pub mod regressions;
pub mod render;
pub mod tables;
pub mod text;
pub mod udp;
pub mod units;

#[cfg(test)]
mod fixture;
#[cfg(test)]
mod snapshot_tests;

pub use render::{by_extension, by_name, renderers, Renderer, View};

/// Output formats of live test commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Tables for people.
    Text,
    /// One JSON document at the end.
    Json,
    /// One JSON event per line as things happen.
    JsonStream,
    /// One document at the end in iperf3's `-J` schema ([`iperf3_json`]).
    Iperf3Json,
}
