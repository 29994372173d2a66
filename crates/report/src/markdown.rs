//! Markdown for pasting into issues and pull requests: the same tables as the HTML report
//! (runs and hosts, summaries, latency percentiles, CPU, warnings, grids) as GitHub tables.

use std::fmt::Write;

use results::{RunRecord, TestResult};

use crate::findings;
use crate::param_grid::Grid;
use crate::tables::{self, Table};

/// The report of `runs` as markdown.
pub fn document(runs: &[RunRecord]) -> String {
    let mut o = String::from("# tcplab report\n");
    match runs {
        [run] => {
            let _ = write!(
                o,
                "\n{} · `{}` · tcplab {}\n\n",
                tables::utc(run.started_unix_ms),
                code(&run.command_line.join(" ")),
                run.tool_version
            );
            if let Some(e) = &run.error {
                let _ = writeln!(o, "**error:** {} ({})\n", cell(&e.message), cell(&e.code));
            }
        }
        _ => section(&mut o, "Runs", &tables::runs(runs)),
    }
    for (names, hosts) in tables::host_pairs(runs) {
        let title =
            if runs.len() > 1 { format!("Hosts of run {}", names.join(", ")) } else { "Hosts".into() };
        section(&mut o, &title, &hosts);
    }
    let tests: Vec<&TestResult> = runs.iter().flat_map(|r| &r.tests).collect();
    section(&mut o, "Stream tests", &tables::streams(&tests));
    section(&mut o, "UDP stream tests", &tables::udp(&tests));
    section(&mut o, "Request/response tests", &tables::rr(&tests));
    section(&mut o, "Latency percentiles", &tables::percentiles(&tests));
    section(&mut o, "CPU", &tables::cpu(&tests));
    diagnosis(&mut o, &tests);
    for (run, study) in runs.iter().filter_map(|r| Some((r, r.cc.as_ref()?))) {
        section(&mut o, "Congestion controls compared", &crate::cc::table(study, &run.tests));
        section(&mut o, "Concurrent flows", &crate::cc::fairness_table(study));
        let line = crate::cc::unavailable_line(study);
        if !line.is_empty() {
            let _ = writeln!(o, "\n{}", cell(&line));
        }
        let _ = writeln!(o, "\n{}", cell(&crate::cc::method_note(study)));
    }
    for g in Grid::all(runs) {
        section(&mut o, &format!("{} ({} points)", g.title, g.points.len()), &tables::grid(&g));
    }
    section(&mut o, "Warnings", &tables::warnings(&tests));
    o
}

fn section(o: &mut String, title: &str, t: &Table) {
    if t.is_empty() {
        return;
    }
    let _ = write!(o, "\n## {}\n\n", cell(title));
    push_table(o, t);
}

fn diagnosis(o: &mut String, tests: &[&TestResult]) {
    section(o, "What limited each result", &findings::diagnosis(tests));
    section(o, "Compared with", &findings::references(tests));
    section(o, "Emulated path", &findings::emu(tests));
}

/// A GitHub table; columns of numbers right-aligned.
fn push_table(o: &mut String, t: &Table) {
    let head: Vec<String> = t.head.iter().map(|h| cell(h)).collect();
    let _ = writeln!(o, "| {} |", head.join(" | "));
    let numeric = |i: usize| {
        t.rows
            .iter()
            .all(|r| r.get(i).is_some_and(|c| c.starts_with(|ch: char| ch.is_ascii_digit() || ch == '–')))
    };
    let align: Vec<&str> =
        (0..t.head.len()).map(|i| if i > 0 && numeric(i) { "--:" } else { ":--" }).collect();
    let _ = writeln!(o, "|{}|", align.join("|"));
    for row in &t.rows {
        let cells: Vec<String> = row.iter().map(|c| cell(c)).collect();
        let _ = writeln!(o, "| {} |", cells.join(" | "));
    }
}

/// Text safe inside a table cell: pipes escaped, newlines flattened.
fn cell(s: &str) -> String {
    s.replace('\\', "\\\\").replace('|', "\\|").replace(['\n', '\r'], " ")
}

fn code(s: &str) -> String {
    s.replace('`', "'")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_cannot_break_the_table() {
        assert_eq!(cell("a|b\nc"), "a\\|b c");
    }
}
