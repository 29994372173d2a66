//! `tcplab stream`, `rr`, `crr`: one test, live output, summary, exit code.

use std::process::ExitCode;

use anyhow::Result;
use engine::StopFlag;
use report::{json, Format};
use results::{Status, TestSpec};

use crate::args::ClientArgs;
use crate::output::{emit, format_of, now_unix_ms, record, Live};
use crate::settings::client_options;

/// Runs `spec` against the server in `client`.
pub fn run(client: &ClientArgs, spec: TestSpec, stop: &StopFlag) -> Result<ExitCode> {
    let started = now_unix_ms();
    let mut live = Live::new(format_of(&client.output));
    let (result, remote) = engine::run_test(&client_options(client), &spec, &mut live, stop);
    live.hosts(&netio::host::host_info(), remote.as_ref());
    live.test_done(&result, true);
    let failure = match (&result.status, &result.error) {
        (Status::Completed, _) => None,
        (_, Some(e)) => Some(e.message.clone()),
        (_, None) => Some("interrupted".to_string()),
    };
    let run = record(vec![result], remote, None, started);
    if live.format() == Format::Json {
        emit(&json::document(&run));
    }
    if let Some(path) = &client.output.report {
        crate::cmd::report::write_html(path, &run)?;
    }
    match failure {
        None => Ok(ExitCode::SUCCESS),
        Some(msg) => {
            eprintln!("error: {msg}");
            Ok(ExitCode::from(2))
        }
    }
}
