//! One test (`stream`, `rr`, `crr`, `udp`, `udp-rr` …), repeated until confident with `-I`:
//! live intervals, the summary block, the archive, the exit status.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use engine::StopFlag;
use results::{ConfidenceTarget, Reference, TestSpec};
use store::RunKind;

use crate::config::Config;
use crate::output::record;
use crate::recorder::status_of;
use crate::run::{first_error, Ending, Run};

/// Runs `spec` where `cfg` says, comparing its throughput with `reference` (`--link`).
pub fn run(
    cfg: &Config,
    spec: &TestSpec,
    confidence: Option<&ConfidenceTarget>,
    reference: Option<Reference>,
    stop: &StopFlag,
) -> Result<ExitCode> {
    let busy_wait = if confidence.is_some() { Duration::from_secs(3) } else { Duration::ZERO };
    let mut run = Run::begin(&cfg.serving(spec), RunKind::Test, busy_wait)?;
    let mut result = run.test(spec, confidence, stop, |_| reference, true);
    run.end(|run| {
        // One test: the path's counters over the whole session, every packet of the
        // capture included (setup and teardown too), rather than the measured part.
        if let Some(total) = run.path_total() {
            result.emu = Some(total.clone());
        }
        if let Some(emu) = &result.emu {
            run.live.note(&report::emu::text(emu));
        }
        run.store(&result);
        let tests = vec![result];
        Ending {
            status: status_of(&tests),
            error: first_error(&tests),
            run: record(tests, run.remote().cloned(), None, run.started()),
            text: String::new(),
            hint: String::new(),
        }
    })
}
