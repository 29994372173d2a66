//! `tcplab sweep`: one test type over a grid of parameter values, each point stored as it
//! finishes; `--resume ID` runs only the points not yet stored. A progress bar with an ETA on
//! a terminal, the grid as a table at the end.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use engine::client::ClientOptions;
use engine::server::ServerHandle;
use engine::{Server, ServerConfig, StopFlag};
use indicatif::{ProgressBar, ProgressStyle};
use report::{grid, json, Format};
use results::{
    Estimate, HostInfo, RunRecord, Status, SweepPlan, SweepPoint, TestError, TestResult, TestSpec,
};
use store::{RunKind, RunStatus};

use crate::args::SweepArgs;
use crate::cmd::emulated::{self, Session};
use crate::output::{emit, format_of, now_unix_ms, record, Live};
use crate::recorder::{open_store, Recorder};
use crate::settings::{apply_socket, apply_timing, HANDSHAKE_TIMEOUT};
use crate::sweep_plan::{describe, plan, point_spec};
use crate::{repeat, settings};

/// Stored server of a sweep against the embedded loopback server.
const EMBEDDED: &str = "embedded";

/// What to run: the plan, where, and which points are done already.
#[derive(Debug)]
struct Job {
    plan: SweepPlan,
    /// `None` = embedded server.
    host: Option<String>,
    port: u16,
    done: BTreeSet<u32>,
}

/// How the points loop ended.
#[derive(Debug)]
enum End {
    Complete,
    Interrupted,
    Failed(TestError),
}

/// Runs (or resumes) a sweep.
pub fn run(a: &SweepArgs, stop: &StopFlag) -> Result<ExitCode> {
    let started = now_unix_ms();
    let format = format_of(&a.output);
    let (job, mut rec) = match a.resume {
        Some(id) => resume_job(a, id)?,
        None => new_job(a, started)?,
    };
    if a.path.emu.path.is_some() && job.host.is_some() {
        bail!("--path runs its own server across the emulated link; drop HOST");
    }
    let session = Session::start(&a.path.emu)?;
    let embedded = match (&job.host, &session) {
        (None, None) => Some(start_embedded()?),
        _ => None,
    };
    let opts = ClientOptions {
        host: job.host.clone().unwrap_or_else(|| "127.0.0.1".into()),
        port: embedded.as_ref().map(|s| s.addr.port()).unwrap_or(job.port),
        bind: None,
        family: None,
        timeout: HANDSHAKE_TIMEOUT,
        busy_wait: Duration::from_secs(3),
    };
    let opts = match &session {
        Some(s) => s.client_options(opts),
        None => opts,
    };
    let mut live = Live::new(format);
    live.show_intervals = false;
    let mut ran = Vec::new();
    let reference = crate::settings::link_reference(&a.path.link, job.plan.base.test)?;
    let end = emulated::in_client(session.as_ref(), || {
        let mut cx = Ctx { job: &job, opts: &opts, reference, session: session.as_ref(), stop, remote: None };
        run_points(&mut cx, &mut rec, &mut live, &mut ran)
    })?;
    if let Some(s) = embedded {
        s.shutdown();
    }
    if let Some(Err(e)) = session.map(Session::finish) {
        eprintln!("error: {e:#}"); // the points measured are stored and shown below
    }
    finish(&job, rec, end, ran, started, (format, a.output.report.as_deref()))
}

fn base_spec(a: &SweepArgs) -> Result<TestSpec> {
    let mut spec = engine::registry::defaults(a.test);
    apply_timing(&mut spec, &a.timing);
    apply_socket(&mut spec, &a.socket);
    if let Some(len) = a.len {
        (spec.send_len, spec.recv_len) = (len, len);
    }
    if let Some(rate) = a.rate {
        spec.rate_bps = rate;
    }
    if let Some(size) = a.size {
        (spec.request_len, spec.response_len) = size;
    }
    spec.burst = a.burst;
    spec.direction = match (a.reverse, a.bidir) {
        (true, _) => results::Direction::Reverse,
        (_, true) => results::Direction::Bidir,
        _ => results::Direction::Forward,
    };
    settings::check_spec(&spec)?;
    Ok(spec)
}

fn new_job(a: &SweepArgs, started: u64) -> Result<(Job, Recorder)> {
    let base = base_spec(a)?;
    let metric = engine::registry::of(base.test).headline().id();
    let mut plan = plan(&base, &a.vary, &a.tie, metric)?;
    plan.confidence = repeat::target(&a.confidence)?;
    let port = a.port.unwrap_or(9180);
    let server = a.host.as_ref().map(|h| format!("{h}:{port}")).unwrap_or_else(|| EMBEDDED.into());
    let mut rec = Recorder::open(&a.store)?;
    rec.begin(&record(Vec::new(), None, None, started), RunKind::Sweep, &server)?;
    if let Some(id) = rec.run_id() {
        if let Some(st) = rec.store() {
            st.begin_sweep(id, &plan)?;
        }
    }
    note(a, &rec, plan.len(), 0);
    Ok((Job { plan, host: a.host.clone(), port, done: BTreeSet::new() }, rec))
}

fn resume_job(a: &SweepArgs, id: i64) -> Result<(Job, Recorder)> {
    if a.store.no_store {
        bail!("--resume reads the archive; it cannot be combined with --no-store");
    }
    let st = open_store(&a.store)?;
    let sweep = st.load_sweep(id)?;
    let done: BTreeSet<u32> = st.finished_points(id)?.into_iter().collect();
    let server = st.server_of(id)?;
    drop(st);
    let (stored_host, stored_port) = match server.rsplit_once(':') {
        _ if server == EMBEDDED => (None, 9180),
        Some((h, p)) => (Some(h.to_string()), p.parse().unwrap_or(9180)),
        None => (Some(server.clone()), 9180),
    };
    let host = a.host.clone().or(stored_host);
    let port = a.port.unwrap_or(stored_port);
    let mut rec = Recorder::open(&a.store)?;
    rec.resume(id)?;
    note(a, &rec, sweep.plan.len(), done.len());
    Ok((Job { plan: sweep.plan, host, port, done }, rec))
}

fn note(a: &SweepArgs, rec: &Recorder, total: usize, done: usize) {
    if format_of(&a.output) != Format::Text {
        return;
    }
    match rec.run_id() {
        Some(id) if done > 0 => eprintln!("resuming sweep {id}: {done} of {total} points done"),
        Some(id) => {
            eprintln!("sweep {id}: {total} points (resume after an interruption: tcplab sweep --resume {id})")
        }
        None => eprintln!("sweep: {total} points (not stored)"),
    }
}

fn start_embedded() -> Result<ServerHandle> {
    let cfg = ServerConfig { bind: SocketAddr::from(([127, 0, 0, 1], 0)), ..ServerConfig::default() };
    Server::bind(cfg).and_then(Server::spawn).context("starting the embedded server on 127.0.0.1")
}

/// Codes after which the sweep stops (to be resumed) rather than storing a failed point.
fn transient(code: &str) -> bool {
    matches!(code, "connect" | "busy" | "peer-vanished" | "io" | "timeout" | "protocol" | "interrupted")
}

/// Shared by the points of one invocation.
struct Ctx<'a> {
    job: &'a Job,
    opts: &'a ClientOptions,
    /// What throughput is compared with (`--link`).
    reference: Option<results::Reference>,
    /// The emulated path (`--path`), whose counters each point gets its share of.
    session: Option<&'a Session>,
    stop: &'a StopFlag,
    remote: Option<HostInfo>,
}

fn run_points(
    cx: &mut Ctx,
    rec: &mut Recorder,
    live: &mut Live,
    ran: &mut Vec<(SweepPoint, TestResult)>,
) -> End {
    let (job, stop) = (cx.job, cx.stop);
    let bar = progress(job.plan.len() as u64, job.done.len() as u64, live.format());
    let end = (|| {
        for index in (0..job.plan.len() as u32).filter(|i| !job.done.contains(i)) {
            if stop.is_set() {
                return End::Interrupted;
            }
            match one_point(cx, index, rec, live, &bar) {
                Ok(done) => ran.push(done),
                Err(end) => return end,
            }
            bar.inc(1);
        }
        End::Complete
    })();
    bar.finish_and_clear();
    end
}

/// Runs and stores point `index`; `Err` ends the sweep.
fn one_point(
    cx: &mut Ctx,
    index: u32,
    rec: &mut Recorder,
    live: &mut Live,
    bar: &ProgressBar,
) -> Result<(SweepPoint, TestResult), End> {
    let failed = |code: &str, e: anyhow::Error| {
        End::Failed(TestError { code: code.into(), message: format!("{e:#}") })
    };
    let (spec, params) = point_spec(&cx.job.plan, index as usize).map_err(|e| failed("bad-plan", e))?;
    bar.set_message(describe(&params));
    let before = cx.session.map(Session::report);
    let (mut r, host) = repeat::run(cx.opts, &spec, cx.job.plan.confidence.as_ref(), live, cx.stop);
    if let (Some(s), Some(before)) = (cx.session, &before) {
        r.emu = Some(emulated::delta(&s.report(), before));
    }
    diagnose::annotate(&mut r, cx.reference.clone());
    if cx.remote.is_none() && host.is_some() {
        cx.remote = host;
        rec.remote_host(cx.remote.as_ref()).map_err(|e| failed("archive", e))?;
    }
    match (&r.status, &r.error) {
        (Status::Interrupted, _) => return Err(End::Interrupted),
        (Status::Failed, Some(e)) if transient(&e.code) => return Err(End::Failed(e.clone())),
        _ => {}
    }
    live.test_done(&r, false);
    let point = point_of(&cx.job.plan, index, params, &r);
    store_point(rec, &point, &r).map_err(|e| failed("archive", e))?;
    Ok((point, r))
}

fn store_point(rec: &mut Recorder, point: &SweepPoint, r: &TestResult) -> Result<()> {
    if let Some(id) = rec.run_id() {
        if let Some(st) = rec.store() {
            st.add_point(id, point, r)?;
        }
    }
    Ok(())
}

fn point_of(plan: &SweepPlan, index: u32, params: Vec<results::ParamSetting>, r: &TestResult) -> SweepPoint {
    let headline = match r.repetition.as_ref().and_then(|rep| rep.estimates.first()) {
        Some(e) => e.clone(),
        None => {
            let v = stats::confidence::metrics_of(r, true).first().map(|m| m.1).unwrap_or(0.0);
            Estimate { metric: plan.metric.clone(), mean: v, values: vec![v], ..Estimate::default() }
        }
    };
    SweepPoint {
        index,
        coords: store::coords_of(plan, index),
        params,
        test_index: 0,
        headline,
        met: r.repetition.as_ref().is_none_or(|rep| rep.met),
    }
}

fn progress(len: u64, done: u64, format: Format) -> ProgressBar {
    if format != Format::Text {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    let style =
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} ETA {eta} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_position(done);
    bar.reset_eta();
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// The run to show: from the archive (earlier points of a resumed sweep included), or from
/// memory with `--no-store`.
fn shown_run(job: &Job, rec: &mut Recorder, ran: Vec<(SweepPoint, TestResult)>, started: u64) -> RunRecord {
    if let Some(id) = rec.run_id() {
        if let Some(Ok(run)) = rec.store().map(|st| st.load_run(id)) {
            return run;
        }
    }
    let (mut points, tests): (Vec<SweepPoint>, Vec<TestResult>) = ran.into_iter().unzip();
    for (i, p) in points.iter_mut().enumerate() {
        p.test_index = i as u32;
    }
    let complete = points.len() == job.plan.len();
    let mut run = record(tests, None, None, started);
    run.sweep = Some(results::Sweep { plan: job.plan.clone(), points, complete });
    run
}

/// Exit 0, or 2 with one line naming the points that failed (e.g. a congestion control the
/// server does not have); they are stored as failed and shown as such in the grid.
fn failed_points(run: &RunRecord) -> ExitCode {
    let Some(sweep) = &run.sweep else { return ExitCode::SUCCESS };
    let failed: Vec<String> = sweep
        .points
        .iter()
        .filter_map(|p| {
            let t = run.tests.get(p.test_index as usize).filter(|t| t.status == Status::Failed)?;
            let why = t.error.as_ref().map(|e| e.message.as_str()).unwrap_or("failed");
            Some(format!("{} ({why})", describe(&p.params)))
        })
        .collect();
    match failed.first() {
        None => ExitCode::SUCCESS,
        Some(first) => {
            let more =
                if failed.len() > 1 { format!(" and {} more", failed.len() - 1) } else { String::new() };
            eprintln!("error: {} of {} points failed: {first}{more}", failed.len(), sweep.points.len());
            ExitCode::from(2)
        }
    }
}

fn finish(
    job: &Job,
    mut rec: Recorder,
    end: End,
    ran: Vec<(SweepPoint, TestResult)>,
    started: u64,
    (format, report): (Format, Option<&std::path::Path>),
) -> Result<ExitCode> {
    let (status, error) = match &end {
        End::Complete => (RunStatus::Complete, None),
        End::Interrupted => (RunStatus::Interrupted, None),
        End::Failed(e) => (RunStatus::Failed, Some(e.clone())),
    };
    rec.finish(status, error.as_ref())?;
    let run = shown_run(job, &mut rec, ran, started);
    match format {
        Format::Text => emit(&grid::table(&run)),
        Format::Json => emit(&json::document(&run)),
        Format::JsonStream => {}
    }
    if let Some(path) = report {
        crate::cmd::report::write_html(path, &run)?;
    }
    let resume =
        rec.run_id().map(|id| format!("; resume with: tcplab sweep --resume {id}")).unwrap_or_default();
    match end {
        End::Complete => Ok(failed_points(&run)),
        End::Interrupted => {
            eprintln!("error: interrupted{resume}");
            Ok(ExitCode::from(2))
        }
        End::Failed(e) => {
            eprintln!("error: {}{resume}", e.message);
            Ok(ExitCode::from(2))
        }
    }
}
