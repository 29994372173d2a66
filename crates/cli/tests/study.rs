//! `tcplab study`: the list, a bad name, and every study end to end on emulated paths in a
//! trimmed form (`--quick -t 1`: the quick design, one second per test, byte-limited tests
//! cut to 1 MiB) through the same code path as `--quick`, with its report rendered in
//! headless Chromium: the comparison table, the overlays of the paper's numbers and the
//! archived run. The emulated paths need root; without it the tests say why they skipped.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

use std::process::Command;

use support::{chromium, stderr, stdout, tcplab, ServerProc};

fn root() -> bool {
    let out = Command::new("id").arg("-u").output().expect("id runs");
    let is_root = String::from_utf8_lossy(&out.stdout).trim() == "0";
    if !is_root {
        eprintln!(
            "skipped: tcplab study runs on emulated paths, which need root (network namespaces, TUN devices)"
        );
    }
    is_root
}

#[test]
fn list_names_the_five_studies_with_runtimes() {
    let out = tcplab(&["study", "list"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    for (name, seed) in [
        ("tcp-atm-2000", "000"),
        ("nic-eval", "001"),
        ("atm-loss", "002"),
        ("slac-stacks", "003"),
        ("segment-flow", "004"),
    ] {
        let line =
            text.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("{name} missing:\n{text}"));
        assert!(line.contains(seed) && line.contains(" s ") && line.contains("yes"), "{line}");
        assert!(line.contains(" not run "), "no pending count: {line}");
    }
}

#[test]
fn an_unknown_study_is_one_error_line() {
    let out = tcplab(&["study", "tcp-atm-1999"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no study `tcp-atm-1999`") && err.contains("segment-flow"), "{err}");
}

/// Runs `study NAME --quick -t 1`, checks the archive, the text table and the report;
/// returns the text (empty when skipped without root).
fn trimmed(name: &str, expect_rows: &[&str], plots: usize) -> String {
    if !root() {
        return String::new();
    }
    let dir = tempfile::tempdir().unwrap();
    let (html, db) = (dir.path().join("study.html"), dir.path().join("study.db"));
    let out = tcplab(&[
        "study",
        name,
        "--quick",
        "-t",
        "1",
        "-o",
        html.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
    ]);
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(out.status.success(), "exit {:?}\nstdout: {text}\nstderr: {err}", out.status);
    assert!(
        err.contains(&format!("study {name} (quick mode)")) && err.contains("stored as run 1 (~"),
        "{err}"
    );
    // stdout is a pipe here: one progress line per finished case.
    let total = err.lines().filter(|l| l.starts_with('[') && l.contains("] ")).count();
    assert!(total >= 2 && err.contains("[1/"), "no progress lines: {err}");
    for row in expect_rows {
        assert!(text.contains(row), "no `{row}` row in:\n{text}");
    }
    assert!(text.contains("measured/paper") && text.contains("measured/model"), "{text}");
    // -t 1 runs each case once: no figure can be "reproduced" without an interval.
    assert!(text.contains("status of every figure") && text.contains("pending: "), "{text}");
    // (A value the model computes, or one reading of the set-up such as a trace's window, can.)
    for line in text.lines().filter(|l| l.contains("  reproduced  ")) {
        assert!(
            line.contains("computed") || line.contains("one reading of the set-up"),
            "reproduced from one run: {line}"
        );
    }
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains(&format!("data-plots=\"{plots}\"")), "plots in {}", html.display());
    assert!(page.contains(">paper<") || page.contains("paper:"), "no paper overlay in the plots");
    assert!(page.contains("tcplab measured") || page.contains("tcplab,"), "no measured series");
    let show = tcplab(&["show", "1", "--db", db.to_str().unwrap()]);
    assert!(show.status.success(), "{}", stderr(&show));
    chromium::assert_renders(&html, dir.path(), plots);
    text
}

#[test]
fn tcp_atm_2000_runs_end_to_end() {
    let text = trimmed(
        "tcp-atm-2000",
        &[
            "Table 1",
            "ceiling MTU 9180 vs peak",
            "TCP_RR 128/8192",
            "P100 → Sun, peak",
            "Sun → PPro200, peak",
            "slow client (2 % of a CPU), TCP_RR 1/1",
            "slow client (2 % of a CPU), TCP_RR 128/8192",
        ],
        5,
    );
    // Figures 8 and 9 as curves over the matrix's message sizes (8K and 64K in --quick).
    for figure in ["Figure 8 ", "Figure 9 "] {
        if let Some(line) = text.lines().find(|l| l.starts_with(figure) && l.contains("receiver")) {
            assert!(!line.contains("  not run  ") && line.contains("65536 B"), "{line}");
        } else {
            assert!(text.is_empty(), "no {figure}status: {text}");
        }
    }
    // Figure 10 ran (the slow client's request/response stage): a computed status, not "not run".
    if let Some(line) = text.lines().find(|l| l.starts_with("Figure 10 ") && l.contains("request/responses"))
    {
        assert!(!line.contains("  not run  ") && line.contains("slow client 1/1"), "{line}");
    } else {
        assert!(text.is_empty(), "no Figure 10 status: {text}");
    }
}

/// Seed 000's matrix between real hosts: two servers on loopback as an inventory, the rest
/// of the study against one of them (no root needed: nothing is emulated).
#[test]
fn tcp_atm_2000_matrix_runs_between_inventory_hosts() {
    let (a, b) = (ServerProc::start(&["--allow-third-party"]), ServerProc::start(&["--allow-third-party"]));
    let dir = tempfile::tempdir().unwrap();
    let inv = dir.path().join("hosts.toml");
    let text = format!(
        "[[host]]\nname = \"alpha\"\naddress = \"127.0.0.1:{}\"\n[[host]]\nname = \"beta\"\naddress = \"127.0.0.1:{}\"\n",
        a.port, b.port
    );
    std::fs::write(&inv, text).unwrap();
    let db = dir.path().join("s.db");
    let out = tcplab(&[
        "study",
        "tcp-atm-2000",
        "127.0.0.1",
        "-p",
        &a.port(),
        "--inventory",
        inv.to_str().unwrap(),
        "--quick",
        "-t",
        "1",
        "--db",
        db.to_str().unwrap(),
    ]);
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(out.status.success(), "exit {:?}\nstdout: {text}\nstderr: {err}", out.status);
    for row in ["alpha → beta, peak", "beta → alpha, peak"] {
        let line = text.lines().find(|l| l.contains(row)).unwrap_or_else(|| panic!("no `{row}` in:\n{text}"));
        let fields: Vec<&str> = line.split_whitespace().collect();
        let measured: f64 = fields[fields.len() - 4].parse().unwrap_or(0.0);
        assert!(measured > 0.0, "the cell was not measured: {line}");
    }
    assert!(!text.contains("P100 → Sun, peak"), "emulated cells ran beside real ones:\n{text}");
    assert!(text.contains("slow sender") && text.contains("not run against a real HOST"), "{text}");
}

#[test]
fn an_inventory_needs_a_study_with_a_matrix() {
    let out = tcplab(&["study", "atm-loss", "--inventory", "/nonexistent/hosts.toml", "--quick"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--inventory is for tcp-atm-2000"), "{err}");
}

#[test]
fn nic_eval_runs_end_to_end() {
    let rows = [
        "Interphase ATM 5515 FTP Transmit",
        "3COM595 100 Base-T TTCP Receive",
        "ttcp transmit, window 2048, LANE 1500-byte packets",
        "ttcp transmit, window 32768, LANE 9180-byte packets",
    ];
    let text = trimmed("nic-eval", &rows, 3);
    // Appendix C and Figure 6 ran: computed statuses, not "not run".
    for figure in ["Appendix C ", "Figure 6 "] {
        if let Some(line) = text.lines().find(|l| l.starts_with(figure) && l.contains(" > ")) {
            assert!(!line.contains("  not run  "), "{line}");
        } else {
            assert!(text.is_empty(), "no {figure}status: {text}");
        }
    }
}

#[test]
fn atm_loss_runs_end_to_end() {
    let rows =
        ["TCP bulk, OC-3c CLIP", "UDP loss to a slow receiver", "UDP 8K, OC-3c CLIP", "AAL5 CS-PDUs lost"];
    let text = trimmed("atm-loss", &rows, 5);
    // Figures 3 and 8 as curves: computed statuses, not "not run".
    for (figure, says) in [("Figure 3 ", "cell bytes"), ("Figure 8 ", "round trip")] {
        if let Some(line) = text.lines().find(|l| l.starts_with(figure) && l.contains(says)) {
            assert!(!line.contains("  not run  "), "{line}");
        } else {
            assert!(text.is_empty(), "no {figure}status: {text}");
        }
    }
    // Figure 11 from the emulator's PDU count: a computed status with its Wilson interval.
    if let Some(line) = text.lines().find(|l| l.starts_with("Figure 11 ") && l.contains("Wilson")) {
        assert!(!line.contains("  not run  ") && line.contains("PDUs lost to cell loss"), "{line}");
    } else {
        assert!(text.is_empty(), "no Figure 11 status: {text}");
    }
}

#[test]
fn slac_stacks_runs_end_to_end() {
    trimmed(
        "slac-stacks",
        &[
            "Stock TCP (reno), one 1-s run",
            "separate 1-s runs, sd over runs",
            "probe RTT p95",
            "ranking (who wins)",
            "Fast TCP (no Linux module)",
        ],
        2,
    );
}

#[test]
fn segment_flow_runs_end_to_end() {
    // Plots: the window curves, Figure 15's bars, Figure 15 (a)'s curves over user data (the
    // 4K and 8K windows have three sizes each in --quick), Figure 4, and three panels each
    // (segment sizes, outstanding against the window, a zoomed slice) of Figures 9 and 10
    // and of w4k-u4096 the Linux way.
    let text = trimmed(
        "segment-flow",
        &[
            "window 52428, 8192-byte user data",
            "w4k-u2048 above w4k-u4096",
            "total receive time per segment, 9136 bytes",
            "w32k, user data 512, read 8192",
        ],
        13,
    );
    if text.is_empty() {
        return;
    }
    // Every figure the study builds has a computed status; none is left "not run".
    for figure in ["Figure 2 ", "Figure 3 ", "Figure 8 ", "Figure 14 ", "Figures 6, 7, 11, 15 (c)"] {
        let line = text.lines().find(|l| l.starts_with(figure)).unwrap_or_else(|| panic!("{figure}: {text}"));
        assert!(!line.contains("  not run  "), "{line}");
    }
    // One run each (-t 1): the fixed-buffer order has no interval.
    assert!(text.lines().any(|l| l.starts_with("Figure 8 ") && l.contains("not measurable here")), "{text}");
}
