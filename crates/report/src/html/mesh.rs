//! Meshes (`tcplab mesh`): the sender × receiver matrix as a heatmap (rows send, columns
//! receive, the diagonal the loop-back baselines), the shares of the baselines as a table,
//! every failed cell with its reason, the warnings stored with the cells, and the hosts that
//! are one machine.

use results::RunRecord;

use super::page::Page;
use crate::mesh::{Entry, Matrix};
use crate::plot::{Cell, Heatmap, TickFormat};
use crate::tables::Table;

/// The section, when `runs` hold a mesh.
pub fn section(p: &mut Page, runs: &[RunRecord]) {
    let meshes: Vec<(&RunRecord, Matrix)> = runs.iter().filter_map(|r| Some((r, Matrix::of(r)?))).collect();
    if meshes.is_empty() {
        return;
    }
    p.section("meshes", "Meshes: sender × receiver");
    for (run, m) in &meshes {
        p.h3(&format!(
            "Run {} · {} senders × {} receivers",
            run.id.unwrap_or(0),
            m.senders.len(),
            m.receivers.len()
        ));
        p.plot(&heatmap(m));
        p.table(&shares(m), true);
        p.para(
            "note",
            "Rows send, columns receive; the diagonal is each host's loop-back baseline (a third-party test from the host to itself). Shares: the cell's rate as a percentage of the sender's and of the receiver's baseline.",
        );
        let failures = m.failures();
        if !failures.is_empty() {
            let mut t = Table::new(&["failed cell"]);
            t.rows = failures.into_iter().map(|f| vec![f]).collect();
            p.table(&t, false);
        }
        let warnings = crate::mesh::cell_warnings(run);
        if !warnings.is_empty() {
            let mut t = Table::new(&["warning stored with the cells", "cells"]);
            t.rows = warnings.into_iter().map(|(w, cells)| vec![w, cells.join(", ")]).collect();
            p.table(&t, false);
        }
        for note in crate::mesh::machine_notes(run) {
            p.para("note", &note);
        }
    }
    p.end_section();
}

/// The heatmap of the mesh in `run`, as one `<svg>`; `None` when `run` is not a mesh.
pub fn heatmap_of(run: &RunRecord) -> Option<String> {
    Matrix::of(run).map(|m| heatmap(&m))
}

fn heatmap(m: &Matrix) -> String {
    let (div, unit) = m.scale();
    // The heatmap's row 0 is at the bottom: the first sender goes last, to be on top.
    let cells = m
        .cells
        .iter()
        .zip(&m.senders)
        .rev()
        .map(|(row, sender)| {
            row.iter()
                .zip(&m.receivers)
                .map(|(e, receiver)| match e {
                    Entry::Measured { value, .. } => {
                        let v = crate::plot::line::value(value / div, TickFormat::Number);
                        // The loop-back baseline is bracketed, as in the text table.
                        let text = if sender == receiver { format!("[{v}]") } else { v };
                        Some(Cell { value: value / div, text })
                    }
                    Entry::Failed { reason, .. } => {
                        Some(Cell { value: f64::NAN, text: format!("failed: {reason}") })
                    }
                    Entry::NotRun => Some(Cell { value: f64::NAN, text: "not run".into() }),
                    Entry::None => None,
                })
                .collect()
        })
        .collect();
    let name = results::Metric::from_id(&m.metric).map_or(m.metric.as_str(), |x| x.name());
    Heatmap {
        title: format!("{name} ({unit}), sender × receiver; [x] loop-back baseline"),
        x_label: "receiver".into(),
        y_label: "sender".into(),
        columns: m.receivers.clone(),
        rows: m.senders.iter().rev().cloned().collect(),
        cells,
        unit: unit.to_string(),
    }
    .render()
}

fn shares(m: &Matrix) -> Table {
    let mut t =
        Table::new(&["sender → receiver", "rate", "of sender's loop-back", "of receiver's loop-back"]);
    let (div, unit) = m.scale();
    let pct = |f: &Option<f64>| f.map_or("no baseline".to_string(), |f| format!("{:.0} %", f * 100.0));
    for (s, row) in m.cells.iter().enumerate() {
        for (r, e) in row.iter().enumerate() {
            let name = format!("{} → {}", m.senders[s], m.receivers[r]);
            let cells = match e {
                Entry::Measured { value, sender_share, receiver_share, .. }
                    if m.senders[s] != m.receivers[r] =>
                {
                    vec![
                        format!("{} {unit}", crate::units::sig3(value / div)),
                        pct(sender_share),
                        pct(receiver_share),
                    ]
                }
                Entry::Measured { value, .. } => {
                    vec![
                        format!("{} {unit} (loop-back)", crate::units::sig3(value / div)),
                        "100 %".into(),
                        "100 %".into(),
                    ]
                }
                Entry::Failed { .. } => vec!["failed".into(), String::new(), String::new()],
                Entry::NotRun => vec!["not run".into(), String::new(), String::new()],
                Entry::None => continue,
            };
            t.rows.push(std::iter::once(name).chain(cells).collect());
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    #[test]
    fn the_cells_warnings_and_shared_machines_are_in_the_html_matrix() {
        let mut run = fixture::mesh_run();
        run.tests[0].warnings = vec![results::Warning {
            kind: results::WarningKind::CpuSaturated,
            message: "cpu0 was 100% busy".into(),
            advice: "pin the ends".into(),
        }];
        let mesh = run.sweep.as_mut().and_then(|s| s.plan.mesh.as_mut()).unwrap();
        mesh.hosts[0].machine = Some("ab".into());
        mesh.hosts[1].machine = Some("ab".into());
        let mut p = Page::new();
        section(&mut p, std::slice::from_ref(&run));
        let html = p.finish("t", "s");
        assert!(html.contains("warning stored with the cells"), "{html}");
        assert!(html.contains("cpu0 was 100% busy — pin the ends"), "{html}");
        assert!(html.contains("hosts a, b are one machine"), "{html}");
    }
}
