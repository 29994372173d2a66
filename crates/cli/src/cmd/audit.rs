//! `tcplab archive audit --inventory FILE [--since 24h]`: the cells of the inventory's mesh
//! (ordered sender → receiver pairs, and each host's loop-back baseline) that have no
//! completed third-party result in the archive in the period. A result counts for a cell when
//! its client end and server end are the cell's hosts, by `address:port` or by inventory name.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use report::audit::{Cell, Cells};
use results::{MeshHost, RunRecord, Status, ThirdParty};
use store::RunFilter;

use crate::args::fleet::AuditArgs;

/// `tcplab archive audit --inventory FILE`: exit 1 when a cell has no result in the period.
pub fn mesh_cells(a: &AuditArgs, inventory: &Path) -> Result<ExitCode> {
    let hosts = crate::inventory::read(inventory)?;
    let st = crate::recorder::open_store_read(&a.store)?;
    let since = pipeline::output::now_unix_ms().saturating_sub(a.since);
    let filter = RunFilter { since_unix_ms: Some(since), ..RunFilter::default() };
    let mut runs = Vec::new();
    for summary in st.list_runs(&filter)? {
        runs.push(st.load_run(summary.id)?);
    }
    let cells = cells(&hosts, !a.no_baseline, &runs, since);
    let name = inventory.display().to_string();
    let shown = Cells { inventory: &name, since_unix_ms: since, cells: &cells };
    crate::output::emit_all(report::live::printer(crate::output::json_or_text(a.json)).shown(&shown));
    let missing = shown.missing();
    Ok(if missing > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// Every cell of the mesh of `hosts` with its newest completed result at or after `since`.
fn cells(hosts: &[MeshHost], baseline: bool, runs: &[RunRecord], since: u64) -> Vec<Cell> {
    let found: Vec<(&ThirdParty, u64)> = runs
        .iter()
        .flat_map(|r| &r.tests)
        .filter(|t| t.status == Status::Completed && t.started_unix_ms >= since)
        .filter_map(|t| Some((t.third_party.as_ref()?, t.started_unix_ms)))
        .collect();
    let is = |h: &MeshHost, endpoint: &str, name: &Option<String>| {
        endpoint == h.endpoint() || name.as_deref() == Some(h.name.as_str())
    };
    let mut out = Vec::new();
    for s in hosts.iter().filter(|h| h.role.sends() || baseline) {
        for r in hosts.iter().filter(|h| h.role.receives() || baseline) {
            let wanted = if s.name == r.name { baseline } else { s.role.sends() && r.role.receives() };
            if !wanted {
                continue;
            }
            let last = found
                .iter()
                .filter(|(tp, _)| is(s, &tp.from, &tp.from_name) && is(r, &tp.to, &tp.to_name))
                .map(|(_, at)| *at)
                .max();
            out.push(Cell { sender: s.name.clone(), receiver: r.name.clone(), last_unix_ms: last });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use results::{TestKind, TestResult, TestSpec};

    use super::*;

    fn result(from: &str, to: &str, at: u64, status: Status) -> TestResult {
        let mut t = TestResult::new("stream", TestSpec::new(TestKind::TcpStream), to, at);
        t.status = status;
        t.third_party = Some(ThirdParty { from: from.into(), to: to.into(), from_name: None, to_name: None });
        t
    }

    #[test]
    fn cells_without_a_completed_result_in_the_period_are_missing() {
        let hosts = crate::inventory::parse(
            "[[host]]\nname=\"a\"\naddress=\"198.18.0.1\"\n[[host]]\nname=\"b\"\naddress=\"198.18.0.2\"\n",
        )
        .unwrap();
        let run = RunRecord {
            tool_version: String::new(),
            command_line: Vec::new(),
            started_unix_ms: 0,
            local_host: Default::default(),
            remote_host: None,
            tests: vec![
                result("198.18.0.1:9180", "198.18.0.2:9180", 50, Status::Completed),
                result("198.18.0.2:9180", "198.18.0.1:9180", 50, Status::Failed),
                result("198.18.0.1:9180", "198.18.0.1:9180", 5, Status::Completed),
            ],
            error: None,
            id: Some(1),
            sweep: None,
            cc: None,
        };
        let cells = cells(&hosts, true, &[run], 10);
        let missing: Vec<(&str, &str)> = cells
            .iter()
            .filter(|c| c.last_unix_ms.is_none())
            .map(|c| (c.sender.as_str(), c.receiver.as_str()))
            .collect();
        assert_eq!(cells.len(), 4);
        assert_eq!(missing, vec![("a", "a"), ("b", "a"), ("b", "b")]);
    }
}
