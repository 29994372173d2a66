//! Views of the archive: the `tcplab history` list (a table, or a JSON array) and the text
//! summary of one stored run (`tcplab show`). Runs are laid out by what they hold (a sweep's
//! grid, one test's summary, a suite's table), never by the kind of their tests.

use std::fmt::Write;

use results::{RunRecord, RunSummary};

use crate::units::{headline, utc_datetime};
use crate::{grid, text};

/// The history list as a table, newest first as given; the header alone for no runs.
pub fn history_text(runs: &[RunSummary]) -> String {
    let mut o = format!(
        "{:>6}  {:<20} {:<6} {:<12} {:>9}  {:<22} {:>16}  command\n",
        "id", "started (UTC)", "kind", "status", "tests", "server", "best"
    );
    for r in runs {
        o.push_str(&history_line(r));
        o.push('\n');
    }
    o
}

fn history_line(r: &RunSummary) -> String {
    let tests = match r.points_total {
        Some(n) => format!("{}/{n}", r.tests),
        None => r.tests.to_string(),
    };
    let cmd = r.command_line.iter().skip(1).cloned().collect::<Vec<_>>().join(" ");
    format!(
        "{:>6}  {:<20} {:<6} {:<12} {:>9}  {:<22} {:>16}  {}",
        r.id,
        utc_datetime(r.started_unix_ms),
        r.kind,
        r.status,
        tests,
        r.server,
        headline(r.best),
        cmd
    )
}

/// The history list as one pretty JSON array. `best` is `null` when no test measured a
/// headline.
pub fn history_json(runs: &[RunSummary]) -> String {
    let list: Vec<serde_json::Value> = runs.iter().map(summary_json).collect();
    serde_json::to_string_pretty(&list).unwrap_or_else(|_| "[]".into()) + "\n"
}

fn summary_json(r: &RunSummary) -> serde_json::Value {
    serde_json::json!({
        "id": r.id, "kind": r.kind, "status": r.status, "started_unix_ms": r.started_unix_ms,
        "server": r.server, "tests": r.tests, "points_total": r.points_total, "first_label": r.first_label,
        "best": r.best, "command_line": r.command_line,
    })
}

/// One stored run for a terminal: its header and hosts, then a sweep's grid, one test's
/// summary or a suite's table.
pub fn show_text(run: &RunRecord) -> String {
    let mut o = header(run);
    let mesh = crate::mesh::text(run);
    if let (false, Some(sw)) = (mesh.is_empty(), &run.sweep) {
        o.push_str(&mesh);
        let resume = if sw.complete {
            String::new()
        } else {
            format!(" (resume with tcplab mesh --resume {})", run.id.unwrap_or(0))
        };
        let _ = writeln!(
            o,
            "{} of {} cells{resume}; every cell: tcplab show {} --format mesh-csv",
            sw.points.len(),
            sw.plan.len(),
            run.id.unwrap_or(0)
        );
    } else if let Some(sw) = &run.sweep {
        o.push_str(&if crate::cases::is_mixed(sw) { crate::cases::table(run) } else { grid::table(run) });
        let _ = writeln!(
            o,
            "{} of {} points{}{}; every point: tcplab show {} --csv",
            sw.points.len(),
            sw.plan.len(),
            resume_hint(run, sw.complete),
            superseded_note(run, sw),
            run.id.unwrap_or(0)
        );
    } else if let Some(study) = &run.cc {
        o.push_str(&crate::cc::text(study, &run.tests));
    } else if let [one] = run.tests.as_slice() {
        o.push_str(&text::test_summary(one));
    } else {
        o.push_str(&text::suite_table(&run.tests));
    }
    o
}

/// How an unfinished sweep is continued: a study's runs by `tcplab study NAME --resume ID`.
/// The stored command line starts with the program's path; the subcommand is the first word
/// after it that is not a flag.
fn resume_hint(run: &RunRecord, complete: bool) -> String {
    let id = run.id.unwrap_or(0);
    let mut words = run.command_line.iter().skip(1).skip_while(|w| w.starts_with('-'));
    match (complete, words.next().map(String::as_str), words.next()) {
        (true, ..) => String::new(),
        (false, Some("study"), Some(name)) => format!(" (resume with tcplab study {name} --resume {id})"),
        _ => format!(" (resume with tcplab sweep --resume {id})"),
    }
}

/// How many of a sweep's tests no point holds any more (their points were measured again),
/// as a clause; empty when none.
fn superseded_note(run: &RunRecord, sw: &results::Sweep) -> String {
    let held: std::collections::BTreeSet<u32> = sw.points.iter().map(|p| p.test_index).collect();
    let kept = (0..run.tests.len()).filter(|i| !u32::try_from(*i).is_ok_and(|i| held.contains(&i))).count();
    match kept {
        0 => String::new(),
        n => format!(
            "; {n} earlier measurement{} kept beside the points measured again (superseded in --csv)",
            crate::html::plural(n)
        ),
    }
}

fn header(run: &RunRecord) -> String {
    let mut o = format!(
        "run {} · {} UTC · tcplab {} · {}\n",
        run.id.unwrap_or(0),
        utc_datetime(run.started_unix_ms),
        run.tool_version,
        run.command_line.join(" ")
    );
    let host = |h: &results::HostInfo| {
        let text = |v: &str| if v.is_empty() { crate::units::UNKNOWN.to_string() } else { v.to_string() };
        if h.kernel.is_empty() && h.cpus == 0 && h.cpu_model.is_empty() {
            return format!("{} (host not reported by this peer)", text(&h.hostname));
        }
        let cpus = if h.cpus == 0 { crate::units::UNKNOWN.to_string() } else { h.cpus.to_string() };
        format!(
            "{} ({}, {cpus} × {}, {})",
            text(&h.hostname),
            text(&h.kernel),
            text(&h.cpu_model),
            text(&h.congestion_default)
        )
    };
    let _ = writeln!(o, "client {}", host(&run.local_host));
    if let Some(h) = &run.remote_host {
        let _ = writeln!(o, "server {}", host(h));
    }
    if let Some(e) = &run.error {
        let _ = writeln!(o, "error: {}", e.message);
    }
    o
}

/// Several stored runs for a terminal: [`show_text`] of each, a blank line apart.
pub fn runs_text(runs: &[RunRecord]) -> String {
    runs.iter().map(show_text).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sweep whose point was measured again says how many earlier measurements it keeps;
    /// one without says nothing of them.
    #[test]
    fn a_sweep_shown_counts_its_superseded_tests() {
        let mut run = crate::fixture::sweep_run();
        assert!(!show_text(&run).contains("earlier measurement"));
        let first = run.tests[2].clone();
        run.tests.push(first);
        if let Some(sw) = run.sweep.as_mut() {
            (sw.points[2].test_index, sw.complete) = (6, false);
        }
        let text = show_text(&run);
        assert!(text.contains("6 of 6 points (resume with tcplab sweep --resume 7); 1 earlier"), "{text}");
        run.command_line = ["/x/tcplab", "study", "tcp-atm-2000", "--db", "s.db"].map(String::from).to_vec();
        let hint = show_text(&run);
        assert!(hint.contains("(resume with tcplab study tcp-atm-2000 --resume 7)"), "{hint}");
        if let Some(sw) = run.sweep.as_mut() {
            sw.complete = true;
        }
        let text = show_text(&run);
        let want = "6 of 6 points; 1 earlier measurement kept beside the points measured again \
                    (superseded in --csv); every point: tcplab show 7 --csv";
        assert!(text.contains(want), "{text}");
    }
}
