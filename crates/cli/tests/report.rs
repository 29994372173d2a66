//! End to end: `tcplab report` and `--report FILE` on real results from a real server on
//! 127.0.0.1 — a 2 × 2 sweep with repetition and an rr test from the archive, and a grid of
//! separately run stream tests saved as `--json` — rendered and opened in headless Chromium.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;

use support::{chromium, tcplab, ServerProc};

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "exit {:?}: {}", out.status, String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// The archive of a test: inside its temporary directory.
fn db(dir: &Path) -> String {
    dir.join("results.db").display().to_string()
}

/// Runs one client test with `--json`, saving the document under `dir`.
fn save(srv: &ServerProc, dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let (db, port) = (db(dir), srv.port());
    let mut all = vec![args[0], "127.0.0.1", "-p", &port, "-t", "0.4", "-i", "0.1", "--json", "--db", &db];
    all.extend_from_slice(&args[1..]);
    let json = ok(&tcplab(&all));
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, json).unwrap();
    path
}

fn plots_in(html: &str) -> usize {
    html.matches("<svg class=\"plot\"").count()
}

/// The report at `path` holds `expected` plots, says so, and renders them all in Chromium.
fn check_plots(path: &Path, work: &Path, expected: usize) -> String {
    let html = std::fs::read_to_string(path).unwrap();
    assert_eq!(plots_in(&html), expected, "{}", path.display());
    assert!(html.contains(&format!("data-plots=\"{expected}\"")));
    chromium::assert_renders(path, work, expected);
    html
}

fn run_id(json_file: &Path) -> String {
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(json_file).unwrap()).unwrap();
    v["id"].as_i64().expect("stored runs carry their archive id").to_string()
}

#[test]
fn sweep_and_rr_report_renders_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let (db, path) = (db(dir.path()), |name: &str| dir.path().join(name).display().to_string());
    let (sweep_html, rr_html, both_html) = (path("sweep.html"), path("rr.html"), path("both.html"));
    let sweep = ok(&tcplab(&[
        "sweep",
        "--vary",
        "len=1K,16K",
        "--vary",
        "window=64K,256K",
        "-t",
        "0.3",
        "-i",
        "0.1",
        "--iterations",
        "2,2",
        "--json",
        "--db",
        &db,
        "--report",
        &sweep_html,
    ]));
    std::fs::write(path("sweep.json"), sweep).unwrap();
    let srv = ServerProc::start(&[]);
    let rr = save(&srv, dir.path(), "rr", &["rr", "-r", "64,64", "--report", &rr_html]);
    let (sweep_id, rr_id) = (run_id(Path::new(&path("sweep.json"))), run_id(&rr));
    let out = tcplab(&["report", &sweep_id, &rr_id, "--db", &db, "-o", &both_html]);
    ok(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("2 run(s), 5 test(s)"));
    // Sweep: curves + heatmap; latency CDF; CPU: utilisation, stream SD, M, rr SD; the rr
    // test's timeline (sweep points have none).
    let both = check_plots(Path::new(&both_html), dir.path(), 2 + 1 + 4 + 1);
    assert!(both.contains("tcp-stream sweep · 4 points") && both.contains("len \\ window"), "sweep grid");
    assert!(both.contains("Error bars and ± values"), "repetition gives confidence intervals");
    // `sweep --report`: curves, heatmap, CPU utilisation, SD, M.
    check_plots(Path::new(&sweep_html), dir.path(), 5);
    // `rr --report`: CDF, CPU utilisation, rr SD, one timeline; the transactions' verdict
    // (issue 25: request/response is diagnosed in HTML too).
    let rr_page = check_plots(Path::new(&rr_html), dir.path(), 4);
    assert!(
        rr_page.contains("What limited each result")
            && rr_page.contains("<td>transactions</td>")
            && (rr_page.contains("limited by") || rr_page.contains("no limit identified")),
        "no verdict for the transactions in {rr_html}"
    );
    // Without ids: the last run.
    let last = ok(&tcplab(&["report", "--db", &db, "--format", "markdown"]));
    assert!(last.contains("rr 64/64") && !last.contains("sweep"), "{last}");
}

#[test]
fn grid_of_saved_json_runs_renders_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let srv = ServerProc::start(&[]);
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
    files.push(save(&srv, dir.path(), "rr", &["rr", "-r", "64,64"]));
    let report = dir.path().join("report.html");
    let mut args = vec!["report".to_string(), "-o".into(), report.display().to_string()];
    for f in &files {
        args.extend(["--from".to_string(), f.display().to_string()]);
    }
    let out = tcplab(&args.iter().map(String::as_str).collect::<Vec<_>>());
    ok(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("5 run(s), 5 test(s)"));
    // Grid: curves + heatmap; latency CDF; CPU: utilisation, stream SD, M, rr SD;
    // timelines: 4 stream tests × 4 + 1 rr test.
    let html = check_plots(&report, dir.path(), 2 + 1 + 4 + 4 * 4 + 1);
    assert!(html.contains("window \\ write size"), "the 2 × 2 grid is tabulated");
}

#[test]
fn markdown_report_of_saved_output() {
    let dir = tempfile::tempdir().unwrap();
    let srv = ServerProc::start(&[]);
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

/// A UDP stream's verdict reaches the HTML report with its evidence, and the page renders
/// (issue 25: UDP is diagnosed in HTML too).
#[test]
fn udp_verdict_renders_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("udp.html");
    let srv = ServerProc::start(&[]);
    let report = html.display().to_string();
    save(&srv, dir.path(), "udp", &["udp", "-b", "20M", "-l", "1400", "--report", &report]);
    let page = std::fs::read_to_string(&html).unwrap();
    let plots = plots_in(&page);
    assert!(plots > 0, "no plots in {}", html.display());
    let page = check_plots(&html, dir.path(), plots);
    let verdicts = page.split("What limited each result").nth(1).expect("a verdict table");
    let row = verdicts.split("</tr>").find(|r| r.contains("<td>udp 1400</td>")).expect("the udp row");
    assert!(row.contains("client→server"), "{row}");
    // At 20 Mbit/s on loopback the sender's pacing, stated with the rates it rests on.
    assert!(row.contains("limited by") && row.contains("20.0 Mbit/s"), "{row}");
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
