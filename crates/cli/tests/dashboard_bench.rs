//! Bench (ignored by default; `bench/dashboard.sh` runs it): an archive of hourly rounds of a
//! full mesh of BENCH_HOSTS hosts (default 100) over BENCH_ROUNDS rounds (default 24): the
//! first and the last round written through the store API, the rounds between copied from the
//! first in bulk SQL in one transaction (new ids, start times an hour apart, goodput varied per
//! cell and round; no per-interval sample rows), then the path summary rebuilt as the schema-9
//! migration back-fills it. Then the dashboard's pages fetched over HTTP five times each (time
//! to the last byte: median and max) and the grid page loaded in headless Chromium until its
//! script has drawn the grid. Prints one markdown table on stdout. No timing is asserted.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "bench")]

mod support;

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use store::Store;
use support::dashboard::Dashboard;
use support::mesh_archive::{name, round, HOUR_MS};

fn env(name: &str, default: u32) -> u32 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Time to the last byte, bytes, and the head of the answer (status line and headers).
fn get(port: u16, path: &str) -> (Duration, usize, String) {
    let t = Instant::now();
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let head = String::from_utf8_lossy(&out[..out.len().min(1000)]);
    (t.elapsed(), out.len(), head.split("\r\n\r\n").next().unwrap_or_default().to_string())
}

/// Copies run 1 (a mesh round) `n` times in one transaction, each an hour after the one
/// before, then rebuilds the path summary.
fn copy_rounds(db: &std::path::Path, n: u64) {
    let mut tx = rusqlite::Connection::open(db).unwrap();
    tx.execute_batch("BEGIN IMMEDIATE").unwrap();
    for k in 1..=n as i64 {
        let shift = k * HOUR_MS as i64;
        tx.execute(
            "INSERT INTO runs (kind, status, started_unix_ms, finished_unix_ms, tool_version, command_line, server,
                 local_host, remote_host, error, uid, host)
             SELECT kind, status, started_unix_ms + ?1, finished_unix_ms + ?1, tool_version, command_line, server,
                 local_host, remote_host, error, lower(hex(randomblob(16))), host FROM runs WHERE id = 1",
            [shift],
        )
        .unwrap();
        let run = tx.last_insert_rowid();
        tx.execute(
            "INSERT INTO sweeps SELECT ?1, plan, points_total, inventory FROM sweeps WHERE run_id = 1",
            [run],
        )
        .unwrap();
        tx.execute(
            "INSERT INTO tests (run_id, seq, label, test, status, started_unix_ms, goodput_bps, trans_per_s, spec,
                 result, headline_metric, headline_value, uid, sender, receiver, retransmits, rtt_mean_us, p50_us, p99_us)
             SELECT ?1, seq, label, test, status, started_unix_ms + ?2, goodput_bps * (0.96 + 0.02 * ((seq * 7 + ?3) % 5)),
                 trans_per_s, spec, result, headline_metric, headline_value * (0.96 + 0.02 * ((seq * 7 + ?3) % 5)),
                 lower(hex(randomblob(16))), sender, receiver, retransmits, rtt_mean_us, p50_us, p99_us
             FROM tests WHERE run_id = 1",
            [run, shift, k],
        )
        .unwrap();
        tx.execute(
            "INSERT INTO sweep_points (run_id, point, test_id, params, headline, met)
             SELECT ?1, p.point, t.id, p.params, p.headline, p.met FROM sweep_points p
             JOIN tests t ON t.run_id = ?1 AND t.seq = p.point WHERE p.run_id = 1",
            [run],
        )
        .unwrap();
    }
    store::summary::rebuild(&mut tx).unwrap();
    tx.execute_batch("COMMIT").unwrap();
}

fn ms(d: Duration) -> String {
    format!("{:.0}", d.as_secs_f64() * 1000.0)
}

#[test]
#[ignore = "bench: run by bench/dashboard.sh"]
fn dashboard_page_load_times() {
    let (hosts, rounds) = (env("BENCH_HOSTS", 100), env("BENCH_ROUNDS", 24) as u64);
    let dir = std::env::var_os("BENCH_DIR").map(std::path::PathBuf::from).unwrap_or_else(std::env::temp_dir);
    let db = dir.join(format!("dashboard-bench-{hosts}x{rounds}.db"));
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    let t = Instant::now();
    let reused = db.exists();
    if !reused {
        let mut st = Store::open(&db).unwrap();
        round(&mut st, hosts, now - rounds * HOUR_MS, 0, false);
        drop(st);
        copy_rounds(&db, rounds.saturating_sub(2));
        let mut st = Store::open(&db).unwrap();
        round(&mut st, hosts, now - HOUR_MS, rounds - 1, true);
    }
    let generated = t.elapsed();
    let size = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0);
    let d = Dashboard::start(&db, &["--listen", "127.0.0.1:0", "--since", "400d"]);
    let port = d.port();
    let (a, b) = (name(0, hosts), name(1, hosts));
    let head = get(port, "/api/grid").2;
    let token = head.split("\r\n").find_map(|l| l.strip_prefix("x-grid-token: ")).unwrap().to_string();
    let pages = [
        ("grid page (HTML)", "/".to_string()),
        ("grid data (/api/grid, first load and on change)", "/api/grid".to_string()),
        ("live poll, nothing new (/api/grid?known=…, 204)", format!("/api/grid?known={token}")),
        ("cell history", format!("/cell?sender={a}&receiver={b}&test=tcp-stream")),
        ("host history", format!("/host?name={a}")),
        ("cell history, every result (CSV)", format!("/cell.csv?sender={a}&receiver={b}&test=tcp-stream")),
        ("run report (newest round)", format!("/run/{rounds}")),
    ];
    let made = match reused {
        true => "reused from an earlier run of this bench".to_string(),
        false => format!("generated in {:.0} s", generated.as_secs_f64()),
    };
    println!(
        "archive: {hosts} hosts × {rounds} hourly rounds = {} tests, {:.1} MB, {made}",
        u64::from(hosts * hosts) * rounds,
        size as f64 / 1e6
    );
    println!("| page | bytes | median ms | max ms |\n|---|---:|---:|---:|");
    for (what, path) in &pages {
        let mut times: Vec<(Duration, usize, String)> = (0..5).map(|_| get(port, path)).collect();
        let want = if path.contains("known=") { "HTTP/1.1 204" } else { "HTTP/1.1 200" };
        assert!(times.iter().all(|t| t.2.starts_with(want)), "{path}: {}", times[0].2);
        times.sort_by_key(|x| x.0);
        println!("| {what} | {} | {} | {} |", times[0].1, ms(times[2].0), ms(times[4].0));
    }
    if let Some(bin) = support::chromium::binary() {
        let profile = dir.join("bench-profile");
        let mut times: Vec<(Duration, usize)> =
            (0..5).map(|_| chromium(&bin, &profile, "about:blank")).collect();
        times.sort_by_key(|x| x.0);
        println!("| Chromium start to DOM dump, blank page | - | {} | {} |", ms(times[2].0), ms(times[4].0));
        let url = format!("http://127.0.0.1:{port}/?poll=600000");
        let mut times: Vec<(Duration, usize)> = (0..5).map(|_| chromium(&bin, &profile, &url)).collect();
        times.sort_by_key(|x| x.0);
        println!(
            "| grid drawn in Chromium ({} cells) | - | {} | {} |",
            times[0].1,
            ms(times[2].0),
            ms(times[4].0)
        );
    }
    drop(d);
}

/// Headless Chromium's time from start to its DOM dump of `url`, and the `<td>` cells in it.
fn chromium(bin: &std::path::Path, profile: &std::path::Path, url: &str) -> (Duration, usize) {
    let t = Instant::now();
    let out = Command::new(bin)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--virtual-time-budget=1000"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--dump-dom", url])
        .stderr(Stdio::null())
        .output()
        .unwrap();
    (t.elapsed(), String::from_utf8_lossy(&out.stdout).matches("<td class=").count())
}
