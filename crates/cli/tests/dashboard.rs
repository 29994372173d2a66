//! `tcplab dashboard` on a real archive, loaded in headless Chromium: two days of hourly mesh
//! rounds of three hosts written through the store API (one cell planted 25 % slower in the
//! newest round, one failed): the grid shows the archive's cells with the failure's reason on
//! hover and the planted regression flagged (as `archive regressions` flags it), a cell's
//! history page plots one point per stored result, and a round written while the page is open
//! appears without a reload (the page's own list of rounds seen holds both). Also: read-only
//! (the file is unchanged), a token off loopback. Skips when Chromium is missing (not in CI).
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use results::{
    Axis, Estimate, Headline, HostInfo, MeshCell, MeshHost, MeshPlan, MeshRole, Metric, ParamSetting,
    ParamValue, RunRecord, Status, SweepPlan, SweepPoint, TestError, TestKind, TestResult, TestSpec,
};
use store::{RunKind, RunStatus, Store};
use support::{command, stdout};

const HOUR_MS: u64 = 3_600_000;
const HOSTS: [&str; 3] = ["a", "b", "c"];

fn plan() -> SweepPlan {
    let hosts: Vec<MeshHost> = HOSTS
        .iter()
        .enumerate()
        .map(|(i, n)| MeshHost {
            name: n.to_string(),
            address: format!("198.18.0.{}", i + 1),
            port: 9180,
            labels: Default::default(),
            role: MeshRole::Both,
        })
        .collect();
    let cells: Vec<MeshCell> =
        (0..3u32).flat_map(|s| (0..3u32).map(move |r| MeshCell { sender: s, receiver: r })).collect();
    let values = cells
        .iter()
        .map(|c| ParamValue::Text(format!("{}>{}", HOSTS[c.sender as usize], HOSTS[c.receiver as usize])))
        .collect();
    SweepPlan {
        base: TestSpec::new(TestKind::TcpStream),
        axes: vec![Axis { name: "cell".into(), tied: Vec::new(), values, text: "mesh".into() }],
        confidence: None,
        metric: "goodput_bps".into(),
        mesh: Some(MeshPlan { inventory: "fleet.toml".into(), hosts, cells }),
    }
}

/// ±2 % around 940 Mbit/s (a loop-back cell: 20 Gbit/s).
fn goodput(cell: usize, round: u64) -> f64 {
    let x = (round * 7919 + cell as u64 * 104_729) % 1000;
    let base = if cell % 4 == 0 { 2e10 } else { 9.4e8 };
    base * (1.0 + (x as f64 - 500.0) / 25_000.0)
}

/// One mesh round at `at`; `last` plants a slower a → c and a failed c → b.
fn round(st: &mut Store, at: u64, round: u64, last: bool) -> i64 {
    let plan = plan();
    let run = RunRecord {
        tool_version: "0.1.0".into(),
        command_line: vec!["tcplab".into(), "mesh".into(), "fleet.toml".into()],
        started_unix_ms: at,
        local_host: HostInfo { hostname: "scheduler".into(), ..HostInfo::default() },
        remote_host: None,
        tests: Vec::new(),
        error: None,
        id: None,
        sweep: None,
        cc: None,
    };
    let id = st.begin_run(&run, RunKind::Sweep, "mesh fleet.toml").unwrap();
    st.begin_sweep(id, &plan).unwrap();
    let mesh = plan.mesh.as_ref().unwrap();
    for (i, c) in mesh.cells.iter().enumerate() {
        let (s, r) = (HOSTS[c.sender as usize], HOSTS[c.receiver as usize]);
        let mut t = TestResult::new(
            "tcp-stream",
            plan.base.clone(),
            format!("198.18.0.{}:9180", c.receiver + 1),
            at + i as u64,
        );
        t.third_party = Some(results::ThirdParty {
            from: format!("198.18.0.{}:9180", c.sender + 1),
            to: format!("198.18.0.{}:9180", c.receiver + 1),
            from_name: Some(s.into()),
            to_name: Some(r.into()),
        });
        let mut v = goodput(i, round);
        if last && (s, r) == ("c", "b") {
            t.status = Status::Failed;
            t.error = Some(TestError {
                code: "connect".into(),
                message: "connecting to 198.18.0.2:9180: connection refused".into(),
            });
            v = 0.0;
        } else {
            if last && (s, r) == ("a", "c") {
                v *= 0.75;
            }
            t.summary.headline = Some(Headline::measured(Metric::Goodput, v));
        }
        let params = vec![
            ParamSetting { name: "sender".into(), value: ParamValue::Text(s.into()) },
            ParamSetting { name: "receiver".into(), value: ParamValue::Text(r.into()) },
        ];
        let headline =
            Estimate { metric: "goodput_bps".into(), mean: v, values: vec![v], ..Estimate::default() };
        let p = SweepPoint {
            index: i as u32,
            coords: vec![i as u32],
            params,
            test_index: i as u32,
            headline,
            met: true,
        };
        st.add_point(id, &p, &t).unwrap();
    }
    st.finish_run(id, RunStatus::Complete, None, at + 60_000).unwrap();
    id
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64
}

struct Dashboard {
    child: Child,
    url: String,
}

impl Drop for Dashboard {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn dashboard(db: &Path, extra: &[&str]) -> Dashboard {
    let mut child = command()
        .args(["dashboard", "--db"])
        .arg(db)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap()).read_line(&mut line).unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("{line}"))
        .to_string();
    Dashboard { child, url }
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
            round(&mut st, now - (rounds - r) * HOUR_MS, r, r + 1 == rounds);
        }
    }
    let before = std::fs::read(&db).unwrap();
    let d = dashboard(&db, &["--listen", "127.0.0.1:0"]);
    // The grid: nine cells, the planted regression and the failure with its reason.
    let page = dom(&format!("{}?poll=500", d.url), dir.path(), 3000).unwrap();
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
    // A cell's history: one point per stored result (c → b: one fewer, its last round failed).
    let cell = dom(&format!("{}cell?sender=a&receiver=b&test=tcp-stream", d.url), dir.path(), 1000).unwrap();
    assert!(cell.contains(&format!("data-points=\"{rounds}\"")), "{cell}");
    let plot = cell.split("id=\"plot\"").nth(1).unwrap().split("</svg>").next().unwrap();
    assert_eq!(count(plot, "<circle"), rounds as usize, "one marker per result");
    let failed =
        dom(&format!("{}cell?sender=c&receiver=b&test=tcp-stream", d.url), dir.path(), 1000).unwrap();
    assert!(
        failed.contains(&format!("data-points=\"{}\"", rounds - 1)) && failed.contains("connection refused"),
        "{failed}"
    );
    let regressed =
        dom(&format!("{}cell?sender=a&receiver=c&test=tcp-stream", d.url), dir.path(), 1000).unwrap();
    assert!(regressed.contains("<li class=\"Regressed\">a → c"), "{regressed}");
    // The run's report.
    let report = dom(&format!("{}run/{rounds}", d.url), dir.path(), 1000).unwrap();
    assert!(report.contains("tcplab report") && report.contains("<svg"), "report page");
    assert_eq!(std::fs::read(&db).unwrap(), before, "the dashboard never writes the archive");
    // A round written while the page polls appears without a reload.
    let url = format!("{}?poll=200", d.url);
    let work = dir.path().to_path_buf();
    let browser = std::thread::spawn(move || dom(&url, &work, 150_000).unwrap());
    std::thread::sleep(Duration::from_secs(4));
    let started = Instant::now();
    let new_id = round(&mut Store::open(&db).unwrap(), now, rounds, false);
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
    let d = dashboard(&db, &["--listen", "0.0.0.0:0", "--token", "s3cret"]);
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
