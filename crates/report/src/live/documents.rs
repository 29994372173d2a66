//! One document at the end of the run: tcplab's JSON, or iperf3's `-J` schema. Nothing
//! is written while the run is under way.

use super::{Ending, Printer, Start, Tick};
use results::{HostInfo, RunRecord, TestError, TestResult};

/// A format that writes one document at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Document {
    /// tcplab's JSON ([`crate::json`]).
    Json,
    /// iperf3's `-J` schema ([`crate::iperf3_json`]).
    Iperf3,
}

impl Printer for Document {
    fn begin(&self, _: &dyn Fn() -> HostInfo) -> Vec<String> {
        Vec::new()
    }

    fn test_start(&self, _: &Start<'_>) -> Vec<String> {
        Vec::new()
    }

    fn interval(&self, _: &Tick<'_>) -> Vec<String> {
        Vec::new()
    }

    fn segment_flow(&self, _: &str, _: &results::segment_flow::FlowInterval, _: bool) -> Vec<String> {
        Vec::new()
    }

    fn test_done(&self, _: &TestResult, _: Option<&super::Point>, _: bool) -> Vec<String> {
        Vec::new()
    }

    fn note(&self, _: &str) -> Vec<String> {
        Vec::new()
    }

    fn end(&self, e: &Ending<'_>) -> Vec<String> {
        vec![match self {
            Document::Json => crate::json::document(e.run),
            Document::Iperf3 => crate::iperf3_json::document(e.run),
        }]
    }

    fn error_event(&self, _: &TestError) -> Option<String> {
        None
    }

    fn failure_document(&self, error: &TestError, record: &dyn Fn() -> RunRecord) -> Option<String> {
        Some(match self {
            Document::Json => crate::json::document(&record()),
            Document::Iperf3 => crate::iperf3_json::error_document(&error.message),
        })
    }

    /// iperf3's schema has no place for anything but a test: tcplab's JSON for both.
    fn shown(&self, what: &dyn super::Shown) -> Vec<String> {
        vec![serde_json::to_string_pretty(&what.json()).unwrap_or_default()]
    }

    fn for_people(&self) -> bool {
        false
    }
}
