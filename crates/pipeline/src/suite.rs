//! A suite of tests (`tcplab run`): a progress bar on a terminal, one table at the end, then
//! what limited each stream. On loopback each TCP stream is compared with the first one (the
//! loop-back baseline of seed 000), unless `--link` names a link to compare with.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use engine::StopFlag;
use results::{Reference, Status, SummaryTable, TestResult, TestSpec};
use store::RunKind;

use crate::config::Config;
use crate::output::record;
use crate::progress::Progress;
use crate::recorder::status_of;
use crate::run::{first_error, Ending, Run};

/// Error codes after which the rest of a suite cannot run either.
const FATAL: [&str; 3] = ["connect", "busy", "bad-version"];

/// Runs `specs` in order.
pub fn run(cfg: &Config, specs: &[TestSpec], link: Option<Reference>, stop: &StopFlag) -> Result<ExitCode> {
    let mut run = Run::begin(cfg, RunKind::Suite, Duration::from_secs(3))?;
    run.live.show_intervals = false;
    let loopback = link.is_none() && run.embedded();
    let bar = Progress::new(specs.len() as u64, 0, run.live.printer().for_people());
    let mut results = Vec::new();
    let mut baseline: Option<Reference> = None;
    for spec in specs {
        if stop.is_set() {
            break;
        }
        bar.message(engine::registry::label(spec));
        let r = run.test(spec, None, stop, |r| reference(r, &link, loopback, &mut baseline), false);
        run.store(&r);
        bar.inc();
        let fatal = r.error.as_ref().is_some_and(|e| FATAL.contains(&e.code.as_str()));
        results.push(r);
        if fatal {
            break;
        }
    }
    bar.finish();
    run.end(|run| Ending {
        status: status_of(&results),
        error: first_error(&results),
        text: suite_text(&results),
        hint: String::new(),
        run: record(results, run.remote().cloned(), None, run.started()),
    })
}

/// What `r` is compared with: the link of `--link`, or on loopback the first TCP stream's
/// own goodput (a paced UDP stream or a transaction test is no loop-back baseline).
fn reference(
    r: &TestResult,
    link: &Option<Reference>,
    loopback: bool,
    baseline: &mut Option<Reference>,
) -> Option<Reference> {
    if link.is_some() {
        return link.clone();
    }
    if !loopback || !r.summary.produced().has_table(SummaryTable::Streams) {
        return None;
    }
    if let (None, Status::Completed, Some(goodput)) = (&baseline, r.status, r.summary.headline_value()) {
        *baseline = Some(diagnose::reference::loopback_baseline(&r.label, goodput));
    }
    baseline.clone()
}

fn suite_text(results: &[TestResult]) -> String {
    let mut o = report::text::suite_table(results);
    o.push_str(report::text::suite_diagnosis(results).trim_end());
    let mut seen = std::collections::HashSet::new();
    for w in results.iter().flat_map(|r| &r.warnings) {
        if seen.insert(w.kind) {
            o.push_str(&format!("\nwarning: {} — {}", w.message, w.advice));
        }
    }
    o
}
