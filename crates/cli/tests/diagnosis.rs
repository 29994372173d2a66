//! Diagnosis end to end: provoke a limit on loopback with the real binary against a real
//! server and check that the result names it as the primary cause — a tiny receive buffer,
//! tiny writes with TCP_NODELAY, and a receiver held to 5% of a CPU by a cgroup quota.
//! Also `--link` ("% of theoretical") and the loopback baseline of `tcplab run`.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use support::{command, ServerProc};

/// Tests of this file run one at a time: each measures CPU, which the others would disturb.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn stream(srv: &ServerProc, extra: &[&str]) -> Value {
    stream_for(srv, "2", extra)
}

fn stream_for(srv: &ServerProc, secs: &str, extra: &[&str]) -> Value {
    let port = srv.port();
    let mut args = vec!["stream", "127.0.0.1", "-p", &port, "-t", secs, "-i", "0", "--json"];
    args.extend_from_slice(extra);
    let out: Output = command().args(&args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The first direction's diagnosis of the first test.
fn diagnosis(v: &Value) -> &Value {
    &v["tests"][0]["diagnosis"][0]
}

fn primary(v: &Value) -> String {
    diagnosis(v)["primary"]["cause"].as_str().unwrap_or("none").to_string()
}

#[test]
fn tiny_receive_buffers_are_a_receive_window_limit() {
    let _one_at_a_time = serial();
    let srv = ServerProc::start(&[]);
    // A 4 KiB receive buffer is both a window limit and (with Nagle on, two segments of the
    // clamped MSS) stop-and-go; which one weighs more depends on TCP_INFO's rwnd-limited
    // share of the moment. Either names the receiver's buffer.
    let names_the_receive_buffer = |v: &Value, flag: &str| {
        let p = &diagnosis(v)["primary"];
        let cause = primary(v);
        assert!(cause == "receive-window" || cause == "stop-and-go", "{:#}", diagnosis(v));
        let advice = p["advice"].as_str().unwrap_or("");
        assert!(advice.contains(flag) || p["evidence"].as_str().unwrap_or("").contains("rcvbuf"), "{p:#}");
    };
    let v = stream(&srv, &["--rcvbuf", "4K", "--remote-rcvbuf", "4K"]);
    names_the_receive_buffer(&v, "--remote-rcvbuf");
    let reverse = stream(&srv, &["-R", "--rcvbuf", "4K", "--remote-rcvbuf", "4K"]);
    names_the_receive_buffer(&reverse, "--rcvbuf");
}

#[test]
fn tiny_writes_with_nodelay_are_an_application_limit() {
    let _one_at_a_time = serial();
    let srv = ServerProc::start(&[]);
    let v = stream(&srv, &["-l", "100", "-N"]);
    assert_eq!(primary(&v), "application", "{:#}", diagnosis(&v));
    let evidence = diagnosis(&v)["primary"]["evidence"].as_str().unwrap();
    assert!(evidence.contains("writes of 100 B") && evidence.contains("TCP_NODELAY"), "{evidence}");
}

#[test]
fn link_results_carry_their_share_of_theoretical() {
    let _one_at_a_time = serial();
    let srv = ServerProc::start(&[]);
    let v = stream(&srv, &["--link", "ethernet:1t"]);
    let test = &v["tests"][0];
    assert_eq!(test["reference"]["kind"], "link");
    assert!((test["reference"]["limit_bps"].as_f64().unwrap() / 1e12 - 0.9415).abs() < 1e-3);
    let share = test["summary"]["directions"][0]["of_reference"].as_f64().unwrap();
    let goodput = test["summary"]["directions"][0]["receiver_bps"].as_f64().unwrap();
    assert!((share - goodput / test["reference"]["limit_bps"].as_f64().unwrap()).abs() < 1e-9);
    let text = command()
        .args(["stream", "127.0.0.1", "-p", &srv.port(), "-t", "1", "-i", "0", "--link", "ethernet:1t"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    assert!(text.contains("% of theoretical") && text.contains("diagnosis client→server"), "{text}");
    let bad =
        command().args(["stream", "127.0.0.1", "-p", &srv.port(), "--link", "atm:oc9"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&bad.stderr).trim_end().lines().count(), 1);
}

#[test]
fn run_on_loopback_compares_with_its_own_baseline() {
    let _one_at_a_time = serial();
    let out = command().args(["run", "-t", "1", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tests = v["tests"].as_array().unwrap();
    assert_eq!(tests[0]["reference"]["kind"], "loopback-baseline");
    assert!((tests[0]["summary"]["directions"][0]["of_reference"].as_f64().unwrap() - 1.0).abs() < 1e-9);
    assert!(tests[1]["summary"]["directions"][0]["of_reference"].as_f64().unwrap() > 0.0);
    assert!(tests.iter().take(2).all(|t| t["diagnosis"].as_array().is_some_and(|d| d.len() == 1)));
    // Request/response and UDP are diagnosed too: one verdict for the transactions, one per
    // UDP direction.
    assert!(tests.iter().skip(2).all(|t| t["diagnosis"].as_array().is_some_and(|d| d.len() == 1)), "{v:#}");
}

/// A CPU cgroup created for one test (v1 `cpu` controller or v2 with `cpu` enabled), removed
/// on drop once its processes are gone.
struct CpuCgroup {
    dir: PathBuf,
    v2: bool,
}

impl CpuCgroup {
    /// A cgroup limited to `pct` % of one CPU, or why not.
    fn create(pct: u64) -> Result<CpuCgroup, String> {
        // SAFETY-free check through id(1): the tests run as root in CI.
        let uid = Command::new("id").arg("-u").output().map_err(|e| e.to_string())?;
        if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
            return Err("not root".into());
        }
        let name = format!("tlm-diag-{}", std::process::id());
        let v1 = Path::new("/sys/fs/cgroup/cpu");
        let v2_ok =
            std::fs::read_to_string("/sys/fs/cgroup/cgroup.subtree_control").is_ok_and(|s| s.contains("cpu"));
        let (dir, v2) = if v1.join("cpu.cfs_quota_us").exists() {
            (v1.join(&name), false)
        } else if v2_ok {
            (Path::new("/sys/fs/cgroup").join(&name), true)
        } else {
            return Err("no cgroup CPU controller".into());
        };
        std::fs::create_dir(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        let group = CpuCgroup { dir, v2 };
        let quota_us = 100_000 * pct / 100;
        let write = |file: &str, text: String| {
            std::fs::write(group.dir.join(file), text).map_err(|e| format!("{file}: {e}"))
        };
        if group.v2 {
            write("cpu.max", format!("{quota_us} 100000"))?;
        } else {
            write("cpu.cfs_period_us", "100000".into())?;
            write("cpu.cfs_quota_us", quota_us.to_string())?;
        }
        Ok(group)
    }

    fn add(&self, pid: u32) {
        std::fs::write(self.dir.join("cgroup.procs"), pid.to_string()).unwrap();
    }
}

impl Drop for CpuCgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

#[test]
fn a_receiver_held_by_a_cpu_quota_is_a_receiver_cpu_limit() {
    let _one_at_a_time = serial();
    let group = match CpuCgroup::create(5) {
        Ok(g) => g,
        Err(why) => {
            eprintln!("skipped: cannot throttle the receiver with a cgroup CPU quota ({why})");
            return;
        }
    };
    let srv = ServerProc::start(&[]);
    group.add(srv.pid());
    let v = stream_for(&srv, "3", &[]);
    drop(srv);
    let cpu = &v["tests"][0]["remote"]["cpu"];
    assert_eq!(primary(&v), "receiver-cpu", "{:#}\nserver CPU: {cpu:#}", diagnosis(&v));
    let evidence = diagnosis(&v)["primary"]["evidence"].as_str().unwrap();
    assert!(evidence.contains("quota"), "{evidence}");
    drop(group);
}

/// Issue 25: an interrupted stream keeps every warning a complete one has (on loopback, the
/// shared host) and is diagnosed from what it measured: no loss bound on loopback.
#[test]
fn an_interrupted_stream_keeps_its_warnings() {
    let _one_at_a_time = serial();
    let srv = ServerProc::start(&[]);
    let port = srv.port();
    let child = command()
        .args(["stream", "127.0.0.1", "-p", &port, "-t", "20", "-i", "0", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(2));
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let out = child.wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let t = &v["tests"][0];
    assert_eq!(t["status"], "interrupted", "{t:#}");
    let kinds: Vec<&str> =
        t["warnings"].as_array().unwrap().iter().filter_map(|w| w["kind"].as_str()).collect();
    assert!(kinds.contains(&"same-host"), "{kinds:?}");
    let causes = t["diagnosis"].to_string();
    assert!(!causes.contains("congestion") && !causes.contains("Mathis"), "{causes}");
}

/// Issue 25: request/response and UDP results are diagnosed in the text output too.
#[test]
fn transactions_and_datagrams_get_a_verdict() {
    let _one_at_a_time = serial();
    let srv = ServerProc::start(&[]);
    let port = srv.port();
    for args in [["rr", "-r", "1,1"], ["udp", "-b", "20M"]] {
        let mut all = vec![args[0], "127.0.0.1", "-p", &port, "-t", "1", "--no-store"];
        all.extend_from_slice(&args[1..]);
        let out = command().args(&all).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(out.status.success(), "{all:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(text.contains("  diagnosis ") && !text.contains("not identified"), "{text}");
    }
}
