//! End to end over the link emulator: the real `tcplab` binary runs tests across emulated
//! paths in network namespaces and reports the emulator's counters. Needs root (CI is
//! root); elsewhere each test says why it skipped.
//!
//! Rates and delays are checked against bounds the emulator guarantees by construction (a
//! link never delivers faster than its rate, a round trip never takes less than twice the
//! one-way delay) plus loose lower bounds, never against tight timings.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use support::{command, tcplab};

fn root() -> bool {
    let out = Command::new("id").arg("-u").output().unwrap();
    let is_root = String::from_utf8_lossy(&out.stdout).trim() == "0";
    if !is_root {
        eprintln!("skipped: the link emulator needs root (network namespaces, TUN devices)");
    }
    is_root
}

/// Runs a test with `-J` and returns its one result.
fn json_test(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("-J");
    let out = tcplab(&all);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{args:?} failed: {}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    doc["tests"][0].clone()
}

fn direction<'a>(test: &'a Value, name: &str) -> &'a Value {
    test["emu"]["directions"].as_array().unwrap().iter().find(|d| d["direction"] == name).unwrap()
}

fn count(d: &Value, field: &str, what: &str) -> u64 {
    d[field][what].as_u64().unwrap()
}

fn receiver_bps(test: &Value) -> f64 {
    test["summary"]["directions"][0]["receiver_bps"].as_f64().unwrap()
}

#[test]
fn list_and_bad_specs_need_no_root() {
    let out = tcplab(&["emu", "--list"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for name in ["atm-oc3-clip", "atm-oc3-lane", "taxi-100", "taxi-140", "transatlantic", "snv-ams", "gige"] {
        assert!(text.contains(name), "{name} missing from --list");
    }
    let out = tcplab(&["stream", "--path", "rate=fast"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: ") && err.contains("rate"), "{err}");
    let out = tcplab(&["emu", "--path", "rate=1mbit", "--host-cpu", "router=5%", "--", "true"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn rate_is_never_exceeded_and_mostly_reached() {
    if !root() {
        return;
    }
    let t = json_test(&["stream", "--path", "rate=20mbit,delay=2ms", "-t", "3", "-O", "1"]);
    let model = 20e6 * 1448.0 / 1500.0;
    let got = receiver_bps(&t);
    assert!(got <= model * 1.03, "{got} bit/s above the 20 Mbit/s link's {model}");
    assert!(got >= model * 0.25, "{got} bit/s: far below {model}");
    let up = direction(&t, "up");
    assert!(count(up, "delivered", "packets") > 1000);
}

#[test]
fn round_trips_take_at_least_twice_the_delay() {
    if !root() {
        return;
    }
    let t = json_test(&["rr", "--path", "delay=15ms", "-t", "1"]);
    let latency = &t["summary"]["rr"]["latency"];
    let p50_us = latency["p50_us"].as_f64().unwrap();
    assert!(p50_us >= 30_000.0, "p50 {p50_us} µs is shorter than the 30 ms round trip");
    assert!(p50_us < 300_000.0, "p50 {p50_us} µs");
}

#[test]
fn loss_model_drops_about_the_configured_share() {
    if !root() {
        return;
    }
    let t = json_test(&["stream", "--path", "rate=50mbit,up:loss=5%", "-t", "2"]);
    let up = direction(&t, "up");
    let offered = count(up, "offered", "packets") as f64;
    let lost = count(up, "drops_loss_model", "packets") as f64;
    assert!(offered > 500.0, "only {offered} packets");
    let share = lost / offered;
    assert!((0.03..0.07).contains(&share), "lost {share} of packets, configured 5%");
    assert_eq!(count(direction(&t, "down"), "drops_loss_model", "packets"), 0);
}

#[test]
fn a_small_queue_overflows() {
    if !root() {
        return;
    }
    let t = json_test(&["stream", "--path", "rate=10mbit,delay=5ms,queue=5pkt", "-t", "2"]);
    let up = direction(&t, "up");
    assert!(count(up, "drops_queue_overflow", "packets") > 0);
    assert_eq!(count(up, "drops_loss_model", "packets"), 0);
    assert_eq!(count(up, "drops_cell_loss", "packets"), 0);
}

/// Datagrams larger than the path's MTU leave as IP fragments: GSO cannot cut segments above
/// the MTU (Linux refuses them with EMSGSIZE), so the sender falls back to plain sends instead
/// of counting every send as refused (seed 002's 16 KiB case over CLIP sent nothing).
#[test]
fn datagrams_above_the_mtu_are_fragmented_not_refused() {
    if !root() {
        return;
    }
    for len in ["16K", "12000"] {
        let t = json_test(&["udp", "--path", "atm-oc3-clip", "-l", len, "-b", "20M", "-t", "1"]);
        let u = &t["summary"]["udp"][0];
        assert_eq!(u["send_errors"], 0, "-l {len}: {u}");
        assert!(u["received"].as_u64().unwrap() > 50, "-l {len}: {u}");
        assert!(count(direction(&t, "up"), "delivered", "packets") >= 2 * u["received"].as_u64().unwrap());
    }
}

/// AAL5 wire bytes of an IP packet with LLC/SNAP: 8 bytes header, 8 bytes trailer, padded
/// to 48-byte cell payloads, 53 bytes per cell.
fn aal5_llc(len: u64) -> u64 {
    (len + 16).div_ceil(48) * 53
}

/// (source address, original length) of each record of a LINKTYPE_RAW nanosecond pcap.
fn pcap_records(bytes: &[u8]) -> Vec<([u8; 4], u64)> {
    assert_eq!(&bytes[0..4], &0xa1b2_3c4du32.to_le_bytes(), "nanosecond pcap magic");
    assert_eq!(u32::from_le_bytes(bytes[20..24].try_into().unwrap()), 101, "LINKTYPE_RAW");
    let mut out = Vec::new();
    let mut at = 24;
    while at + 16 <= bytes.len() {
        let caplen = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
        let origlen = u32::from_le_bytes(bytes[at + 12..at + 16].try_into().unwrap());
        let packet = &bytes[at + 16..at + 16 + caplen];
        out.push((packet[12..16].try_into().unwrap(), u64::from(origlen)));
        at += 16 + caplen;
    }
    assert_eq!(at, bytes.len(), "trailing bytes in the capture");
    out
}

#[test]
fn atm_cell_tax_matches_the_captured_packets() {
    if !root() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("cap");
    let base = base.to_str().unwrap();
    let t = json_test(&["rr", "--path", "atm-oc3-clip", "-r", "2000,5000", "-t", "1", "--pcap", base]);
    let up = direction(&t, "up");
    assert_eq!(count(up, "drops_queue_overflow", "packets"), 0);
    let capture = std::fs::read(format!("{base}.client.pcap")).unwrap();
    let sent: Vec<u64> = pcap_records(&capture)
        .into_iter()
        .filter(|(src, _)| *src == [198, 18, 0, 1])
        .map(|(_, l)| l)
        .collect();
    assert_eq!(sent.len() as u64, count(up, "offered", "packets"));
    let expected: u64 = sent.iter().map(|&l| aal5_llc(l)).sum();
    assert_eq!(up["wire_bytes"].as_u64().unwrap(), expected);
    let server_capture = std::fs::read(format!("{base}.server.pcap")).unwrap();
    assert!(!pcap_records(&server_capture).is_empty());
}

#[test]
fn lost_cells_discard_whole_pdus() {
    if !root() {
        return;
    }
    let t = json_test(&["stream", "--path", "atm-oc3-clip,up:cellloss=0.05%", "-l", "8192", "-t", "2"]);
    let up = direction(&t, "up");
    let pdus = count(up, "drops_cell_loss", "packets");
    assert!(pdus > 0, "no PDU lost cells");
    assert!(up["lost_cells"].as_u64().unwrap() >= pdus);
    assert_eq!(count(direction(&t, "down"), "drops_cell_loss", "packets"), 0);
}

/// The network namespace inode of process `pid`, if it exists.
fn netns_of(pid: u32) -> Option<String> {
    std::fs::read_link(format!("/proc/{pid}/ns/net")).ok().map(|p| p.to_string_lossy().into_owned())
}

/// Processes whose parent is `pid`.
fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else { continue };
        let after_comm = stat.rsplit(')').next().unwrap_or("");
        if after_comm.split_whitespace().nth(1) == Some(&pid.to_string()) {
            out.push(child);
        }
    }
    out
}

/// True while any process is in the namespace `ns`.
fn namespace_in_use(ns: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        e.file_name().to_string_lossy().parse::<u32>().ok().and_then(netns_of).as_deref() == Some(ns)
    })
}

fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn kill_9_leaves_no_namespace_or_device() {
    if !root() {
        return;
    }
    let mut emu = command()
        .args([
            "emu",
            "--path",
            "rate=10mbit,delay=1ms",
            "--server-cmd",
            "exec sleep 60",
            "--",
            "sleep",
            "60",
        ])
        .spawn()
        .unwrap();
    let pid = emu.id();
    let own = netns_of(std::process::id()).unwrap();
    // A side command is forked first and enters its namespace before it runs: wait for both
    // to be in namespaces other than this one.
    let (kids, namespaces) = wait_for("both side commands in their own namespaces", || {
        let kids = children_of(pid);
        let namespaces: Vec<String> = kids.iter().filter_map(|&k| netns_of(k)).collect();
        (kids.len() == 2 && namespaces.len() == 2 && namespaces.iter().all(|ns| *ns != own))
            .then_some((kids, namespaces))
    });
    Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap();
    emu.wait().unwrap();
    wait_for("the side commands to die", || kids.iter().all(|&k| netns_of(k).is_none()).then_some(()));
    for ns in &namespaces {
        wait_for("the namespace to be released", || (!namespace_in_use(ns)).then_some(()));
    }
    let links = Command::new("ip").args(["-o", "link"]).output().unwrap();
    let links = String::from_utf8_lossy(&links.stdout);
    assert!(!links.contains(&format!("tle{pid}-")), "a device survived: {links}");
}

#[test]
fn the_shell_passes_the_peer_and_exit_code() {
    if !root() {
        return;
    }
    let out = tcplab(&["emu", "--path", "delay=1ms", "--", "sh", "-c", "echo peer=$TCPLAB_PEER; exit 3"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stdout).contains("peer=198.18.0.2"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("queue overflow"));
}

#[test]
fn host_cpu_puts_each_side_in_its_quota() {
    if !root() {
        return;
    }
    let out =
        tcplab(&["emu", "--path", "delay=1ms", "--host-cpu", "client=30%", "--", "cat", "/proc/self/cgroup"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("-client"), "client command outside its cgroup");
    // A test whose server side is limited runs its server as a separate process.
    let t = json_test(&["rr", "--path", "delay=1ms", "--host-cpu", "server=50%", "-t", "1"]);
    assert!(t["summary"]["rr"]["transactions"].as_u64().unwrap() > 10);
}

#[test]
fn fast_paths_run_with_offload_and_count_segments() {
    if !root() {
        return;
    }
    let t = json_test(&["stream", "--path", "rate=1gbit,delay=1ms,queue=30pkt", "-t", "2", "-C", "cubic"]);
    assert_eq!(t["emu"]["offload"], true);
    let got = receiver_bps(&t);
    assert!(got <= 1e9 * 1448.0 / 1500.0 * 1.03, "{got} bit/s above the 1 Gbit/s link");
    let up = direction(&t, "up");
    let (offered, delivered) = (count(up, "offered", "bytes"), count(up, "delivered", "bytes"));
    // Per-segment accounting: every offered byte is delivered, dropped or (a few) still in flight.
    let accounted = delivered + count(up, "drops_queue_overflow", "bytes");
    assert!(
        offered >= accounted && offered - accounted < 200_000,
        "{offered} offered, {accounted} accounted"
    );
    // Segments, not super-packets: packets average at most one MTU.
    assert!(offered / count(up, "offered", "packets") <= 1500);
}

#[test]
fn fast_lossy_paths_draw_loss_per_segment() {
    if !root() {
        return;
    }
    let t = json_test(&["stream", "--path", "rate=1gbit,delay=1ms,up:loss=1%", "-t", "2"]);
    assert_eq!(t["emu"]["offload"], true);
    let up = direction(&t, "up");
    let offered = count(up, "offered", "packets");
    assert!(count(up, "offered", "bytes") / offered <= 1500, "super-packets were not split");
    let share = count(up, "drops_loss_model", "packets") as f64 / offered as f64;
    assert!((0.005..0.02).contains(&share), "lost {share} of segments, configured 1%");
}

/// Processes whose network namespace is `ns` (as `readlink /proc/PID/ns/net` gives it).
fn processes_in(ns: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if name.parse::<u32>().is_err() {
            continue;
        }
        let link = std::fs::read_link(entry.path().join("ns/net")).map(|l| l.display().to_string());
        if link.is_ok_and(|l| l == ns) {
            found.push(name);
        }
    }
    found
}

/// Whether `pid` still runs (an exited, unreaped process does not).
fn running(pid: &str) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().next());
    state.is_some_and(|s| s != "Z" && s != "X")
}

#[test]
fn emu_leaves_no_process_and_keeps_stdout_for_the_client() {
    if !root() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    // The server forks a child that outlives its shell (as `sh -c 'iperf3 -s'` keeps
    // iperf3), writes on both its outputs, and notes where it runs; the client leaves a
    // background process behind and prints the server's address through `{peer}`.
    let server = format!(
        "echo server-out; echo server-err >&2; sleep 300 >/dev/null 2>&1 & echo $! > {d}/server.pid; \
         readlink /proc/self/ns/net > {d}/server.ns; wait"
    );
    let client = format!(
        "sleep 300 >/dev/null 2>&1 & echo $! > {d}/client.pid; readlink /proc/self/ns/net > {d}/client.ns; \
         while [ ! -s {d}/server.ns ]; do sleep 0.02; done; echo {{peer}}"
    );
    let out = command()
        .args(["emu", "--path", "rate=100mbit", "--server-cmd", &server, "--", "sh", "-c", &client])
        .output()
        .unwrap();
    let (stdout, stderr) = (support::stdout(&out), support::stderr(&out));
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout, "198.18.0.2\n", "stdout is the client command's alone; stderr: {stderr}");
    assert!(stderr.contains("server: server-out\n") && stderr.contains("server: server-err\n"), "{stderr}");
    for side in ["server", "client"] {
        let pid = std::fs::read_to_string(dir.path().join(format!("{side}.pid"))).unwrap();
        assert!(!running(pid.trim()), "the {side} side's sleep {} still runs", pid.trim());
        let ns = std::fs::read_to_string(dir.path().join(format!("{side}.ns"))).unwrap();
        let left = processes_in(ns.trim());
        assert!(left.is_empty(), "processes {left:?} still in the {side} namespace {}", ns.trim());
    }
}

#[test]
fn emu_server_log_takes_the_server_output() {
    if !root() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let ready = dir.path().join("ready");
    let server = format!("echo listening on {{peer}}; touch {}; sleep 300", ready.display());
    let client = format!("while [ ! -e {} ]; do sleep 0.02; done", ready.display());
    let out = command()
        .args(["emu", "--path", "rate=100mbit", "--server-cmd", &server])
        .args(["--server-log", log.to_str().unwrap(), "--", "sh", "-c", &client])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", support::stderr(&out));
    assert_eq!(support::stdout(&out), "");
    let stderr = support::stderr(&out);
    assert!(!stderr.lines().any(|l| l.starts_with("server: ")), "{stderr}");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "listening on 198.18.0.1\n");
}

/// A host without iproute2: with no `ip` on PATH (PATH is an empty directory), the emulator
/// still configures both sides (over netlink) and a test and a shell command run across it.
#[test]
fn the_emulator_needs_no_ip_command() {
    if !root() {
        return;
    }
    let empty = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| command().env("PATH", empty.path()).args(args).output().unwrap();
    let out = run(&["emu", "--path", "rate=10mbit,delay=1ms,mtu=1400", "--", "/bin/cat", "/proc/net/dev"]);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "emu without ip: {stderr}");
    // The client side's loopback and its TUN device are both there.
    assert!(stdout.contains("lo:") && stdout.contains("tle"), "{stdout}");
    let out = run(&["stream", "--path", "rate=20mbit,delay=2ms", "-t", "1", "-J"]);
    assert!(out.status.success(), "stream --path without ip: {}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(receiver_bps(&doc["tests"][0]) > 1e6, "{doc}");
}

/// `timeout`-style: SIGTERM to `tcplab emu` while its client command would run for a minute
/// reaches that command (and its process group), then the usual cleanup runs: both sides'
/// processes end, the namespaces go, and the exit code says the command was terminated.
#[test]
fn sigterm_reaches_the_client_command_and_emu_cleans_up() {
    if !root() {
        return;
    }
    let mut emu = command()
        .args(["emu", "--path", "rate=10mbit,delay=1ms", "--server-cmd", "exec sleep 60"])
        .args(["--", "sh", "-c", "sleep 60 & wait"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = emu.id();
    let own = netns_of(std::process::id()).unwrap();
    let namespaces = wait_for("both side commands in their own namespaces", || {
        let namespaces: Vec<String> = children_of(pid).into_iter().filter_map(netns_of).collect();
        (namespaces.len() == 2 && namespaces.iter().all(|ns| *ns != own)).then_some(namespaces)
    });
    let sent = Instant::now();
    Command::new("kill").args(["-TERM", &pid.to_string()]).status().unwrap();
    let status = wait_for("tcplab emu to exit after SIGTERM", || emu.try_wait().unwrap());
    // Far below the client's 60 s: the signal ended it, not the command's own end.
    assert!(sent.elapsed() < Duration::from_secs(10), "took {:?}", sent.elapsed());
    let mut err = String::new();
    std::io::Read::read_to_string(&mut emu.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(128 + 15), "{err}");
    assert!(err.contains("emu: SIGTERM: passed on to the client-side command"), "{err}");
    assert!(!err.contains("killed"), "the client's group ended on SIGTERM alone: {err}");
    for ns in &namespaces {
        wait_for("the namespace to be released", || (!namespace_in_use(ns)).then_some(()));
    }
}
