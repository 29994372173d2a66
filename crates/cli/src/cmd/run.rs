//! `tcplab run [HOST]`: the standard suite against HOST, or against an embedded server on
//! 127.0.0.1 (ephemeral port, in this process). A progress bar on a terminal, one table at
//! the end.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use engine::{Server, ServerConfig, StopFlag};
use indicatif::{ProgressBar, ProgressStyle};
use report::{json, text, Format};
use results::{HostInfo, Status, TestError, TestResult};

use crate::args::{ClientArgs, RunArgs};
use crate::cmd::emulated::{self, Session};
use crate::output::{emit, format_of, now_unix_ms, record, Live};
use crate::recorder::{status_of, Recorder};
use crate::settings::{client_options, link_reference, suite};

/// Runs the suite.
pub fn run(a: &RunArgs, stop: &StopFlag) -> Result<ExitCode> {
    let started = now_unix_ms();
    if a.path.path.is_some() && a.host.is_some() {
        bail!("--path runs its own server across the emulated link; drop HOST");
    }
    let session = Session::start(&a.path)?;
    let reference = Reference {
        link: link_reference(&a.link, results::TestKind::TcpStream)?,
        loopback: a.host.is_none() && session.is_none(),
    };
    let embedded = match &a.host {
        Some(_) => None,
        None if session.is_some() => None,
        None => {
            let cfg = ServerConfig { bind: SocketAddr::from(([127, 0, 0, 1], 0)), ..ServerConfig::default() };
            Some(
                Server::bind(cfg)
                    .and_then(Server::spawn)
                    .context("starting the embedded server on 127.0.0.1")?,
            )
        }
    };
    let client = ClientArgs {
        host: a.host.clone().unwrap_or_else(|| "127.0.0.1".into()),
        port: embedded.as_ref().map(|s| s.addr.port()).unwrap_or(a.port),
        bind: None,
        ipv4: false,
        ipv6: false,
        output: a.output.clone(),
        confidence: Default::default(),
        store: a.store.clone(),
    };
    let mut rec = Recorder::open(&a.store)?;
    let server = a.host.as_ref().map(|h| format!("{h}:{}", a.port)).unwrap_or_else(|| "embedded".into());
    rec.begin(&record(Vec::new(), None, None, started), store::RunKind::Suite, &server)?;
    let mut live = Live::new(format_of(&a.output));
    live.show_intervals = false;
    let (results, remote) = emulated::in_client(session.as_ref(), || {
        run_suite(&client, a.time_ms, &reference, &mut live, stop, &mut rec, session.as_ref())
    })?;
    if let Some(s) = embedded {
        s.shutdown();
    }
    if let Some(Err(e)) = session.map(Session::finish) {
        eprintln!("error: {e:#}"); // the results below are still complete
    }
    rec.remote_host(remote.as_ref())?;
    let first_error = results.iter().find_map(|r| r.error.clone());
    rec.finish(status_of(&results), first_error.as_ref())?;
    let report = a.output.report.as_ref().map(|p| {
        let mut run = record(results.clone(), remote.clone(), first_error.clone(), started);
        run.id = rec.run_id();
        (p, run)
    });
    let code = finish(&live, results, remote, started)?;
    if let Some((path, run)) = report {
        crate::cmd::report::write_html(path, &run)?;
    }
    Ok(code)
}

/// What the suite's stream results are compared with: the link of `--link`, or else (on
/// loopback) the first stream's own goodput, so the reverse stream reads as a share of it.
struct Reference {
    link: Option<results::Reference>,
    loopback: bool,
}

impl Reference {
    /// The reference for `r`, given the baseline found so far (set from the first stream).
    fn for_result(
        &self,
        r: &TestResult,
        baseline: &mut Option<results::Reference>,
    ) -> Option<results::Reference> {
        if self.link.is_some() {
            return self.link.clone();
        }
        if r.summary.shape != Some(results::Shape::TcpBulk) {
            return None; // the loopback baseline is a TCP stream's; a paced UDP test is not one
        }
        let goodput = r.summary.goodput_bps();
        if self.loopback && baseline.is_none() && r.status == Status::Completed && goodput > 0.0 {
            *baseline = Some(diagnose::reference::loopback_baseline(&r.label, goodput));
        }
        baseline.clone()
    }
}

fn run_suite(
    client: &ClientArgs,
    time_ms: u64,
    reference: &Reference,
    live: &mut Live,
    stop: &StopFlag,
    rec: &mut Recorder,
    session: Option<&Session>,
) -> (Vec<TestResult>, Option<HostInfo>) {
    let specs = suite(time_ms);
    let bar = progress(specs.len() as u64, live.format());
    // The server frees its slot as it sends results; a moment's retry covers the race.
    let mut opts =
        engine::client::ClientOptions { busy_wait: Duration::from_secs(3), ..client_options(client) };
    if let Some(s) = session {
        opts = s.client_options(opts);
    }
    let mut results = Vec::new();
    let mut remote = None;
    let mut baseline = None;
    for spec in specs {
        if stop.is_set() {
            break;
        }
        bar.set_message(engine::registry::label(&spec));
        let before = session.map(Session::report);
        let (mut r, host) = engine::run_test(&opts, &spec, live, stop);
        if let (Some(s), Some(before)) = (session, &before) {
            r.emu = Some(emulated::delta(&s.report(), before));
        }
        let against = reference.for_result(&r, &mut baseline);
        diagnose::annotate(&mut r, against);
        remote = remote.or(host);
        live.test_done(&r, false);
        if let Err(e) = rec.test(&r) {
            eprintln!("error: {e:#}");
        }
        bar.inc(1);
        let fatal =
            r.error.as_ref().is_some_and(|e| matches!(e.code.as_str(), "connect" | "busy" | "bad-version"));
        results.push(r);
        if fatal {
            break;
        }
    }
    bar.finish_and_clear();
    (results, remote)
}

fn progress(len: u64, format: Format) -> ProgressBar {
    if format != Format::Text {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    let style = ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

fn finish(live: &Live, results: Vec<TestResult>, remote: Option<HostInfo>, started: u64) -> Result<ExitCode> {
    let failed: Vec<&TestError> =
        results.iter().filter(|r| r.status != Status::Completed).filter_map(|r| r.error.as_ref()).collect();
    let interrupted = results.iter().any(|r| r.status == Status::Interrupted);
    let first_error = failed.first().map(|e| (*e).clone());
    match live.format() {
        Format::Text => {
            emit(&text::suite_table(&results));
            emit(text::suite_diagnosis(&results).trim_end());
            suite_warnings(&results);
        }
        Format::Json => emit(&json::document(&record(results.clone(), remote, first_error.clone(), started))),
        Format::JsonStream => {
            if let Some(e) = &first_error {
                live.error(e);
            }
        }
    }
    if let Some(e) = first_error {
        eprintln!("error: {}", e.message);
        return Ok(ExitCode::from(2));
    }
    if interrupted {
        eprintln!("error: interrupted");
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}

fn suite_warnings(results: &[TestResult]) {
    let mut seen = std::collections::HashSet::new();
    for w in results.iter().flat_map(|r| &r.warnings) {
        if seen.insert(w.kind) {
            emit(&format!("warning: {} — {}", w.message, w.advice));
        }
    }
}
