//! A congestion-control comparison (`tcplab compare-cc`, seed 003): one TCP stream per
//! control, one after the other (`rounds` times, interleaved to spread drift) or all at once
//! (`concurrent`), each with the RTT probe ([`crate::rtt_probe`]) running beside it through
//! the same path. Every stream is an ordinary `tcp-stream` result; the comparison's figures
//! (windows, probe percentiles, fairness) are the run's [`CcStudy`].
//!
//! A control the kernel lacks is named with the list of those it has and left out; it is
//! never replaced by another.

use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use engine::StopFlag;
use results::cc::{CcFairness, CcRun, CcShare, ProbeMethod, ProbeSample, RttProbe};
use results::{CcStudy, TestResult, TestSpec};
use stats::series::{self, Span};
use store::RunKind;

use crate::config::Config;
use crate::output::record;
use crate::place::Place;
use crate::recorder::status_of;
use crate::rtt_probe::{self, Probe};
use crate::run::{first_error, Ending, Run};

/// Per-interval Jain's index at or above which concurrent flows count as converged.
pub const CONVERGED: f64 = 0.9;

/// What to compare and how.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The stream every control runs (`tcp-stream`: length, intervals, omit, sizes).
    pub base: TestSpec,
    /// Controls in the order asked.
    pub controls: Vec<String>,
    /// Rounds of all controls.
    pub rounds: u32,
    /// Short windows.
    pub window: Duration,
    /// All controls at once.
    pub concurrent: bool,
    /// Time between RTT probes.
    pub probe_interval: Duration,
    /// Probes on the idle path before each stream (or round).
    pub idle_probes: u32,
}

/// Runs the comparison where `cfg` says.
pub fn run(cfg: &Config, plan: &Plan, stop: &StopFlag) -> Result<ExitCode> {
    let available = netio::host::congestion_available();
    let (usable, unavailable): (Vec<String>, Vec<String>) =
        plan.controls.iter().cloned().partition(|c| available.contains(c));
    for c in &unavailable {
        eprintln!(
            "compare-cc: {c} is not available in this kernel (available: {}); left out, not replaced",
            available.join(", ")
        );
    }
    if usable.is_empty() {
        bail!(
            "none of the controls asked for ({}) is available; this kernel has {}",
            plan.controls.join(", "),
            available.join(", ")
        );
    }
    let mut study = CcStudy {
        asked: plan.controls.clone(),
        available,
        unavailable,
        concurrent: plan.concurrent,
        rounds: plan.rounds,
        window_ms: plan.window.as_millis() as u64,
        probe: ProbeMethod {
            method: rtt_probe::METHOD.into(),
            interval_ms: plan.probe_interval.as_millis() as u64,
            timeout_ms: rtt_probe::TIMEOUT.as_millis() as u64,
            idle_probes: plan.idle_probes,
        },
        ..CcStudy::default()
    };
    let mut run = Run::begin(cfg, RunKind::CompareCc, Duration::from_secs(3))?;
    let probe = run.place().map(prober(plan)).transpose()?.context("the run has no place")?;
    let mut tests: Vec<TestResult> = Vec::new();
    let groups: Vec<Vec<String>> =
        if plan.concurrent { vec![usable.clone()] } else { usable.iter().map(|c| vec![c.clone()]).collect() };
    'rounds: for round in 1..=plan.rounds {
        for group in &groups {
            if stop.is_set() {
                break 'rounds;
            }
            let ran = one_group(&mut run, plan, &probe, group, round, stop);
            ran.results.iter().for_each(|r| run.store(r));
            gather(&mut study, &mut tests, ran, plan, round);
        }
    }
    let stored = run.rec.cc_study(&study);
    run.note(stored);
    run.end(|run| {
        if let Some(total) = run.path_total() {
            run.live.note(&report::emu::text(total));
        }
        let text = report::cc::text(&study, &tests);
        let mut rec = record(tests, run.remote().cloned(), None, run.started());
        rec.cc = Some(study);
        Ending {
            status: status_of(&rec.tests),
            error: first_error(&rec.tests),
            text,
            hint: String::new(),
            run: rec,
        }
    })
}

/// The prober of the place's server (its control port).
fn prober(plan: &Plan) -> impl Fn(&Place) -> Result<Probe> + '_ {
    move |place| {
        let addr = engine::client::resolve(place.client_options())
            .context("resolving the server for the RTT probe")?;
        Ok(Probe { addr, interval: plan.probe_interval })
    }
}

/// What one group (one control, or all of them at once) gave.
struct Ran {
    controls: Vec<String>,
    results: Vec<TestResult>,
    idle_us: Option<f64>,
    samples: Vec<ProbeSample>,
}

/// Probes the idle path, then runs the group's streams with the probe beside them.
fn one_group(
    run: &mut Run,
    plan: &Plan,
    probe: &Probe,
    group: &[String],
    round: u32,
    stop: &StopFlag,
) -> Ran {
    let idle_us = run.place().and_then(|p| p.in_client(|| probe.idle_us(plan.idle_probes)).ok()).flatten();
    let specs: Vec<TestSpec> =
        group.iter().map(|c| TestSpec { congestion: Some(c.clone()), ..plan.base.clone() }).collect();
    if !plan.concurrent {
        run.live.note(&format!("compare-cc round {round}: {}", group.join(", ")));
    }
    let beside =
        |place: &Place, done: &AtomicBool| place.in_client(|| probe.beside(done)).unwrap_or_default();
    let (results, samples) = run.tests_beside(&specs, stop, beside, !plan.concurrent);
    Ran { controls: group.to_vec(), results, idle_us, samples: samples.unwrap_or_default() }
}

/// Adds a group's streams to `tests` and its figures to `study`.
fn gather(study: &mut CcStudy, tests: &mut Vec<TestResult>, ran: Ran, plan: &Plan, round: u32) {
    let probe_index = study.probes.len();
    study.probes.push(probe_figures(round, ran.controls.clone(), ran.idle_us, ran.samples));
    let mut flows = Vec::new();
    for (congestion, r) in ran.controls.into_iter().zip(ran.results) {
        let spans = spans_of(&r);
        study.runs.push(stream_figures(congestion, round, tests.len(), probe_index, &r, &spans, plan.window));
        flows.push(spans);
        tests.push(r);
    }
    if plan.concurrent {
        let first = study.runs.len() - flows.len();
        study.fairness.push(fairness(round, &study.runs[first..], &flows));
    }
}

/// The receiver's throughput per measured interval (the server's for a forward stream).
pub fn spans_of(r: &TestResult) -> Vec<Span> {
    let receiver = if r.spec.client_sends() { r.remote.as_ref() } else { Some(&r.local) };
    receiver
        .unwrap_or(&r.local)
        .intervals
        .iter()
        .filter(|i| !i.omitted && i.len_s() > 0.0)
        .map(|i| Span { start_s: i.start_s, end_s: i.end_s, value: i.bytes() as f64 * 8.0 / i.len_s() })
        .collect()
}

/// One stream's figures.
pub fn stream_figures(
    congestion: String,
    round: u32,
    test: usize,
    probe: usize,
    r: &TestResult,
    spans: &[Span],
    window: Duration,
) -> CcRun {
    let values: Vec<f64> = spans.iter().map(|s| s.value).collect();
    let windows = series::windows(spans, window.as_secs_f64());
    let means: Vec<f64> = windows.iter().map(|w| w.bps.mean).collect();
    CcRun {
        congestion,
        round,
        test,
        probe,
        throughput_bps: series::mean_sd(&values),
        windowed_bps: series::mean_sd(&means),
        windows,
        stability: series::variation(&values),
        retransmits: r.summary.directions.iter().filter_map(|d| d.retransmits).sum(),
        series: spans.iter().map(|s| (s.end_s, s.value)).collect(),
    }
}

/// The probe's figures: percentiles of the answered probes, and the rise above idle.
pub fn probe_figures(
    round: u32,
    beside: Vec<String>,
    idle_us: Option<f64>,
    samples: Vec<ProbeSample>,
) -> RttProbe {
    let rtts: Vec<f64> = samples.iter().filter_map(|s| s.rtt_us).collect();
    let p50_us = series::nearest_rank(&rtts, 50.0);
    RttProbe {
        round,
        beside,
        idle_rtt_us: idle_us,
        lost: samples.iter().filter(|s| s.rtt_us.is_none()).count() as u32,
        rtt_us: series::mean_sd(&rtts),
        p50_us,
        p95_us: series::nearest_rank(&rtts, 95.0),
        max_us: series::nearest_rank(&rtts, 100.0),
        rise_p50_us: p50_us.zip(idle_us).map(|(p, i)| p - i),
        samples,
    }
}

/// How concurrent flows shared the path: shares of the mean throughputs, Jain's index, and
/// when the per-interval index settled at or above [`CONVERGED`].
pub fn fairness(round: u32, runs: &[CcRun], flows: &[Vec<Span>]) -> CcFairness {
    let means: Vec<f64> = runs.iter().map(|r| r.throughput_bps.map_or(0.0, |m| m.mean)).collect();
    let shares = series::shares(&means);
    CcFairness {
        round,
        shares: runs
            .iter()
            .zip(means.iter().zip(shares))
            .map(|(r, (&bps, share))| CcShare { congestion: r.congestion.clone(), bps, share })
            .collect(),
        jain: series::jain(&means),
        threshold: CONVERGED,
        convergence_s: series::convergence(flows, CONVERGED),
    }
}
