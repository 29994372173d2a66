//! Renderers of results: human text ([`text`]), one JSON document ([`json`]), NDJSON
//! events ([`ndjson`]), CSV ([`csv`]), sweep grids ([`grid`]), repetition blocks
//! ([`confidence`]) and run comparisons ([`compare`]). Only this crate knows output
//! formats; each is a pure function of `results` values, so it is snapshot-testable.
#![forbid(unsafe_code)]

pub mod compare;
pub mod confidence;
pub mod csv;
pub mod grid;
pub mod json;
pub mod ndjson;
pub mod text;
pub mod units;

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
