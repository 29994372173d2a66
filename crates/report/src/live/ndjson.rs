//! NDJSON (`--json-stream`): one event per line as things happen ([`crate::ndjson`]).

use super::{Ending, Printer, Start, Tick};
use crate::ndjson;
use results::{HostInfo, RunRecord, TestError, TestResult};

/// NDJSON events.
#[derive(Debug)]
pub struct Ndjson;

impl Printer for Ndjson {
    fn begin(&self, client: &dyn Fn() -> HostInfo) -> Vec<String> {
        vec![ndjson::host("client", &client())]
    }

    fn test_start(&self, s: &Start<'_>) -> Vec<String> {
        let host = s.server_host.map(|h| ndjson::host("server", h));
        host.into_iter().chain([ndjson::start(s.label, s.server, s.spec, s.point)]).collect()
    }

    fn interval(&self, t: &Tick<'_>) -> Vec<String> {
        vec![ndjson::interval(t.label, t.interval)]
    }

    fn segment_flow(&self, label: &str, flow: &results::segment_flow::FlowInterval, _: bool) -> Vec<String> {
        vec![ndjson::segment_flow(label, flow)]
    }

    fn test_done(&self, r: &TestResult, point: Option<&super::Point>, _: bool) -> Vec<String> {
        vec![ndjson::end(r, point)]
    }

    fn note(&self, _: &str) -> Vec<String> {
        Vec::new()
    }

    fn end(&self, _: &Ending<'_>) -> Vec<String> {
        Vec::new()
    }

    fn error_event(&self, error: &TestError) -> Option<String> {
        Some(ndjson::error(error))
    }

    fn failure_document(&self, _: &TestError, _: &dyn Fn() -> RunRecord) -> Option<String> {
        None
    }

    fn shown(&self, what: &dyn super::Shown) -> Vec<String> {
        vec![what.json().to_string()]
    }

    fn for_people(&self) -> bool {
        false
    }
}
