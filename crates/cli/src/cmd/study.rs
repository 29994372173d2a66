//! `tcplab study`: lists the seed studies, or runs one through the pipeline (crates/study).

use std::process::ExitCode;

use anyhow::{bail, Result};
use engine::StopFlag;
use study::{Mode, Options};

use crate::args::study::StudyArgs;
use crate::settings::{client_key, remote, storage};

/// Runs `tcplab study`.
pub fn run(a: &StudyArgs, stop: &StopFlag) -> Result<ExitCode> {
    if let Some(flag) = a.schedule_flag() {
        bail!(
            "study takes no {flag}: a study runs for hours and continues after a stop with --resume, \
             so it is not repeated in rounds; start it from a timer (cron, systemd), or schedule \
             `run`, `mesh` or a test command with --every"
        );
    }
    if a.name == "list" {
        print!("{}", list());
        return Ok(ExitCode::SUCCESS);
    }
    let Some(s) = study::find(&a.name) else {
        let names: Vec<&str> = study::all().iter().map(|s| s.info().name).collect();
        bail!("no study `{}` (studies: {}; tcplab study list)", a.name, names.join(", "));
    };
    if a.inventory.is_some() && s.matrix(Mode::Quick).is_none() {
        bail!("study {} has no sender × receiver matrix: --inventory is for tcp-atm-2000", a.name);
    }
    let opts = Options {
        mode: if a.quick { Mode::Quick } else { Mode::Full },
        host: a.host.as_ref().map(|h| remote(h, a.port)).transpose()?,
        inventory: a.inventory.as_deref().map(crate::inventory::read).transpose()?,
        key: client_key(a.key_file.as_deref())?,
        seconds: a.seconds,
        report: a.report.clone(),
        storage: storage(&a.store),
        resume: a.resume.map(|id| id.map_or(study::resume::Resume::Last, study::resume::Resume::Run)),
        remeasure_stolen: a.remeasure_stolen,
    };
    study::runner::run(s, &opts, stop)
}

/// The table of `tcplab study list`.
fn list() -> String {
    let mut rows = vec![[
        "study".to_string(),
        "seed".into(),
        "--quick".into(),
        "full".into(),
        "root".into(),
        "pending".into(),
        "reruns".into(),
    ]];
    for s in study::all() {
        let i = s.info();
        let est = |m: Mode| {
            study::plan::estimate_text(study::plan::estimate_range_s(&study::emulated_stages(s, m), 100e6))
        };
        let root = if s.needs_root() { "yes (emulated paths)" } else { "no" };
        rows.push([
            i.name.into(),
            i.seed.into(),
            est(Mode::Quick),
            est(Mode::Full),
            root.into(),
            format!("{} not run", study::status::pending(s).len()),
            i.reruns.into(),
        ]);
    }
    let widths: Vec<usize> =
        (0..6).map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for r in &rows {
        for (c, w) in widths.iter().enumerate() {
            out.push_str(&format!("{:<w$}  ", r[c]));
        }
        out.push_str(&r[6]);
        out.push('\n');
    }
    out.push_str("pending: the paper's figures no run gives yet (each study's report names them)\n");
    out.push_str("times are estimates from the designs (this 2-core machine); full runs follow the papers' sizes, windows, repetitions and durations\n");
    out.push_str(
        "a range: cases repeated until their interval is narrow enough, at their fewest and most runs\n",
    );
    out
}
