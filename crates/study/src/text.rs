//! The study's comparison as text for the terminal: paper, measured, model and the ratios
//! per row, then why large differences arise, what was skipped and what cannot run yet.

use std::fmt::Write;

use crate::compare::{cell, cell_pm, ratio_cell, Row};
use crate::status::{Judged, Status};
use crate::{Outcome, Study};

/// Column titles of the comparison table (text and HTML).
pub const HEAD: [&str; 8] = [
    "figure",
    "case",
    "unit",
    "paper",
    "tcplab measured",
    "model ceiling",
    "measured/paper",
    "measured/model",
];

/// One row's cells, in [`HEAD`]'s order.
pub fn cells(r: &Row) -> Vec<String> {
    vec![
        r.group.clone(),
        r.case.clone(),
        r.unit.to_string(),
        cell_pm(r.paper.as_ref().map(|p| p.0), r.paper_sd),
        cell_pm(r.measured, r.sd),
        cell(r.model),
        ratio_cell(r.vs_paper()),
        ratio_cell(r.vs_model()),
    ]
}

/// Every figure's status, one line each: `Figure 10  same shape  evidence`.
pub fn statuses(judged: &[Judged]) -> String {
    let w = judged.iter().map(|j| j.entry.figure.chars().count()).max().unwrap_or(0);
    let s = judged.iter().map(|j| j.verdict.status.label().len()).max().unwrap_or(0);
    let mut o = String::new();
    for j in judged {
        let _ = writeln!(
            o,
            "{:<w$}  {:<s$}  {}: {}",
            j.entry.figure,
            j.verdict.status.label(),
            j.entry.what,
            j.verdict.evidence
        );
    }
    o
}

/// What is not run, in the report's words, read from the run's data: every figure whose
/// computed status is *not run*, then every comparison row that sets a paper number beside
/// no measured one (a case of a measured figure that failed or was left out; not one this
/// host cannot run, which the row says).
pub fn pending(judged: &[Judged], rows: &[Row]) -> Vec<String> {
    let figures = judged
        .iter()
        .filter(|j| j.verdict.status == Status::NotRun)
        .map(|j| format!("{} ({}): {}", j.entry.figure, j.entry.what, j.verdict.evidence));
    let cases = rows.iter().filter(|r| r.measured.is_none() && !r.not_reproducible).filter_map(|r| {
        let (value, source) = r.paper.as_ref()?;
        Some(format!(
            "{} / {}: no measured value beside the paper's {} {} ({source})",
            r.group,
            r.case,
            cell(Some(*value)),
            r.unit
        ))
    });
    figures.chain(cases).collect()
}

/// The table and notes.
pub fn table(study: &dyn Study, out: &Outcome, rows: &[Row]) -> String {
    let all: Vec<Vec<String>> =
        std::iter::once(HEAD.iter().map(|s| s.to_string()).collect()).chain(rows.iter().map(cells)).collect();
    let widths: Vec<usize> =
        (0..HEAD.len()).map(|i| all.iter().map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
    let mut o = String::new();
    let info = study.info();
    let _ = writeln!(o, "\nstudy {} (seed {}): {}", info.name, info.seed, info.paper);
    for r in &all {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| if i < 3 { format!("{c:<w$}") } else { format!("{c:>w$}") })
            .collect();
        let _ = writeln!(o, "{}", line.join("  ").trim_end());
    }
    for r in rows.iter().filter(|r| !r.why.is_empty()) {
        let _ = writeln!(o, "- {} / {}: {}", r.group, r.case, r.why);
    }
    for s in &out.skipped {
        let _ = writeln!(o, "skipped: {s}");
    }
    let judged = crate::status::judge_all(study, out);
    let _ =
        writeln!(o, "\nstatus of every figure and table of the paper (95 % intervals over repeated runs):");
    o.push_str(&statuses(&judged));
    let pending = pending(&judged, rows);
    let _ = writeln!(o, "pending: {} not run", pending.len());
    for p in pending {
        let _ = writeln!(o, "not run: {p}");
    }
    o
}
