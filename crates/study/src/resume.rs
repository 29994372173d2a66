//! Resuming a study that stopped before its end (Ctrl-C, a kill, a crash): every finished
//! case is already in the archive as a sweep point ([`crate::runner`] stores each as it
//! finishes), so `tcplab study NAME --resume [ID]` reads them back, runs only the cases
//! left, and reports on all of them as an uninterrupted run would. A complete run given by
//! its id has nothing left: its report and every figure's status are made again from the
//! archive, by this tcplab's judges.
//!
//! `--remeasure-stolen` runs again the finished cases a hypervisor stole from (their figures
//! are partly the neighbours'): each new result becomes its case's, and the first stays in
//! the archive's run, superseded.
//!
//! A run can only be continued by the same design: the stored plan's axis text names the
//! study, the mode, `-t` and a fingerprint of every stage and case ([`design`]), and the run
//! records the tcplab version; any difference is refused with one line.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{bail, Context, Result};
use results::sweep::{ParamSetting, ParamValue};
use results::{SweepPlan, TestResult};
use store::{RunFilter, Store};

use crate::plan::Stage;
use crate::{Options, Rtt, Study};

/// Which run `--resume` continues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resume {
    /// The newest unfinished run of the study in the archive.
    Last,
    /// This run.
    Run(i64),
}

/// Finished cases by point index (the case's place in run order): the result and what
/// the RTT probe saw beside it.
pub type Cases = BTreeMap<u32, (TestResult, Option<Rtt>)>;

/// What the archive kept of a run to continue.
#[derive(Debug, Clone)]
pub struct Kept {
    /// The run's id.
    pub id: i64,
    /// Its finished cases.
    pub cases: Cases,
    /// Whether every case of this design is among them: nothing is left to run, only the
    /// report to make again (a complete run, or one whose design has since dropped the cases
    /// it did not finish).
    pub complete: bool,
    /// Its finished cases that this design no longer has (left out of the report).
    pub left_out: usize,
    /// Cases it finished that run again (`--remeasure-stolen`: a hypervisor stole from
    /// them), by index: not among `cases`, and stored over their first measurement.
    pub again: BTreeSet<u32>,
}

/// The study's design as the archive's axis text: `study atm-loss · quick · -t 1 · design
/// 3f9c…`, the fingerprint covering every stage's place and every case's spec, repetitions
/// and probe (so a run against a HOST, with an inventory or of other study code differs).
pub fn design(study: &dyn Study, opts: &Options, stages: &[Stage]) -> String {
    let t = opts.seconds.map_or(String::new(), |s| format!(" · -t {s}"));
    format!(
        "{} · {}{t} · design {:016x}",
        prefix(study),
        opts.mode.id(),
        fnv1a(format!("{stages:?}").as_bytes())
    )
}

/// `study NAME`: what every design text of the study starts with.
fn prefix(study: &dyn Study) -> String {
    format!("study {}", study.info().name)
}

/// FNV-1a, 64 bits: a fingerprint that stays the same across processes and builds.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

/// Reads the run `want` names, checks that this design may continue it, and returns its
/// finished cases.
pub fn load(study: &dyn Study, opts: &Options, want: Resume, plan: &SweepPlan) -> Result<Kept> {
    if opts.storage.disabled {
        bail!("--resume reads the archive; it cannot be combined with --no-store");
    }
    // Cases an earlier session left in the spool are delivered first, so they count as done.
    pipeline::spool::Spool::deliver(&opts.storage);
    let st = pipeline::recorder::open_store(opts.storage.db.as_deref())?;
    let id = match want {
        Resume::Run(id) => id,
        Resume::Last => newest(&st, study)?,
    };
    let run = st.load_run(id).with_context(|| format!("reading run {id} to resume it"))?;
    let stored =
        run.sweep.as_ref().map(|s| &s.plan).filter(|p| p.axes.len() == 1 && p.axes[0].name == "case");
    let Some(stored) = stored else { bail!("run {id} is not a study run: nothing to resume") };
    check_state(&st, id)?;
    let (mut cases, left_out) = by_key(&run, &stored.axes[0].values, &plan.axes[0].values)?;
    let again = if opts.remeasure_stolen { stolen(&mut cases) } else { BTreeSet::new() };
    // A run with every case of this design is only reported again: cases run by another build
    // of the study (options changed, or cases since dropped) or by another tcplab version are
    // judged as they ran.
    let complete = cases.len() == plan.axes[0].values.len();
    let same = check_design(id, &stored.axes[0].text, &plan.axes[0].text, study)?;
    if stored.axes[0].values != plan.axes[0].values && !complete {
        bail!("run {id}'s cases are not this design's: it cannot be resumed by this tcplab");
    }
    if !same && !complete {
        bail!("run {id} ran another design of {} (another HOST, inventory or study version)", prefix(study));
    }
    check_version(id, &run.tool_version, plan.axes[0].values.len().saturating_sub(cases.len()), again.len())?;
    Ok(Kept { id, cases, complete, left_out, again })
}

/// Refuses to add cases to a run made by another tcplab version (`left` cases to run, `again`
/// of them measured before and stolen from), naming what that version would do.
fn check_version(id: i64, made_by: &str, left: usize, again: usize) -> Result<()> {
    let ours = env!("CARGO_PKG_VERSION");
    if made_by == ours || left == 0 {
        return Ok(());
    }
    let what = if left == again { "measure its stolen cases again" } else { "finish it" };
    bail!("run {id} was made by tcplab {made_by}, this is {ours}: {what} with that version")
}

/// Takes the cases a hypervisor stole from out of `cases`, to be measured again (any run
/// that counted, as the figures' judges see them: [`TestResult::any_run_stolen_from`]);
/// their indices.
fn stolen(cases: &mut Cases) -> BTreeSet<u32> {
    let again: BTreeSet<u32> =
        cases.iter().filter(|(_, (r, _))| r.any_run_stolen_from()).map(|(i, _)| *i).collect();
    cases.retain(|i, _| !again.contains(i));
    again
}

/// The run's finished cases placed by their key at this design's index (`ours`, the design's
/// case keys; `stored`, the run's), and how many of them this design does not have.
fn by_key(run: &results::RunRecord, stored: &[ParamValue], ours: &[ParamValue]) -> Result<(Cases, usize)> {
    let (mut cases, mut left_out) = (BTreeMap::new(), 0);
    for p in run.sweep.iter().flat_map(|s| &s.points) {
        let r = run.tests.get(p.test_index as usize).context("a stored point without its test")?;
        let key = stored.get(p.index as usize);
        match ours.iter().position(|k| Some(k) == key) {
            Some(i) => {
                cases.insert(i as u32, (r.clone(), rtt_of(&p.params)));
            }
            None => left_out += 1,
        }
    }
    Ok((cases, left_out))
}

/// Refuses a stored design text `stored` of another study, made before designs were
/// stored, or with other options than `ours`, saying which part differs; `false` when only
/// the fingerprint differs (the same cases built by another version of the study).
fn check_design(id: i64, stored: &str, ours: &str, study: &dyn Study) -> Result<bool> {
    if stored == ours {
        return Ok(true);
    }
    let name = |t: &str| t.split(" · ").next().unwrap_or(t).to_string();
    let options =
        |t: &str| t.split(" · ").skip(1).filter(|p| !p.starts_with("design")).collect::<Vec<_>>().join(" ");
    if name(stored) != prefix(study) {
        bail!("run {id} is a run of {}, not of {}: resume it with that study", name(stored), prefix(study));
    }
    if !stored.contains(" · design ") {
        bail!("run {id} was stored before studies could be resumed: it cannot be continued");
    }
    if options(stored) != options(ours) {
        bail!(
            "run {id} ran {} with `{}`, this asks `{}`: resume it with the same --quick and -t",
            prefix(study),
            options(stored),
            options(ours)
        );
    }
    Ok(false)
}

/// Refuses a run still running in a live process.
fn check_state(st: &Store, id: i64) -> Result<()> {
    let (status, owner) = st.run_state(id)?;
    match status.as_str() {
        "running" => {
            let here = pipeline::recorder::this_process();
            if let Some(o) = owner.filter(|o| !store::owner::abandoned(o, &here, netio::host::pid_alive)) {
                bail!("run {id} is still running (process {} on {})", o.pid, o.hostname);
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The newest run of `study` that did not complete.
fn newest(st: &Store, study: &dyn Study) -> Result<i64> {
    let f = RunFilter { kind: Some("sweep".into()), ..RunFilter::default() };
    let start = format!("{} · ", prefix(study));
    for r in st.list_runs(&f)?.into_iter().filter(|r| r.status != "complete") {
        let Ok(sweep) = st.load_sweep(r.id) else { continue };
        if sweep.plan.axes.first().is_some_and(|a| a.text.starts_with(&start)) {
            return Ok(r.id);
        }
    }
    bail!("no unfinished run of {} in the archive to resume", prefix(study))
}

/// Names of the RTT probe's figures among a point's parameters (µs as integers).
const RTT_PARAMS: [&str; 5] = ["rtt_sent", "rtt_lost", "rtt_p50_us", "rtt_p95_us", "rtt_max_us"];

/// A case's probe figures as point parameters, so that a resumed run has them.
pub fn rtt_params(rtt: Option<Rtt>) -> Vec<ParamSetting> {
    let Some(r) = rtt else { return Vec::new() };
    let us = |ms: f64| (ms * 1e3).round().max(0.0) as u64;
    let values = [r.sent as u64, r.lost as u64, us(r.p50_ms), us(r.p95_ms), us(r.max_ms)];
    RTT_PARAMS
        .iter()
        .zip(values)
        .map(|(name, v)| ParamSetting { name: (*name).into(), value: ParamValue::Int(v) })
        .collect()
}

/// The probe figures [`rtt_params`] stored, if the case had them.
pub fn rtt_of(params: &[ParamSetting]) -> Option<Rtt> {
    let get = |name: &str| {
        params.iter().find(|p| p.name == name).and_then(|p| match p.value {
            ParamValue::Int(v) => Some(v),
            _ => None,
        })
    };
    let [sent, lost, p50, p95, max] = RTT_PARAMS.map(get);
    let ms = |us: u64| us as f64 / 1e3;
    Some(Rtt {
        sent: usize::try_from(sent?).ok()?,
        lost: usize::try_from(lost?).ok()?,
        p50_ms: ms(p50?),
        p95_ms: ms(p95?),
        max_ms: ms(max?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--remeasure-stolen` takes out a case any counted run of which a hypervisor stole from
    /// (seed 000's 1K point kept six such runs of ten while its result read 0.3 %), and keeps
    /// a case stolen from only in runs set aside or below the threshold.
    #[test]
    fn the_cases_measured_again_are_those_with_a_stolen_run_that_counted() {
        let spec = results::TestSpec::new(results::TestKind::TcpStream);
        let run = |steal: &f64| {
            let mut r = crate::fixture::stream_run(&spec, &131.0);
            r.local.cpu = Some(results::CpuUsage { steal_pct: *steal, ..Default::default() });
            r
        };
        let repeated = |steals: &[f64]| crate::fixture::repeated(&spec, steals, |_, st| run(st));
        let mut set_aside = repeated(&[0.1, 0.2, 0.3]);
        if let Some(rep) = set_aside.repetition.as_mut() {
            rep.set_aside = vec![run(&40.0)];
        }
        let cases: Vec<TestResult> =
            vec![repeated(&[0.1, 26.0, 0.2]), repeated(&[0.1, 9.9, 0.2]), run(&12.0), run(&0.0), set_aside];
        assert!(!cases[0].stolen_from(), "the result itself reads as its first run");
        let mut kept: Cases = (0u32..).zip(cases).map(|(i, r)| (i, (r, None))).collect();
        assert_eq!(stolen(&mut kept), BTreeSet::from([0, 2]));
        assert_eq!(kept.keys().copied().collect::<Vec<_>>(), vec![1, 3, 4]);
    }

    #[test]
    fn another_versions_run_is_refused_only_when_cases_would_be_added() {
        let ours = env!("CARGO_PKG_VERSION");
        let refusal = |left, again| check_version(4, "0.0.0-old", left, again).map_err(|e| e.to_string());
        assert!(refusal(0, 0).is_ok(), "a complete run is only reported again");
        assert!(check_version(4, ours, 7, 2).is_ok());
        let finish = refusal(7, 2).unwrap_err();
        assert_eq!(
            finish,
            format!("run 4 was made by tcplab 0.0.0-old, this is {ours}: finish it with that version")
        );
        assert!(refusal(2, 2).unwrap_err().ends_with(": measure its stolen cases again with that version"));
    }

    #[test]
    fn a_run_is_placed_by_case_key_and_the_cases_a_design_dropped_are_left_out() {
        use results::sweep::{Sweep, SweepPoint};
        let text = |k: &str| ParamValue::Text(k.into());
        let stored = [text("gva-reno"), text("ams-reno"), text("gva-bbr")];
        let spec = results::TestSpec::new(results::TestKind::TcpStream);
        let mut run = results::RunRecord::new("0.1.0", 0, results::HostInfo::default());
        run.tests = (0..3).map(|i| TestResult::new(format!("t{i}"), spec.clone(), "h:1", i)).collect();
        let point = |i: u32| SweepPoint {
            index: i,
            coords: vec![i],
            params: Vec::new(),
            test_index: i,
            headline: Default::default(),
            met: true,
        };
        let plan = SweepPlan {
            base: spec,
            axes: Vec::new(),
            confidence: None,
            metric: "headline".into(),
            mesh: None,
        };
        run.sweep = Some(Sweep { plan, points: (0..3).map(point).collect(), complete: false });
        let (cases, left_out) = by_key(&run, &stored, &[text("gva-reno"), text("gva-bbr")]).unwrap();
        assert_eq!(left_out, 1);
        let labels: Vec<(u32, &str)> = cases.iter().map(|(i, (r, _))| (*i, r.label.as_str())).collect();
        assert_eq!(labels, [(0, "t0"), (1, "t2")]);
        let (same, none) = by_key(&run, &stored, &stored).unwrap();
        assert_eq!((same.len(), none), (3, 0));
    }

    #[test]
    fn the_probe_figures_come_back_from_the_points_parameters() {
        let r = Rtt { sent: 20, lost: 1, p50_ms: 170.25, p95_ms: 197.5, max_ms: 321.125 };
        assert_eq!(rtt_of(&rtt_params(Some(r))), Some(r));
        assert_eq!(rtt_of(&rtt_params(None)), None);
    }

    /// The full runs kept in `bench/full-runs/` (its README) outlast a session, so each later
    /// session continues them: this tcplab must still be their design and version. A change to
    /// a study's cases or to the test specification they are made of fails here, not in the
    /// next sitting (a finished run is only re-reported, which any design may do).
    #[test]
    fn the_full_runs_kept_in_the_repository_can_be_continued() {
        let (_dir, st) = crate::fixture::kept_archive();
        let f = RunFilter { kind: Some("sweep".into()), ..RunFilter::default() };
        let unfinished: Vec<i64> =
            st.list_runs(&f).unwrap().into_iter().filter(|r| r.status != "complete").map(|r| r.id).collect();
        for id in unfinished {
            let run = st.load_run(id).unwrap();
            let stored = st.load_sweep(id).unwrap().plan.axes[0].text.clone();
            let name = stored.strip_prefix("study ").and_then(|t| t.split(" · ").next()).unwrap();
            let s = crate::find(name).unwrap();
            let opts = crate::fixture::options(crate::Mode::Full, None);
            let (stages, _) = crate::stages_for(s, &opts);
            assert_eq!(design(s, &opts, &stages), stored, "run {id} of {name} can no longer be continued");
            assert_eq!(run.tool_version, env!("CARGO_PKG_VERSION"), "run {id} of {name}");
        }
    }

    #[test]
    fn a_design_names_its_study_mode_and_seconds_and_differs_with_the_cases() {
        let s = crate::find("atm-loss").unwrap();
        let opts = crate::fixture::options;
        let quick = opts(crate::Mode::Quick, Some(1));
        let (stages, _) = crate::stages_for(s, &quick);
        let text = design(s, &quick, &stages);
        assert!(text.starts_with("study atm-loss · quick · -t 1 · design "), "{text}");
        assert_eq!(text, design(s, &quick, &stages), "not stable");
        let mut fewer = stages.clone();
        fewer[0].cases.pop();
        assert_ne!(text, design(s, &quick, &fewer));
        assert!(check_design(7, &text, &text, s).unwrap());
        let mut other_spec = stages.clone();
        other_spec[0].cases[0].spec.duration_ms += 1000;
        assert!(!check_design(7, &text, &design(s, &quick, &other_spec), s).unwrap(), "only the fingerprint");
        let err = check_design(7, &text, &text.replace("-t 1", "-t 2"), s).unwrap_err().to_string();
        assert!(err.contains("-t 2") && err.contains("same --quick and -t"), "{err}");
        let other = text.replace("atm-loss", "slac-stacks");
        let err = check_design(7, &other, &text, s).unwrap_err().to_string();
        assert!(err.contains("run 7 is a run of study slac-stacks, not of study atm-loss"), "{err}");
    }
}
