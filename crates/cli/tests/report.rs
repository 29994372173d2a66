//! End to end: `tcplab report` and `--report FILE` on real results from a real server on
//! 127.0.0.1 — stream tests over a 2 × 2 grid of write size × window and an rr test, saved
//! as `--json` and from the archive — rendered and opened in headless Chromium.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

#[path = "support/chromium.rs"]
mod chromium;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_tcplab");

/// A `tcplab server` on an ephemeral port, killed on drop.
struct ServerProc {
    child: Child,
    port: String,
}

impl ServerProc {
    fn start() -> ServerProc {
        let mut child = Command::new(BIN)
            .args(["server", "--bind", "127.0.0.1", "-p", "0"])
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stderr.take().unwrap()).read_line(&mut line).unwrap();
        let port =
            line.split("127.0.0.1:").nth(1).and_then(|s| s.split_whitespace().next()).unwrap().to_string();
        ServerProc { child, port }
    }
}

impl Drop for ServerProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn tcplab(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "exit {:?}: {}", out.status, String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// Runs one client test with `--json`, saving the document under `dir`.
fn save(srv: &ServerProc, dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let mut all = vec![args[0], "127.0.0.1", "-p", &srv.port, "-t", "0.4", "-i", "0.1", "--json"];
    all.extend_from_slice(&args[1..]);
    let json = ok(&tcplab(&all));
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, json).unwrap();
    path
}

fn plots_in(html: &str) -> usize {
    html.matches("<svg class=\"plot\"").count()
}

#[test]
fn grid_and_rr_report_renders_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let srv = ServerProc::start();
    let mut files = Vec::new();
    for len in ["1K", "16K"] {
        for window in ["64K", "256K"] {
            files.push(save(
                &srv,
                dir.path(),
                &format!("s{len}{window}"),
                &["stream", "-l", len, "-w", window],
            ));
        }
    }
    let rr_html = dir.path().join("rr.html");
    files.push(save(&srv, dir.path(), "rr", &["rr", "-r", "64,64", "--report", rr_html.to_str().unwrap()]));
    let report = dir.path().join("report.html");
    let mut args = vec!["report".to_string(), "-o".into(), report.display().to_string()];
    for f in &files {
        args.extend(["--from".to_string(), f.display().to_string()]);
    }
    let out = tcplab(&args.iter().map(String::as_str).collect::<Vec<_>>());
    ok(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("5 run(s), 5 test(s)"));
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("window \\ write size"), "the 2 × 2 grid is tabulated");
    // Grid: curves + heatmap; latency CDF; CPU: utilisation, stream SD, M, rr SD;
    // timelines: 4 stream tests × 4 + 1 rr test.
    let expected = 2 + 1 + 4 + 4 * 4 + 1;
    assert_eq!(plots_in(&html), expected);
    assert!(html.contains(&format!("data-plots=\"{expected}\"")));
    chromium::assert_renders(&report, dir.path(), expected);
    // The single test's --report: CDF, CPU utilisation, rr SD, one timeline.
    let rr = std::fs::read_to_string(&rr_html).unwrap();
    assert_eq!(plots_in(&rr), 4);
    chromium::assert_renders(&rr_html, dir.path(), 4);
}

#[test]
fn markdown_report_of_saved_output() {
    let dir = tempfile::tempdir().unwrap();
    let srv = ServerProc::start();
    let a = save(&srv, dir.path(), "a", &["stream", "-l", "4K"]);
    let b = save(&srv, dir.path(), "b", &["stream", "-l", "32K"]);
    let md = ok(&tcplab(&[
        "report",
        "--format",
        "markdown",
        "--from",
        a.to_str().unwrap(),
        "--from",
        b.to_str().unwrap(),
    ]));
    assert!(md.starts_with("# tcplab report"), "{md}");
    assert!(md.contains("| write size | 4K | 32K |"), "{md}");
    let out = dir.path().join("r.md");
    ok(&tcplab(&["report", "--from", a.to_str().unwrap(), "-o", out.to_str().unwrap()]));
    assert!(std::fs::read_to_string(out).unwrap().contains("## Stream tests"));
}

#[test]
fn report_of_an_archived_run() {
    let dir = tempfile::tempdir().unwrap();
    let srv = ServerProc::start();
    let saved = save(&srv, dir.path(), "rr", &["rr", "-r", "1,1"]);
    let run: results::RunRecord = serde_json::from_str(&std::fs::read_to_string(saved).unwrap()).unwrap();
    let db = dir.path().join("results.db");
    let mut store = store::Store::open(&db).unwrap();
    let id = store.begin_run(&run, store::RunKind::Test, &run.tests[0].server).unwrap();
    store.add_test(id, &run.tests[0]).unwrap();
    store.finish_run(id, store::RunStatus::Complete, None, run.started_unix_ms + 1000).unwrap();
    drop(store);
    let html = ok(&tcplab(&["report", &id.to_string(), "--db", db.to_str().unwrap()]));
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("rr 1/1"));
    let last = ok(&tcplab(&["report", "--db", db.to_str().unwrap(), "--format", "markdown"]));
    assert!(last.contains("rr 1/1"), "without ids: the last run");
}

#[test]
fn bad_input_is_one_error_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "{\"not\": \"a run\"}").unwrap();
    let text = dir.path().join("text.json");
    std::fs::write(&text, "hello").unwrap();
    let missing_db = dir.path().join("none.db");
    let cases: Vec<Vec<&str>> = vec![
        vec!["report", "--from", junk.to_str().unwrap()],
        vec!["report", "--from", text.to_str().unwrap()],
        vec!["report", "--from", "/nonexistent/tlh.json"],
        vec!["report", "3", "--db", missing_db.to_str().unwrap()],
        vec!["report", "--from", junk.to_str().unwrap(), "-o", "/nonexistent/dir/r.html"],
    ];
    for args in cases {
        let out = tcplab(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("error: ") && err.trim_end().lines().count() == 1, "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    assert!(!missing_db.exists(), "a report never creates an archive");
}

#[test]
fn browser_check_catches_errors_fetches_and_blank_plots() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("bad.html");
    let bad = "<!DOCTYPE html><html><head><title>t</title></head><body>\
        <svg class=\"plot\" width=\"0\" height=\"0\"></svg><img src=\"missing.png\">\
        <script>console.error('boom')</script></body></html>";
    std::fs::write(&page, bad).unwrap();
    let Some(r) = chromium::render(&page, dir.path()) else {
        eprintln!("skipped: chromium is not installed");
        return;
    };
    assert_eq!((r.plots, r.drawn), (1, 0), "{r:?}");
    assert!(r.errors >= 2 && !r.console.is_empty(), "{r:?}");
}
