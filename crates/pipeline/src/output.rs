//! Where results go while a run is under way: live interval lines (text) or NDJSON events,
//! each test's summary or `end` event, and at the end the one JSON document. stdout carries
//! results only.
//!
//! A reader that goes away (`tcplab stream … | head -1`) does not stop the measurement:
//! output stops quietly, the run is measured and stored as usual, and the exit status says
//! how the run went (ripgrep's rule: a closed pipe is not an error).

use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use engine::Observer;
use report::ndjson::Point;
use report::{ndjson, text, Format};
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

/// Writes the NDJSON `error` event, once per process whoever fails first: the run, or the
/// command line and settings before any run began.
pub fn emit_error_event(e: &TestError) {
    if !ERROR_SENT.swap(true, Ordering::Relaxed) {
        emit(&ndjson::error(e));
    }
}

/// Under a sending client's interval header: its rates are what it handed to the socket,
/// which runs ahead of the path (by the socket buffer) until the buffer is full.
pub const SENDER_RATE_NOTE: &str =
    "(sending: Bitrate counts bytes handed to the socket, ahead of the path; the receiver's rate is in the summary)";

/// Live output of a run.
#[derive(Debug)]
pub struct Live {
    format: Format,
    /// Print interval lines (text): off in suites and sweeps, which show a progress bar.
    pub show_intervals: bool,
    label: String,
    /// The sweep point under way, for NDJSON events.
    pub point: Option<Point>,
    server_host_shown: bool,
}

impl Live {
    /// Live output in `format`; NDJSON starts with the client host's event.
    pub fn new(format: Format) -> Live {
        if format == Format::JsonStream {
            emit(&ndjson::host("client", &netio::host::host_info()));
        }
        Live { format, show_intervals: true, label: String::new(), point: None, server_host_shown: false }
    }

    /// The format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// A test ended: its summary (text, when `summary_text`) or end event (NDJSON).
    pub fn test_done(&self, r: &TestResult, summary_text: bool) {
        match self.format {
            Format::Text if summary_text => emit(&text::test_summary(r)),
            Format::JsonStream => emit(&ndjson::end(r, self.point.as_ref())),
            _ => {}
        }
    }

    /// The run failed: the NDJSON `error` event (the other formats say it elsewhere).
    pub fn error(&self, e: &TestError) {
        if self.format == Format::JsonStream {
            emit_error_event(e);
        }
    }
}

impl Observer for Live {
    fn on_start(&mut self, label: &str, spec: &TestSpec, server: &str, host: Option<&HostInfo>) {
        self.label = label.to_string();
        match self.format {
            Format::Text if self.show_intervals => {
                let streams = if spec.parallel == 1 { "" } else { "s" };
                let modes = text::modes(spec).map(|m| format!(" · {m}")).unwrap_or_default();
                emit(&format!(
                    "tcplab {label} → {server} · {} stream{streams} · {}{}{modes}",
                    spec.parallel,
                    limit(spec),
                    text::pacing(spec)
                ));
                if spec.interval_ms > 0 {
                    let shape = engine::registry::of(spec.test).shape();
                    emit(&text::interval_header(shape));
                    if shape == results::Shape::TcpBulk && spec.client_sends() {
                        emit(SENDER_RATE_NOTE);
                    }
                }
            }
            Format::JsonStream => {
                if let (false, Some(h)) = (self.server_host_shown, host) {
                    emit(&ndjson::host("server", h));
                    self.server_host_shown = true;
                }
                emit(&ndjson::start(label, server, spec, self.point.as_ref()));
            }
            _ => {}
        }
    }

    fn on_interval(&mut self, spec: &TestSpec, interval: &Interval) {
        match self.format {
            Format::Text if self.show_intervals => {
                let shape = engine::registry::of(spec.test).shape();
                // The client's own intervals: a stream it receives shows no sender figures.
                let receives = |i| engine::stream::role(spec, engine::side::End::Client, i) == Role::Recv;
                text::interval_lines(shape, interval, &receives).iter().for_each(|l| emit(l))
            }
            Format::JsonStream => emit(&ndjson::interval(&self.label, interval)),
            _ => {}
        }
    }
}

fn limit(spec: &TestSpec) -> String {
    match spec.bytes_limit {
        Some(n) => format!("{} to send", report::units::bytes(n)),
        None => format!("{} s", spec.duration_ms as f64 / 1000.0),
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

/// The JSON document of a command that failed before or outside its tests: no tests, the
/// error at the top level (the `--json` contract: one document whenever the exit is not 0).
pub fn error_document(code: &str, message: &str) -> String {
    let error = TestError { code: code.into(), message: message.into() };
    report::json::document(&record(Vec::new(), None, Some(error), now_unix_ms()))
}
