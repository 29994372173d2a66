//! End to end for `tcplab file`: every send mode, receive mode and sink on loopback, one
//! transfer over an emulated path (root), a transfer corrupted on purpose, `--no-verify`,
//! refusals, and the temporary files gone afterwards (also after Ctrl-C).
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

mod support;

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{command, json_of, stderr, tcplab, ServerProc};

fn root() -> bool {
    let out = Command::new("id").arg("-u").output().unwrap();
    let is_root = String::from_utf8_lossy(&out.stdout).trim() == "0";
    if !is_root {
        eprintln!("skipped: emulated paths need root (network namespaces, TUN devices)");
    }
    is_root
}

/// Runs `tcplab file` with `args` and `-J -i 0`; returns the exit code and the one result.
fn file(args: &[&str]) -> (Option<i32>, Value) {
    let mut all = vec!["file"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-J", "-i", "0"]);
    let out = tcplab(&all);
    let doc = json_of(&out);
    assert!(doc["tests"][0].is_object(), "{args:?}: {}", stderr(&out));
    (out.status.code(), doc["tests"][0].clone())
}

fn outcome(t: &Value) -> &str {
    t["summary"]["file"]["verification"]["outcome"].as_str().unwrap_or("")
}

fn leftovers(dir: &Path, pid: u32) -> Vec<String> {
    let prefix = format!("tcplab-file-{pid}-");
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().to_string()))
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

#[test]
fn every_send_mode_receive_mode_and_sink_moves_the_file_intact() {
    let srv = ServerProc::start(&[]);
    let port = srv.port();
    let cases: [&[&str]; 6] = [
        &["--send", "write", "--sink", "page-cache"],
        &["--send", "sendfile", "--sink", "direct"],
        &["--send", "splice", "--sink", "fsync"],
        &["--send", "zerocopy", "--sink", "null"],
        &["--send", "write", "--recv", "skip-copy"],
        &["--send", "sendfile", "-l", "100000", "--recv-len", "7000"],
    ];
    for case in cases {
        let mut args = vec!["127.0.0.1", "-p", &port, "--size", "3M"];
        args.extend_from_slice(case);
        let (code, t) = file(&args);
        assert_eq!(code, Some(0), "{case:?}: {t}");
        let f = &t["summary"]["file"];
        assert_eq!(f["size"], 3 << 20, "{case:?}");
        assert_eq!(f["receiver"]["bytes"], 3 << 20, "{case:?}");
        assert_eq!(f["sender"]["mode"], case[1], "{case:?}");
        let expected = if case.contains(&"skip-copy") { "not-checked" } else { "match" };
        assert_eq!(outcome(&t), expected, "{case:?}: {f}");
        assert!(t["summary"]["headline"]["value"].as_f64().unwrap() > 0.0);
        // M per mode wherever CPU time was seen: /proc/stat counts in 10 ms ticks, so a 3 MiB
        // transfer of a few ms may show none, and then M is unknown, never a made-up 0.
        let util = t["remote"]["cpu"]["util_pct"].as_f64().unwrap_or(0.0);
        let m = t["summary"]["remote_cost"]["figure_of_merit"].as_f64();
        assert_eq!(m.is_some_and(|m| m > 0.0), util > 0.0, "M per mode ({util}% busy): {t}");
    }
    assert_eq!(
        leftovers(&std::env::temp_dir(), srv.pid()),
        Vec::<String>::new(),
        "the server's sink files are removed"
    );
}

#[test]
fn zero_copy_completions_are_counted_and_loopback_copies_are_called_out() {
    let srv = ServerProc::start(&[]);
    let (code, t) = file(&["127.0.0.1", "-p", &srv.port(), "--size", "2M", "--send", "zerocopy"]);
    assert_eq!(code, Some(0));
    let f = &t["summary"]["file"];
    let zc = &f["sender"]["zerocopy"];
    let sends = zc["sends"].as_u64().unwrap();
    assert!(sends >= 16, "2 MB in 128 KB sends: {zc}");
    assert_eq!(zc["completed"], sends);
    assert_eq!(zc["copied"], sends, "loopback delivers by copying");
    assert_eq!(f["zero_copied_frac"], 0.0);
    assert!(f["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("loopback")));
}

#[test]
fn the_client_receives_with_reverse_into_its_own_directory_and_removes_the_file() {
    let srv = ServerProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_string_lossy().to_string();
    for sink in ["direct", "fsync"] {
        let (code, t) =
            file(&["127.0.0.1", "-p", &srv.port(), "-R", "--size", "1M", "--sink", sink, "--dir", &d]);
        assert_eq!(code, Some(0), "{t}");
        assert_eq!(outcome(&t), "match");
        assert_eq!(t["summary"]["file"]["receiver"]["sink"], sink);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "the sink file is removed");
    }
}

/// The sender hashes its source before the start; a source that changes while it is sent
/// therefore arrives as other bytes than were hashed. A thread rewrites the last bytes of
/// the `--src` file (a counter, so never back to an earlier value) for the whole run: what
/// the sender reads at the end differs from what it hashed, and the receiver's hash must
/// disagree — the test fails with exit code 2 and a verification error that blames the
/// source, not the transfer.
#[test]
fn a_file_changed_during_the_transfer_is_detected_and_blamed_on_the_source() {
    let srv = ServerProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("src.bin");
    std::fs::write(&path, vec![0x5Au8; 48 << 20]).unwrap();
    // On a loaded machine the writer thread may not run at all during one transfer, which
    // then rightly verifies; a few attempts make sure a change does land mid-transfer.
    let detected = (0..4).any(|_| changed_during_one_transfer(&srv, &path));
    assert!(detected, "a source rewritten during four transfers was never found corrupted");
}

/// One transfer of `path` while a thread rewrites its last bytes; true when the change was
/// detected (exit 2, a verification error), false when no change landed (exit 0, a match).
fn changed_during_one_transfer(srv: &ServerProc, path: &std::path::Path) -> bool {
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
            let mut n = 0u64;
            while !done.load(Ordering::Relaxed) {
                n += 1;
                f.seek(SeekFrom::End(-8)).unwrap();
                f.write_all(&n.to_le_bytes()).unwrap();
            }
        });
        let (code, t) = file(&["127.0.0.1", "-p", &srv.port(), "--src", &path.to_string_lossy()]);
        done.store(true, Ordering::Relaxed);
        if outcome(&t) == "match" {
            assert_eq!(code, Some(0), "{t}");
            return false;
        }
        assert_eq!(code, Some(2), "{t}");
        assert_eq!(outcome(&t), "mismatch", "{t}");
        assert_eq!(t["error"]["code"], "verification");
        let message = t["error"]["message"].as_str().unwrap();
        assert!(message.starts_with("the source file changed while it was being sent"), "{t}");
        assert!(!message.contains("corrupted"), "the transfer is not to blame: {t}");
        true
    })
}

#[test]
fn no_verify_hashes_nothing_and_still_checks_the_byte_count() {
    let srv = ServerProc::start(&[]);
    let port = srv.port();
    for case in [["--send", "sendfile", "--sink", "null"], ["--send", "write", "--sink", "page-cache"]] {
        let mut args = vec!["127.0.0.1", "-p", &port, "--size", "3M", "--no-verify"];
        args.extend_from_slice(&case);
        let (code, t) = file(&args);
        assert_eq!(code, Some(0), "{case:?}: {t}");
        assert_eq!(t["spec"]["options"]["verify"], false, "{t}");
        let f = &t["summary"]["file"];
        assert_eq!(f["verification"], serde_json::json!({"outcome": "not-checked", "why": "--no-verify"}));
        assert_eq!(f["receiver"]["bytes"], 3 << 20, "{case:?}");
        for end in ["sender", "receiver"] {
            assert!(f[end]["sha256"].is_null(), "{end} hashed nothing: {f}");
        }
        assert_eq!(f["receiver"]["hash_s"], 0.0, "{f}");
    }
    // Shown as such to people.
    let out = tcplab(&["file", "127.0.0.1", "-p", &port, "--size", "1M", "--no-verify", "-i", "0"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("verification: not verified: --no-verify"));
    // A transfer cut short still fails: a sparse 4 GiB source and a 0.1 s cap (loopback would
    // need over 300 Gbit/s to finish).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sparse.bin");
    std::fs::File::create(&path).unwrap().set_len(4 << 30).unwrap();
    let src = path.to_string_lossy().to_string();
    let (code, t) =
        file(&["127.0.0.1", "-p", &port, "--src", &src, "--send", "sendfile", "--no-verify", "-t", "0.1"]);
    assert_eq!(code, Some(2), "{t}");
    assert_eq!(t["error"]["code"], "verification", "{t}");
    assert!(t["error"]["message"].as_str().unwrap().contains("did not arrive whole"), "{t}");
}

#[test]
fn modes_that_cannot_work_refuse_with_one_line() {
    let srv = ServerProc::start(&[]);
    let port = srv.port();
    // tmpfs takes O_DIRECT since Linux 6.6; ramfs does not. Mounting one needs root.
    if root() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_string_lossy().to_string();
        assert!(Command::new("mount").args(["-t", "ramfs", "none", &d]).status().unwrap().success());
        let out = tcplab(&[
            "file",
            "127.0.0.1",
            "-p",
            &port,
            "-R",
            "--size",
            "1M",
            "--sink",
            "direct",
            "--dir",
            &d,
        ]);
        let _ = Command::new("umount").arg(&d).status();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        let line = err.lines().find(|l| l.starts_with("error:")).unwrap_or_default();
        assert!(line.contains("does not support O_DIRECT"), "{err}");
    }
    let out = tcplab(&["file", "127.0.0.1", "-p", &port, "--recv", "skip-copy", "--sink", "fsync"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: invalid --sink: sink fsync needs the data"), "{err}");
}

#[test]
fn seed_001s_file_crosses_an_emulated_path() {
    if !root() {
        return;
    }
    let (code, t) =
        file(&["--path", "ethernet-100", "--size", "11M", "--send", "sendfile", "--sink", "fsync"]);
    assert_eq!(code, Some(0), "{t}");
    assert_eq!(outcome(&t), "match");
    let bps = t["summary"]["headline"]["value"].as_f64().unwrap();
    assert!(bps < 100e6 && bps > 30e6, "11 MB over 100 Mbit/s Ethernet: {bps}");
}

#[test]
fn ctrl_c_keeps_the_result_and_removes_the_sink_file() {
    if !root() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_string_lossy().to_string();
    let args =
        ["file", "--path", "rate=20mbit", "-R", "--size", "64M", "--sink", "page-cache", "--dir", &d, "-J"];
    let child = command().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let started = Instant::now();
    while std::fs::read_dir(dir.path()).unwrap().count() == 0 && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let out = child.wait_with_output().unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(doc["tests"][0]["status"], "interrupted", "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "the sink file is removed on Ctrl-C");
}

#[test]
fn stream_takes_the_same_copy_avoiding_modes() {
    let srv = ServerProc::start(&[]);
    let port = srv.port();
    for (flags, option) in [(["-Z"], "zerocopy"), (["--skip-rx-copy"], "skip-rx-copy")] {
        for reverse in [false, true] {
            let mut args = vec!["stream", "127.0.0.1", "-p", &port, "-n", "20M", "-i", "0", "-J"];
            args.extend_from_slice(&flags);
            if reverse {
                args.push("-R");
            }
            let out = tcplab(&args);
            assert!(out.status.success(), "{args:?}: {}", stderr(&out));
            let t = &json_of(&out)["tests"][0];
            assert_eq!(t["spec"]["options"][option], true, "{t}");
            assert_eq!(t["summary"]["directions"][0]["receiver_bytes"], 20 << 20, "{args:?}");
        }
    }
    let help = String::from_utf8_lossy(&tcplab(&["stream", "--help"]).stdout).to_string();
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(help.contains("Not iperf3's -Z, which is sendfile"), "{help}");
}

/// `stream -Z --skip-rx-copy` says which modes ran (live header and summary), and counts the
/// zero-copy completions the kernel copied after all, at whichever end sent (on loopback: all).
#[test]
fn stream_says_its_copy_modes_and_what_the_kernel_copied() {
    let srv = ServerProc::start(&[]);
    let port = srv.port();
    let base = ["stream", "127.0.0.1", "-p", &port, "-n", "8M", "-Z", "--skip-rx-copy"];
    let out = tcplab(&base);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{}", stderr(&out));
    let header = text.lines().next().unwrap_or_default();
    assert!(header.starts_with("tcplab stream →") && header.ends_with("· skip-rx-copy, zerocopy"), "{text}");
    assert!(
        text.contains("── stream · tcp-stream · 127.0.0.1:") && text.contains("· skip-rx-copy, zerocopy ──")
    );
    for reverse in [false, true] {
        let mut args = base.to_vec();
        args.extend(["-i", "0", "-J"]);
        if reverse {
            args.push("-R");
        }
        let out = tcplab(&args);
        let figures = json_of(&out)["tests"][0]["summary"]["figures"].clone();
        let count = |label: &str| {
            let f = figures.as_array().unwrap().iter().find(|f| f["label"] == label);
            f.unwrap_or_else(|| panic!("no {label}: {figures}"))["value"]["value"].as_u64().unwrap()
        };
        let (sends, copied) = (count("MSG_ZEROCOPY sends"), count("completions the kernel copied after all"));
        assert!(sends > 0 && copied <= count("MSG_ZEROCOPY completions"), "{figures}");
        // Loopback has no scatter-gather device: the kernel copies every completed send.
        assert_eq!(copied, count("MSG_ZEROCOPY completions"), "reverse {reverse}: {figures}");
    }
}

/// A repeated file test shows its own times as the mean over the runs with their spread,
/// not the first run's beside averaged goodput (issue 27).
#[test]
fn repeats_average_the_file_figures_not_copy_the_first_run() {
    let srv = ServerProc::start(&[]);
    let port = srv.port();
    let args = ["127.0.0.1", "-p", &port, "--size", "2M", "-I", "99,1", "--iterations", "3,3"];
    let (code, t) = file(&args);
    assert_eq!(code, Some(0), "{t}");
    let runs = t["repetition"]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3, "{t}");
    let figure = |s: &Value, label: &str| {
        s["figures"].as_array().unwrap().iter().find(|f| f["label"] == label).cloned().unwrap_or(Value::Null)
    };
    let label = "receiver time in socket calls";
    let each: Vec<f64> =
        runs.iter().map(|r| figure(&r["summary"], label)["value"]["value"].as_f64().unwrap()).collect();
    let combined = figure(&t["summary"], label);
    let mean = each.iter().sum::<f64>() / 3.0;
    assert!(
        (combined["value"]["value"].as_f64().unwrap() - mean).abs() <= 1e-9 * mean.max(1.0),
        "{combined} {each:?}"
    );
    assert_eq!(combined["spread"]["runs"], 3, "{combined}");
    assert_eq!(figure(&t["summary"], "verification")["per_run"], Value::Null, "all runs verified alike");
    assert!(t["summary"].get("file").is_none(), "one run's file section beside the means: {t}");
}
