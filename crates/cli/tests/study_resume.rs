//! `tcplab study NAME --resume [ID]`: a study stopped by SIGINT after a few cases is
//! continued from its archived cases and ends with the same report as an uninterrupted run
//! (the same cases in the archive, every figure's status computed on all of them); a resume
//! by another study or design is refused with one line; `--remeasure-stolen` runs again only
//! the cases a hypervisor stole from. Emulated paths need root.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use support::{command, json_of, stderr, stdout, tcplab};

/// slac-stacks: twelve cases, some probed (the RTT beside them must come back on resume).
const STUDY: &str = "slac-stacks";

fn root() -> bool {
    let out = Command::new("id").arg("-u").output().expect("id runs");
    let is_root = String::from_utf8_lossy(&out.stdout).trim() == "0";
    if !is_root {
        eprintln!("skipped: tcplab study runs on emulated paths, which need root");
    }
    is_root
}

/// Starts `study STUDY --quick -t 1` and sends it `signal` (`-INT`, `-KILL`) once `cases`
/// cases have finished; returns its stderr and whether it exited unsuccessfully.
fn interrupted_after(cases: usize, db: &str, signal: &str) -> (String, bool) {
    let mut child = command()
        .args(["study", STUDY, "--quick", "-t", "1", "--db", db])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            if line.starts_with(&format!("[{cases}/")) {
                let _ = tx.send(());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let deadline = Instant::now() + Duration::from_secs(300);
    let reached = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())).is_ok();
    let pid = child.id().to_string();
    let signal = if reached { signal } else { "-KILL" };
    assert!(Command::new("kill").args([signal, &pid]).status().unwrap().success());
    let status = child.wait().unwrap();
    let err = reader.join().unwrap();
    assert!(reached, "case {cases} never finished:\n{err}");
    (err, !status.success())
}

/// The figure column of the status list: which figures a run judged, in order.
fn figures(text: &str) -> Vec<String> {
    let list = text.split("status of every figure").nth(1).unwrap_or("");
    list.lines()
        .take_while(|l| !l.starts_with("pending"))
        .filter_map(|l| l.split("  ").next())
        .filter(|f| !f.trim().is_empty())
        .map(str::to_string)
        .collect()
}

/// The comparison table's rows with every number masked: which rows a run has and which
/// of them carry a measured value (explanations, which depend on the numbers, left out).
fn table_shape(text: &str) -> Vec<String> {
    let table = text.split("status of every figure").next().unwrap_or("");
    let mask = |l: &str| {
        let masked: String =
            l.chars().map(|c| if c.is_ascii_digit() || c == '.' { '#' } else { c }).collect();
        let words: Vec<&str> = masked.split_whitespace().collect();
        words.join(" ").replace("#", "").replace("  ", " ")
    };
    table.lines().filter(|l| !l.trim().is_empty() && !l.starts_with("- ")).map(mask).collect()
}

/// The cases of archived run `id`, in order, and whether its sweep is complete.
fn archived(db: &str, id: &str) -> (Vec<String>, bool) {
    let show = tcplab(&["show", id, "--format", "json", "--db", db]);
    assert!(show.status.success(), "{}", stderr(&show));
    let run = json_of(&show);
    let sweep = &run["sweep"];
    let cases =
        sweep["points"].as_array().unwrap().iter().map(|p| p["params"][0]["value"].to_string()).collect();
    (cases, sweep["complete"].as_bool().unwrap())
}

#[test]
fn an_interrupted_study_resumes_to_the_report_of_an_uninterrupted_one() {
    if !root() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("resume.db");
    let db = db.to_str().unwrap();
    let (err, failed) = interrupted_after(3, db, "-INT");
    assert!(failed, "an interrupted study exits unsuccessfully:\n{err}");
    let hint = format!("resume with: tcplab study {STUDY} --quick -t 1 --resume 1");
    assert!(err.contains(&hint), "no resume hint:\n{err}");
    let (kept, complete) = archived(db, "1");
    assert!(kept.len() >= 3 && !complete, "{kept:?}");

    // Another study, or the same one with another design, is refused in one line.
    for (args, says) in [
        (vec!["study", "atm-loss", "--quick", "-t", "1", "--resume", "1"], "is a run of study slac-stacks"),
        (vec!["study", STUDY, "--quick", "--resume", "1"], "same --quick and -t"),
        (vec!["study", STUDY, "--quick", "-t", "1", "--resume", "9"], "9"),
    ] {
        let out = tcplab(&[args.as_slice(), &["--db", db]].concat());
        let e = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?} not refused: {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.contains(says), "{args:?}: {e}");
    }

    // Resumed (the newest unfinished run: no id): only the cases left run.
    let html = dir.path().join("resumed.html");
    let out =
        tcplab(&["study", STUDY, "--quick", "-t", "1", "--resume", "--db", db, "-o", html.to_str().unwrap()]);
    let (text, e) = (stdout(&out), stderr(&out));
    assert!(out.status.success(), "{e}\n{text}");
    let total = kept.len() + e.lines().filter(|l| l.starts_with('[')).count();
    assert!(e.contains(&format!("resuming run 1: {} of {total} tests done", kept.len())), "{e}");
    let first = e.lines().find(|l| l.starts_with('[')).unwrap();
    assert!(first.starts_with(&format!("[{}/{total} ", kept.len() + 1)), "{first}");
    let (cases, complete) = archived(db, "1");
    assert!(complete && cases.len() == total && cases.starts_with(&kept), "{cases:?}");
    // A complete run has nothing left: its report is made again from the archive, the run
    // left as it was.
    let remade = dir.path().join("remade.html");
    let again = tcplab(&[
        "study",
        STUDY,
        "--quick",
        "-t",
        "1",
        "--resume",
        "1",
        "--db",
        db,
        "-o",
        remade.to_str().unwrap(),
    ]);
    let e = stderr(&again);
    assert!(again.status.success() && e.contains("run 1 has every case of this design: nothing left"), "{e}");
    assert!(!e.lines().any(|l| l.starts_with('[')), "a case ran again:\n{e}");
    // Every kept case is diagnosed again when a report is made from the archive; by the same
    // rules, from what the archive kept, it says what the live run said, word for word.
    assert_eq!(stdout(&again), text, "the re-made report differs from the run's own");
    assert!(std::fs::read_to_string(&remade).unwrap().contains("<svg"), "no report written");
    assert_eq!(archived(db, "1"), (cases.clone(), true));
    remade_without_root(db);
    // A stdout that cannot be written (full disk) is no panic.
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let out = command()
        .args(["study", STUDY, "--quick", "-t", "1", "--resume", "1", "--db", db])
        .stdout(full)
        .output()
        .unwrap();
    assert!(out.status.success() && !stderr(&out).contains("panicked"), "{}", stderr(&out));
    measured_again_where_stolen_from(db, &cases);

    // The same study uninterrupted: the same cases, the same figures judged, the probe's
    // round trips of the first session's cases in the report.
    let plain = tcplab(&["study", STUDY, "--quick", "-t", "1", "--db", db]);
    assert!(plain.status.success(), "{}", stderr(&plain));
    assert_eq!(archived(db, "2").0, cases);
    assert_eq!(
        figures(&text),
        figures(&stdout(&plain)),
        "resumed:\n{text}\nuninterrupted:\n{}",
        stdout(&plain)
    );
    assert!(!figures(&text).is_empty(), "{text}");
    assert_eq!(table_shape(&text), table_shape(&stdout(&plain)));
    // The probe's figures of the first session's cases came back from the archive.
    assert!(text.contains("reno: probe RTT p95, worst of 4 runs"), "{text}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("worst probe RTT p95"), "the report lacks the probe's figures");
}

#[test]
fn a_killed_study_resumes_from_the_cases_it_stored() {
    if !root() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("killed.db");
    let db = db.to_str().unwrap();
    // SIGKILL: no handler runs, the run stays `running` in the archive with a dead owner.
    let (err, failed) = interrupted_after(2, db, "-KILL");
    assert!(failed, "{err}");
    let (kept, complete) = archived(db, "1");
    assert!(kept.len() >= 2 && !complete, "{kept:?}");
    let out = tcplab(&["study", STUDY, "--quick", "-t", "1", "--resume", "1", "--db", db]);
    let e = stderr(&out);
    assert!(out.status.success(), "{e}");
    assert!(e.contains(&format!("resuming run 1: {} of ", kept.len())), "{e}");
    let (cases, complete) = archived(db, "1");
    assert!(complete && cases.starts_with(&kept) && cases.len() > kept.len(), "{cases:?}");
}

/// `--remeasure-stolen` on complete run 1, whose first case is made to read as stolen from
/// (40 % of the client's CPU time): the stolen cases alone run again (that one, and any a
/// hypervisor really stole from here), each point takes its new test, the first tests stay
/// in the run, and the run is complete again. Without a stolen case it measures nothing.
fn measured_again_where_stolen_from(db: &str, cases: &[String]) {
    let tests = |db: &str| {
        let show = tcplab(&["show", "1", "--format", "json", "--db", db]);
        let run = json_of(&show);
        let first = run["sweep"]["points"][0]["test_index"].as_u64().unwrap() as usize;
        let started: Vec<u64> =
            run["tests"].as_array().unwrap().iter().map(|t| t["started_unix_ms"].as_u64().unwrap()).collect();
        (started.len(), started[first])
    };
    let (before, first) = tests(db);
    let exec = |sql: &str| -> usize {
        let conn = rusqlite::Connection::open(db).unwrap();
        conn.execute(sql, []).unwrap_or_else(|e| panic!("{sql}: {e}"))
    };
    // The case's runs that counted are what the judges read: its repetitions when it
    // repeated, else the result itself.
    let marked = exec(
        "UPDATE tests SET result = CASE WHEN json_array_length(result, '$.repetition.runs') > 0
             THEN json_set(result, '$.repetition.runs[0].local.cpu.steal_pct', 40.0)
             ELSE json_set(result, '$.local.cpu.steal_pct', 40.0) END
         WHERE run_id = 1 AND seq = 0 AND json_extract(result, '$.local.cpu') IS NOT NULL",
    );
    assert_eq!(marked, 1, "case 0 has no CPU figures to mark as stolen from");
    let run_again =
        || tcplab(&["study", STUDY, "--quick", "-t", "1", "--resume", "1", "--remeasure-stolen", "--db", db]);
    let again = run_again();
    let e = stderr(&again);
    assert!(again.status.success(), "{e}");
    // The marked case, and any a hypervisor really stole from here.
    let n: usize = e
        .split(" of them again (a hypervisor stole from their first measurement)")
        .next()
        .and_then(|head| head.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count of cases measured again:\n{e}"));
    let ran: Vec<&str> = e.lines().filter(|l| l.starts_with('[')).collect();
    assert!(n >= 1 && ran.len() == n && ran[0].starts_with("[1/"), "{e}");
    let (after, now) = tests(db);
    assert_eq!(after, before + n, "the first measurements are not kept");
    assert!(now > first, "the point still holds its first test");
    assert_eq!(archived(db, "1"), (cases.to_vec(), true));
    let none = run_again();
    let e = stderr(&none);
    if e.contains("of them again") {
        eprintln!("skipped: a hypervisor stole from a case measured again, so one is left to measure");
        return;
    }
    assert!(none.status.success() && e.contains("none to measure again"), "{e}");
    assert!(!e.lines().any(|l| l.starts_with('[')), "{e}");
}

/// Making a complete run's report again measures nothing, so it needs no root: run as
/// `nobody` (setpriv) on a copy of the archive it may write.
fn remade_without_root(db: &str) {
    if Command::new("setpriv").arg("--version").output().is_err() {
        eprintln!("skipped: no setpriv to drop root with");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy.db");
    std::fs::copy(db, &copy).unwrap();
    let open = |p: &std::path::Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777)).unwrap();
    };
    open(dir.path());
    open(&copy);
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", support::BIN])
        .args(["study", STUDY, "--quick", "-t", "1", "--resume", "1", "--db", copy.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("status of every figure"), "{}", stdout(&out));
    let fresh = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", support::BIN])
        .args(["study", STUDY, "--quick", "--no-store"])
        .output()
        .unwrap();
    assert!(stderr(&fresh).contains("which need root"), "{}", stderr(&fresh));
}
