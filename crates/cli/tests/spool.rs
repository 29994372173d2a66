//! Results are never lost when the archive cannot take them, and every test command runs on a
//! schedule. A real PostgreSQL stopped while a stream is measured, and a real full file system
//! (a small tmpfs mounted by the test, as root) under a SQLite archive: the result stays in the
//! `--json` output, the run moves whole to the local spool, one line says where it waits, the
//! exit status is 2, and the next run or `archive push` delivers it (no duplicate). The same
//! for a sweep whose PostgreSQL stops after its first point and a mesh whose disk fills after
//! its first cell: every point is measured, shown in `--json` and delivered once. A resumed
//! sweep whose disk fills (and a resumed mesh whose PostgreSQL stops) spools its new points
//! under the run it continues, and delivering them completes that run; a study whose disk fills spools its cases, and its `--resume`
//! delivers them first and counts them done. And
//! `stream --every` against a real server on loopback: bounded rounds, one run each, never
//! overlapping; failed rounds do not end the schedule; SIGINT ends it cleanly.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

#[path = "../../store/tests/support/pg_cluster.rs"]
mod pg_cluster;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use support::{command, json_of, stderr, ServerProc};

fn root() -> bool {
    let out = Command::new("id").arg("-u").output().unwrap();
    let is_root = String::from_utf8_lossy(&out.stdout).trim() == "0";
    if !is_root {
        eprintln!("skipped: a full disk is made with a tmpfs mount, which needs root");
    }
    is_root
}

/// Waits (at most `limit`) for `f`; whether it came true.
fn wait_for(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

fn finish(child: Child, limit: Duration) -> Output {
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("tcplab did not exit within {limit:?}");
        }
    }
}

/// The one error line, which must say where the result waits and how it is delivered.
fn assert_waits(out: &Output, spool: &Path) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "storing failed, so the exit status says so:\n{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "one error line:\n{err}");
    assert!(errors[0].contains("waits in the spool"), "{err}");
    assert!(errors[0].contains(&spool.display().to_string()), "names the spool:\n{err}");
    assert!(errors[0].contains("tcplab archive push"), "says how it is delivered:\n{err}");
    let doc = json_of(out);
    let tests = doc["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 1, "{doc}");
    assert_eq!(tests[0]["status"], "completed", "{doc}");
    let goodput = tests[0]["summary"]["headline"]["value"].as_f64().unwrap();
    assert!(goodput > 0.0, "the measured result is in --json: {doc}");
}

fn spool_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir).map(|d| d.map(|e| e.unwrap().path()).collect()).unwrap_or_default()
}

#[test]
fn a_run_stored_while_postgresql_is_down_waits_in_the_spool_and_archive_push_delivers_it() {
    let Some(c) = pg_cluster::shared() else { return };
    let _alone = pg_cluster::alone();
    let url = c.new_db("spooled");
    let srv = ServerProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool");
    let port = srv.port.to_string();
    let child = spawn_spooled(
        &["stream", "127.0.0.1", "-p", &port, "-t", "3", "-i", "0", "--json", "--db", &url],
        &spool,
    );
    // The run has begun in the archive; the server goes away before its test is stored.
    let begun = wait_for(Duration::from_secs(20), || one_row_in(c, "spooled", "runs"));
    c.stop();
    let out = finish(child, Duration::from_secs(60));
    c.restart();
    assert!(begun, "the run began in the archive: {}", stderr(&out));
    assert_waits(&out, &spool);
    let local = dir.path().join("empty.db");
    let push = command()
        .args(["archive", "push", "--to", &url, "--db"])
        .arg(&local)
        .env("TCPLAB_SPOOL", &spool)
        .output()
        .unwrap();
    assert_eq!(push.status.code(), Some(0), "{}", stderr(&push));
    let got = c.query(
        "spooled",
        "SELECT COUNT(DISTINCT r.uid) || ' ' || COUNT(t.uid) || ' ' || MIN(r.status) FROM runs r JOIN tests t ON t.run_id = r.id",
    );
    assert_eq!(got.trim(), "1 1 complete", "the one run, completed, its test once");
    assert!(spool_files(&spool).is_empty(), "delivered, the spool is removed: {:?}", spool_files(&spool));
}

/// A tmpfs of `size` mounted at `at`, unmounted on drop.
struct Mount(PathBuf);

impl Mount {
    fn tmpfs(at: &Path, size: &str) -> Mount {
        std::fs::create_dir_all(at).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .status()
            .unwrap();
        assert!(ok.success(), "mounting a tmpfs at {}", at.display());
        Mount(at.to_path_buf())
    }

    /// Writes a file until the file system is full.
    fn fill(&self) {
        let mut f = std::fs::File::create(self.0.join("filler")).unwrap();
        let chunk = vec![0u8; 16 * 1024];
        for _ in 0..10_000 {
            if f.write_all(&chunk).and_then(|()| f.sync_data()).is_err() {
                return;
            }
        }
        panic!("the tmpfs never filled");
    }

    fn free(&self) {
        std::fs::remove_file(self.0.join("filler")).unwrap();
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

fn runs_in(db: &Path) -> i64 {
    rusqlite::Connection::open(db)
        .and_then(|c| c.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0)))
        .unwrap_or(0)
}

#[test]
fn a_run_stored_on_a_full_disk_waits_in_the_spool_and_the_next_run_delivers_it() {
    let Some(Rig { srv: _srv, port, dir: _dir, disk, db, spool }) = Rig::new() else { return };
    let stream = |t: &str| {
        let mut cmd = command();
        cmd.args(["stream", "127.0.0.1", "-p", &port, "-t", t, "-i", "0", "--json", "--spool-dir"])
            .arg(&spool)
            .arg("--db")
            .arg(&db)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    };
    let child = stream("2").spawn().unwrap();
    assert!(wait_for(Duration::from_secs(20), || runs_in(&db) == 1), "the run began in the archive");
    disk.fill();
    let out = finish(child, Duration::from_secs(60));
    assert_waits(&out, &spool);
    assert_eq!(spool_files(&spool).len(), 1);
    disk.free();
    let next = finish(stream("0.3").spawn().unwrap(), Duration::from_secs(60));
    assert_eq!(next.status.code(), Some(0), "{}", stderr(&next));
    assert!(stderr(&next).contains("spool: pushed 1 test(s)"), "{}", stderr(&next));
    let conn = rusqlite::Connection::open(&db).unwrap();
    let (runs, tests, running): (i64, i64, i64) = conn
        .query_row(
            "SELECT (SELECT COUNT(*) FROM runs), (SELECT COUNT(*) FROM tests), (SELECT COUNT(*) FROM runs WHERE status <> 'complete')",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!((runs, tests, running), (2, 2, 0), "both runs, each test once, both complete");
    assert!(spool_files(&spool).is_empty(), "{:?}", spool_files(&spool));
}

/// `(started, finished, status)` of every run, in id order.
fn run_rows(db: &Path) -> Vec<(i64, Option<i64>, String)> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt =
        conn.prepare("SELECT started_unix_ms, finished_unix_ms, status FROM runs ORDER BY id").unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
}

#[test]
fn a_test_command_runs_on_a_schedule_one_archived_run_per_round_never_overlapping() {
    let srv = ServerProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("every.db");
    let child = command()
        .args(["rr", "127.0.0.1", "-p", &srv.port.to_string(), "-t", "0.3", "-i", "0"])
        .args(["--every", "2s", "--rounds", "3", "--db"])
        .arg(&db)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = finish(child, Duration::from_secs(90));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    for n in 1..=3 {
        assert!(err.contains(&format!("round {n}: done")), "round {n} in\n{err}");
    }
    assert!(!err.contains("round 4"), "{err}");
    let rows = run_rows(&db);
    assert_eq!(rows.len(), 3, "one run per round: {rows:?}");
    assert!(rows.windows(2).all(|w| w[0].1.is_some_and(|f| f <= w[1].0)), "rounds overlap: {rows:?}");
    assert!(rows.windows(2).all(|w| w[1].0 - w[0].0 >= 1_900), "rounds keep to their slots: {rows:?}");
    assert!(rows.iter().all(|r| r.2 == "complete"), "{rows:?}");
}

#[test]
fn failed_rounds_do_not_end_a_schedule_and_sigint_ends_it_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("every.db");
    // Nobody listens on port 1: each round fails, and the schedule goes on.
    let child = command()
        .args(["stream", "127.0.0.1", "-p", "1", "-t", "0.3", "--every", "1s", "--rounds", "2", "--db"])
        .arg(&db)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = finish(child, Duration::from_secs(60));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("round 1: ended with a failure") || err.contains("round 1: failed"), "{err}");
    assert!(err.contains("round 2: starting"), "{err}");

    let srv = ServerProc::start(&[]);
    let child = command()
        .args(["stream", "127.0.0.1", "-p", &srv.port.to_string(), "-t", "20", "-i", "1"])
        .args(["--every", "1h", "--db"])
        .arg(&db)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let before = run_rows(&db).len();
    assert!(wait_for(Duration::from_secs(20), || run_rows(&db).len() > before), "the round began");
    std::thread::sleep(Duration::from_secs(1));
    let asked = Instant::now();
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let out = finish(child, Duration::from_secs(30));
    let err = stderr(&out);
    assert!(asked.elapsed() < Duration::from_secs(10), "a round in progress stops promptly: {err}");
    assert!(err.contains("schedule stopped"), "{err}");
    assert!(err.contains("round 1: stopped before it ended"), "{err}");
    assert!(!err.contains("the schedule goes on"), "not said of a schedule that is stopping: {err}");
    assert!(!err.contains("round 2"), "{err}");
    let rows = run_rows(&db);
    assert_eq!(rows.len(), before + 1, "{rows:?}");
    assert_eq!(rows[before].2, "interrupted", "the round keeps what it measured, marked interrupted");
}

#[test]
fn a_scheduled_round_while_postgresql_is_down_waits_in_the_same_spool() {
    let Some(c) = pg_cluster::shared() else { return };
    let _alone = pg_cluster::alone();
    let url = c.new_db("spooled_every");
    let srv = ServerProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool");
    c.stop();
    let child = command()
        .args(["stream", "127.0.0.1", "-p", &srv.port.to_string(), "-t", "0.3", "-i", "0"])
        .args(["--every", "1s", "--rounds", "1", "--db", &url, "--spool-dir"])
        .arg(&spool)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = finish(child, Duration::from_secs(60));
    c.restart();
    let err = stderr(&out);
    assert!(err.contains("round 1: done") && err.contains("they wait in"), "{err}");
    assert_eq!(spool_files(&spool).len(), 1, "{:?}", spool_files(&spool));
    push_spool(&url, &spool, dir.path());
    let got = c.query("spooled_every", "SELECT COUNT(*) || ' ' || MIN(status) FROM runs");
    assert_eq!(got.trim(), "1 complete", "the round reached the archive once");
    assert!(spool_files(&spool).is_empty());
}

/// `tcplab archive push` of `spool` into the PostgreSQL archive at `url`, which must succeed.
fn push_spool(url: &str, spool: &Path, scratch: &Path) {
    let push = command()
        .args(["archive", "push", "--to", url, "--spool-dir"])
        .arg(spool)
        .arg("--db")
        .arg(scratch.join("empty.db"))
        .output()
        .unwrap();
    assert_eq!(push.status.code(), Some(0), "{}", stderr(&push));
}

/// "runs tests distinct-tests status points" of a PostgreSQL archive, for the once-each checks.
fn runs_tests_points(c: &pg_cluster::Cluster, db: &str) -> String {
    c.query(
        db,
        "SELECT COUNT(DISTINCT r.uid) || ' ' || COUNT(t.uid) || ' ' || COUNT(DISTINCT t.uid) || ' ' || MIN(r.status) || ' ' || (SELECT COUNT(*) FROM sweep_points) FROM runs r JOIN tests t ON t.run_id = r.id",
    )
}

/// The one error line of a sweep or mesh that moved to the spool, and its `n` points in
/// `--json`, each with a completed test.
fn assert_points_wait(out: &Output, spool: &Path, n: usize) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "storing failed, so the exit status says so:\n{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "one error line:\n{err}");
    assert!(
        errors[0].contains("waits in the spool") && errors[0].contains(&spool.display().to_string()),
        "{err}"
    );
    let doc = json_of(out);
    let points = doc["sweep"]["points"].as_array().unwrap();
    assert_eq!(points.len(), n, "every point measured and shown: {doc}");
    assert_eq!(doc["sweep"]["complete"], true, "{doc}");
    let tests = doc["tests"].as_array().unwrap();
    assert_eq!(tests.len(), n, "{doc}");
    assert!(tests.iter().all(|t| t["status"] == "completed"), "{doc}");
    assert_eq!(spool_files(spool).len(), 1, "{:?}", spool_files(spool));
}

#[test]
fn a_sweep_whose_postgresql_stops_after_its_first_point_keeps_every_point_and_push_delivers_them() {
    let Some(c) = pg_cluster::shared() else { return };
    let _alone = pg_cluster::alone();
    let url = c.new_db("spooled_sweep");
    let srv = ServerProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool");
    let port = srv.port.to_string();
    let sweep = ["sweep", "127.0.0.1", "-p", &port, "--vary", "len=1K,2K,4K,8K", "-t", "1", "-i", "0"];
    let child = spawn_spooled(&[&sweep[..], &["--json", "--db", &url]].concat(), &spool);
    let first = wait_for(Duration::from_secs(30), || one_row_in(c, "spooled_sweep", "sweep_points"));
    c.stop();
    let out = finish(child, Duration::from_secs(90));
    c.restart();
    assert!(first, "the first point reached the archive: {}", stderr(&out));
    assert_points_wait(&out, &spool, 4);
    push_spool(&url, &spool, dir.path());
    let got = runs_tests_points(c, "spooled_sweep");
    assert_eq!(got.trim(), "1 4 4 complete 4", "one run, complete, its four points once each");
    assert!(spool_files(&spool).is_empty(), "{:?}", spool_files(&spool));
}

fn count_in(db: &Path, sql: &str) -> i64 {
    rusqlite::Connection::open(db).and_then(|c| c.query_row(sql, [], |r| r.get(0))).unwrap_or(0)
}

/// `cmd` with `--spool-dir spool --db db`, started with its output piped.
fn spawn_archived(cmd: &mut Command, spool: &Path, db: &Path) -> Child {
    cmd.arg("--spool-dir").arg(spool).arg("--db").arg(db);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
}

/// A short stream to the loopback server on `port`, archived in `db` with `spool`, which
/// must succeed (it delivers what waits in the spool first).
fn short_stream(port: &str, spool: &Path, db: &Path) -> Output {
    let next = command()
        .args(["stream", "127.0.0.1", "-p", port, "-t", "0.3", "-i", "0", "--spool-dir"])
        .arg(spool)
        .arg("--db")
        .arg(db)
        .output()
        .unwrap();
    assert_eq!(next.status.code(), Some(0), "{}", stderr(&next));
    next
}

/// Two loopback servers that take third-party tests, and an inventory naming them `a` and `b`
/// in `dir`.
fn two_host_mesh(dir: &Path) -> (Vec<ServerProc>, PathBuf) {
    let servers: Vec<ServerProc> = (0..2).map(|_| ServerProc::start(&["--allow-third-party"])).collect();
    let inv = dir.join("hosts.toml");
    let text: String = ["a", "b"]
        .iter()
        .zip(&servers)
        .map(|(name, s)| format!("[[host]]\nname = \"{name}\"\naddress = \"127.0.0.1:{}\"\n", s.port))
        .collect();
    std::fs::write(&inv, text).unwrap();
    (servers, inv)
}

#[test]
fn a_mesh_whose_disk_fills_after_its_first_cell_keeps_every_cell_and_the_next_run_delivers_them() {
    if !root() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (servers, inv) = two_host_mesh(dir.path());
    let disk = Mount::tmpfs(&dir.path().join("disk"), "1m");
    let db = disk.0.join("results.db");
    let spool = dir.path().join("spool");
    let child =
        spawn_archived(command().arg("mesh").arg(&inv).args(["-t", "1", "-i", "0", "--json"]), &spool, &db);
    let first = wait_for(Duration::from_secs(30), || count_in(&db, "SELECT COUNT(*) FROM sweep_points") == 1);
    disk.fill();
    let out = finish(child, Duration::from_secs(90));
    assert!(first, "the first cell reached the archive: {}", stderr(&out));
    assert_points_wait(&out, &spool, 4);
    disk.free();
    let next = short_stream(&servers[0].port.to_string(), &spool, &db);
    assert!(
        stderr(&next).contains("spool: pushed 3 test(s)"),
        "the three cells not yet archived: {}",
        stderr(&next)
    );
    let mesh = "(SELECT MIN(id) FROM runs)";
    let got = (
        count_in(&db, &format!("SELECT COUNT(*) FROM tests WHERE run_id = {mesh}")),
        count_in(&db, &format!("SELECT COUNT(DISTINCT uid) FROM tests WHERE run_id = {mesh}")),
        count_in(&db, &format!("SELECT COUNT(*) FROM sweep_points WHERE run_id = {mesh}")),
        count_in(&db, &format!("SELECT COUNT(*) FROM runs WHERE id = {mesh} AND status = 'complete'")),
    );
    assert_eq!(got, (4, 4, 4, 1), "the mesh's four cells once each, the run complete");
    assert!(spool_files(&spool).is_empty(), "{:?}", spool_files(&spool));
}

/// `tcplab ARGS` started with its spool in `spool`, stdout and stderr captured.
fn spawn_spooled(args: &[&str], spool: &std::path::Path) -> std::process::Child {
    command()
        .args(args)
        .env("TCPLAB_SPOOL", spool)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Whether database `db` has table `table` holding exactly one row.
fn one_row_in(c: &pg_cluster::Cluster, db: &str, table: &str) -> bool {
    let made = format!("SELECT COUNT(*) FROM information_schema.tables WHERE table_name = '{table}'");
    c.query(db, &made).trim() == "1" && c.query(db, &format!("SELECT COUNT(*) FROM {table}")).trim() == "1"
}

/// Sends SIGINT to `child` (a tcplab this test started).
fn interrupt(child: &Child) {
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
}

/// A loopback server, and an archive on a 1 MiB tmpfs that a test can fill, beside a spool
/// (root only: `None` elsewhere).
struct Rig {
    srv: ServerProc,
    port: String,
    dir: tempfile::TempDir,
    disk: Mount,
    db: PathBuf,
    spool: PathBuf,
}

impl Rig {
    fn new() -> Option<Rig> {
        if !root() {
            return None;
        }
        let srv = ServerProc::start(&[]);
        let port = srv.port.to_string();
        let dir = tempfile::tempdir().unwrap();
        let disk = Mount::tmpfs(&dir.path().join("disk"), "1m");
        let (db, spool) = (disk.0.join("results.db"), dir.path().join("spool"));
        Some(Rig { srv, port, dir, disk, db, spool })
    }
}

/// `(tests, distinct test ids, points, whether complete)` of archived run 1 in `db`.
fn first_run(db: &Path) -> (i64, i64, i64, i64) {
    (
        count_in(db, "SELECT COUNT(*) FROM tests WHERE run_id = 1"),
        count_in(db, "SELECT COUNT(DISTINCT uid) FROM tests WHERE run_id = 1"),
        count_in(db, "SELECT COUNT(*) FROM sweep_points WHERE run_id = 1"),
        count_in(db, "SELECT COUNT(*) FROM runs WHERE id = 1 AND status = 'complete'"),
    )
}

#[test]
fn a_resumed_sweep_whose_disk_fills_spools_its_new_points_and_the_next_run_appends_them_once() {
    let Some(Rig { srv: _srv, port, dir: _dir, disk, db, spool }) = Rig::new() else { return };
    let sweep = |args: &[&str]| spawn_archived(command().arg("sweep").args(args).arg("--json"), &spool, &db);
    // The first session is interrupted once its first point is archived.
    let child = sweep(&["127.0.0.1", "-p", &port, "--vary", "len=1K,2K,4K,8K", "-t", "1", "-i", "0"]);
    let first = wait_for(Duration::from_secs(30), || count_in(&db, "SELECT COUNT(*) FROM sweep_points") >= 1);
    interrupt(&child);
    let out = finish(child, Duration::from_secs(60));
    assert!(first, "the first point reached the archive: {}", stderr(&out));
    let archived = count_in(&db, "SELECT COUNT(*) FROM sweep_points");
    assert!((1..4).contains(&archived), "interrupted part-way: {archived} points\n{}", stderr(&out));

    // The resumed session: the disk fills once it has reopened the run.
    let child = sweep(&["--resume", "1"]);
    let reopened = wait_for(Duration::from_secs(30), || {
        count_in(&db, "SELECT COUNT(*) FROM runs WHERE status = 'running'") == 1
    });
    disk.fill();
    let out = finish(child, Duration::from_secs(90));
    assert!(reopened, "the resume reopened the run: {}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "one error line:\n{err}");
    assert!(errors[0].contains("waits in the spool") && errors[0].contains("tcplab archive push"), "{err}");
    let doc = json_of(&out);
    let left = 4 - archived as usize;
    let points = doc["sweep"]["points"].as_array().unwrap();
    assert_eq!(points.len(), 4, "the resumed points in --json, beside the archived ones: {doc}");
    assert_eq!(doc["sweep"]["complete"], true, "{doc}");
    let tests = doc["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 4, "{doc}");
    assert!(tests.iter().all(|t| t["status"] == "completed"), "{doc}");
    assert_eq!(spool_files(&spool).len(), 1, "{:?}", spool_files(&spool));
    assert_eq!(count_in(&db, "SELECT COUNT(*) FROM sweep_points"), archived, "the archive took none of them");

    // Room again: the next run delivers the resumed points into the sweep's own run.
    disk.free();
    let next = short_stream(&port, &spool, &db);
    assert!(
        stderr(&next).contains(&format!("spool: pushed {left} test(s) (0 new run(s))")),
        "{}",
        stderr(&next)
    );
    assert_eq!(first_run(&db), (4, 4, 4, 1), "the sweep's four points once each, the run complete");
    assert_eq!(count_in(&db, "SELECT COUNT(*) FROM runs"), 2, "the sweep and the stream, no copy of either");
    assert!(spool_files(&spool).is_empty(), "{:?}", spool_files(&spool));
}

/// tcp-atm-2000 against a HOST: nine loopback cases, the smallest study.
const STUDY: [&str; 5] = ["study", "tcp-atm-2000", "127.0.0.1", "--quick", "-t"];

#[test]
fn a_study_whose_disk_fills_spools_its_cases_and_its_resume_counts_them_done_once_delivered() {
    use std::io::{BufRead, BufReader};
    let Some(Rig { srv: _srv, port, dir: _dir, disk, db, spool }) = Rig::new() else { return };
    let study = |more: &[&str]| {
        let mut cmd = command();
        cmd.args(STUDY).args(["1", "-p", &port, "--db"]).arg(&db).args(more).env("TCPLAB_SPOOL", &spool);
        cmd
    };
    // The first session: the disk fills after its first case, and it is interrupted after its
    // fourth, so three or more cases wait in the spool only.
    let mut child = study(&[]).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let lines = BufReader::new(child.stderr.take().unwrap());
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in lines.lines().map_while(Result::ok) {
            if line.starts_with("[4/") {
                let _ = tx.send(());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let first = wait_for(Duration::from_secs(30), || count_in(&db, "SELECT COUNT(*) FROM sweep_points") >= 1);
    disk.fill();
    let fourth = rx.recv_timeout(Duration::from_secs(60)).is_ok();
    interrupt(&child);
    let status = finish(child, Duration::from_secs(60)).status;
    let err = reader.join().unwrap();
    assert!(first && fourth, "the study ran its first four cases:\n{err}");
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(err.contains("waits in the spool") && err.contains("tcplab archive push"), "{err}");
    let done = err.lines().filter(|l| l.starts_with('[')).count();
    assert_eq!(count_in(&db, "SELECT COUNT(*) FROM sweep_points"), 1, "the full disk took no more: {err}");
    assert_eq!(spool_files(&spool).len(), 1, "{:?}", spool_files(&spool));

    // Room again: the resume delivers the spool first, and counts every case it held as done.
    disk.free();
    let out = study(&["--resume"]).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains(&format!("spool: pushed {} test(s) (0 new run(s))", done - 1)), "{err}");
    assert!(err.contains(&format!("resuming run 1: {done} of 9 tests done")), "{err}");
    assert_eq!(first_run(&db), (9, 9, 9, 1), "the study's nine cases once each, the run complete");
    assert!(spool_files(&spool).is_empty(), "{:?}", spool_files(&spool));
}

/// The number of sweep points in PostgreSQL database `db` (0 before its tables exist).
fn pg_points(c: &pg_cluster::Cluster, db: &str) -> i64 {
    let made = "SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'sweep_points'";
    if c.query(db, made).trim() != "1" {
        return 0;
    }
    c.query(db, "SELECT COUNT(*) FROM sweep_points").trim().parse().unwrap_or(0)
}

#[test]
fn a_resumed_mesh_whose_postgresql_stops_spools_its_new_cells_and_push_completes_the_run() {
    let Some(c) = pg_cluster::shared() else { return };
    let _alone = pg_cluster::alone();
    let url = c.new_db("spooled_mesh_resume");
    let dir = tempfile::tempdir().unwrap();
    let (_servers, inv) = two_host_mesh(dir.path());
    let spool = dir.path().join("spool");
    let inv = inv.to_str().unwrap();
    // The first session is interrupted once a cell is archived.
    let child = spawn_spooled(&["mesh", inv, "-t", "1", "-i", "0", "--json", "--db", &url], &spool);
    let first = wait_for(Duration::from_secs(30), || pg_points(c, "spooled_mesh_resume") >= 1);
    interrupt(&child);
    let out = finish(child, Duration::from_secs(60));
    assert!(first, "a cell reached the archive: {}", stderr(&out));
    let archived = pg_points(c, "spooled_mesh_resume");
    assert!((1..4).contains(&archived), "interrupted part-way: {archived} cells\n{}", stderr(&out));

    // The resumed session: PostgreSQL stops once the run is reopened.
    let child = spawn_spooled(&["mesh", "--resume", "1", "--json", "--db", &url], &spool);
    let running = "SELECT COUNT(*) FROM runs WHERE status = 'running'";
    let reopened = wait_for(Duration::from_secs(30), || c.query("spooled_mesh_resume", running) == "1");
    c.stop();
    let out = finish(child, Duration::from_secs(90));
    c.restart();
    let err = stderr(&out);
    assert!(reopened, "the resume reopened the run: {err}");
    assert_eq!(out.status.code(), Some(2), "{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "one error line:\n{err}");
    assert!(errors[0].contains("waits in the spool"), "{err}");
    let doc = json_of(&out);
    let tests = doc["tests"].as_array().unwrap();
    assert!(tests.len() >= 4 - archived as usize, "the resumed cells are in --json: {doc}");
    assert!(tests.iter().all(|t| t["status"] == "completed"), "{doc}");
    assert_eq!(spool_files(&spool).len(), 1, "{:?}", spool_files(&spool));

    push_spool(&url, &spool, dir.path());
    let got = runs_tests_points(c, "spooled_mesh_resume");
    assert_eq!(got.trim(), "1 4 4 complete 4", "the one mesh, complete, its four cells once each");
    assert!(spool_files(&spool).is_empty(), "{:?}", spool_files(&spool));
}
