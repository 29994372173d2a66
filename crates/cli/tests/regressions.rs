//! `tcplab archive regressions` end to end: on a SQLite archive filled by real paced streams
//! against two real servers on loopback (one path slowed for its last run, by pacing it at half
//! the rate), and on a week of hourly mesh rounds written through the store API into a SQLite
//! file and a real PostgreSQL database alike (one cell planted slower, one whose last round
//! failed): the same verdicts from both engines, exit 1, JSON for alerting.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

#[path = "../../store/tests/support/pg_cluster.rs"]
mod pg_cluster;

use std::path::Path;
use std::process::Output;

use results::{Headline, Metric, Status, TestError, TestKind, TestResult, TestSpec, ThirdParty};
use serde_json::Value;
use store::{RunKind, RunStatus, Store};
use support::{command, json_of, stderr, stdout, ServerProc};

fn regressions(db: &str, extra: &[&str]) -> Output {
    command().args(["archive", "regressions", "--db", db]).args(extra).output().unwrap()
}

fn stream(db: &str, port: &str, rate: &str) {
    let out = command()
        .args(["stream", "127.0.0.1", "-p", port, "-t", "0.5", "-i", "0", "-b", rate, "--db", db])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
}

fn verdicts(doc: &Value) -> Vec<(String, String)> {
    doc["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["series"]["receiver"].as_str().unwrap().to_string(),
                s["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_path_paced_at_half_its_rate_regresses_and_a_steady_one_does_not() {
    let (slowed, steady) = (ServerProc::start(&[]), ServerProc::start(&[]));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("real.db");
    let db = db.to_str().unwrap();
    for _ in 0..4 {
        stream(db, &slowed.port(), "200M");
        stream(db, &steady.port(), "200M");
    }
    stream(db, &steady.port(), "200M");
    stream(db, &slowed.port(), "100M");
    let out = regressions(db, &["--since", "1h"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}\n{}", stderr(&out));
    let slow_line = text.lines().find(|l| l.contains(&format!("127.0.0.1:{}", slowed.port))).unwrap();
    assert!(slow_line.contains("REGRESSED") && slow_line.contains("(4)"), "{text}");
    let steady_line = text.lines().find(|l| l.contains(&format!("127.0.0.1:{}", steady.port))).unwrap();
    assert!(steady_line.ends_with("steady"), "{text}");
    assert!(
        text.contains("\n1 of 2 path/test series regressed (more than 10 % slower, 95 % interval) since "),
        "{text}"
    );
    let out = regressions(db, &["--since", "1h", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let doc = json_of(&out);
    assert_eq!(doc["regressed"].as_array().map(Vec::len), Some(1));
    assert_eq!(doc["regressed"][0]["receiver"], format!("127.0.0.1:{}", slowed.port));
    let change = doc["series"][0]["change_pct"].as_f64().unwrap();
    assert!((-60.0..-40.0).contains(&change), "half the rate: {change}");
    // A threshold above the drop: no regression, exit 0.
    let out = regressions(db, &["--since", "1h", "--threshold", "70%"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    // Bad input: one line, exit 2.
    let out = regressions(db, &["--threshold", "ten"]);
    assert_eq!(out.status.code(), Some(2));
}

const HOUR_MS: u64 = 3_600_000;
const CELLS: [(&str, &str); 6] = [("a", "b"), ("b", "a"), ("a", "c"), ("c", "a"), ("b", "c"), ("c", "b")];

/// A deterministic spread of ±2 % around 940 Mbit/s (a 1 GbE path).
fn goodput(cell: usize, round: u64) -> f64 {
    let x = (round * 7919 + cell as u64 * 104_729) % 1000;
    9.4e8 * (1.0 + (x as f64 - 500.0) / 25_000.0)
}

fn cell_result(cell: usize, round: u64, at: u64, rounds: u64) -> TestResult {
    let (s, r) = CELLS[cell];
    let mut t = TestResult::new("tcp-stream", TestSpec::new(TestKind::TcpStream), format!("{r}:9180"), at);
    t.third_party = Some(ThirdParty {
        from: format!("{s}:9180"),
        to: format!("{r}:9180"),
        from_name: Some(s.into()),
        to_name: Some(r.into()),
    });
    let last = round + 1 == rounds;
    if last && (s, r) == ("c", "b") {
        t.status = Status::Failed;
        t.error = Some(TestError {
            code: "connect".into(),
            message: "connecting to b:9180: connection refused".into(),
        });
        return t;
    }
    let planted = if last && (s, r) == ("a", "c") { 0.8 } else { 1.0 };
    t.summary.headline = Some(Headline::measured(Metric::Goodput, goodput(cell, round) * planted));
    t
}

/// A week of hourly rounds of the six cells of a three-host mesh, each round one run.
fn fill(st: &mut Store, now: u64) {
    let rounds = 7 * 24 - 1;
    for round in 0..rounds {
        let at = now - (rounds - round) * HOUR_MS;
        let run = support::mesh_archive::mesh_run(at);
        let id = st.begin_run(&run, RunKind::Sweep, "mesh fleet.toml").unwrap();
        for cell in 0..CELLS.len() {
            st.add_test(id, &cell_result(cell, round, at + cell as u64, rounds)).unwrap();
        }
        st.finish_run(id, RunStatus::Complete, None, at + 60_000).unwrap();
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64
}

fn judge(db: &str) -> (String, Value) {
    let text = regressions(db, &["--since", "7d"]);
    assert_eq!(text.status.code(), Some(1), "{}\n{}", stdout(&text), stderr(&text));
    let json = regressions(db, &["--since", "7d", "-J"]);
    (stdout(&text), json_of(&json))
}

#[test]
fn a_week_of_mesh_rounds_judged_alike_on_sqlite_and_postgresql() {
    let now = now_ms();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fleet.db");
    fill(&mut Store::open(&file).unwrap(), now);
    let (text, doc) = judge(file.to_str().unwrap());
    let mut got = verdicts(&doc);
    got.sort();
    let want = [
        ("a", "steady"),
        ("a", "steady"),
        ("b", "failed"),
        ("b", "steady"),
        ("c", "regressed"),
        ("c", "steady"),
    ];
    assert_eq!(got, want.map(|(r, v)| (r.to_string(), v.to_string())), "{text}");
    assert_eq!(doc["regressed"][0]["sender"], "a");
    assert_eq!(doc["series"][0]["history"].as_array().map(Vec::len), Some(7 * 24 - 2));
    assert!(text.contains("failed: connecting to b:9180: connection refused"), "{text}");
    let Some(c) = pg_cluster::shared() else { return };
    let _up = pg_cluster::up();
    let url = c.new_db("regressions");
    fill(&mut Store::open(Path::new(&url)).unwrap(), now);
    let (pg_text, pg_doc) = judge(&url);
    let body = |t: &str| t.lines().filter(|l| !l.contains(" since ")).collect::<Vec<_>>().join("\n");
    assert_eq!(body(&pg_text), body(&text));
    assert_eq!((&pg_doc["series"], &pg_doc["regressed"]), (&doc["series"], &doc["regressed"]));
}
