//! Renderers of results: human text ([`text`]), one JSON document ([`json`]) and NDJSON
//! events ([`ndjson`]). Only this crate knows output formats; each is a pure function of
//! `results` values, so it is snapshot-testable.
#![forbid(unsafe_code)]

pub mod emu;
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
