//! NDJSON events, one per line, as they happen (the order is part of the contract):
//! `host` (the client's, then the server's, before the first `start` that reached it),
//! `start`, `interval`… (and `segment-flow`… with `--trace`), `end` per test — in a sweep `start` and `end` carry the `point`
//! (index and parameter values) — and `error` once when the command fails, with the same
//! code and message as the JSON document's top-level `error`.

use results::segment_flow::FlowInterval;
use results::{HostInfo, Interval, ParamSetting, TestError, TestResult, TestSpec};
use serde::Serialize;

/// A sweep point, as start and end events name it.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    /// Index in the sweep's plan.
    pub index: u32,
    /// Points in the plan.
    pub of: usize,
    /// The parameter values of this point.
    pub params: Vec<ParamSetting>,
}

#[derive(Serialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
enum Event<'a> {
    Start {
        label: &'a str,
        server: &'a str,
        spec: &'a TestSpec,
        #[serde(skip_serializing_if = "Option::is_none")]
        point: Option<&'a Point>,
    },
    Interval {
        label: &'a str,
        interval: &'a Interval,
    },
    SegmentFlow {
        label: &'a str,
        flow: &'a FlowInterval,
    },
    End {
        result: &'a TestResult,
        #[serde(skip_serializing_if = "Option::is_none")]
        point: Option<&'a Point>,
    },
    Error {
        error: &'a TestError,
    },
    Host {
        side: &'a str,
        host: &'a HostInfo,
    },
}

fn line(e: &Event) -> String {
    serde_json::to_string(e).unwrap_or_else(|_| "{\"event\":\"error\"}".into())
}

/// A test (of sweep point `point`) started.
pub fn start(label: &str, server: &str, spec: &TestSpec, point: Option<&Point>) -> String {
    line(&Event::Start { label, server, spec, point })
}

/// An interval report.
pub fn interval(label: &str, interval: &Interval) -> String {
    line(&Event::Interval { label, interval })
}

/// A `--trace` segment-flow summary of one direction over one interval.
pub fn segment_flow(label: &str, flow: &FlowInterval) -> String {
    line(&Event::SegmentFlow { label, flow })
}

/// A test (of sweep point `point`) ended, also when it failed: `status` and `error` say so.
pub fn end(result: &TestResult, point: Option<&Point>) -> String {
    line(&Event::End { result, point })
}

/// The command failed outside any test.
pub fn error(error: &TestError) -> String {
    line(&Event::Error { error })
}

/// A host's description.
pub fn host(side: &str, host: &HostInfo) -> String {
    line(&Event::Host { side, host })
}
