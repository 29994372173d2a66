//! NDJSON events, one per line, as they happen: `start`, `interval`, `end`, `error`.

use results::{HostInfo, Interval, TestError, TestResult, TestSpec};
use serde::Serialize;

#[derive(Serialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
enum Event<'a> {
    Start { label: &'a str, server: &'a str, spec: &'a TestSpec },
    Interval { label: &'a str, interval: &'a Interval },
    End { result: &'a TestResult },
    Error { error: &'a TestError },
    Host { side: &'a str, host: &'a HostInfo },
}

fn line(e: &Event) -> String {
    serde_json::to_string(e).unwrap_or_else(|_| "{\"event\":\"error\"}".into())
}

/// A test started.
pub fn start(label: &str, server: &str, spec: &TestSpec) -> String {
    line(&Event::Start { label, server, spec })
}

/// An interval report.
pub fn interval(label: &str, interval: &Interval) -> String {
    line(&Event::Interval { label, interval })
}

/// A test ended (also when it failed: `status` and `error` say so).
pub fn end(result: &TestResult) -> String {
    line(&Event::End { result })
}

/// The command failed outside any test.
pub fn error(error: &TestError) -> String {
    line(&Event::Error { error })
}

/// A host's description.
pub fn host(side: &str, host: &HostInfo) -> String {
    line(&Event::Host { side, host })
}
