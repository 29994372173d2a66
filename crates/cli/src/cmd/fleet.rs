//! `tcplab archive push` (copy local results to the fleet's archive) and `tcplab archive
//! audit` (hosts with no result lately).

use std::process::ExitCode;

use anyhow::{Context, Result};
use store::{HostActivity, PushCounts, Store};

use crate::args::fleet::{ArchiveAction, ArchiveArgs, AuditArgs, PushArgs};
use crate::output::{emit, emit_all, now_unix_ms};
use crate::recorder::{open_store, open_store_read};

/// Runs `tcplab archive …`.
pub fn run(a: &ArchiveArgs) -> Result<ExitCode> {
    match &a.action {
        ArchiveAction::Push(p) => push(p),
        ArchiveAction::Audit(p) => audit(p),
        ArchiveAction::Regressions(p) => super::regressions::run(p),
    }
}

fn counts_line(c: &PushCounts) -> String {
    format!(
        "pushed {} test(s) ({} new run(s), {} updated); {} already there; {} batch(es)",
        c.tests_pushed, c.runs_new, c.runs_updated, c.tests_present, c.batches
    )
}

/// `tcplab archive push`.
fn push(a: &PushArgs) -> Result<ExitCode> {
    deliver_spool(a)?;
    let from = open_store(&a.store)?;
    // Plain text, not the store's error: the "--no-store, or --db" advice is about the
    // archive results are read from, not about where --to points.
    let mut to = Store::open(&a.to).map_err(|e| anyhow::anyhow!("{e}"))?;
    // Progress names batches; the summary (stdout) is said once, at the end.
    let mut progress = |c: &PushCounts| {
        eprintln!("archive push: {} batch(es) stored so far ({} test(s))", c.batches, c.tests_pushed)
    };
    let counts = from
        .push_to(&mut to, a.batch as usize, &mut progress)
        .with_context(|| format!("pushing {} to {}", from.path().display(), to.path().display()))?;
    emit(&counts_line(&counts));
    Ok(ExitCode::SUCCESS)
}

/// Delivers the results waiting in the spool of `--to` (runs whose storing failed), if any.
fn deliver_spool(a: &PushArgs) -> Result<()> {
    let at = pipeline::Storage { db: Some(a.to.clone()), disabled: false, spool_dir: a.spool_dir.clone() };
    let Some(spool) = pipeline::spool::Spool::of(&at)? else { return Ok(()) };
    if let Some(c) =
        spool.flush().with_context(|| format!("delivering the spool {}", spool.file.display()))?
    {
        emit(&format!("spool {}: {}", spool.file.display(), counts_line(&c)));
    }
    Ok(())
}

/// One row of the audit: a host, whether it sent results in the period, and how many.
fn audit_rows(found: &[HostActivity], expect: &[String]) -> Vec<HostActivity> {
    let mut rows: Vec<HostActivity> = if expect.is_empty() {
        found.to_vec()
    } else {
        expect
            .iter()
            .map(|h| {
                found.iter().find(|f| &f.host == h).cloned().unwrap_or(HostActivity {
                    host: h.clone(),
                    last_unix_ms: None,
                    runs: 0,
                    tests: 0,
                })
            })
            .collect()
    };
    rows.sort_by(|a, b| (a.tests > 0, &a.host).cmp(&(b.tests > 0, &b.host)));
    rows
}

/// `tcplab archive audit`: exit 1 when a host has no result in the period.
fn audit(a: &AuditArgs) -> Result<ExitCode> {
    if let Some(inventory) = &a.inventory {
        return super::audit::mesh_cells(a, inventory);
    }
    let st = open_store_read(&a.store)?;
    let since = now_unix_ms().saturating_sub(a.since);
    let rows = audit_rows(&st.host_activity(since)?, &a.expect_hosts);
    let hosts: Vec<report::audit::Host> = rows
        .iter()
        .map(|r| report::audit::Host {
            name: r.host.clone(),
            runs: r.runs,
            tests: r.tests,
            last_unix_ms: r.last_unix_ms,
        })
        .collect();
    let shown = report::audit::Hosts { rows: &hosts, since_unix_ms: since, hours: a.since as f64 / 3.6e6 };
    emit_all(report::live::printer(crate::output::json_or_text(a.json)).shown(&shown));
    let missing = rows.iter().any(|r| r.tests == 0);
    Ok(if missing { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(name: &str, tests: u64) -> HostActivity {
        HostActivity { host: name.into(), last_unix_ms: Some(1), runs: tests, tests }
    }

    #[test]
    fn expected_hosts_without_runs_are_missing_and_listed_first() {
        let found = [host("a", 3), host("b", 0), host("z", 2)];
        let rows = audit_rows(&found, &["a".into(), "c".into(), "b".into()]);
        let names: Vec<(&str, u64)> = rows.iter().map(|r| (r.host.as_str(), r.tests)).collect();
        assert_eq!(names, [("b", 0), ("c", 0), ("a", 3)]);
        assert_eq!(audit_rows(&found, &[]).len(), 3);
    }
}
