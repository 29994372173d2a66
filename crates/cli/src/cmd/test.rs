//! `tcplab stream`, `rr`, `crr`: one test, live output, summary, exit code.

use std::process::ExitCode;

use anyhow::Result;
use engine::StopFlag;
use report::{json, Format};
use results::{Status, TestSpec};

use crate::args::emu::PathArgs;
use crate::args::ClientArgs;
use crate::cmd::emulated::{self, Session};
use crate::output::{emit, format_of, now_unix_ms, record, Live};
use crate::settings::client_options;

/// Runs `spec` against the server in `client`.
#[allow(dead_code, reason = "the entry of test commands without --path (kept for udp and sweep)")]
pub fn run(client: &ClientArgs, spec: TestSpec, stop: &StopFlag) -> Result<ExitCode> {
    run_over(client, &PathArgs::default(), spec, stop)
}

/// Runs `spec` against the server in `client`, or across the emulated path in `path` if
/// it names one (client and server on its two sides).
pub fn run_over(client: &ClientArgs, path: &PathArgs, spec: TestSpec, stop: &StopFlag) -> Result<ExitCode> {
    let started = now_unix_ms();
    let session = Session::start(path)?;
    let opts = match &session {
        Some(s) => s.client_options(client_options(client)),
        None => client_options(client),
    };
    let mut live = Live::new(format_of(&client.output));
    let (mut result, remote) =
        emulated::in_client(session.as_ref(), || engine::run_test(&opts, &spec, &mut live, stop))?;
    // The emulator's own failure must not cost the measured result: report it after.
    let emu_failure = match session.map(Session::finish) {
        Some(Ok(report)) => {
            result.emu = Some(report);
            None
        }
        Some(Err(e)) => Some(format!("{e:#}")),
        None => None,
    };
    live.hosts(&netio::host::host_info(), remote.as_ref());
    live.test_done(&result, true);
    if let (Some(r), Format::Text) = (&result.emu, live.format()) {
        emit(&report::emu::text(r));
    }
    let failure = match (&result.status, &result.error) {
        (Status::Completed, _) => None,
        (_, Some(e)) => Some(e.message.clone()),
        (_, None) => Some("interrupted".to_string()),
    }
    .or(emu_failure);
    if live.format() == Format::Json {
        emit(&json::document(&record(vec![result], remote, None, started)));
    }
    match failure {
        None => Ok(ExitCode::SUCCESS),
        Some(msg) => {
            eprintln!("error: {msg}");
            Ok(ExitCode::from(2))
        }
    }
}
