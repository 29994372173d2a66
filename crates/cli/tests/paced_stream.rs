//! `stream -b RATE` (iperf3's `-b` on TCP: each sending stream paced to RATE) against a real
//! `tcplab server` on loopback: forward, `-R` (the server's senders pace) and `-P 2` (each
//! stream at the rate), the target recorded in the result; a bad rate is one error line.
//! A paced 20 Mbit/s stream is a small fraction of what loopback carries even on a busy
//! machine, so the rate it reaches is the schedule's, not the host's.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

use serde_json::Value;
use support::{json_of, stderr, stdout, tcplab, ServerProc};

/// The rate asked for, bit/s, and the tolerance on what each stream reaches.
const RATE: f64 = 20e6;
const TOLERANCE: f64 = 0.05;

/// `stream 127.0.0.1 -b 20M -t 2 EXTRA` against `srv`, its JSON result.
fn paced(srv: &ServerProc, extra: &[&str]) -> Value {
    let port = srv.port();
    let mut args = vec!["stream", "127.0.0.1", "-p", &port, "-b", "20M", "-t", "2", "--no-store", "-J"];
    args.extend_from_slice(extra);
    let out = tcplab(&args);
    assert!(out.status.success(), "{extra:?}: {}", stderr(&out));
    let doc = json_of(&out);
    let t = doc["tests"][0].clone();
    assert_eq!(t["status"], "completed", "{extra:?}: {}", t["error"]);
    assert_eq!(t["spec"]["rate_bps"].as_f64(), Some(RATE), "the target is recorded: {}", t["spec"]);
    t
}

/// Each sending stream's rate as its own end measured it (bytes written over that end's
/// measured time), bit/s.
fn sender_rates(t: &Value) -> Vec<f64> {
    let mut rates = Vec::new();
    for side in [&t["local"], &t["remote"]] {
        let secs = side["measured_s"].as_f64().unwrap_or(0.0);
        for s in side["streams"].as_array().into_iter().flatten().filter(|s| s["role"] == "send") {
            rates.push(s["bytes"].as_f64().unwrap() * 8.0 / secs);
        }
    }
    rates
}

fn near_rate(what: &str, got: f64, want: f64) {
    assert!(
        (got - want).abs() <= TOLERANCE * want,
        "{what}: {:.3} Mbit/s, asked {:.3}",
        got / 1e6,
        want / 1e6
    );
}

/// Each direction's sender and receiver at `streams` × the rate, and each sending stream at
/// the rate.
fn check(t: &Value, streams: usize, what: &str) {
    let dirs = t["summary"]["directions"].as_array().unwrap();
    for d in dirs {
        let want = RATE * streams as f64;
        near_rate(&format!("{what} {} sender", d["direction"]), d["sender_bps"].as_f64().unwrap(), want);
        near_rate(&format!("{what} {} receiver", d["direction"]), d["receiver_bps"].as_f64().unwrap(), want);
    }
    let rates = sender_rates(t);
    assert_eq!(rates.len(), streams * dirs.len(), "{what}: {rates:?}");
    for (i, r) in rates.iter().enumerate() {
        near_rate(&format!("{what} stream {i}"), *r, RATE);
    }
}

#[test]
fn a_paced_stream_reaches_its_rate_both_ways() {
    let srv = ServerProc::start(&[]);
    let t = paced(&srv, &[]);
    assert_eq!(t["summary"]["directions"][0]["direction"], "client→server");
    check(&t, 1, "forward");
    let t = paced(&srv, &["-R"]);
    assert_eq!(t["summary"]["directions"][0]["direction"], "server→client");
    check(&t, 1, "reverse (the server paces)");
}

#[test]
fn with_two_streams_each_stream_is_paced_to_the_rate() {
    let srv = ServerProc::start(&[]);
    check(&paced(&srv, &["-P", "2"]), 2, "-P 2");
    check(&paced(&srv, &["-P", "2", "-R"]), 2, "-P 2 -R");
}

#[test]
fn a_paced_byte_count_ends_at_its_last_write_not_a_pacing_step_later() {
    let srv = ServerProc::start(&[]);
    // 1 MiB at 20 Mbit/s: 8 writes of 128 KiB over 0.42 s; a wait for a ninth write that the
    // budget will not allow would add 52 ms (12 %) to the sender's time.
    for extra in [&["-n", "1M"][..], &["-n", "1M", "-R"][..]] {
        let t = paced(&srv, extra);
        assert_eq!(t["summary"]["directions"][0]["sender_bytes"], 1 << 20, "{extra:?}");
        check(&t, 1, &format!("{extra:?}"));
    }
}

#[test]
fn text_output_says_the_stream_was_paced_and_at_what_rate() {
    let srv = ServerProc::start(&[]);
    let port = srv.port();
    let out = tcplab(&["stream", "127.0.0.1", "-p", &port, "-b", "20M", "-t", "1", "--no-store"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let first = text.lines().next().unwrap_or("");
    assert!(first.ends_with("· paced at 20.0 Mbit/s per stream"), "{first}");
    assert!(text.contains("client→server (1 stream, paced at 20.0 Mbit/s)"), "{text}");
}

#[test]
fn a_bad_rate_is_one_error_line_and_exit_2() {
    for bad in ["fast", "10Mbps", "0.5", "99999999999999G", ""] {
        let out = tcplab(&["stream", "127.0.0.1", "-p", "9", "-b", bad, "-t", "1", "--no-store"]);
        assert_eq!(out.status.code(), Some(2), "-b '{bad}'");
        let err = stderr(&out);
        let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error")).collect();
        assert_eq!(errors.len(), 1, "-b '{bad}': {err}");
        assert!(errors[0].contains("--rate") && errors[0].contains(&format!("'{bad}'")), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

fn root() -> bool {
    let out = std::process::Command::new("id").arg("-u").output().expect("id runs");
    let is_root = String::from_utf8_lossy(&out.stdout).trim() == "0";
    if !is_root {
        eprintln!("skipped: the link emulator needs root (network namespaces, TUN devices)");
    }
    is_root
}

#[test]
fn over_an_emulated_path_the_paced_stream_stays_below_the_link_at_its_rate() {
    if !root() {
        return;
    }
    let args = ["stream", "--path", "rate=100M,delay=5ms", "-b", "20M", "-t", "2", "--no-store", "-J"];
    let out = tcplab(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let t = json_of(&out)["tests"][0].clone();
    assert_eq!(t["spec"]["rate_bps"].as_f64(), Some(RATE));
    check(&t, 1, "--path rate=100M");
}
