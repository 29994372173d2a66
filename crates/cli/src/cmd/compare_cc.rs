//! `tcplab compare-cc`: the flags into a comparison plan, run by the pipeline.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Result};
use engine::StopFlag;
use pipeline::compare_cc::Plan;
use pipeline::{Config, Storage, Target};
use results::TestKind;

use crate::args::cc::CompareCcArgs;
use crate::output::format_of;
use crate::settings::{check, path_options, remote, storage};

/// Probes on the idle path before each stream: enough for a median.
const IDLE_PROBES: u32 = 5;

/// Runs the comparison, once or with `--every` on a schedule ([`super::schedule`]).
pub fn run(a: &CompareCcArgs, stop: &StopFlag) -> Result<ExitCode> {
    let target = match (&a.host, path_options(&a.path)) {
        (Some(_), Some(_)) => bail!("--path runs its own server across the emulated link; drop HOST"),
        (_, Some(p)) => Target::Path(p),
        (Some(host), None) => Target::Remote(remote(host, a.port)?),
        (None, None) => Target::Loopback,
    };
    let cfg = Config {
        target,
        format: format_of(&a.output),
        report: a.output.report.clone(),
        storage: Storage { spool_dir: a.schedule.spool_dir.clone(), ..storage(&a.store) },
        trace: a.output.trace.clone(),
        trace_level: a.output.trace_level.level(),
    };
    let plan = plan(a)?;
    super::schedule::run(&a.schedule, &cfg, stop, |cfg| pipeline::compare_cc::run(cfg, &plan, stop))
}

/// The plan the flags ask for, checked.
fn plan(a: &CompareCcArgs) -> Result<Plan> {
    let mut controls: Vec<String> = Vec::new();
    for c in a.controls.iter().map(|c| c.trim()).filter(|c| !c.is_empty()) {
        if !controls.iter().any(|k| k == c) {
            controls.push(c.to_string());
        }
    }
    if controls.is_empty() {
        bail!("--cc: name at least one congestion control");
    }
    if a.interval_ms == 0 {
        bail!("-i 0: compare-cc needs interval reports for its windows");
    }
    let measured = a.time_ms.saturating_sub(a.omit_ms);
    if a.window_ms < a.interval_ms || a.window_ms > measured {
        bail!(
            "--window {} s must lie between -i ({} s) and the measured time (-t − -O = {} s)",
            a.window_ms as f64 / 1000.0,
            a.interval_ms as f64 / 1000.0,
            measured as f64 / 1000.0
        );
    }
    if a.probe_interval == 0 {
        bail!("--probe-interval must be above 0");
    }
    let mut base = engine::registry::defaults(TestKind::TcpStream);
    base.duration_ms = a.time_ms;
    base.interval_ms = a.interval_ms;
    base.omit_ms = a.omit_ms;
    base.send_len = a.len;
    base.recv_len = a.len;
    Ok(Plan {
        base: check(&base)?,
        controls,
        rounds: a.repeat,
        window: Duration::from_millis(a.window_ms),
        concurrent: a.concurrent,
        probe_interval: Duration::from_millis(a.probe_interval),
        idle_probes: IDLE_PROBES,
    })
}
