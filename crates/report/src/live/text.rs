//! Live text for people: a start line, interval tables, each test's summary, notes, and
//! the text of the run's end.

use super::{Ending, Printer, Start, Tick};
use crate::text;
use results::{HostInfo, IntervalLayout, RunRecord, TestError, TestResult};

/// Text output.
#[derive(Debug)]
pub struct Text;

impl Printer for Text {
    fn begin(&self, _client: &dyn Fn() -> HostInfo) -> Vec<String> {
        Vec::new()
    }

    fn test_start(&self, s: &Start<'_>) -> Vec<String> {
        if !s.show_intervals {
            return Vec::new();
        }
        let spec = s.spec;
        let mut out = vec![text::start_line(s.label, s.server, spec, s.intervals)];
        let Some(layout) = s.intervals.filter(|_| spec.interval_ms > 0) else { return out };
        out.push(text::interval_header(layout));
        if layout == IntervalLayout::Bulk && spec.client_sends() {
            out.push(text::SENDER_RATE_NOTE.to_string());
        }
        out
    }

    fn interval(&self, t: &Tick<'_>) -> Vec<String> {
        if !t.show_intervals {
            return Vec::new();
        }
        t.intervals.map_or_else(Vec::new, |layout| text::interval_lines(layout, t.interval, t.receives))
    }

    fn segment_flow(&self, _: &str, flow: &results::segment_flow::FlowInterval, timed: bool) -> Vec<String> {
        if !timed {
            return Vec::new();
        }
        vec![text::segment_flow_line(flow)]
    }

    fn test_done(&self, r: &TestResult, _: Option<&super::Point>, summary_text: bool) -> Vec<String> {
        if !summary_text {
            return Vec::new();
        }
        vec![text::test_summary(r)]
    }

    fn note(&self, line: &str) -> Vec<String> {
        vec![line.to_string()]
    }

    fn end(&self, e: &Ending<'_>) -> Vec<String> {
        if e.text.is_empty() {
            return Vec::new();
        }
        vec![e.text.trim_end().to_string()]
    }

    fn error_event(&self, _: &TestError) -> Option<String> {
        None
    }

    fn failure_document(&self, _: &TestError, _: &dyn Fn() -> RunRecord) -> Option<String> {
        None
    }

    fn shown(&self, what: &dyn super::Shown) -> Vec<String> {
        vec![what.text()]
    }

    fn for_people(&self) -> bool {
        true
    }
}
