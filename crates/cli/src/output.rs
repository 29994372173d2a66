//! Where results go: live interval lines or NDJSON events while a test runs, then the summary
//! (text), the end event (NDJSON) or one document (JSON). stdout carries results only; a
//! closed pipe ends the program quietly with success.

use std::io::{ErrorKind, Write};
use std::time::{SystemTime, UNIX_EPOCH};

use engine::Observer;
use report::{ndjson, text, Format};
use results::{HostInfo, Interval, RunRecord, TestError, TestResult, TestSpec};

use crate::args::OutputArgs;

/// The format chosen by the flags.
pub fn format_of(o: &OutputArgs) -> Format {
    if o.json {
        Format::Json
    } else if o.json_stream {
        Format::JsonStream
    } else {
        Format::Text
    }
}

/// Writes one line to stdout; exits 0 if the reader went away (`tcplab … | head`).
pub fn emit(s: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = writeln!(out, "{s}").and_then(|()| out.flush()) {
        if e.kind() == ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
    }
}

/// Live output of a command.
#[derive(Debug)]
pub struct Live {
    format: Format,
    /// Print interval lines (text): off in `tcplab run`, which shows a progress bar instead.
    pub show_intervals: bool,
    label: String,
}

impl Live {
    /// Live output in `format`.
    pub fn new(format: Format) -> Live {
        Live { format, show_intervals: true, label: String::new() }
    }

    /// The format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// A test ended: its summary (text) or end event (NDJSON).
    pub fn test_done(&self, r: &TestResult, summary_text: bool) {
        match self.format {
            Format::Text if summary_text => emit(&text::test_summary(r)),
            Format::JsonStream => emit(&ndjson::end(r)),
            _ => {}
        }
    }

    /// Host descriptions (NDJSON only; text and JSON carry them elsewhere).
    pub fn hosts(&self, local: &HostInfo, remote: Option<&HostInfo>) {
        if self.format == Format::JsonStream {
            emit(&ndjson::host("client", local));
            if let Some(r) = remote {
                emit(&ndjson::host("server", r));
            }
        }
    }

    /// An error outside any test.
    pub fn error(&self, e: &TestError) {
        if self.format == Format::JsonStream {
            emit(&ndjson::error(e));
        }
    }
}

impl Observer for Live {
    fn on_start(&mut self, label: &str, spec: &TestSpec, server: &str) {
        self.label = label.to_string();
        match self.format {
            Format::Text if self.show_intervals => {
                emit(&format!(
                    "tcplab {label} → {server} · {} stream{} · {}",
                    spec.parallel,
                    if spec.parallel == 1 { "" } else { "s" },
                    limit(spec)
                ));
                if spec.interval_ms > 0 {
                    emit(&text::interval_header(engine::registry::of(spec.test).shape()));
                }
            }
            Format::JsonStream => emit(&ndjson::start(label, server, spec)),
            _ => {}
        }
    }

    fn on_interval(&mut self, spec: &TestSpec, interval: &Interval) {
        match self.format {
            Format::Text if self.show_intervals => {
                text::interval_lines(engine::registry::of(spec.test).shape(), interval)
                    .iter()
                    .for_each(|l| emit(l))
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

/// A run record for the JSON document.
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
    }
}
