//! Where results go while a run is under way: the lines the run's [`Printer`] makes of each
//! start, interval and end (live interval lines, NDJSON events, each test's summary, the one
//! JSON document at the end) are written to stdout, which carries results only.
//!
//! A reader that goes away (`tcplab stream … | head -1`) does not stop the measurement:
//! output stops quietly, the run is measured and stored as usual, and the exit status says
//! how the run went (ripgrep's rule: a closed pipe is not an error).

use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use engine::Observer;
use report::live::{Point, Printer, Start, Tick};
use report::Format;
use results::{HostInfo, Interval, Role, RunRecord, TestError, TestResult, TestSpec};

/// Set once stdout's reader has gone away.
static STDOUT_GONE: AtomicBool = AtomicBool::new(false);

/// Writes one line to stdout; after the reader went away, nothing (the run goes on).
pub fn emit(s: &str) {
    if STDOUT_GONE.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = writeln!(out, "{s}").and_then(|()| out.flush()) {
        if e.kind() == ErrorKind::BrokenPipe {
            STDOUT_GONE.store(true, Ordering::Relaxed);
        }
    }
}

/// Set once the NDJSON `error` event has been written.
static ERROR_SENT: AtomicBool = AtomicBool::new(false);

/// Writes the `error` event of `printer`'s format (NDJSON has one), once per process whoever
/// fails first: the run, or the command line and settings before any run began.
pub fn emit_error_event(printer: &dyn Printer, e: &TestError) {
    if let Some(event) = printer.error_event(e) {
        if !ERROR_SENT.swap(true, Ordering::Relaxed) {
            emit(&event);
        }
    }
}

/// Writes each line.
pub fn emit_all(lines: Vec<String>) {
    lines.iter().for_each(|l| emit(l));
}

/// Live output of a run: what happens goes to its format's [`Printer`], chosen once.
#[derive(Debug)]
pub struct Live {
    printer: Arc<dyn Printer>,
    /// Print interval lines (text): off in suites and sweeps, which show a progress bar.
    pub show_intervals: bool,
    label: String,
    /// The sweep point under way, for NDJSON events.
    pub point: Option<Point>,
    server_host_shown: bool,
}

impl Live {
    /// Live output in `format`; its printer's opening lines (NDJSON: the client host).
    pub fn new(format: Format) -> Live {
        let printer: Arc<dyn Printer> = Arc::from(report::live::printer(format));
        emit_all(printer.begin(&netio::host::host_info));
        Live { printer, show_intervals: true, label: String::new(), point: None, server_host_shown: false }
    }

    /// The printer.
    pub fn printer(&self) -> &Arc<dyn Printer> {
        &self.printer
    }

    /// A test ended: its summary (text, when `summary_text`) or end event (NDJSON).
    pub fn test_done(&self, r: &TestResult, summary_text: bool) {
        emit_all(self.printer.test_done(r, self.point.as_ref(), summary_text));
    }

    /// The run failed: the error event, in the formats that have one.
    pub fn error(&self, e: &TestError) {
        emit_error_event(&*self.printer, e);
    }

    /// A line for people (left out of machine formats).
    pub fn note(&self, line: &str) {
        emit_all(self.printer.note(line));
    }
}

impl Observer for Live {
    fn on_start(&mut self, label: &str, spec: &TestSpec, server: &str, host: Option<&HostInfo>) {
        self.label = label.to_string();
        let server_host = host.filter(|_| !self.server_host_shown);
        let start = Start {
            label,
            spec,
            server,
            intervals: engine::registry::of(spec.test).produces().intervals,
            server_host,
            point: self.point.as_ref(),
            show_intervals: self.show_intervals,
        };
        emit_all(self.printer.test_start(&start));
        self.server_host_shown |= server_host.is_some();
    }

    fn on_interval(&mut self, spec: &TestSpec, interval: &Interval) {
        // The client's own intervals: a stream it receives shows no sender figures.
        let receives = |i| engine::stream::role(spec, engine::side::End::Client, i) == Role::Recv;
        let tick = Tick {
            label: &self.label,
            intervals: engine::registry::of(spec.test).produces().intervals,
            interval,
            receives: &receives,
            show_intervals: self.show_intervals,
        };
        emit_all(self.printer.interval(&tick));
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_unix_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// A run record of this process: version, command line, this host.
pub fn record(
    tests: Vec<TestResult>,
    remote: Option<HostInfo>,
    error: Option<TestError>,
    started: u64,
) -> RunRecord {
    RunRecord {
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        command_line: std::env::args().collect(),
        started_unix_ms: started,
        local_host: netio::host::host_info(),
        remote_host: remote,
        tests,
        error,
        id: None,
        sweep: None,
        cc: None,
    }
}

/// Writes what `format` promises on stdout when a command fails before or outside its
/// tests: one document with the error at the top level (the `--json` contract: one document
/// whenever the exit is not 0), or the `error` event (once).
pub fn emit_failure(format: Format, code: &str, message: &str) {
    let printer = report::live::printer(format);
    let error = TestError { code: code.into(), message: message.into() };
    let record = || record(Vec::new(), None, Some(error.clone()), now_unix_ms());
    if let Some(doc) = printer.failure_document(&error, &record) {
        emit(&doc);
    }
    emit_error_event(&*printer, &error);
}
