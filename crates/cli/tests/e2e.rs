//! End to end: the real `tcplab` binary against a real `tcplab server` on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{command, json_of, stderr, stdout, tcplab, ServerProc};

fn client(test: &str, srv: &ServerProc, extra: &[&str]) -> Output {
    let port = srv.port();
    let mut args = vec![test, "127.0.0.1", "-p", &port];
    args.extend_from_slice(extra);
    tcplab(&args)
}

fn first_test(v: &Value) -> &Value {
    &v["tests"][0]
}

#[test]
fn stream_forward_json_moves_bytes_and_reports_both_ends() {
    let srv = ServerProc::start(&[]);
    let out = client("stream", &srv, &["-t", "1", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json_of(&out);
    let t = first_test(&v);
    assert_eq!(t["status"], "completed");
    let d = &t["summary"]["directions"][0];
    assert_eq!(d["direction"], "client→server");
    assert!(d["receiver_bytes"].as_u64().unwrap() > 0);
    assert_eq!(d["sender_bytes"], d["receiver_bytes"], "every byte sent must be received");
    assert!(t["local"]["cpu"]["cpus"].as_u64().unwrap() >= 1);
    assert!(t["remote"]["cpu"]["util_pct"].as_f64().is_some());
    assert!(t["summary"]["local_cost"]["service_demand_us"].as_f64().unwrap() > 0.0);
    assert!(v["remote_host"]["kernel"].as_str().unwrap().starts_with("Linux"));
}

#[test]
fn stream_reverse_parallel_and_bidir() {
    let srv = ServerProc::start(&[]);
    for (flags, dirs, streams) in
        [(vec!["-R", "-P", "2"], 1, 2), (vec!["--bidir"], 2, 1), (vec!["-P", "3"], 1, 3)]
    {
        let mut args = vec!["-t", "1", "--json"];
        args.extend(flags.iter());
        let out = client("stream", &srv, &args);
        assert!(out.status.success(), "{flags:?}: {}", stderr(&out));
        let v = json_of(&out);
        let ds = first_test(&v)["summary"]["directions"].as_array().unwrap().clone();
        assert_eq!(ds.len(), dirs, "{flags:?}");
        for d in &ds {
            assert_eq!(d["streams"], streams, "{flags:?}");
            assert!(d["receiver_bps"].as_f64().unwrap() > 0.0, "{flags:?}");
            assert_eq!(d["sender_bytes"], d["receiver_bytes"], "{flags:?}");
        }
        if flags[0] == "-R" {
            assert_eq!(ds[0]["direction"], "server→client");
        }
    }
}

#[test]
fn byte_and_block_limits_are_exact() {
    let srv = ServerProc::start(&[]);
    for (flags, expected) in
        [(vec!["-n", "10M"], 10 << 20), (vec!["-k", "100", "-l", "1000", "-P", "2"], 100_000)]
    {
        let mut args = flags.clone();
        args.push("--json");
        let out = client("stream", &srv, &args);
        assert!(out.status.success(), "{}", stderr(&out));
        let v = json_of(&out);
        assert_eq!(first_test(&v)["summary"]["directions"][0]["receiver_bytes"], expected, "{flags:?}");
    }
}

#[test]
fn separate_read_size_and_socket_buffers_are_reported() {
    let srv = ServerProc::start(&[]);
    let out = client(
        "stream",
        &srv,
        &[
            "-t",
            "1",
            "-l",
            "16K",
            "--recv-len",
            "1K",
            "--rcvbuf",
            "64K",
            "--remote-rcvbuf",
            "32K",
            "-N",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json_of(&out);
    let t = first_test(&v);
    let local = &t["local"]["streams"][0];
    assert_eq!(local["socket"]["rcvbuf_requested"], 65536);
    assert_eq!(local["socket"]["rcvbuf_actual"], 131072, "Linux doubles SO_RCVBUF");
    assert_eq!(local["socket"]["nodelay"], true);
    let remote = &t["remote"]["streams"][0];
    assert_eq!(remote["socket"]["rcvbuf_requested"], 32768);
    let calls = remote["calls"].as_u64().unwrap();
    let bytes = remote["bytes"].as_u64().unwrap();
    assert!(bytes / calls <= 1024, "reads of at most 1 KB: {bytes} bytes in {calls} reads");
}

#[test]
fn congestion_control_is_applied_and_unknown_ones_fail_clearly() {
    let srv = ServerProc::start(&[]);
    let out = client("stream", &srv, &["-t", "0.5", "-C", "reno", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json_of(&out);
    assert_eq!(first_test(&v)["local"]["streams"][0]["socket"]["congestion"], "reno");
    assert_eq!(first_test(&v)["remote"]["streams"][0]["socket"]["congestion"], "reno");
    let out = client("stream", &srv, &["-t", "1", "-C", "vegasx"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("vegasx"), "{}", stderr(&out));
}

#[test]
fn rr_and_crr_report_rates_and_percentiles() {
    let srv = ServerProc::start(&[]);
    let out = client("rr", &srv, &["-t", "1", "-r", "64,128", "--burst", "4", "-P", "2", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json_of(&out);
    let rr = &first_test(&v)["summary"]["rr"];
    assert!(rr["trans_per_s"].as_f64().unwrap() > 100.0);
    assert_eq!(rr["latency"]["count"], rr["transactions"]);
    assert!(rr["latency"]["p50_us"].as_f64().unwrap() <= rr["latency"]["p99_us"].as_f64().unwrap());
    let out = client("crr", &srv, &["-t", "1", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json_of(&out);
    assert!(first_test(&v)["summary"]["rr"]["transactions"].as_u64().unwrap() > 10);
    assert!(first_test(&v)["remote"]["streams"][0]["transactions"].as_u64().unwrap() > 0);
}

#[test]
fn json_stream_is_one_event_per_line() {
    let srv = ServerProc::start(&[]);
    let out = client("stream", &srv, &["-t", "1.2", "-i", "0.5", "--json-stream"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let events: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["event"].as_str().unwrap_or("")).collect();
    assert_eq!(kinds[..3], ["host", "host", "start"], "documented order: client host, server host, start");
    assert_eq!((&events[0]["side"], &events[1]["side"]), (&Value::from("client"), &Value::from("server")));
    assert!(kinds.iter().filter(|k| **k == "interval").count() >= 2);
    assert_eq!(kinds.last(), Some(&"end"));
    assert!(events.iter().any(|e| e["event"] == "end" && e["result"]["status"] == "completed"));
    assert!(!kinds.contains(&"error"), "no error event on success");
    // A failure ends with the error event, carrying the same code as the failed test.
    let dead = dead_port();
    let out = command()
        .args(["stream", "127.0.0.1", "-p", &dead, "-t", "1", "--json-stream", "--no-store"])
        .output();
    let out = out.unwrap();
    assert_eq!(out.status.code(), Some(2));
    let events: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let last = events.last().unwrap();
    assert_eq!((&last["event"], &last["error"]["code"]), (&Value::from("error"), &Value::from("connect")));
}

#[test]
fn text_output_shows_intervals_and_summary() {
    let srv = ServerProc::start(&[]);
    let out = client("stream", &srv, &["-t", "1.1"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Bitrate") && text.contains("bit/s"), "{text}");
    assert!(text.contains("sender") && text.contains("receiver"));
    assert!(text.contains("SD "), "{text}");
    // The sender's interval rates are marked as what it handed to the socket; a receiving
    // client's are not.
    let second = text.lines().nth(2).unwrap_or_default();
    assert!(second.starts_with("(sending: Bitrate counts bytes handed to the socket"), "{text}");
    let out = client("stream", &srv, &["-t", "1.1", "-R"]);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("(sending:"));
}

#[test]
fn bad_flag_values_fail_with_one_line() {
    for args in [
        vec!["stream", "127.0.0.1", "-P", "0"],
        vec!["stream", "127.0.0.1", "-l", "5G"],
        vec!["stream", "127.0.0.1", "-t", "ten"],
        vec!["rr", "127.0.0.1", "-r", "0,1"],
        vec!["stream", "127.0.0.1", "-i", "0.01"],
        vec!["stream", "127.0.0.1", "--bogus"],
    ] {
        let out = tcplab(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr(&out);
        assert!(err.starts_with("error"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// A port nothing listens on (bound, then released).
fn dead_port() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port().to_string()
}

#[test]
fn a_dead_server_gives_one_error_line_and_valid_json() {
    let port = dead_port();
    let out = tcplab(&["stream", "127.0.0.1", "-p", &port, "-t", "1"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("connecting to 127.0.0.1") && err.contains("refused"), "{err}");
    let out = tcplab(&["stream", "127.0.0.1", "-p", &port, "-t", "1", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    let v = json_of(&out);
    assert_eq!(first_test(&v)["status"], "failed");
    assert_eq!(first_test(&v)["error"]["code"], "connect");
    assert_eq!(v["error"]["code"], "connect", "the top-level error is set whenever the exit is not 0");
}

#[test]
fn a_busy_server_says_so() {
    let srv = ServerProc::start(&[]);
    let port = srv.port();
    let mut long = command()
        .args(["stream", "127.0.0.1", "-p", &port, "-t", "4", "--json-stream"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The first test holds the slot once its start event is out (however loaded the machine).
    let mut events = BufReader::new(long.stdout.take().unwrap());
    let mut first = String::new();
    while events.read_line(&mut first).unwrap_or(0) > 0 && first.contains(r#""event":"host""#) {
        first.clear();
    }
    if !first.contains(r#""event":"start""#) {
        let out = long.wait_with_output().unwrap();
        panic!("the first client did not start: {first} {}", stderr(&out));
    }
    std::thread::spawn(move || std::io::copy(&mut events, &mut std::io::sink()));
    let out = client("stream", &srv, &["-t", "1"]);
    let _ = long.wait();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("busy"), "{}", stderr(&out));
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(!said.contains("(busy) (busy)"), "the code said twice: {said}");
    // The refusal's record line: `refused - key=anonymous … reason="busy (1 test(s) running)"`.
    let log = log_with(&srv, &["reason=\"busy"]);
    assert!(log.contains("reason=\"busy"), "the server's log says nothing of the refusal:\n{log}");
}

/// The server's log once it holds every one of `want` (or after 5 s).
fn log_with(srv: &ServerProc, want: &[&str]) -> String {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !want.iter().all(|w| srv.log().contains(w)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    srv.log()
}

#[test]
fn a_client_killed_mid_test_leaves_the_server_ready() {
    let srv = ServerProc::start(&[]);
    let port = srv.port();
    for flags in [vec!["-t", "20"], vec!["-t", "20", "-R"]] {
        let mut victim = command()
            .args(["stream", "127.0.0.1", "-p", &port])
            .args(&flags)
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(1000));
        victim.kill().unwrap();
        let _ = victim.wait();
        let started = Instant::now();
        let out = loop {
            let out = client("stream", &srv, &["-t", "0.5"]);
            if out.status.success() || started.elapsed() > Duration::from_secs(10) {
                break out;
            }
            std::thread::sleep(Duration::from_millis(250));
        };
        assert!(out.status.success(), "{flags:?}: {}", stderr(&out));
        assert!(started.elapsed() < Duration::from_secs(10), "{flags:?}");
    }
}

#[test]
fn server_killed_mid_test_is_reported_and_partial_results_kept() {
    let mut srv = ServerProc::start(&[]);
    let port = srv.port();
    let child = command()
        .args(["stream", "127.0.0.1", "-p", &port, "-t", "20", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    srv.kill();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v = json_of(&out);
    assert_eq!(first_test(&v)["status"], "failed");
    assert!(
        first_test(&v)["local"]["streams"][0]["bytes"].as_u64().unwrap() > 0,
        "bytes measured before the failure are kept"
    );
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
}

#[test]
fn ctrl_c_keeps_results_and_exits_2() {
    let srv = ServerProc::start(&[]);
    let port = srv.port();
    for flags in [vec!["--json"], vec!["--json", "-R"]] {
        let child = command()
            .args(["stream", "127.0.0.1", "-p", &port, "-t", "20"])
            .args(&flags)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        let v = json_of(&out);
        let t = first_test(&v);
        assert_eq!(t["status"], "interrupted", "{flags:?}");
        assert!(t["summary"]["directions"][0]["receiver_bytes"].as_u64().unwrap() > 0, "{flags:?}");
        assert!(stderr(&out).contains("interrupted"));
    }
}

#[test]
fn run_without_host_runs_the_whole_suite() {
    let out = tcplab(&["run", "-t", "0.5", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json_of(&out);
    let labels: Vec<&str> =
        v["tests"].as_array().unwrap().iter().map(|t| t["label"].as_str().unwrap()).collect();
    assert_eq!(
        labels,
        [
            "stream",
            "stream reverse",
            "rr 1/1",
            "rr 64/64",
            "rr 100/200",
            "rr 128/8192",
            "crr 1/1",
            "udp 1400"
        ]
    );
    for t in v["tests"].as_array().unwrap() {
        assert_eq!(t["status"], "completed", "{}", t["label"]);
    }
    let text = tcplab(&["run", "-t", "0.3"]);
    assert!(text.status.success());
    let table = String::from_utf8(text.stdout).unwrap();
    assert!(
        table.contains("rr 128/8192") && table.contains("trans/s") && table.contains("conn/s"),
        "{table}"
    );
}

#[test]
fn one_off_server_exits_after_one_test() {
    let mut srv = ServerProc::start(&["-1"]);
    let out = client("rr", &srv, &["-t", "0.5"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let deadline = Instant::now() + Duration::from_secs(5);
    while !srv.exited() {
        assert!(Instant::now() < deadline, "one-off server did not exit");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn omitted_seconds_and_mss_are_honoured() {
    let srv = ServerProc::start(&[]);
    let out = client("stream", &srv, &["-t", "2", "-O", "1", "-i", "0.5", "-M", "1000", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json_of(&out);
    let t = first_test(&v);
    let intervals = t["local"]["intervals"].as_array().unwrap();
    assert!(
        intervals.iter().any(|i| i["omitted"] == true) && intervals.iter().any(|i| i["omitted"] == false)
    );
    let s = &t["local"]["streams"][0];
    assert!(
        s["bytes"].as_u64().unwrap() < s["bytes_total"].as_u64().unwrap(),
        "omitted bytes stay out of the summary"
    );
    let measured = t["local"]["measured_s"].as_f64().unwrap();
    assert!(measured > 0.5 && measured < 1.5, "measured window {measured} s");
    assert!(s["socket"]["mss"].as_u64().unwrap() <= 1000);
}

#[test]
fn affinity_pins_both_ends_and_placement_is_reported() {
    let srv = ServerProc::start(&[]);
    let out = client("rr", &srv, &["-t", "1", "-i", "0", "-A", "0,0", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let t = first_test(&json_of(&out)).clone();
    for side in [&t["local"], &t["remote"]] {
        let placement = &side["streams"][0]["placement"];
        assert_eq!(placement["pinned_cpu"], 0, "{placement}");
        assert_eq!(placement["cpus_seen"][0]["cpu"], 0, "{placement}");
        assert_eq!(placement["cpus_seen"].as_array().unwrap().len(), 1, "{placement}");
    }
    let kinds: Vec<&str> =
        t["warnings"].as_array().unwrap().iter().filter_map(|w| w["kind"].as_str()).collect();
    assert!(!kinds.contains(&"unpinned"), "{kinds:?}");

    let text = client("rr", &srv, &["-t", "1", "-i", "0"]);
    assert!(String::from_utf8_lossy(&text.stdout).contains("threads: client CPU"));
    let bad = client("rr", &srv, &["-t", "1", "-A", "4000"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("-A/--affinity"), "{}", stderr(&bad));
    let bad_remote = client("rr", &srv, &["-t", "1", "-A", ",4000"]);
    assert_eq!(bad_remote.status.code(), Some(2));
    assert!(stderr(&bad_remote).contains("(cpu_remote, -A/--affinity)"), "{}", stderr(&bad_remote));
}

#[test]
fn busy_poll_rr_completes_transactions_and_is_refused_for_stream() {
    let srv = ServerProc::start(&[]);
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let pin = if cpus >= 2 { vec!["-A", "0,1"] } else { Vec::new() };
    let mut args = vec!["-t", "1", "-i", "0", "--busy-poll", "-r", "64,8K", "--burst", "4", "--json"];
    args.extend_from_slice(&pin);
    let out = client("rr", &srv, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let t = first_test(&json_of(&out)).clone();
    assert_eq!(t["spec"]["busy_poll"], true);
    assert!(t["summary"]["rr"]["transactions"].as_u64().unwrap() > 100, "{}", t["summary"]);
    let stream = tcplab(&["stream", "127.0.0.1", "-p", &srv.port(), "--busy-poll"]);
    assert_eq!(stream.status.code(), Some(2), "--busy-poll is an rr flag");
}

#[test]
fn rr_runs_with_nagle_when_asked() {
    let srv = ServerProc::start(&[]);
    for (flags, nodelay) in [(vec![], true), (vec!["--nagle"], false)] {
        let mut args = vec!["-t", "0.3", "-i", "0", "--no-store", "--json"];
        args.extend(flags);
        let out = client("rr", &srv, &args);
        assert!(out.status.success(), "{}", stderr(&out));
        let v = json_of(&out);
        let t = first_test(&v);
        assert_eq!(t["spec"]["nodelay"], nodelay);
        assert_eq!(t["local"]["streams"][0]["socket"]["nodelay"], nodelay);
        assert_eq!(t["remote"]["streams"][0]["socket"]["nodelay"], nodelay);
    }
}

#[test]
fn a_default_server_takes_ipv4_and_ipv6_clients() {
    let srv = ServerProc::start_default(&[]);
    let port = srv.port();
    let v6 = std::net::TcpListener::bind("[::1]:0").is_ok();
    let hosts: &[&str] = if v6 { &["::1", "127.0.0.1"] } else { &["127.0.0.1"] };
    if !v6 {
        eprintln!("no IPv6 on this host: the IPv6 client is skipped");
    }
    for host in hosts {
        let out = tcplab(&["stream", host, "-p", &port, "-t", "0.3", "-i", "0", "--no-store"]);
        assert!(out.status.success(), "stream {host}: {}", stderr(&out));
    }
    let udp = tcplab(&["udp", "127.0.0.1", "-p", &port, "-t", "0.3", "-i", "0", "--no-store", "-J"]);
    assert!(udp.status.success(), "udp over IPv4 to a dual-stack server: {}", stderr(&udp));
}

#[test]
fn the_server_logs_one_line_per_test() {
    let srv = ServerProc::start(&[]);
    let out = client("stream", &srv, &["-t", "0.3", "-i", "0", "--no-store"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let bad = client("rr", &srv, &["-t", "0.3", "-i", "0", "--no-store", "-A", ",4000"]);
    assert_eq!(bad.status.code(), Some(2), "a CPU the server does not have");
    let want = ["accepted tcp-stream, 1 flow, 0.3 s", "finished tcp-stream", "refused tcp-rr"];
    let log = log_with(&srv, &want);
    for w in want {
        assert!(log.contains(w), "no '{w}' in the server's log:\n{log}");
    }
    assert!(log.lines().all(|l| l.contains("127.0.0.1:")), "each line names the peer:\n{log}");
}
