//! `tcplab archive regressions [--since 7d] [--threshold 10%]`: per path and test, the newest
//! results against that path's own history in the period (`stats::regression`); exit 1 when any
//! path regressed.

use std::process::ExitCode;

use anyhow::Result;
use stats::regression::{Observation, Rule, Series, Verdict};
use store::PathResult;

use crate::args::fleet::RegressionsArgs;
use crate::output::{emit, now_unix_ms};
use crate::recorder::open_store_read;

/// Runs `tcplab archive regressions`.
pub fn run(a: &RegressionsArgs) -> Result<ExitCode> {
    let st = open_store_read(&a.store)?;
    let since = now_unix_ms().saturating_sub(a.since);
    let observations: Vec<Observation> =
        st.path_results(since)?.into_iter().filter_map(observation).collect();
    let rule = Rule { level_pct: a.level, threshold_pct: a.threshold, latest: a.latest as usize };
    let rows = stats::regression::judge_all(&observations, &rule);
    let asked =
        report::regressions::Asked { since_unix_ms: since, threshold_pct: a.threshold, level_pct: a.level };
    if a.json {
        emit(&report::regressions::json(&rows, &asked));
    } else {
        emit(&report::regressions::text(&rows, &asked));
    }
    let regressed = rows.iter().any(|j| j.verdict == Verdict::Regressed);
    Ok(if regressed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// A stored test as one observation of its series; tests of a type with no headline metric
/// (nothing to judge) are left out.
pub fn observation(r: PathResult) -> Option<Observation> {
    let metric = r.metric.or_else(|| {
        let kind = results::TestKind::from_id(&r.test)?;
        Some(engine::registry::of(kind).headline().id().to_string())
    })?;
    let value = if r.status == "completed" { r.value } else { None };
    let failure = (r.status != "completed").then(|| r.error.unwrap_or_else(|| r.status.clone()));
    Some(Observation {
        series: Series { sender: r.sender, receiver: r.receiver, test: r.test, label: r.label, metric },
        at_unix_ms: r.started_unix_ms,
        value,
        failure,
    })
}
