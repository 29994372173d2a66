//! Runs a study through the pipeline as one archived run: a sweep whose one axis is the
//! study's cases, each point stored as it finishes. Each stage moves the run to its place
//! (an emulated path, the loopback, or the real HOST); tests are measured, diagnosed, shown
//! and stored by [`pipeline::run::Run`] exactly as every other command's are.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use engine::StopFlag;
use pipeline::run::{Ending, Run};
use pipeline::{Config, PathOptions, Target};
use results::sweep::{Axis, ParamSetting, ParamValue, Sweep, SweepPlan, SweepPoint};
use results::{Estimate, RunRecord, Status, TestError, TestResult};
use store::{RunKind, RunStatus};

use crate::plan::{Stage, Where};
use crate::{Done, Options, Outcome, Study};

/// Runs `study` as `opts` asks; writes the report and prints the comparison at the end.
pub fn run(study: &dyn Study, opts: &Options, stop: &StopFlag) -> Result<ExitCode> {
    let (stages, skipped) = crate::stages_for(study, opts);
    let first = stages.first().context("the study has nothing to run")?;
    if let Some(path) = &opts.report {
        pipeline::run::check_writable(path)?;
    }
    let cfg = Config {
        target: target(first, opts),
        format: report::Format::Text,
        report: None,
        storage: opts.storage.clone(),
        trace: trace_dir(first, 0),
        trace_level: Default::default(),
    };
    let plan = sweep_plan(study, &stages)?;
    let mut run = Run::begin(&cfg, RunKind::Sweep, Duration::from_secs(3))?;
    if let (Some(id), Some(st)) = (run.rec.run_id(), run.rec.store()) {
        st.begin_sweep(id, &plan)?;
    }
    run.live.show_intervals = false;
    eprintln!(
        "study {} ({} mode): {} tests in {} stages{}",
        study.info().name,
        opts.mode.id(),
        plan.len(),
        stages.len(),
        run.rec.run_id().map_or(String::new(), |id| format!(", stored as run {id}"))
    );
    let mut outcome = Outcome {
        mode: opts.mode,
        host: opts.host.as_ref().map(|h| h.host.clone()),
        done: Vec::new(),
        skipped,
        run_id: run.rec.run_id(),
    };
    let failure = run_stages(&mut run, &stages, opts, stop, &mut outcome).err();
    run.end(|run| ending(run, study, opts, &plan, outcome, failure))
}

/// Where `stage` runs.
fn target(stage: &Stage, opts: &Options) -> Target {
    match (&stage.place, &opts.host) {
        (Where::Loopback, _) => Target::Loopback,
        (Where::Between { sender, receiver }, _) => {
            Target::ThirdParty(pipeline::mesh::ends(sender, receiver, opts.key.as_ref()))
        }
        (Where::Path { .. }, Some(host)) => Target::Remote(host.clone()),
        (Where::Path { spec, host_cpu }, None) => Target::Path(PathOptions {
            spec: spec.clone(),
            host_cpu: host_cpu.clone(),
            ..PathOptions::default()
        }),
    }
}

/// The directory a traced stage's segment flows go to.
fn trace_dir(stage: &Stage, index: usize) -> Option<std::path::PathBuf> {
    stage.trace.then(|| std::env::temp_dir().join(format!("tcplab-study-{}-{index}", std::process::id())))
}

/// The archive's view of the study: one axis, the cases in run order.
fn sweep_plan(study: &dyn Study, stages: &[Stage]) -> Result<SweepPlan> {
    let cases: Vec<ParamValue> =
        stages.iter().flat_map(|s| &s.cases).map(|c| ParamValue::Text(c.key.clone())).collect();
    let base = stages.iter().flat_map(|s| &s.cases).next().context("the study has no tests")?.spec.clone();
    let axis = Axis {
        name: "case".into(),
        tied: Vec::new(),
        values: cases,
        text: format!("study {}", study.info().name),
    };
    Ok(SweepPlan { base, axes: vec![axis], confidence: None, metric: "headline".into(), mesh: None })
}

/// Runs every stage's cases; `Err` ends the study early (interrupted, or a place that
/// would not start).
fn run_stages(
    run: &mut Run,
    stages: &[Stage],
    opts: &Options,
    stop: &StopFlag,
    out: &mut Outcome,
) -> Result<()> {
    let total: usize = stages.iter().map(|s| s.cases.len()).sum();
    let bar = pipeline::progress::Progress::new(total as u64, 0, run.live.printer().for_people());
    let (lines, started) = (!std::io::stdout().is_terminal(), std::time::Instant::now());
    let mut index = 0u32;
    for (n, stage) in stages.iter().enumerate() {
        if n > 0 {
            run.move_to(&target(stage, opts), trace_dir(stage, n))
                .with_context(|| format!("starting the stage `{}`", stage.label))?;
        }
        for case in &stage.cases {
            if stop.is_set() {
                bar.finish();
                anyhow::bail!("interrupted");
            }
            bar.message(format!("{} · {}", stage.label, case.key));
            let (r, rtt) = measure(run, case, stop);
            let r = sent_nothing(r);
            store_point(run, index, stage, &case.key, &r);
            if lines {
                bar.line(&progress_line(index as usize + 1, total, started, &case.key, &r));
            }
            out.done.push(Done { stage: stage.label.clone(), case: case.clone(), result: r, rtt });
            index += 1;
            bar.inc();
        }
    }
    bar.finish();
    Ok(())
}

/// Runs `case`, with the RTT probe beside it when it asks for one.
fn measure(run: &mut Run, case: &crate::Case, stop: &StopFlag) -> (TestResult, Option<crate::Rtt>) {
    let Some(interval) = case.probe else {
        return (run.test(&case.spec, case.confidence.as_ref(), stop, |_| None, false), None);
    };
    let beside = |place: &pipeline::place::Place, done: &std::sync::atomic::AtomicBool| {
        let addr = engine::client::resolve(place.client_options()).ok()?;
        let probe = pipeline::rtt_probe::Probe { addr, interval };
        place.in_client(|| probe.beside(done)).ok()
    };
    let (mut rs, samples) = run.tests_beside(std::slice::from_ref(&case.spec), stop, beside, false);
    let rtt = samples.flatten().and_then(|s| crate::Rtt::of(&s));
    match rs.pop() {
        Some(r) => (r, rtt),
        None => (run.test(&case.spec, None, stop, |_| None, false), None),
    }
}

/// A UDP test whose sender got no datagram out (every send refused, e.g. ENOBUFS) measured
/// nothing: it is failed, with the count, not "completed".
pub fn sent_nothing(mut r: TestResult) -> TestResult {
    let udp = &r.summary.udp;
    if r.status != Status::Completed || udp.is_empty() || udp.iter().any(|u| u.sent > 0) {
        return r;
    }
    let (errors, enobufs): (u64, u64) =
        udp.iter().map(|u| (u.send_errors, u.enobufs)).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    r.status = Status::Failed;
    r.error = Some(TestError {
        code: "sent-nothing".into(),
        message: format!("the sender got no datagram out: {errors} sends refused, {enobufs} of them ENOBUFS"),
    });
    r
}

/// One finished case in a line: `[3/17 0:42] clip-udp-l8K: 130.1 Mbit/s`.
fn progress_line(n: usize, total: usize, started: std::time::Instant, key: &str, r: &TestResult) -> String {
    let s = started.elapsed().as_secs();
    let what = match (&r.status, r.summary.headline_value(), r.summary.headline) {
        (Status::Failed, _, _) => format!("failed: {}", r.error.as_ref().map_or("?", |e| e.message.as_str())),
        (_, Some(v), Some(h)) => report::units::metric(h.metric, v),
        _ => "done".into(),
    };
    format!("[{n}/{total} {}:{:02}] {key}: {what}", s / 60, s % 60)
}

/// Stores case `key`'s result as sweep point `index`.
fn store_point(run: &mut Run, index: u32, stage: &Stage, key: &str, r: &TestResult) {
    let params = vec![
        ParamSetting { name: "case".into(), value: ParamValue::Text(key.into()) },
        ParamSetting { name: "stage".into(), value: ParamValue::Text(stage.label.clone()) },
    ];
    let point = point_of(index, params, r);
    let stored = match (run.rec.run_id(), run.rec.store()) {
        (Some(id), Some(st)) => st.add_point(id, &point, r).map_err(anyhow::Error::from),
        _ => Ok(()),
    };
    run.note(stored);
}

fn point_of(index: u32, params: Vec<ParamSetting>, r: &TestResult) -> SweepPoint {
    let v = r.summary.headline_value().unwrap_or(0.0);
    let metric = r.summary.headline.map_or("headline".to_string(), |h| h.metric.id().to_string());
    SweepPoint {
        index,
        coords: vec![index],
        params,
        test_index: index,
        headline: Estimate { metric, mean: v, values: vec![v], ..Estimate::default() },
        met: true,
    }
}

fn ending(
    run: &mut Run,
    study: &dyn Study,
    opts: &Options,
    plan: &SweepPlan,
    outcome: Outcome,
    failure: Option<anyhow::Error>,
) -> Ending {
    let rows = study.compare(&outcome);
    if let Some(path) = &opts.report {
        let doc = crate::html::document(study, &outcome, &rows);
        let written =
            std::fs::write(path, doc).with_context(|| format!("writing the report {}", path.display()));
        run.note(written);
    }
    let text = crate::text::table(study, &outcome, &rows);
    let (status, error) = match failure {
        None => (RunStatus::Complete, first_failure(&outcome)),
        Some(e) if e.to_string() == "interrupted" => (
            RunStatus::Interrupted,
            Some(TestError { code: "interrupted".into(), message: "interrupted".into() }),
        ),
        Some(e) => (RunStatus::Failed, Some(TestError { code: "run".into(), message: format!("{e:#}") })),
    };
    Ending { run: record(run, plan, outcome), status, error, text, hint: String::new() }
}

/// The first failed case, as the run's error.
fn first_failure(out: &Outcome) -> Option<TestError> {
    let failed: Vec<&Done> = out.done.iter().filter(|d| d.result.status == Status::Failed).collect();
    let first = failed.first()?;
    let why = first.result.error.as_ref().map_or("failed", |e| e.message.as_str());
    let message = format!("{} of {} tests failed: {} ({why})", failed.len(), out.done.len(), first.case.key);
    Some(TestError { code: "points-failed".into(), message })
}

/// The run as shown and archived: its tests and the sweep of cases.
fn record(run: &Run, plan: &SweepPlan, outcome: Outcome) -> RunRecord {
    let points: Vec<SweepPoint> = outcome
        .done
        .iter()
        .enumerate()
        .map(|(i, d)| {
            point_of(
                i as u32,
                vec![ParamSetting { name: "case".into(), value: ParamValue::Text(d.case.key.clone()) }],
                &d.result,
            )
        })
        .collect();
    let complete = points.len() == plan.len();
    let tests = outcome.done.into_iter().map(|d| d.result).collect();
    let mut rec = pipeline::output::record(tests, run.remote().cloned(), None, run.started());
    rec.sweep = Some(Sweep { plan: plan.clone(), points, complete });
    rec
}
