//! End to end for third-party tests and `tcplab mesh`: four hosts as network namespaces
//! (prefix `tlm-`) joined by a bridge in a namespace of its own, addresses in 198.18.40.0/24,
//! each running `tcplab server --allow-third-party`; the asking client runs in the bridge's
//! namespace. A 4 × 4 mesh of 1 s tests lands in the archive and history, show, report and
//! the mesh CSV read it back; a mesh killed after its first cell resumes with the cell kept;
//! a host that is down gives failed cells with their reasons; a server without the flag
//! refuses with the flag's name; with PostgreSQL installed, a mesh written straight into a
//! real PostgreSQL archive (over its Unix socket, which the namespaces share) reads back from
//! there, and the SQLite archive's meshes pushed to it match. Needs root; without it the test says so and returns. The
//! namespaces are removed on drop, also when an assertion fails.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

#[path = "../../store/tests/support/pg_cluster.rs"]
mod pg_cluster;

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use support::lab::{can_use_namespaces, Lab};
use support::{command_in, stderr, stdout, ServerProc};

const HOSTS: usize = 4;

fn addr(i: usize) -> String {
    format!("198.18.40.{}", i + 1)
}

/// An inventory of `(name, host index, port)`.
fn inventory(dir: &Path, file: &str, hosts: &[(&str, usize, u16)]) -> String {
    let text: String = hosts
        .iter()
        .map(|(name, i, port)| format!("[[host]]\nname = \"{name}\"\naddress = \"{}:{port}\"\n", addr(*i)))
        .collect();
    let path = dir.join(file);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn run(lab: &Lab, args: &[&str]) -> Output {
    command_in(Some(&lab.bridge)).args(args).output().unwrap()
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}\nstderr: {}", stdout(out), stderr(out)))
}

#[test]
fn meshes_between_namespaces() {
    if !can_use_namespaces() {
        return;
    }
    let lab = Lab::new("tlm", 40, HOSTS);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("archive.db").display().to_string();
    let mut servers: Vec<ServerProc> = (0..HOSTS)
        .map(|i| ServerProc::start_in(Some(&lab.hosts[i]), &addr(i), &["--allow-third-party"]))
        .collect();
    let names = ["a", "b", "c", "d"];
    let all: Vec<(&str, usize, u16)> = (0..HOSTS).map(|i| (names[i], i, servers[i].port)).collect();
    full_mesh(&lab, &db, &inventory(dir.path(), "all.toml", &all));
    mesh_into_postgres(&lab, &db, &inventory(dir.path(), "pg.toml", &all[..2]));
    killed_mesh_resumes(&lab, &db, &inventory(dir.path(), "two.toml", &all[..2]));
    refusal_names_the_flag(&lab, &servers);
    servers[3].kill();
    down_host_fails_with_reasons(&lab, &db, &inventory(dir.path(), "down.toml", &[all[0], all[3]]));
}

/// 16 cells (12 pairs, 4 baselines), every one measured, each with its ends recorded; the
/// archive gives the run back to history, show, mesh-csv and report.
fn full_mesh(lab: &Lab, db: &str, inv: &str) {
    let started = Instant::now();
    let out = run(lab, &["mesh", inv, "-t", "1", "-i", "0", "--db", db, "-J"]);
    eprintln!("4 × 4 mesh of 1 s tests: {:.1} s", started.elapsed().as_secs_f64());
    assert!(out.status.success(), "mesh failed: {}", stderr(&out));
    let doc = json(&out);
    let m = &doc["mesh_matrix"];
    assert_eq!(m["senders"].as_array().unwrap().len(), 4);
    let cells: Vec<&Value> =
        m["cells"].as_array().unwrap().iter().flat_map(|r| r.as_array().unwrap()).collect();
    assert_eq!(cells.len(), 16);
    for c in &cells {
        assert_eq!(c["state"], "measured", "{c}");
        assert!(c["value"].as_f64().unwrap() > 0.0);
    }
    assert!(m["cells"][0][1]["sender_share"].as_f64().unwrap() > 0.0);
    let tests = doc["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 16);
    assert!(tests.iter().all(|t| t["third_party"]["from_name"].is_string()));
    let id = doc["id"].as_i64().unwrap().to_string();
    let history = run(lab, &["history", "--db", db]);
    assert!(stdout(&history).contains(&format!("mesh {inv}")), "{}", stdout(&history));
    let show = run(lab, &["show", &id, "--db", db]);
    let text = stdout(&show);
    assert!(
        text.contains("rows send, columns receive") && text.contains("[") && text.contains("16 of 16 cells"),
        "{text}"
    );
    let csv = stdout(&run(lab, &["show", &id, "--db", db, "--format", "mesh-csv"]));
    assert_eq!(csv.lines().filter(|l| l.contains(",measured,")).count(), 16, "{csv}");
    let html = Path::new(db).with_file_name("mesh.html");
    let report = run(lab, &["report", &id, "--db", db, "-o", html.to_str().unwrap()]);
    assert!(report.status.success(), "{}", stderr(&report));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Meshes: sender × receiver") && page.contains("receiver b, sender a:"));
}

/// A mesh stored straight into PostgreSQL reads back from there (history, show, mesh CSV,
/// report); the SQLite archive's meshes pushed to it come back cell for cell.
fn mesh_into_postgres(lab: &Lab, sqlite: &str, inv: &str) {
    let Some(c) = pg_cluster::shared() else { return };
    let _up = pg_cluster::up();
    let url = c.socket_url("mesh");
    let out = run(lab, &["mesh", inv, "-t", "1", "-i", "0", "--db", &url, "-J"]);
    assert!(out.status.success(), "mesh into postgres: {}", stderr(&out));
    let id = json(&out)["id"].as_i64().unwrap().to_string();
    assert!(stdout(&run(lab, &["history", "--db", &url])).contains(&format!("mesh {inv}")));
    let csv = stdout(&run(lab, &["show", &id, "--db", &url, "--format", "mesh-csv"]));
    assert_eq!(csv.lines().filter(|l| l.contains(",measured,")).count(), 4, "{csv}");
    let html = Path::new(sqlite).with_file_name("mesh-pg.html");
    let report = run(lab, &["report", &id, "--db", &url, "-o", html.to_str().unwrap()]);
    assert!(report.status.success(), "{}", stderr(&report));
    let pushed = run(lab, &["archive", "push", "--db", sqlite, "--to", &url]);
    assert!(pushed.status.success(), "{}", stderr(&pushed));
    let uids = c.query("mesh", "SELECT COUNT(DISTINCT uid) || ' ' || COUNT(*) FROM tests");
    assert_eq!(uids, "20 20", "4 cells written directly + the 16-cell mesh pushed, each once");
}

/// Killed after its first cell is stored, the mesh resumes with that cell kept.
fn killed_mesh_resumes(lab: &Lab, db: &str, inv: &str) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let before: i64 = conn.query_row("SELECT COALESCE(MAX(id), 0) FROM runs", [], |r| r.get(0)).unwrap();
    let mut child = command_in(Some(&lab.bridge))
        .args(["mesh", inv, "-t", "1", "-i", "0", "--no-baseline", "--db", db])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let newest = || -> (i64, i64) {
        conn.query_row(
            "SELECT r.id, (SELECT COUNT(*) FROM sweep_points p WHERE p.run_id = r.id) FROM runs r
             WHERE r.id > ?1 ORDER BY r.id DESC LIMIT 1",
            [before],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap_or((0, 0))
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while newest().1 < 1 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    let _ = child.wait();
    let (id, kept) = newest();
    assert_eq!(kept, 1, "the first cell was stored before the kill");
    let first: String =
        conn.query_row("SELECT result FROM tests WHERE run_id = ?1", [id], |r| r.get(0)).unwrap();
    let out = run(lab, &["mesh", "--resume", &id.to_string(), "--db", db, "-J"]);
    assert!(out.status.success(), "resume failed: {}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["id"].as_i64(), Some(id));
    assert_eq!(doc["tests"].as_array().unwrap().len(), 2);
    let again: String = conn
        .query_row("SELECT result FROM tests WHERE run_id = ?1 ORDER BY seq LIMIT 1", [id], |r| r.get(0))
        .unwrap();
    assert_eq!(first, again, "the cell finished before the kill is kept as it was");
}

/// A server without --allow-third-party refuses, naming the flag.
fn refusal_names_the_flag(lab: &Lab, servers: &[ServerProc]) {
    let plain = ServerProc::start_in(Some(&lab.hosts[3]), &addr(3), &[]);
    let from = format!("{}:{}", addr(3), plain.port);
    let out =
        run(lab, &["stream", &addr(0), "-p", &servers[0].port(), "--from", &from, "-t", "1", "--no-store"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--allow-third-party"), "{}", stderr(&out));
}

/// A host whose server is down: both its cells fail with a reason, the other host's
/// baseline is measured, the exit status is 2.
fn down_host_fails_with_reasons(lab: &Lab, db: &str, inv: &str) {
    let out = run(lab, &["mesh", inv, "-t", "1", "-i", "0", "--db", db, "-J"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let m = &json(&out)["mesh_matrix"];
    assert_eq!(m["cells"][0][0]["state"], "measured");
    for (s, r) in [(0, 1), (1, 0), (1, 1)] {
        let c = &m["cells"][s][r];
        assert_eq!(c["state"], "failed", "{c}");
        // The asking client is refused by a down A; a server A reaching a down B says only
        // that B is not a tcplab server it can reach (it is no port oracle).
        let reason = c["reason"].as_str().unwrap();
        assert!(reason.contains("refused") || reason.contains("not a tcplab server"), "{c}");
    }
    assert!(stderr(&out).contains("3 of 4 cells failed"), "{}", stderr(&out));
}

/// Three inventory hosts that are one machine (three servers on this host's loopback, which
/// share its boot id): the mesh finds it from their hellos and runs the nine cells one at a
/// time (each stored cell starts after the one before has measured its second), says so
/// under the matrix, and shows the warnings stored with the cells there and in the HTML
/// report. No root needed.
#[test]
fn hosts_on_one_machine_run_one_cell_at_a_time() {
    let servers: Vec<ServerProc> = (0..3).map(|_| ServerProc::start(&["--allow-third-party"])).collect();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("archive.db").display().to_string();
    let text: String = ["a", "b", "c"]
        .iter()
        .zip(&servers)
        .map(|(name, s)| format!("[[host]]\nname = \"{name}\"\naddress = \"127.0.0.1:{}\"\n", s.port))
        .collect();
    let inv = dir.path().join("one-machine.toml");
    std::fs::write(&inv, text).unwrap();
    let out = support::command()
        .args(["mesh", inv.to_str().unwrap(), "-t", "1", "-i", "0", "--db", &db])
        .output()
        .unwrap();
    assert!(out.status.success(), "mesh failed: {}", stderr(&out));
    let shown = stdout(&out);
    assert!(shown.contains("hosts a, b, c are one machine (their servers share one boot id)"), "{shown}");
    let below = &shown[shown.find("warnings stored with the cells:").unwrap_or_else(|| panic!("{shown}"))..];
    assert!(below.contains("cells: a → a"), "{below}");
    let doc: Value = serde_json::from_slice(
        &support::command().args(["show", "last", "--db", &db, "--json"]).output().unwrap().stdout,
    )
    .unwrap();
    let mut spans: Vec<(u64, f64)> = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["started_unix_ms"].as_u64().unwrap(), t["local"]["measured_s"].as_f64().unwrap()))
        .collect();
    assert_eq!(spans.len(), 9);
    spans.sort_by_key(|s| s.0);
    for w in spans.windows(2) {
        let (start, measured_s) = w[0];
        assert!(measured_s > 0.5, "{spans:?}");
        // The next cell starts only after this one's measured second (plus its set-up).
        assert!(w[1].0 as f64 >= start as f64 + measured_s * 1000.0, "cells overlapped: {spans:?}");
    }
    let html = dir.path().join("mesh.html");
    let id = doc["id"].as_i64().unwrap().to_string();
    let report =
        support::command().args(["report", &id, "--db", &db, "-o", html.to_str().unwrap()]).output().unwrap();
    assert!(report.status.success(), "{}", stderr(&report));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("warning stored with the cells") && page.contains("hosts a, b, c are one machine"));
}
