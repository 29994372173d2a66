//! Live output of the commands that run tests: one [`Printer`] per output format, chosen once
//! from [`Format`] by [`printer`]; the pipeline hands it what happens (a test starts, an
//! interval, a test ends, the run ends, a failure) and writes the lines it returns. The
//! printers are pure: they read no clock and write nothing themselves.

mod documents;
mod ndjson;
mod text;

use results::{HostInfo, Interval, IntervalLayout, RunRecord, TestError, TestResult, TestSpec};

pub use crate::ndjson::Point;
use crate::Format;

/// A test starts.
#[derive(Debug, Clone, Copy)]
pub struct Start<'a> {
    /// Its label.
    pub label: &'a str,
    /// What it runs.
    pub spec: &'a TestSpec,
    /// Where (`host:port`).
    pub server: &'a str,
    /// How its type declares its interval lines laid out (`None`: it prints none).
    pub intervals: Option<IntervalLayout>,
    /// The server's description, when not shown before in this run.
    pub server_host: Option<&'a HostInfo>,
    /// The sweep point under way.
    pub point: Option<&'a Point>,
    /// Whether people see its intervals (off in suites and sweeps, which show a progress bar).
    pub show_intervals: bool,
}

/// An interval report of this end.
#[derive(Clone, Copy)]
pub struct Tick<'a> {
    /// The test's label.
    pub label: &'a str,
    /// How its type declares its interval lines laid out (`None`: it prints none).
    pub intervals: Option<IntervalLayout>,
    /// The interval.
    pub interval: &'a Interval,
    /// Whether this end receives stream `i` (a receiving stream shows no sender figures).
    pub receives: &'a dyn Fn(u32) -> bool,
    /// Whether people see intervals.
    pub show_intervals: bool,
}

impl std::fmt::Debug for Tick<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tick").field("label", &self.label).field("interval", &self.interval).finish()
    }
}

/// How a run ended, as the final output shows it.
#[derive(Debug, Clone, Copy)]
pub struct Ending<'a> {
    /// The whole run.
    pub run: &'a RunRecord,
    /// The text shown at the end for people (empty: nothing).
    pub text: &'a str,
}

/// A whole result a command shows at its end (a comparison): as text for people, or as one
/// JSON value.
pub trait Shown {
    /// For people (written as it is).
    fn text(&self) -> String;
    /// For programs.
    fn json(&self) -> serde_json::Value;
}

/// The live output of one format. Each method returns the lines to write to stdout, in order.
pub trait Printer: std::fmt::Debug + Send + Sync {
    /// The run begins on the client host `client` (asked only when shown).
    fn begin(&self, client: &dyn Fn() -> HostInfo) -> Vec<String>;
    /// A test starts.
    fn test_start(&self, start: &Start<'_>) -> Vec<String>;
    /// An interval of the running test.
    fn interval(&self, tick: &Tick<'_>) -> Vec<String>;
    /// A segment-flow interval of a traced test (`--trace`); `timed`: the test asked for
    /// intervals (`-i`).
    fn segment_flow(
        &self,
        label: &str,
        flow: &results::segment_flow::FlowInterval,
        timed: bool,
    ) -> Vec<String>;
    /// A test ended: its summary (for people, when `summary_text`) or its end event.
    fn test_done(&self, result: &TestResult, point: Option<&Point>, summary_text: bool) -> Vec<String>;
    /// A line for people (the emulated path's counters, a round's name); machine formats
    /// leave it out.
    fn note(&self, line: &str) -> Vec<String>;
    /// The run ended: the final document or text.
    fn end(&self, ending: &Ending<'_>) -> Vec<String>;
    /// The event that says the run failed, where the format has one (written once per
    /// process by the caller).
    fn error_event(&self, error: &TestError) -> Option<String>;
    /// The document of a command that failed before or outside its tests (`record` is
    /// that run, with the error at the top level).
    fn failure_document(&self, error: &TestError, record: &dyn Fn() -> RunRecord) -> Option<String>;
    /// A whole result shown at the end of a command that runs no tests (a comparison).
    fn shown(&self, what: &dyn Shown) -> Vec<String>;
    /// Whether people watch: progress bars and notes on stderr are shown.
    fn for_people(&self) -> bool;
}

/// The printer of `format`.
pub fn printer(format: Format) -> Box<dyn Printer> {
    match format {
        Format::Text => Box::new(text::Text),
        Format::Json => Box::new(documents::Document::Json),
        Format::Iperf3Json => Box::new(documents::Document::Iperf3),
        Format::JsonStream => Box::new(ndjson::Ndjson),
    }
}

#[cfg(test)]
mod tests;
