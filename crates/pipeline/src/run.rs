//! The life of one run, the same for every command that runs tests: check what can be
//! checked before measuring (the report path, the archive), start the place, then per test
//! measure → diagnose → show → store, and at the end stop the place, close the run in the
//! archive, render the final output, write the report and choose the exit status.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use engine::StopFlag;
use results::{ConfidenceTarget, HostInfo, Reference, RunRecord, Status, TestError, TestResult, TestSpec};
use store::{RunKind, RunStatus};

use crate::config::Config;
use crate::output::{emit_all, now_unix_ms, record, Live};
use crate::place::Place;
use crate::recorder::Recorder;

/// What measuring one test gave: its result and the server's description, or why not.
type Measured = Result<(TestResult, Option<HostInfo>)>;

/// A run under way.
#[derive(Debug)]
pub struct Run {
    /// The archive writer.
    pub rec: Recorder,
    /// Live output.
    pub live: Live,
    place: Option<Place>,
    report: Option<PathBuf>,
    started: u64,
    remote: Option<HostInfo>,
    /// Problems that did not stop the run (an archive write that failed); reported at the end.
    problems: Vec<String>,
    /// The emulated path's counters over the whole run, once the place has stopped.
    path_total: Option<results::EmuReport>,
}

/// How a run ended, for the archive, the final output and the exit status.
#[derive(Debug)]
pub struct Ending {
    /// The run as shown and written to `--report`.
    pub run: RunRecord,
    /// The run's status in the archive.
    pub status: RunStatus,
    /// What went wrong, if anything (also set for an interruption).
    pub error: Option<TestError>,
    /// The text shown at the end in text format (empty: nothing).
    pub text: String,
    /// A note printed on stderr after the error line (e.g. how to resume).
    pub hint: String,
}

impl Run {
    /// Checks the report path, opens the archive (a bad `--db` fails here, before any test),
    /// records the start of a run of `kind` and starts the place.
    pub fn begin(cfg: &Config, kind: RunKind, busy_wait: Duration) -> Result<Run> {
        let mut rec = open(cfg)?;
        rec.begin(
            &record(Vec::new(), None, None, now_unix_ms()),
            kind,
            &crate::place::Stored::label(&cfg.target),
        )?;
        Run::assemble(cfg, rec, busy_wait)
    }

    /// As [`Run::begin`], continuing the stored run `id` (a resumed sweep).
    pub fn resume(cfg: &Config, id: i64, busy_wait: Duration) -> Result<Run> {
        let mut rec = open(cfg)?;
        rec.resume(id)?;
        Run::assemble(cfg, rec, busy_wait)
    }

    fn assemble(cfg: &Config, rec: Recorder, busy_wait: Duration) -> Result<Run> {
        let live = Live::new(cfg.format);
        let place = Place::start(&cfg.target, busy_wait)?.traced_at(
            cfg.trace.clone(),
            live.printer(),
            cfg.trace_level,
        );
        Ok(Run {
            rec,
            live,
            place: Some(place),
            report: cfg.report.clone(),
            started: now_unix_ms(),
            remote: None,
            problems: Vec::new(),
            path_total: None,
        })
    }

    /// Whether the tests run against an embedded loopback server (the loopback baseline's case).
    pub fn embedded(&self) -> bool {
        self.place.as_ref().is_some_and(Place::is_embedded)
    }

    /// The server's description, once a test reached it.
    pub fn remote(&self) -> Option<&HostInfo> {
        self.remote.as_ref()
    }

    /// The emulated path's counters over the whole run (in [`Run::end`]'s closure, when the
    /// run had a path and its emulator ended cleanly).
    pub fn path_total(&self) -> Option<&results::EmuReport> {
        self.path_total.as_ref()
    }

    /// When the run started, ms since the Unix epoch.
    pub fn started(&self) -> u64 {
        self.started
    }

    /// Measures `spec`, diagnoses it against the reference `reference` picks for it, and
    /// shows it (the summary block too when `summary_text`). Not yet stored.
    pub fn test(
        &mut self,
        spec: &TestSpec,
        confidence: Option<&ConfidenceTarget>,
        stop: &StopFlag,
        reference: impl FnOnce(&TestResult) -> Option<Reference>,
        summary_text: bool,
    ) -> TestResult {
        let measured = match &self.place {
            Some(place) => place.measure(spec, confidence, &mut self.live, stop),
            None => Err(anyhow::anyhow!("the run has ended")),
        };
        self.settle(spec, measured, reference, summary_text)
    }

    /// Measures `specs` at once, each its own test against the server, while `beside` runs
    /// on another thread with the place and a flag set once the tests have ended; then
    /// diagnoses and shows each as [`Run::test`] does. One spec shows its intervals live;
    /// several run quietly. `beside`'s value is `None` if its thread panicked.
    pub fn tests_beside<T: Send>(
        &mut self,
        specs: &[TestSpec],
        stop: &StopFlag,
        beside: impl FnOnce(&Place, &AtomicBool) -> T + Send,
        summary_text: bool,
    ) -> (Vec<TestResult>, Option<T>) {
        let Some(place) = self.place.as_ref() else {
            let ended = specs.iter().map(|s| not_run(s, &anyhow::anyhow!("the run has ended"))).collect();
            return (ended, None);
        };
        let done = AtomicBool::new(false);
        let live = &mut self.live;
        let (measured, side) = std::thread::scope(|scope| {
            let side = scope.spawn(|| beside(place, &done));
            let measured: Vec<Measured> = match specs {
                [one] => vec![place.measure(one, None, live, stop)],
                _ => specs
                    .iter()
                    .map(|spec| {
                        scope.spawn(move || place.measure(spec, None, &mut engine::client::Quiet, stop))
                    })
                    .collect::<Vec<_>>()
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|_| Err(anyhow::anyhow!("a test thread panicked"))))
                    .collect(),
            };
            done.store(true, Ordering::Relaxed);
            (measured, side.join().ok())
        });
        let results = specs
            .iter()
            .zip(measured)
            .map(|(spec, m)| self.settle(spec, m, |_| None, summary_text))
            .collect();
        (results, side)
    }

    /// Diagnoses and shows a result measured outside the run's place (a mesh's cell, run
    /// on other hosts), as [`Run::test`] does its own. Not yet stored.
    pub fn settle_measured(
        &mut self,
        spec: &TestSpec,
        measured: (TestResult, Option<HostInfo>),
    ) -> TestResult {
        self.settle(spec, Ok(measured), |_| None, false)
    }

    /// Moves the run to another place (a study's next path): the current place is stopped
    /// (its emulator counters are kept as the run's total only for the last place) and
    /// `target` started, traced into `trace` when given. Tests already measured are kept.
    pub fn move_to(&mut self, target: &crate::config::Target, trace: Option<PathBuf>) -> Result<()> {
        if let Some(old) = self.place.take() {
            old.finish().context("stopping the previous place")?;
        }
        self.place = Some(Place::start(target, Duration::from_secs(3))?.traced(trace, self.live.printer()));
        Ok(())
    }

    /// The place the tests run in, while the run is under way.
    pub fn place(&self) -> Option<&Place> {
        self.place.as_ref()
    }

    /// Stores what `measured` found of `spec` (or a failure), diagnosed and shown.
    fn settle(
        &mut self,
        spec: &TestSpec,
        measured: Measured,
        reference: impl FnOnce(&TestResult) -> Option<Reference>,
        summary_text: bool,
    ) -> TestResult {
        let (mut r, host) = match measured {
            Ok(done) => done,
            Err(e) => (not_run(spec, &e), None),
        };
        // Over an emulated path, the link it emulates is the reference when none was given.
        let against = reference(&r).or_else(|| self.place.as_ref().and_then(|p| p.path_reference(spec)));
        diagnose::annotate(&mut r, against, self.place.as_ref().and_then(Place::path).as_ref());
        if self.remote.is_none() && host.is_some() {
            self.remote = host;
            let stored = self.rec.remote_host(self.remote.as_ref());
            self.note(stored);
        }
        self.live.test_done(&r, summary_text);
        r
    }

    /// Stores one finished test; a failed write is remembered and reported at the end.
    pub fn store(&mut self, r: &TestResult) {
        let stored = self.rec.test(r);
        self.note(stored);
    }

    /// Remembers a problem that must not cost the results measured.
    pub fn note(&mut self, outcome: Result<()>) {
        if let Err(e) = outcome {
            self.problems.push(format!("{e:#}"));
        }
    }

    /// Ends the run: stops the place, closes the run in the archive, shows the final output,
    /// writes the report, and returns the exit status (0, or 2 with one error line).
    pub fn end(mut self, ending: impl FnOnce(&mut Run) -> Ending) -> Result<ExitCode> {
        match self.place.take().map(Place::finish) {
            Some(Ok(total)) => self.path_total = total,
            Some(Err(e)) => self.problems.push(format!("{e:#}")),
            None => {}
        }
        let mut end = ending(&mut self);
        let closed = self.rec.finish(end.status, end.error.as_ref());
        self.note(closed);
        // The results are safe in the spool, but the archive did not take them: say where they
        // wait, and fail the command so that a script notices.
        if let Some(waits) = self.rec.diverted() {
            self.problems.insert(0, waits.to_string());
        }
        let problem = self.problems.first().map(|p| TestError { code: "run".into(), message: p.clone() });
        let error = end.error.clone().or(problem);
        end.run.id = self.rec.run_id();
        end.run.error = error.clone();
        end.run.remote_host = end.run.remote_host.take().or(self.remote.clone());
        self.show(&end, error.as_ref());
        if let Some(path) = &self.report {
            report_file(path, &end.run)?;
        }
        Ok(exit(error.as_ref(), &end.hint, &self.problems))
    }

    fn show(&self, end: &Ending, error: Option<&TestError>) {
        emit_all(self.live.printer().end(&report::live::Ending { run: &end.run, text: &end.text }));
        if let Some(e) = error {
            self.live.error(e);
        }
    }
}

/// Checks the report path and opens the archive.
fn open(cfg: &Config) -> Result<Recorder> {
    if let Some(path) = &cfg.report {
        check_writable(path)?;
    }
    Recorder::open(&cfg.storage)
}

/// The error a run of `results` ends with: the first failure, else an interruption.
pub fn first_error(results: &[TestResult]) -> Option<TestError> {
    let failed = results.iter().find(|r| r.status == Status::Failed).and_then(|r| r.error.clone());
    failed.or_else(|| {
        results
            .iter()
            .any(|r| r.status == Status::Interrupted)
            .then(|| TestError { code: "interrupted".into(), message: "interrupted".into() })
    })
}

fn exit(error: Option<&TestError>, hint: &str, problems: &[String]) -> ExitCode {
    for p in problems.iter().skip(usize::from(error.is_some_and(|e| e.code == "run"))) {
        eprintln!("error: {p}");
    }
    match error {
        None => ExitCode::SUCCESS,
        Some(e) => {
            eprintln!("error: {}{hint}", e.message);
            ExitCode::from(2)
        }
    }
}

/// A result for a test that could not be started at all (the place failed under it).
fn not_run(spec: &TestSpec, e: &anyhow::Error) -> TestResult {
    TestResult {
        status: Status::Failed,
        error: Some(TestError { code: "run".into(), message: format!("{e:#}") }),
        ..TestResult::new(engine::registry::label(spec), spec.clone(), String::new(), now_unix_ms())
    }
}

/// Fails now if `path` cannot be written, so a long run is not lost to a typo in `--report`.
/// An existing file is left as it is; a new one is created and removed again.
pub fn check_writable(path: &Path) -> Result<()> {
    let existed = path.exists();
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .with_context(|| format!("--report {}: cannot write there", path.display()))?;
    if !existed {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

/// Writes the HTML report of `run` to `path`.
pub fn report_file(path: &Path, run: &RunRecord) -> Result<()> {
    let doc = report::html::document(std::slice::from_ref(run));
    std::fs::write(path, doc).with_context(|| format!("writing the report {}", path.display()))
}
