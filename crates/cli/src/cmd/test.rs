//! `tcplab stream`, `rr`, `crr`: one test (repeated until confident with `-I`), live output,
//! summary, archive, exit code.

use std::process::ExitCode;

use anyhow::Result;
use engine::StopFlag;
use report::{json, Format};
use results::{Reference, Status, TestSpec};

use crate::args::emu::PathArgs;
use crate::args::ClientArgs;
use crate::cmd::emulated::{self, Session};
use crate::output::{emit, format_of, now_unix_ms, record, Live};
use crate::recorder::{status_of, Recorder};
use crate::repeat;
use crate::settings::client_options;

/// Runs `spec` against the server in `client`, or across the emulated path in `path` if it
/// names one (client and server on its two sides); compares its throughput with `reference`
/// (from `--link`) and diagnoses it.
pub fn run_with(
    client: &ClientArgs,
    path: &PathArgs,
    spec: TestSpec,
    reference: Option<Reference>,
    stop: &StopFlag,
) -> Result<ExitCode> {
    let started = now_unix_ms();
    let target = repeat::target(&client.confidence)?;
    let session = Session::start(path)?;
    let opts = match &session {
        Some(s) => s.client_options(client_options(client)),
        None => client_options(client),
    };
    let mut rec = Recorder::open(&client.store)?;
    let server = format!("{}:{}", opts.host, opts.port);
    rec.begin(&record(Vec::new(), None, None, started), store::RunKind::Test, &server)?;
    let mut live = Live::new(format_of(&client.output));
    let (mut result, remote) = emulated::in_client(session.as_ref(), || {
        repeat::run(&opts, &spec, target.as_ref(), &mut live, stop)
    })?;
    diagnose::annotate(&mut result, reference);
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
    rec.remote_host(remote.as_ref())?;
    rec.test(&result)?;
    rec.finish(status_of(std::slice::from_ref(&result)), result.error.as_ref())?;
    let mut doc = record(vec![result], remote, None, started);
    doc.id = rec.run_id();
    if live.format() == Format::Json {
        emit(&json::document(&doc));
    }
    if let Some(path) = &client.output.report {
        crate::cmd::report::write_html(path, &doc)?;
    }
    match failure {
        None => Ok(ExitCode::SUCCESS),
        Some(msg) => {
            eprintln!("error: {msg}");
            Ok(ExitCode::from(2))
        }
    }
}
