//! `tcplab dashboard` on a real archive, loaded in headless Chromium: two days of hourly mesh
//! rounds of three hosts written through the store API (one cell planted 25 % slower in the
//! newest round, one failed): the grid shows the archive's cells with the failure's reason on
//! hover and the planted regression flagged (as `archive regressions` flags it), a cell's
//! history page plots one point per stored result, and a round written while the page is open
//! appears without a reload (the page's own list of rounds seen holds both). Also: read-only
//! (the file is unchanged), a token off loopback. Skips when Chromium is missing (not in CI).
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

#[path = "../../store/tests/support/pg_cluster.rs"]
mod pg_cluster;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use results::{Headline, Metric, TestKind, TestResult, TestSpec, ThirdParty};
use store::{RunKind, RunStatus, Store};
use support::dashboard::Dashboard;
use support::lab::{can_use_namespaces, Lab};
use support::mesh_archive::{mesh_run, round, HOUR_MS};
use support::{command, command_in, stdout, ServerProc};

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64
}

/// The DOM of `url` after `budget_ms` of Chromium's virtual time (timers run; virtual time
/// waits for each fetch), or `None` without Chromium.
fn dom(url: &str, work: &Path, budget_ms: u64) -> Option<String> {
    let bin = support::chromium::binary()?;
    let out = Command::new(bin)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions"])
        .arg(format!("--user-data-dir={}", work.join("profile").display()))
        .arg(format!("--virtual-time-budget={budget_ms}"))
        .args(["--dump-dom", url])
        .stderr(Stdio::null())
        .output()
        .unwrap();
    Some(String::from_utf8_lossy(&out.stdout).to_string())
}

fn count(hay: &str, needle: &str) -> usize {
    hay.matches(needle).count()
}

#[test]
fn the_grid_history_and_live_rounds_in_chromium() {
    if support::chromium::binary().is_none() {
        assert!(std::env::var_os("CI").is_none(), "chromium is required in CI (.ci/packages)");
        eprintln!("skipped: chromium is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("fleet.db");
    let now = now_ms();
    let rounds = 48u64;
    {
        let mut st = Store::open(&db).unwrap();
        for r in 0..rounds {
            round(&mut st, 3, now - (rounds - r) * HOUR_MS, r, r + 1 == rounds);
        }
    }
    let before = std::fs::read(&db).unwrap();
    let d = Dashboard::start(&db, &["--listen", "127.0.0.1:0"]);
    // The grid: nine cells, the planted regression and the failure with its reason.
    let page = dom(&format!("{}?poll=500&wait=0", d.url), dir.path(), 3000).unwrap();
    assert_eq!(count(&page, "<td class="), 9, "{page}");
    assert_eq!(count(&page, "<td class=\"regressed\""), 1, "{page}");
    assert!(
        page.contains("<td class=\"regressed\" title=\"")
            && page.contains("data-sender=\"a\" data-receiver=\"c\""),
        "{page}"
    );
    assert!(page.contains("title=\"failed: connecting to 198.18.0.2:9180: connection refused\" data-sender=\"c\" data-receiver=\"b\""), "{page}");
    assert_eq!(count(&page, "<td class=\"ok\""), 7, "{page}");
    let cli = command().args(["archive", "regressions", "--db"]).arg(&db).args(["--json"]).output().unwrap();
    assert_eq!(cli.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&cli.stdout).unwrap();
    assert_eq!(
        (doc["regressed"][0]["sender"].as_str(), doc["regressed"][0]["receiver"].as_str()),
        (Some("a"), Some("c")),
        "{}",
        stdout(&cli)
    );
    if let Some(shot) = std::env::var_os("TCPLAB_SCREENSHOT") {
        // For docs/fleet.md: `TCPLAB_SCREENSHOT=$PWD/docs/fleet-dashboard.png cargo test …`.
        let bin = support::chromium::binary().unwrap();
        let ok = Command::new(bin)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--window-size=900,560",
            ])
            .arg(format!("--user-data-dir={}", dir.path().join("profile").display()))
            .args(["--virtual-time-budget=3000", &format!("--screenshot={}", Path::new(&shot).display())])
            .arg(format!("{}?poll=500&wait=0", d.url))
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(ok.success());
    }
    // A cell's history: one point per stored result (c → b: one fewer, its last round failed).
    let cell = dom(&format!("{}cell?sender=a&receiver=b&test=tcp-stream", d.url), dir.path(), 1000).unwrap();
    assert!(cell.contains(&format!("data-points=\"{rounds}\"")), "{cell}");
    let plot = cell.split("id=\"plot\"").nth(1).unwrap().split("</svg>").next().unwrap();
    assert_eq!(count(plot, "<circle"), rounds as usize, "one marker per result");
    // Retransmits and RTT: one point per stored result each, read from the stored results.
    for id in ["plot-retransmits", "plot-rtt"] {
        let part = cell.split(&format!("id=\"{id}\"")).nth(1).unwrap_or_else(|| panic!("{id}: {cell}"));
        assert!(part.starts_with(&format!(" data-points=\"{rounds}\"")), "{id}: {part}");
        let svg = part.split("</svg>").next().unwrap();
        assert_eq!(count(svg, "<circle"), rounds as usize, "{id}");
    }
    assert!(!cell.contains("id=\"plot-latency\""), "no rr results, no latency plot");
    let failed =
        dom(&format!("{}cell?sender=c&receiver=b&test=tcp-stream", d.url), dir.path(), 1000).unwrap();
    assert!(
        failed.contains(&format!("data-points=\"{}\"", rounds - 1)) && failed.contains("connection refused"),
        "{failed}"
    );
    let regressed =
        dom(&format!("{}cell?sender=a&receiver=c&test=tcp-stream", d.url), dir.path(), 1000).unwrap();
    assert!(regressed.contains("<li class=\"Regressed\">a → c"), "{regressed}");
    // The verdict drawn on the plots: the newest result marked, each plot's title saying so.
    let plot = regressed.split("id=\"plot\"").nth(1).unwrap().split("</svg>").next().unwrap();
    assert_eq!(count(plot, "><title>c: "), rounds as usize, "{plot}");
    assert_eq!(count(plot, "><title>c regressed -2"), 1, "the regressed result marked: {plot}");
    // Three plots, each titled twice (its <title> and its heading).
    assert_eq!(count(&regressed, "(verdict: a → c regressed -2"), 6, "{regressed}");
    // The run's report.
    let report = dom(&format!("{}run/{rounds}", d.url), dir.path(), 1000).unwrap();
    assert!(report.contains("tcplab report") && report.contains("<svg"), "report page");
    assert_eq!(std::fs::read(&db).unwrap(), before, "the dashboard never writes the archive");
    // A round written while the page polls appears without a reload (each poll held up to 1 s
    // of real time while nothing changes: 15 polls of virtual time outlast the 4 s below).
    let url = format!("{}?poll=200&wait=1000", d.url);
    let work = dir.path().to_path_buf();
    let browser = std::thread::spawn(move || dom(&url, &work, 3000).unwrap());
    std::thread::sleep(Duration::from_secs(4));
    let started = Instant::now();
    let new_id = round(&mut Store::open(&db).unwrap(), 3, now, rounds, false);
    let live = browser.join().unwrap();
    let rounds_seen = live.split("<ol id=\"rounds\">").nth(1).unwrap().split("</ol>").next().unwrap();
    assert_eq!(
        rounds_seen,
        format!("<li data-run=\"{rounds}\">fleet.toml: run {rounds}</li><li data-run=\"{new_id}\">fleet.toml: run {new_id}</li>"),
        "the first page showed round {rounds}, then round {new_id} arrived (written {:?} before the dump)",
        started.elapsed()
    );
    assert!(live.contains(&format!("<table class=\"grid\" data-run=\"{new_id}\"")));
}

#[test]
fn off_loopback_a_token_is_required() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    Store::open(&db).unwrap();
    let out =
        command().args(["dashboard", "--db"]).arg(&db).args(["--listen", "0.0.0.0:0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("give --token or --token-file"));
    let d = Dashboard::start(&db, &["--listen", "0.0.0.0:0", "--token", "s3cret"]);
    let port = d.url.rsplit(':').next().unwrap().trim_end_matches('/');
    let get = |path: &str| -> String {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port.parse::<u16>().unwrap())).unwrap();
        write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    };
    assert!(get("/api/grid").starts_with("HTTP/1.1 401"));
    assert!(get("/api/grid?token=wrong").starts_with("HTTP/1.1 401"));
    let ok = get("/api/grid?token=s3cret");
    assert!(ok.starts_with("HTTP/1.1 200") && ok.ends_with("[]"), "{ok}");
}

fn http_get(url: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let port: u16 = url.trim_end_matches('/').rsplit(':').next().unwrap().parse().unwrap();
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.1 200"), "{path}: {out}");
    out.split("\r\n\r\n").nth(1).unwrap_or_default().to_string()
}

/// The same rounds in a SQLite file and a real PostgreSQL database: the same grid and history.
#[test]
fn postgresql_serves_what_sqlite_serves() {
    let Some(c) = pg_cluster::shared() else { return };
    let _up = pg_cluster::up();
    let url = c.new_db("dashboard");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fleet.db");
    let now = now_ms();
    for db in [file.clone(), std::path::PathBuf::from(&url)] {
        let mut st = Store::open(&db).unwrap();
        for r in 0..12u64 {
            round(&mut st, 3, now - (12 - r) * HOUR_MS, r, r == 11);
        }
    }
    let lite = Dashboard::start(&file, &["--listen", "127.0.0.1:0"]);
    let pg = Dashboard::start(Path::new(&url), &["--listen", "127.0.0.1:0"]);
    let (a, b) = (http_get(&lite.url, "/api/grid"), http_get(&pg.url, "/api/grid"));
    assert_eq!(a, b);
    assert!(a.contains("\"class\":\"regressed\"") && a.contains("\"class\":\"failed\""), "{a}");
    let part = |page: &str, from: &str, to: &str| {
        page.split(from).nth(1).unwrap().split(to).next().unwrap().to_string()
    };
    for path in ["/cell?sender=a&receiver=c&test=tcp-stream", "/host?name=b"] {
        let (a, b) = (http_get(&lite.url, path), http_get(&pg.url, path));
        for id in ["id=\"plot\"", "id=\"plot-retransmits\"", "id=\"plot-rtt\""] {
            assert_eq!(part(&a, id, ">"), part(&b, id, ">"), "{path} {id}");
        }
        assert_eq!(
            part(&a, "<ul id=\"verdicts\">", "</ul>"),
            part(&b, "<ul id=\"verdicts\">", "</ul>"),
            "{path}"
        );
        assert_eq!(
            part(&a, "<ul id=\"failures\">", "</ul>"),
            part(&b, "<ul id=\"failures\">", "</ul>"),
            "{path}"
        );
    }
    assert_eq!(http_get(&lite.url, "/run/12"), http_get(&pg.url, "/run/12"));
}

/// `n` results of path a → b at about `bps`, hourly before `now`, labelled as the mesh labels
/// its tests: a history the newest real rounds are far below.
fn plant_history(st: &mut Store, label: &str, now: u64, n: u64, bps: f64) {
    for k in 1..=n {
        let at = now - (n + 1 - k) * HOUR_MS;
        let id = st.begin_run(&mesh_run(at), RunKind::Test, "198.18.41.2:9180").unwrap();
        let mut t = TestResult::new(label, TestSpec::new(TestKind::TcpStream), "198.18.41.2:9180", at);
        t.third_party = Some(ThirdParty {
            from: "198.18.41.1:9180".into(),
            to: "198.18.41.2:9180".into(),
            from_name: Some("a".into()),
            to_name: Some("b".into()),
        });
        t.summary.headline = Some(Headline::measured(Metric::Goodput, bps * (1.0 + (k % 5) as f64 / 100.0)));
        st.add_test(id, &t).unwrap();
        st.finish_run(id, RunStatus::Complete, None, at + 1000).unwrap();
    }
}

/// Chromium's picture of `url` (for docs/fleet.md) when `TCPLAB_SCREENSHOT_LIVE` names a
/// directory: `fleet-<name>.png`.
fn screenshot(url: &str, work: &Path, name: &str, size: &str) {
    let (Some(dir), Some(bin)) = (std::env::var_os("TCPLAB_SCREENSHOT_LIVE"), support::chromium::binary())
    else {
        return;
    };
    let shot = Path::new(&dir).join(format!("fleet-{name}.png"));
    let ok = Command::new(bin)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"])
        .arg(format!("--window-size={size}"))
        .arg(format!("--user-data-dir={}", work.join("profile").display()))
        .args(["--virtual-time-budget=3000", &format!("--screenshot={}", shot.display()), url])
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(ok.success());
}

/// The whole fleet with real parts: two hosts in network namespaces running `tcplab server`,
/// `tcplab mesh --every 2s --rounds 3` from the bridge's namespace into a real PostgreSQL,
/// the dashboard on that archive open in headless Chromium while the rounds arrive (a new
/// round appears without a reload), and a history planted for a → b (24 hourly results at
/// 1 Tbit/s, which no veth reaches) flagged on the grid, on the cell's page and by
/// `archive regressions`, and nothing else flagged. The cell's plots hold the real rounds'
/// retransmits and RTT. Needs root, Chromium and PostgreSQL; says so and returns without.
#[test]
fn a_scheduled_mesh_of_namespaced_hosts_watched_live() {
    if !can_use_namespaces() || support::chromium::binary().is_none() {
        assert!(std::env::var_os("CI").is_none(), "root and chromium are required in CI");
        eprintln!("skipped: needs root and chromium");
        return;
    }
    let Some(c) = pg_cluster::shared() else { return };
    let _up = pg_cluster::up();
    let began = Instant::now();
    let lab = Lab::new("tlf", 41, 2);
    let servers: Vec<ServerProc> = (0..2)
        .map(|i| ServerProc::start_in(Some(&lab.hosts[i]), &lab.addr(i), &["--allow-third-party"]))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let inv = dir.path().join("fleet.toml");
    let text: String = ["a", "b"]
        .iter()
        .enumerate()
        .map(|(i, n)| {
            format!("[[host]]\nname = \"{n}\"\naddress = \"{}:{}\"\n", lab.addr(i), servers[i].port)
        })
        .collect();
    std::fs::write(&inv, text).unwrap();
    let (socket, tcp) = (c.socket_url("fleet_live"), c.url("fleet_live"));
    let mut st = Store::open(Path::new(&tcp)).unwrap();
    let log = std::fs::File::create(dir.path().join("mesh.log")).unwrap();
    let mut mesh = command_in(Some(&lab.bridge))
        .arg("mesh")
        .arg(&inv)
        .args(["--every", "2s", "--rounds", "3", "-t", "0.5", "-i", "0", "--db", &socket])
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    let done = "SELECT COUNT(*) FROM runs WHERE finished_unix_ms IS NOT NULL";
    assert!(pg_cluster::wait_for(Duration::from_secs(30), || c.query("fleet_live", done) == "1"), "round 1");
    let d = Dashboard::start(Path::new(&tcp), &["--listen", "127.0.0.1:0"]);
    // Each poll is held up to 2 s of real time while nothing changes: 30 polls of virtual time
    // outlast the rounds (≈ 3.5 s each).
    let (url, work) = (format!("{}?poll=100&wait=2000", d.url), dir.path().to_path_buf());
    let browser = std::thread::spawn(move || dom(&url, &work, 3000).unwrap());
    // Planted while the page is open (its grid then changes too).
    let label =
        c.query("fleet_live", "SELECT label FROM tests WHERE sender = 'a' AND receiver = 'b' LIMIT 1");
    plant_history(&mut st, &label, now_ms() - 60_000, 24, 1e12);
    let live = browser.join().unwrap();
    let ended = pg_cluster::wait_for(Duration::from_secs(40), || mesh.try_wait().unwrap().is_some());
    let log = std::fs::read_to_string(dir.path().join("mesh.log")).unwrap();
    assert!(ended, "the schedule ended: {log}");
    let rounds_seen = live.split("<ol id=\"rounds\">").nth(1).unwrap().split("</ol>").next().unwrap();
    assert!(
        count(rounds_seen, "<li data-run=") >= 2,
        "a new round arrived without reload: {rounds_seen}\n{}\n{log}",
        live.split("<p id=\"updated\">").nth(1).and_then(|s| s.split("</div>").next()).unwrap_or_default()
    );
    let page = dom(&format!("{}?poll=500&wait=0", d.url), dir.path(), 3000).unwrap();
    assert_eq!(count(&page, "<td class="), 4, "{page}");
    assert_eq!(count(&page, "<td class=\"regressed\""), 1, "{page}");
    assert!(page.contains("data-sender=\"a\" data-receiver=\"b\"><a"), "{page}");
    let cell = format!("{}cell?sender=a&receiver=b&test=tcp-stream", d.url);
    let history = dom(&cell, dir.path(), 1000).unwrap();
    assert!(history.contains("<li class=\"Regressed\">a → b"), "{history}");
    assert!(history.contains("data-points=\"27\""), "24 planted + 3 rounds: {history}");
    for id in ["plot-retransmits", "plot-rtt"] {
        assert!(
            history.contains(&format!("id=\"{id}\" data-points=\"3\"")),
            "{id}: the real rounds' {history}"
        );
    }
    let cli = command().args(["archive", "regressions", "--db", &tcp, "--json"]).output().unwrap();
    assert_eq!(cli.status.code(), Some(1), "{}", stdout(&cli));
    let doc: serde_json::Value = serde_json::from_slice(&cli.stdout).unwrap();
    let flagged: Vec<_> = doc["regressed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["sender"].clone(), r["receiver"].clone()))
        .collect();
    assert_eq!(flagged, [("a".into(), "b".into())], "{}", stdout(&cli));
    screenshot(&format!("{}?poll=500&wait=0", d.url), dir.path(), "grid", "700,420");
    screenshot(&cell, dir.path(), "history", "760,1500");
    eprintln!("scheduled mesh watched live: {:.1} s", began.elapsed().as_secs_f64());
}
