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
use crate::resume::{Cases, Kept};
use crate::{Done, Options, Outcome, Study};

/// Runs `study` as `opts` asks (or continues the stored run `opts.resume` names); writes
/// the report and prints the comparison at the end.
pub fn run(study: &dyn Study, opts: &Options, stop: &StopFlag) -> Result<ExitCode> {
    let (stages, skipped) = crate::stages_for(study, opts);
    anyhow::ensure!(!stages.is_empty(), "the study has nothing to run");
    if let Some(path) = &opts.report {
        pipeline::run::check_writable(path)?;
    }
    let plan = sweep_plan(&stages, crate::resume::design(study, opts, &stages))?;
    let kept = opts.resume.map(|want| crate::resume::load(study, opts, want, &plan)).transpose()?;
    if let Some(k) = kept.as_ref().filter(|k| k.complete) {
        return report_again(study, opts, &stages, skipped, k);
    }
    preflight(&stages)?;
    if opts.host.is_none() && study.needs_root() && !netio::netns::is_root() {
        anyhow::bail!(
            "study {} runs on emulated paths, which need root (namespaces, TUN); run as root or give a HOST",
            study.info().name
        );
    }
    let start = first_left(&stages, kept.as_ref().map(|k| &k.cases));
    let cfg = Config {
        target: target(&stages[start], opts),
        format: report::Format::Text,
        report: None,
        storage: opts.storage.clone(),
        trace: trace_dir(&stages[start], start),
        trace_level: Default::default(),
    };
    let mut run = open(&cfg, &plan, kept.as_ref().map(|k| k.id))?;
    run.live.show_intervals = false;
    announce(study, opts, &stages, &run, kept.as_ref());
    let mut outcome = empty_outcome(opts, skipped, run.rec.run_id());
    let mut earlier = kept.map(|k| Earlier { cases: k.cases, again: k.again }).unwrap_or_default();
    let failure = run_stages(&mut run, &stages, start, &mut earlier, opts, stop, &mut outcome).err();
    run.end(|run| ending(run, study, opts, &plan, outcome, failure))
}

/// Checks every case's test as its client and server will before it runs, so that a design
/// this host cannot run stops before its first case, not hours into the run.
pub fn preflight(stages: &[Stage]) -> Result<()> {
    for case in stages.iter().flat_map(|s| &s.cases) {
        engine::limits::validate(&case.spec, &engine::limits::Limits::default())
            .map_err(|r| anyhow::anyhow!("case {} cannot run here: {}", case.key, r.message))?;
    }
    Ok(())
}

/// A run given to `--resume` that has every case of this design (a complete run, or one
/// whose design has since dropped the cases it did not finish): nothing is left to run, so
/// its report, comparison and statuses are made again from the archived cases (by this
/// build's judges), and the run is left as it was.
fn report_again(
    study: &dyn Study,
    opts: &Options,
    stages: &[Stage],
    skipped: Vec<String>,
    kept: &Kept,
) -> Result<ExitCode> {
    let mut dropped = match kept.left_out {
        0 => String::new(),
        n => format!(" ({n} of its cases are not in this design: left out)"),
    };
    if opts.remeasure_stolen {
        dropped.push_str(" (no case of it was stolen from: none to measure again)");
    }
    eprintln!(
        "study {} ({} mode): run {} has every case of this design: nothing left to run; its report is \
         made again from the archive{dropped}",
        study.info().name,
        opts.mode.id(),
        kept.id
    );
    let mut outcome = empty_outcome(opts, skipped, Some(kept.id));
    let cases = stages.iter().flat_map(|s| s.cases.iter().map(move |c| (s, c)));
    for (index, (stage, case)) in (0u32..).zip(cases) {
        if let Some(stored) = kept.cases.get(&index).cloned() {
            outcome.done.push(kept_case(stage, case, stored, opts));
        }
    }
    let rows = study.compare(&outcome);
    if let Some(path) = &opts.report {
        let doc = crate::html::document(study, &outcome, &rows);
        std::fs::write(path, doc).with_context(|| format!("writing the report {}", path.display()))?;
    }
    // As a run's ending prints it: a closed or full stdout is no panic.
    pipeline::output::emit(crate::text::table(study, &outcome, &rows).trim_end());
    Ok(ExitCode::SUCCESS)
}

/// The outcome of a run before any case is in it.
fn empty_outcome(opts: &Options, skipped: Vec<String>, run_id: Option<i64>) -> Outcome {
    let host = opts.host.as_ref().map(|h| h.host.clone());
    Outcome { mode: opts.mode, host, done: Vec::new(), skipped, run_id }
}

/// Begins the study's run with its plan stored, or reopens the stored run `resume`.
fn open(cfg: &Config, plan: &SweepPlan, resume: Option<i64>) -> Result<Run> {
    let busy = Duration::from_secs(3);
    if let Some(id) = resume {
        return Run::resume(cfg, id, busy);
    }
    let mut run = Run::begin(cfg, RunKind::Sweep, busy)?;
    // An archive that fails here moves the run to the spool; only when neither can take it
    // does the study stop before measuring.
    run.rec.sweep(plan)?;
    Ok(run)
}

/// The first stage with a case not kept from an earlier session (the last when all are).
fn first_left(stages: &[Stage], kept: Option<&Cases>) -> usize {
    let Some(kept) = kept else { return 0 };
    let mut index = 0u32;
    for (n, s) in stages.iter().enumerate() {
        let end = index + s.cases.len() as u32;
        if (index..end).any(|i| !kept.contains_key(&i)) {
            return n;
        }
        index = end;
    }
    stages.len().saturating_sub(1)
}

/// The study's first line: what it runs and where it is stored, or what a resumed run has
/// done and what is left, with the estimate of what is left.
fn announce(study: &dyn Study, opts: &Options, stages: &[Stage], run: &Run, kept: Option<&Kept>) {
    let (name, mode) = (study.info().name, opts.mode.id());
    let total: usize = stages.iter().map(|s| s.cases.len()).sum();
    let Some(k) = kept else {
        let stored = run.rec.run_id().map_or(String::new(), |id| format!(", stored as run {id}"));
        let takes = crate::plan::estimate_text(crate::plan::estimate_range_s(stages, 100e6));
        eprintln!("study {name} ({mode} mode): {total} tests in {} stages{stored} ({takes})", stages.len());
        return;
    };
    let left = crate::plan::estimate_range_s(&left_stages(stages, &k.cases), 100e6);
    let done = stages.iter().flat_map(|s| &s.cases).zip(0u32..).filter_map(|(c, i)| {
        let (r, _) = k.cases.get(&i)?;
        Some((c, r.repetition.as_ref().map_or(1, |rep| rep.iterations)))
    });
    let again = match k.again.len() {
        0 => String::new(),
        n => format!(", {n} of them again (a hypervisor stole from their first measurement)"),
    };
    eprintln!(
        "study {name} ({mode} mode): resuming run {}: {} of {total} tests done, {} left{again} ({})",
        k.id,
        k.cases.len(),
        total - k.cases.len(),
        crate::plan::left_text(left, crate::plan::pace(done))
    );
}

/// The stages with only the cases not kept (stages left empty dropped), for the estimate.
fn left_stages(stages: &[Stage], kept: &Cases) -> Vec<Stage> {
    let mut index = 0u32;
    let mut left = Vec::new();
    for s in stages {
        let mut s = s.clone();
        s.cases.retain(|_| {
            index += 1;
            !kept.contains_key(&(index - 1))
        });
        if !s.cases.is_empty() {
            left.push(s);
        }
    }
    left
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

/// A case kept from an earlier session as this run has it: diagnosed again by this tcplab's
/// rules (the archive keeps the diagnosis of the tcplab that measured it, which an earlier
/// sitting's may predate), over the emulated path it crossed.
fn kept_case(
    stage: &Stage,
    case: &crate::Case,
    (mut result, rtt): (TestResult, Option<crate::Rtt>),
    opts: &Options,
) -> Done {
    let path = match (&stage.place, &opts.host) {
        (Where::Path { spec, .. }, None) => Some(spec.as_str()),
        _ => None,
    };
    pipeline::place::diagnose_again(&mut result, path);
    Done { stage: stage.label.clone(), case: case.clone(), result, rtt }
}

/// The directory a traced stage's segment flows go to.
fn trace_dir(stage: &Stage, index: usize) -> Option<std::path::PathBuf> {
    stage.trace.then(|| std::env::temp_dir().join(format!("tcplab-study-{}-{index}", std::process::id())))
}

/// The archive's view of the study: one axis, the cases in run order, named by the design's
/// text ([`crate::resume::design`]).
fn sweep_plan(stages: &[Stage], design: String) -> Result<SweepPlan> {
    let cases: Vec<ParamValue> =
        stages.iter().flat_map(|s| &s.cases).map(|c| ParamValue::Text(c.key.clone())).collect();
    let base = stages.iter().flat_map(|s| &s.cases).next().context("the study has no tests")?.spec.clone();
    let axis = Axis { name: "case".into(), tied: Vec::new(), values: cases, text: design };
    Ok(SweepPlan { base, axes: vec![axis], confidence: None, metric: "headline".into(), mesh: None })
}

/// What an earlier session left of a resumed run: its finished cases, and which cases it
/// finished run again (stored over their first measurement).
#[derive(Debug, Default)]
struct Earlier {
    cases: Cases,
    again: std::collections::BTreeSet<u32>,
}

/// Runs every stage's cases, taking those `earlier` has from it instead of running them;
/// `Err` ends the study early (interrupted, or a place that would not start). The place
/// starts at stage `start`.
fn run_stages(
    run: &mut Run,
    stages: &[Stage],
    start: usize,
    earlier: &mut Earlier,
    opts: &Options,
    stop: &StopFlag,
    out: &mut Outcome,
) -> Result<()> {
    let total: usize = stages.iter().map(|s| s.cases.len()).sum();
    let for_people = run.live.printer().for_people();
    let bar = pipeline::progress::Progress::new(total as u64, earlier.cases.len() as u64, for_people);
    let (lines, started) = (!std::io::stdout().is_terminal(), std::time::Instant::now());
    let (mut index, mut placed) = (0u32, start);
    for (n, stage) in stages.iter().enumerate() {
        for case in &stage.cases {
            if let Some(stored) = earlier.cases.remove(&index) {
                out.done.push(kept_case(stage, case, stored, opts));
                index += 1;
                continue;
            }
            let (stage_label, case) = (stage.label.clone(), case.clone());
            if stop.is_set() {
                bar.finish();
                anyhow::bail!("interrupted");
            }
            if n != placed {
                run.move_to(&target(stage, opts), trace_dir(stage, n))
                    .with_context(|| format!("starting the stage `{}`", stage.label))?;
                placed = n;
            }
            bar.message(format!("{} · {}", stage.label, case.key));
            let (result, rtt) = one_case(run, (index, earlier.again.contains(&index)), stage, &case, stop)?;
            if lines {
                bar.line(&progress_line(index as usize + 1, total, started, &case.key, &result));
            }
            out.done.push(Done { stage: stage_label, case, result, rtt });
            index += 1;
            bar.inc();
        }
    }
    bar.finish();
    Ok(())
}

/// Measures and stores case `index` (over its stored result when `again`); `Err` when it was
/// interrupted (a partial case is not kept: a resumed run measures it again).
fn one_case(
    run: &mut Run,
    (index, again): (u32, bool),
    stage: &Stage,
    case: &crate::Case,
    stop: &StopFlag,
) -> Result<(TestResult, Option<crate::Rtt>)> {
    let (r, rtt) = measure(run, case, stop);
    if r.status == Status::Interrupted || stop.is_set() {
        anyhow::bail!("interrupted");
    }
    let r = sent_nothing(r);
    store_point(run, (index, again), stage, &case.key, &r, rtt);
    Ok((r, rtt))
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

/// Stores case `key`'s result as sweep point `index` (over the stored one when `again`), with
/// the RTT probe's figures (a resumed run reads them back: [`crate::resume::rtt_of`]).
fn store_point(
    run: &mut Run,
    (index, again): (u32, bool),
    stage: &Stage,
    key: &str,
    r: &TestResult,
    rtt: Option<crate::Rtt>,
) {
    let mut params = vec![
        ParamSetting { name: "case".into(), value: ParamValue::Text(key.into()) },
        ParamSetting { name: "stage".into(), value: ParamValue::Text(stage.label.clone()) },
    ];
    params.extend(crate::resume::rtt_params(rtt));
    let point = point_of(index, params, r);
    // The archive failing moves the run to the spool (delivered by the next run or `archive
    // push`); a case neither can take is still measured and reported, and the study exits 2.
    let stored = if again { run.rec.point_again(&point, r) } else { run.rec.point(&point, r) };
    run.note(stored);
}

/// The sweep point of case `index`: its headline with every run's value and the interval when
/// the case repeated (`tcplab show` then prints the spread, not one mean with sd 0).
fn point_of(index: u32, params: Vec<ParamSetting>, r: &TestResult) -> SweepPoint {
    let headline = match r.repetition.as_ref().and_then(|rep| rep.estimates.first()) {
        Some(e) => e.clone(),
        None => {
            let v = r.summary.headline_value().unwrap_or(0.0);
            let metric = r.summary.headline.map_or("headline".to_string(), |h| h.metric.id().to_string());
            Estimate { metric, mean: v, values: vec![v], ..Estimate::default() }
        }
    };
    SweepPoint {
        index,
        coords: vec![index],
        params,
        test_index: index,
        headline,
        met: r.repetition.as_ref().is_none_or(|rep| rep.met),
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
    let hint = match (status, run.rec.run_id()) {
        (RunStatus::Complete, _) | (_, None) => String::new(),
        (_, Some(id)) => resume_hint(study, opts, id),
    };
    Ending { run: record(run, plan, outcome), status, error, text, hint }
}

/// How to continue a run that stopped: the same command with `--resume ID`.
fn resume_hint(study: &dyn Study, opts: &Options, id: i64) -> String {
    let quick = if opts.mode == crate::Mode::Quick { " --quick" } else { "" };
    let t = opts.seconds.map_or(String::new(), |s| format!(" -t {s}"));
    let host = if opts.host.is_some() || opts.inventory.is_some() {
        " (and the same HOST or --inventory)"
    } else {
        ""
    };
    format!("; resume with: tcplab study {}{quick}{t} --resume {id}{host}", study.info().name)
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

#[cfg(test)]
mod tests {
    use results::Cause;

    use super::*;

    /// The primary cause of `r`'s first diagnosed direction.
    fn cause(r: &TestResult) -> Option<Cause> {
        r.diagnosis.first().map(|d| d.primary.cause)
    }

    /// tcp-atm-2000's full run kept in `bench/full-runs/` began under older diagnosis rules:
    /// its first sitting named the loop-back baseline stop-and-go from its configuration alone
    /// (a one-segment 64K buffer, while the flow moved thousands of windows a second at
    /// 36.9 Gbit/s). A resumed or re-made report diagnoses each kept case by this tcplab's
    /// rules, which need the stall measured; the path's shared-host warning is made once.
    #[test]
    fn a_kept_case_is_diagnosed_again_by_this_tcplabs_rules() {
        let (_dir, st) = crate::fixture::kept_archive();
        let run = st.load_run(1).unwrap();
        let point = |i: u32| {
            let p = run.sweep.as_ref().unwrap().points.iter().find(|p| p.index == i).unwrap();
            run.tests[p.test_index as usize].clone()
        };
        let s = crate::find("tcp-atm-2000").unwrap();
        let opts = crate::fixture::options(crate::Mode::Full, None);
        let (stages, _) = crate::stages_for(s, &opts);
        assert!(matches!(stages[0].place, Where::Loopback), "{:?}", stages[0].place);
        let loopback = point(0);
        assert_eq!(cause(&loopback), Some(Cause::StopAndGo), "the archive's own diagnosis");
        let again = kept_case(&stages[0], &stages[0].cases[0], (loopback, None), &opts).result;
        assert!(!again.diagnosis.is_empty(), "not diagnosed at all");
        assert_ne!(cause(&again), Some(Cause::StopAndGo), "{:?}", again.diagnosis);

        let (stage, case) = (&stages[1], &stages[1].cases[0]);
        assert!(matches!(stage.place, Where::Path { .. }), "{:?}", stage.place);
        let over_path = kept_case(stage, case, (point(stages[0].cases.len() as u32), None), &opts).result;
        let same_host = over_path.warnings.iter().filter(|w| w.kind == results::WarningKind::SameHost);
        assert_eq!(same_host.count(), 1, "{:?}", over_path.warnings);
        assert!(over_path.reference.is_some() && !over_path.diagnosis.is_empty(), "{over_path:?}");
    }
}
