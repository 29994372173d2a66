//! End to end: sweeps, repeat-until-confident, the archive and its browsing commands, with the
//! real `tcplab` binary against a real `tcplab server` on 127.0.0.1. Every command gets
//! `--db` in a temp dir.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{command, ServerProc};

fn tcplab(db: &Path, args: &[&str]) -> Output {
    command().args(args).arg("--db").arg(db).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

fn random_ms(lo: u64, hi: u64) -> u64 {
    let mut h = RandomState::new().build_hasher();
    h.write_u64(lo);
    lo + h.finish() % (hi - lo)
}

fn sqlite_count(db: &Path, sql: &str) -> i64 {
    rusqlite::Connection::open(db).unwrap().query_row(sql, [], |r| r.get(0)).unwrap()
}

#[test]
fn seed_004_grid_subset_runs_stores_shows_and_exports() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let srv = ServerProc::start(&[]);
    let out = tcplab(
        &db,
        &[
            "sweep",
            "127.0.0.1",
            "-p",
            &srv.port(),
            "--vary",
            "window_clamp=4K,52428",
            "--tie",
            "sndbuf=window_clamp",
            "--vary",
            "len=512..32768:+8192",
            "-t",
            "0.1",
            "-i",
            "0",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let grid = text(&out.stdout);
    let rows = grid.contains("window_clamp=4K ") && grid.contains("window_clamp=52428");
    assert!(grid.contains("len →") && rows, "{grid}");
    assert_eq!(grid.matches('*').count(), 3, "one peak per row, plus the legend: {grid}");
    assert!(grid.contains("window_clamp=52428: peak"), "{grid}");
    assert!(text(&out.stderr).starts_with("sweep 1: 8 points"), "{}", text(&out.stderr));

    let csv = tcplab(&db, &["show", "1", "--csv"]);
    let csv = text(&csv.stdout);
    assert_eq!(csv.lines().count(), 9, "{csv}");
    assert!(csv.lines().nth(1).unwrap().starts_with("1,0,0,stream,tcp-stream,completed"), "{csv}");
    let shown = text(&tcplab(&db, &["show", "last"]).stdout);
    assert!(shown.contains("window_clamp=52428") && shown.starts_with("run 1 "), "{shown}");
    let v: Value = serde_json::from_slice(&tcplab(&db, &["show", "1", "--json"]).stdout).unwrap();
    assert_eq!(v["sweep"]["points"].as_array().unwrap().len(), 8);
    assert_eq!(v["sweep"]["plan"]["axes"][1]["values"][3], 25088);
    assert_eq!(v["tests"][7]["spec"]["options"]["window-clamp"], 52428, "the receiver's window, exactly");

    let file = dir.path().join("out.csv");
    let out = tcplab(&db, &["export", "1", "-o", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 9);
    let hist = text(&tcplab(&db, &["history", "--kind", "sweep"]).stdout);
    assert!(hist.contains("8/8") && hist.contains("complete"), "{hist}");
}

#[test]
fn tie_makes_window_follow_the_write_size() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let srv = ServerProc::start(&[]);
    let out = tcplab(
        &db,
        &[
            "sweep",
            "127.0.0.1",
            "-p",
            &srv.port(),
            "--vary",
            "len=4K,8K",
            "--tie",
            "sndbuf=rcvbuf=len",
            "-t",
            "0.1",
            "-i",
            "0",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let spec = &v["tests"][1]["spec"];
    assert_eq!(
        (spec["send_len"].as_u64(), spec["sndbuf"].as_u64(), spec["rcvbuf"].as_u64()),
        (Some(8192), Some(8192), Some(8192))
    );
    assert_eq!(v["sweep"]["points"][1]["params"].as_array().unwrap().len(), 3);
}

#[test]
fn a_udp_sweep_varies_datagram_size_and_rate() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let srv = ServerProc::start(&[]);
    let port = srv.port();
    let args = ["sweep", "127.0.0.1", "-p", &port, "--test", "udp", "--vary", "len=64,1400"];
    let out =
        tcplab(&db, &[&args[..], &["--vary", "rate=5M,20M", "-t", "0.3", "-i", "0", "--json"]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["sweep"]["plan"]["metric"], "goodput_bps");
    let tests = v["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 4);
    for t in tests {
        let (len, rate) = (t["spec"]["send_len"].as_u64().unwrap(), t["spec"]["rate_bps"].as_u64().unwrap());
        assert!([64, 1400].contains(&len) && [5_000_000, 20_000_000].contains(&rate), "{}", t["spec"]);
        let got = t["summary"]["udp"][0]["receiver_bps"].as_f64().unwrap();
        assert!(got > 0.0 && got <= rate as f64 * 1.1, "{len} B at {rate}: {got}");
    }
    let table = text(&tcplab(&db, &["show", "last"]).stdout);
    assert!(table.contains("Mbit/s"), "{table}");
}

#[test]
fn repeat_until_confident_reports_iterations_and_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let srv = ServerProc::start(&[]);
    let out = tcplab(
        &db,
        &["rr", "127.0.0.1", "-p", &srv.port(), "-t", "0.1", "-I", "99,1", "--iterations", "4,3", "--json"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rep = &v["tests"][0]["repetition"];
    let n = rep["iterations"].as_u64().unwrap();
    assert!((3..=4).contains(&n), "{rep}");
    assert_eq!(rep["runs"].as_array().unwrap().len() as u64, n);
    assert_eq!(rep["estimates"][0]["metric"], "trans_per_s");
    assert_eq!(rep["estimates"][0]["values"].as_array().unwrap().len() as u64, n);
    if rep["met"] == false {
        let kinds: Vec<&str> =
            v["tests"][0]["warnings"].as_array().unwrap().iter().filter_map(|w| w["kind"].as_str()).collect();
        assert!(kinds.contains(&"confidence-not-met"), "{kinds:?}");
    }
    let stored: Value =
        serde_json::from_slice(&tcplab(&db, &["show", &v["id"].to_string(), "--json"]).stdout).unwrap();
    assert_eq!(stored["tests"][0]["repetition"]["iterations"].as_u64(), Some(n));
    let shown = text(&tcplab(&db, &["show", "last"]).stdout);
    assert!(shown.contains(&format!("repeated {n} times")), "{shown}");
}

#[test]
fn no_store_writes_nothing_and_a_bad_db_is_one_error_line() {
    let dir = tempfile::tempdir().unwrap();
    let srv = ServerProc::start(&[]);
    let out = command()
        .args(["stream", "127.0.0.1", "-p", &srv.port(), "-t", "0.1", "--no-store"])
        .env("XDG_DATA_HOME", dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!dir.path().join("tcplab").exists());
    let out = command()
        .args(["stream", "127.0.0.1", "-p", &srv.port(), "-t", "0.1"])
        .env("XDG_DATA_HOME", dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(dir.path().join("tcplab/results.db").exists(), "default path under XDG_DATA_HOME");
    let file = dir.path().join("plain-file");
    std::fs::write(&file, "x").unwrap();
    let out = tcplab(&file.join("r.db"), &["stream", "127.0.0.1", "-p", &srv.port(), "-t", "0.1"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stderr).lines().count(), 1, "{}", text(&out.stderr));
    assert!(text(&out.stderr).starts_with("error: "));
    let out = tcplab(&dir.path().join("r.db"), &["sweep", "127.0.0.1", "--vary", "colour=red"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("unknown sweep parameter"), "{}", text(&out.stderr));
    let out = tcplab(&dir.path().join("r.db"), &["sweep", "127.0.0.1", "--vary", "burst=1,2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("does not apply to tcp-stream tests"), "{}", text(&out.stderr));
    let out = tcplab(&dir.path().join("r.db"), &["show", "42"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).starts_with("error: no archive at "), "never written: {}", text(&out.stderr));
    assert!(!dir.path().join("r.db").exists(), "show created the archive it was to read");
    let out = tcplab(&dir.path().join("tcplab/results.db"), &["show", "42"]);
    assert_eq!((out.status.code(), text(&out.stderr).trim()), (Some(2), "error: no run 42 in the archive"));
}

/// Starts `tcplab sweep` (or `--resume 1`) and waits for its first stderr line.
fn start_sweep(db: &Path, port: &str, resume: bool, rcvbufs: &str) -> (Child, String) {
    let mut cmd = command();
    if resume {
        cmd.args(["sweep", "--resume", "1", "-p", port]);
    } else {
        cmd.args([
            "sweep",
            "127.0.0.1",
            "-p",
            port,
            "--vary",
            "len=1K..512K:x2",
            "--vary",
            &format!("rcvbuf={rcvbufs}"),
            "-t",
            "0.2",
            "-i",
            "0",
        ]);
    }
    let mut child = cmd.arg("--db").arg(db).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    err.read_line(&mut line).unwrap();
    // Keep draining stderr so the child never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    (child, line)
}

fn points_done(line: &str) -> Option<u64> {
    line.strip_prefix("resuming sweep 1: ")?.split_whitespace().next()?.parse().ok()
}

#[test]
fn a_sweep_killed_again_and_again_resumes_without_losing_or_repeating_points() {
    let dir = tempfile::tempdir().unwrap();
    let db: PathBuf = dir.path().join("r.db");
    let mut srv = ServerProc::start(&[]);
    // TCPLAB_KILLS=20 for the goal (with a larger grid); CI does six.
    let want: usize = std::env::var("TCPLAB_KILLS").ok().and_then(|k| k.parse().ok()).unwrap_or(6);
    let rows = (want / 3).max(2);
    let rcvbufs: Vec<String> = (1..=rows).map(|i| format!("{}K", 16 * i)).collect();
    let rcvbufs = rcvbufs.join(",");
    let points = 10 * rows as i64;
    let (mut child, first) = start_sweep(&db, &srv.port(), false, &rcvbufs);
    assert!(first.starts_with(&format!("sweep 1: {points} points")), "{first}");
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut kills = 0;
    let mut last_done = 0;
    let mut vanished = false;
    while kills < want && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(random_ms(50, 700)));
        let running = child.try_wait().unwrap().is_none();
        let _ = child.kill(); // SIGKILL, at any moment
        let _ = child.wait();
        kills += usize::from(running);
        if kills == 3 && !vanished {
            vanished = true;
            // The server vanishes too: the resume fails, nothing is lost, a new server takes over.
            let (mut c, _) = start_sweep(&db, &srv.port(), true, &rcvbufs);
            std::thread::sleep(Duration::from_millis(random_ms(10, 200)));
            drop(std::mem::replace(&mut srv, ServerProc::start(&[])));
            assert_eq!(c.wait().unwrap().code(), Some(2), "a vanished server ends the sweep with an error");
        }
        let (c, line) = start_sweep(&db, &srv.port(), true, &rcvbufs);
        child = c;
        let done = points_done(&line).unwrap_or(0);
        assert!(done >= last_done, "points never disappear: {done} after {last_done}");
        last_done = done;
    }
    // Ctrl-C once, then let it finish.
    std::thread::sleep(Duration::from_millis(random_ms(50, 300)));
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let _ = child.wait();
    let mut finished = false;
    for _ in 0..10 {
        let (mut c, _) = start_sweep(&db, &srv.port(), true, &rcvbufs);
        if c.wait().unwrap().success() {
            finished = true;
            break;
        }
    }
    assert!(kills >= 5, "only {kills} kills before the deadline");
    assert!(finished, "the sweep never completed");
    assert_eq!(sqlite_count(&db, "SELECT COUNT(*) FROM sweep_points WHERE run_id = 1"), points);
    assert_eq!(sqlite_count(&db, "SELECT COUNT(DISTINCT point) FROM sweep_points WHERE run_id = 1"), points);
    assert_eq!(sqlite_count(&db, "SELECT COUNT(*) FROM tests WHERE run_id = 1"), points, "no orphan tests");
    assert_eq!(sqlite_count(&db, "SELECT COUNT(*) FROM runs WHERE status = 'complete'"), 1);
    let csv = tcplab(&db, &["export", "1"]);
    assert_eq!(text(&csv.stdout).lines().count() as i64, points + 1);
}

fn fake_run(st: &mut store::Store, values: &[f64]) -> i64 {
    use results::*;
    let runs: Vec<TestResult> = values
        .iter()
        .map(|v| {
            let mut summary = Summary {
                headline: Some(Headline::measured(Metric::Goodput, *v)),
                shape: Some(Shape::TcpBulk),
                ..Summary::default()
            };
            summary.directions.push(DirectionSummary { receiver_bps: *v, ..DirectionSummary::default() });
            TestResult { summary, ..TestResult::new("stream", TestSpec::new(TestKind::TcpStream), "h:1", 1) }
        })
        .collect();
    let target = ConfidenceTarget {
        level_pct: 99.0,
        width_pct: 5.0,
        min_iterations: 3,
        max_iterations: 3,
        result_only: true,
    };
    let result = stats_combine(&target, runs);
    let header =
        RunRecord { command_line: vec!["tcplab".into()], ..RunRecord::new("t", 1, HostInfo::default()) };
    let id = st.begin_run(&header, store::RunKind::Test, "h:1").unwrap();
    st.add_test(id, &result).unwrap();
    id
}

#[test]
fn archive_push_says_its_summary_once() {
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("local.db");
    let mut st = store::Store::open(&local).unwrap();
    fake_run(&mut st, &[1e9, 1.1e9, 0.9e9]);
    drop(st);
    let fleet = dir.path().join("fleet.db");
    let out = tcplab(&local, &["archive", "push", "--to", fleet.to_str().unwrap()]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.starts_with("pushed 1 test(s) (1 new run(s), 0 updated); 0 already there"), "{stdout}");
    let both = format!("{stdout}{stderr}");
    assert_eq!(both.matches("pushed 1 test(s)").count(), 1, "the summary twice: {both}");
    assert!(stderr.contains("1 batch(es) stored so far"), "{stderr}");
}

/// A repeated result as `tcplab -I` stores it (means in the summary, values per iteration).
fn stats_combine(target: &results::ConfidenceTarget, runs: Vec<results::TestResult>) -> results::TestResult {
    let values: Vec<f64> = runs.iter().map(|r| r.summary.goodput_bps()).collect();
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let mut out = runs.last().unwrap().clone();
    out.summary.directions[0].receiver_bps = mean;
    out.summary.headline = Some(results::Headline::measured(results::Metric::Goodput, mean));
    let est = results::Estimate { metric: "goodput_bps".into(), mean, values, ..Default::default() };
    out.repetition = Some(results::Repetition {
        target: target.clone(),
        iterations: 3,
        met: true,
        estimates: vec![est],
        runs,
        set_aside: Vec::new(),
    });
    out
}

#[test]
fn compare_gives_verdicts_and_fails_when_slower() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let mut st = store::Store::open(&db).unwrap();
    let fast = fake_run(&mut st, &[100e6, 101e6, 99e6]);
    let slow = fake_run(&mut st, &[80e6, 81e6, 79e6]);
    let same = fake_run(&mut st, &[99e6, 102e6, 100e6]);
    drop(st);
    let out = tcplab(&db, &["compare", &fast.to_string(), &slow.to_string()]);
    assert!(out.status.success());
    let t = text(&out.stdout);
    assert!(t.contains("slower") && t.contains("-20.0%"), "{t}");
    let out = tcplab(&db, &["compare", &fast.to_string(), &slow.to_string(), "--fail-if-slower", "10"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let out = tcplab(&db, &["compare", &fast.to_string(), &slow.to_string(), "--fail-if-slower", "25"]);
    assert_eq!(out.status.code(), Some(0));
    let out = tcplab(&db, &["compare", &fast.to_string(), &same.to_string(), "--fail-if-slower", "0"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("no significant difference"), "{}", text(&out.stdout));
    let out = tcplab(&db, &["compare", &slow.to_string(), &fast.to_string()]);
    assert!(text(&out.stdout).contains("faster"));
}

#[test]
fn compare_json_is_one_document_with_each_verdict_and_one_on_failure() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let mut st = store::Store::open(&db).unwrap();
    let fast = fake_run(&mut st, &[100e6, 101e6, 99e6]);
    let slow = fake_run(&mut st, &[80e6, 81e6, 79e6]);
    drop(st);
    let out =
        tcplab(&db, &["compare", &fast.to_string(), &slow.to_string(), "--json", "--fail-if-slower", "10"]);
    assert_eq!(out.status.code(), Some(1), "the gate still decides");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["a"], format!("run {fast}"));
    assert_eq!(v["level_pct"], 95.0);
    let rows = v["rows"].as_array().unwrap();
    let goodput = rows.iter().find(|r| r["verdict"] == "slower").unwrap_or_else(|| panic!("{v}"));
    assert!((goodput["diff_pct"].as_f64().unwrap() + 20.0).abs() < 0.5, "{goodput}");
    assert!(goodput["ci_pct"].as_f64().unwrap() > 0.0);
    // The text is unchanged without the flag, and a failure is still one document.
    let t = text(&tcplab(&db, &["compare", &fast.to_string(), &slow.to_string()]).stdout);
    assert!(t.starts_with(&format!("A = run {fast}, B = run {slow};")), "{t}");
    let out = tcplab(&db, &["compare", &fast.to_string(), "999", "-J"]);
    assert_eq!(out.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["code"], "error", "{v}");
}

/// One test measured once (no repetition, no intervals): a single value per metric.
fn single(v: f64, spec: results::TestSpec) -> results::TestResult {
    use results::*;
    let mut summary = Summary {
        headline: Some(Headline::measured(Metric::Goodput, v)),
        shape: Some(Shape::TcpBulk),
        ..Summary::default()
    };
    summary.directions.push(DirectionSummary { receiver_bps: v, ..DirectionSummary::default() });
    TestResult { summary, ..TestResult::new("stream", spec, "h:1", 1) }
}

fn fake_header() -> results::RunRecord {
    let local = results::HostInfo::default();
    results::RunRecord { command_line: vec!["tcplab".into()], ..results::RunRecord::new("t", 1, local) }
}

/// A sweep over `len` (sets write and read size), one value per point, from `base`.
fn fake_sweep(st: &mut store::Store, base: &results::TestSpec, points: &[(u64, f64)]) -> i64 {
    use results::*;
    let axis = Axis {
        name: "len".into(),
        tied: Vec::new(),
        values: points.iter().map(|(l, _)| ParamValue::Int(*l)).collect(),
        text: String::new(),
    };
    let plan = SweepPlan {
        base: base.clone(),
        axes: vec![axis],
        confidence: None,
        metric: "goodput_bps".into(),
        mesh: None,
    };
    let id = st.begin_run(&fake_header(), store::RunKind::Sweep, "h:1").unwrap();
    st.begin_sweep(id, &plan).unwrap();
    for (i, (len, v)) in points.iter().enumerate() {
        let mut spec = base.clone();
        (spec.send_len, spec.recv_len) = (*len as u32, *len as u32);
        let point = SweepPoint {
            index: i as u32,
            coords: vec![i as u32],
            params: vec![ParamSetting { name: "len".into(), value: ParamValue::Int(*len) }],
            test_index: i as u32,
            headline: Estimate {
                metric: "goodput_bps".into(),
                mean: *v,
                values: vec![*v],
                ..Default::default()
            },
            met: true,
        };
        st.add_point(id, &point, &single(*v, spec)).unwrap();
    }
    id
}

#[test]
fn compare_pairs_sweep_points_by_parameters_and_names_what_differs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let mut st = store::Store::open(&db).unwrap();
    let base = results::TestSpec::new(results::TestKind::TcpStream);
    let a = fake_sweep(&mut st, &base, &[(2048, 1e9), (8192, 14e9)]);
    let mut reno = base.clone();
    reno.congestion = Some("reno".into());
    let b = fake_sweep(&mut st, &reno, &[(8192, 13e9), (65_536, 20e9)]);
    drop(st);
    let out = tcplab(&db, &["compare", &a.to_string(), &b.to_string()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    let row = t.lines().find(|l| l.starts_with("len=8K")).unwrap_or_else(|| panic!("no len=8K row: {t}"));
    assert!(row.contains("14.0 Gbit/s") && row.contains("13.0 Gbit/s"), "{t}");
    assert_eq!(t.lines().filter(|l| l.starts_with("len=")).count(), 1, "only the common point: {t}");
    assert!(t.contains("only in run 1 (not compared): len=2K"), "{t}");
    assert!(t.contains("only in run 2 (not compared): len=64K"), "{t}");
    assert!(t.contains("settings differ: congestion default vs reno"), "{t}");
}

#[test]
fn compare_gate_does_not_pass_when_it_cannot_decide() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let mut st = store::Store::open(&db).unwrap();
    let mut runs = Vec::new();
    for (v, len) in [(100e6, 131_072), (51e6, 8192)] {
        let mut spec = results::TestSpec::new(results::TestKind::TcpStream);
        (spec.send_len, spec.recv_len) = (len, len);
        let id = st.begin_run(&fake_header(), store::RunKind::Test, "h:1").unwrap();
        st.add_test(id, &single(v, spec)).unwrap();
        runs.push(id.to_string());
    }
    drop(st);
    let out = tcplab(&db, &["compare", &runs[0], &runs[1], "--fail-if-slower", "5"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("cannot decide"), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    assert!(t.contains("unknown") && t.contains("-49.0%"), "{t}");
    assert!(t.contains("settings differ: write size 128K vs 8K"), "{t}");
    let out = tcplab(&db, &["compare", &runs[0], &runs[1]]);
    assert_eq!(out.status.code(), Some(0), "without a gate, no verdict is not an error");
}

#[test]
fn history_filters_and_export_formats() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let srv = ServerProc::start(&[]);
    for _ in 0..2 {
        let out = tcplab(&db, &["stream", "127.0.0.1", "-p", &srv.port(), "-t", "0.3", "-i", "0.1"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let v: Value = serde_json::from_slice(&tcplab(&db, &["history", "--json"]).stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 2);
    assert_eq!(
        (v[0]["id"].as_i64(), v[0]["kind"].as_str(), v[0]["status"].as_str()),
        (Some(2), Some("test"), Some("complete"))
    );
    let none: Value =
        serde_json::from_slice(&tcplab(&db, &["history", "--json", "--kind", "sweep"]).stdout).unwrap();
    assert_eq!(none.as_array().unwrap().len(), 0);
    let one: Value =
        serde_json::from_slice(&tcplab(&db, &["history", "--json", "-n", "1", "--test", "stream"]).stdout)
            .unwrap();
    assert_eq!(one.as_array().unwrap().len(), 1);
    let bad = tcplab(&db, &["history", "--status", "weird"]);
    assert_eq!(bad.status.code(), Some(2));

    let runs: Value = serde_json::from_slice(&tcplab(&db, &["export", "-f", "json"]).stdout).unwrap();
    assert_eq!(runs.as_array().unwrap().len(), 2);
    assert!(runs[0]["local_host"]["cpus"].as_u64().unwrap() > 0, "host facts are stored");
    assert!(
        runs[0]["remote_host"]["kernel"].as_str().unwrap().starts_with("Linux"),
        "server facts are stored"
    );
    let ivs = text(&tcplab(&db, &["export", "1", "-f", "intervals-csv"]).stdout);
    assert!(ivs.starts_with("run_id,seq,label,side,start_s"), "{ivs}");
    assert!(ivs.lines().filter(|l| l.contains(",client,")).count() >= 2, "{ivs}");
    assert!(ivs.lines().any(|l| l.contains(",server,")), "{ivs}");
    for args in [&["show", "2", "--format", "markdown"][..], &["export", "1", "2", "-f", "markdown"]] {
        let md = text(&tcplab(&db, args).stdout);
        assert!(md.lines().any(|l| l.starts_with("| ") && l.contains("stream")), "{args:?}: {md}");
        assert!(md.lines().any(|l| l.starts_with("|:--")), "{args:?}: {md}");
    }
    let both = tcplab(&db, &["show", "2", "--json", "--format", "csv"]);
    assert_eq!(both.status.code(), Some(2), "--json and --format conflict");

    let out = tcplab(&db, &["compare", "1", "2"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    assert!(t.contains("goodput_bps") && t.contains("± CI"), "{t}");
}

#[test]
fn a_point_the_server_refuses_is_stored_as_failed_and_the_rest_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let srv = ServerProc::start(&[]);
    let out = tcplab(
        &db,
        &[
            "sweep",
            "127.0.0.1",
            "-p",
            &srv.port(),
            "--vary",
            "congestion=nosuchcc,reno",
            "-t",
            "0.1",
            "-i",
            "0",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.lines().last().unwrap().starts_with("error: 1 of 2 points failed: congestion=nosuchcc"),
        "{err}"
    );
    let grid = text(&out.stdout);
    assert!(grid.contains("failed") && grid.contains('*'), "{grid}");
    assert_eq!(sqlite_count(&db, "SELECT COUNT(*) FROM sweep_points"), 2);
    assert_eq!(sqlite_count(&db, "SELECT COUNT(*) FROM runs WHERE status = 'complete'"), 1);
}
