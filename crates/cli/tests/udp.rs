//! End to end for `tcplab udp` and `tcplab udp-rr`: the real binary against a real server, on
//! loopback and between two network namespaces joined by a veth pair whose receiving side drops
//! a random share of UDP packets in the kernel (nftables `numgen random`). The loss measured
//! must lie within statistical bounds of the injected rate, and `sent = (received −
//! duplicates) + lost` must hold exactly. Namespace tests need root; without it they say so and
//! return.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use support::veth::Veth;
use support::{command_in, ServerProc};

fn run(netns: Option<&str>, args: &[&str]) -> Output {
    command_in(netns).args(args).output().unwrap()
}

fn json_of(out: &Output) -> Value {
    assert!(out.status.success(), "exit {:?}: {}", out.status, String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

fn u(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or_else(|| panic!("{k} missing in {v}"))
}

/// Checks `sent = (received − duplicates) + lost` on every direction; returns them.
fn directions_with_exact_identity(v: &Value) -> Vec<Value> {
    let t = &v["tests"][0];
    assert_eq!(t["status"], "completed", "{}", t["error"]);
    let rows = t["summary"]["udp"].as_array().unwrap().clone();
    for d in &rows {
        assert!(u(d, "sent") > 0, "{d}");
        assert_eq!(u(d, "sent"), u(d, "received") - u(d, "duplicates") + u(d, "lost"), "{d}");
    }
    rows
}

fn udp_loopback(srv: &ServerProc, extra: &[&str]) -> Value {
    let port = srv.port.to_string();
    let mut args = vec!["udp", "127.0.0.1", "-p", &port, "-J"];
    args.extend_from_slice(extra);
    json_of(&run(None, &args))
}

#[test]
fn forward_stream_counts_every_datagram_and_reports_intervals() {
    let srv = ServerProc::start(&[]);
    let v = udp_loopback(&srv, &["-t", "1.5", "-b", "20M", "-l", "1000", "-i", "0.5"]);
    let rows = directions_with_exact_identity(&v);
    assert_eq!(rows.len(), 1);
    assert_eq!(u(&rows[0], "target_bps"), 20_000_000);
    assert!(rows[0]["sender_bps"].as_f64().unwrap() > 0.0);
    let t = &v["tests"][0];
    let client_intervals = t["local"]["intervals"].as_array().unwrap();
    assert!(client_intervals.len() >= 2);
    let sent_in_intervals: u64 = client_intervals.iter().map(|iv| u(&iv["streams"][0]["udp"], "sent")).sum();
    assert_eq!(sent_in_intervals, u(&rows[0], "sent"), "interval counts add up to the total");
    let received_in_intervals: u64 = t["remote"]["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|iv| u(&iv["streams"][0]["udp"], "received"))
        .sum();
    assert_eq!(received_in_intervals, u(&rows[0], "received"), "the drained tail is in the last interval");
    for side in ["local", "remote"] {
        let placement = &t[side]["streams"][0]["placement"];
        assert!(!placement["cpus_seen"].as_array().unwrap().is_empty(), "{side}: {placement}");
        assert!(placement["thread_busy_pct"].as_f64().unwrap() > 0.0, "{side}: {placement}");
    }
    let kinds: Vec<&str> =
        t["warnings"].as_array().unwrap().iter().filter_map(|w| w["kind"].as_str()).collect();
    assert!(!kinds.contains(&"unpinned"), "placement warnings are for request/response: {kinds:?}");
}

/// One end's `sender_path` / `receiver_path`: the window's datagrams must be the test's own
/// count (no data outside the window), on loopback's interface.
fn path_of<'a>(d: &'a Value, end: &str, datagrams: u64) -> &'a Value {
    let p = &d[format!("{end}_path")];
    assert_eq!(p["interface"], "lo", "{end}: {p}");
    assert_eq!(u(p, "datagrams"), datagrams, "{end}: the window holds the whole test: {p}");
    assert!(u(p, "skbs") > 0 && p["skbs_per_s"].as_f64().unwrap() > 0.0, "{end}: {p}");
    p
}

#[test]
fn loopback_skbs_are_counted_apart_from_datagrams_with_and_without_offload() {
    let srv = ServerProc::start(&[]);
    // Unlimited with GSO: every send carries 64 datagrams of 1000 bytes, loopback one skb each.
    let v = udp_loopback(&srv, &["-t", "1", "-b", "0", "-l", "1000", "-i", "0"]);
    let d = &directions_with_exact_identity(&v)[0];
    let tx = path_of(d, "sender", u(d, "sent"));
    assert!(u(tx, "datagrams") >= 2 * u(tx, "skbs"), "GSO trains are single skbs on lo: {tx}");
    let rx = path_of(d, "receiver", u(d, "received"));
    // Every skb that reached the socket carried at least one datagram; the rest were dropped.
    assert!(u(rx, "datagrams") + u(rx, "udp_mib_rcvbuf_errors") >= u(rx, "skbs") / 2, "{rx}");
    // One datagram per call: each is an skb of its own on lo, whatever else shares it.
    let v = udp_loopback(&srv, &["-t", "1", "-b", "100M", "-l", "1000", "-i", "0", "--no-offload"]);
    let d = &directions_with_exact_identity(&v)[0];
    let tx = path_of(d, "sender", u(d, "sent"));
    assert!(u(tx, "skbs") >= u(tx, "datagrams"), "{tx}");
    assert!(u(tx, "bytes") >= u(tx, "datagrams") * (1000 + 28), "payload + IPv4/UDP header each: {tx}");
    assert!(tx["datagrams_per_skb"].as_f64().unwrap() <= 1.0, "{tx}");
    let rx = path_of(d, "receiver", u(d, "received"));
    assert!(u(rx, "skbs") >= u(rx, "datagrams"), "{rx}");
}

#[test]
fn link_gives_a_share_of_the_udp_theoretical_goodput() {
    let srv = ServerProc::start(&[]);
    let v = udp_loopback(&srv, &["-t", "0.5", "-b", "50M", "-i", "0", "--link", "ethernet:1g"]);
    let t = &v["tests"][0];
    assert_eq!(t["reference"]["kind"], "link");
    assert!(t["reference"]["description"].as_str().unwrap().contains("udp"), "{}", t["reference"]);
    let limit = t["reference"]["limit_bps"].as_f64().unwrap();
    assert!((limit - 957.1e6).abs() < 1e6, "1 GbE, MTU 1500, IPv4/UDP: {limit}");
    let row = &t["summary"]["udp"][0];
    let share = row["of_reference"].as_f64().unwrap();
    assert!((share - row["receiver_bps"].as_f64().unwrap() / limit).abs() < 1e-9);
}

#[test]
fn reverse_bidir_parallel_and_byte_limit_keep_the_identity() {
    let srv = ServerProc::start(&[]);
    let v = udp_loopback(&srv, &["-t", "1", "-b", "10M", "-R", "-l", "512"]);
    assert_eq!(directions_with_exact_identity(&v)[0]["direction"], "server→client");
    let v = udp_loopback(&srv, &["-t", "1", "-b", "10M", "--bidir", "-P", "2", "-i", "0"]);
    let rows = directions_with_exact_identity(&v);
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|d| u(d, "streams") == 2));
    let v = udp_loopback(&srv, &["-n", "1M", "-b", "50M", "-l", "1000", "--no-offload", "--no-checksum"]);
    let rows = directions_with_exact_identity(&v);
    assert_eq!(u(&rows[0], "sent"), (1 << 20) / 1000, "a byte limit sends whole datagrams up to it");
}

#[test]
fn unlimited_small_datagrams_with_a_tiny_receive_buffer_report_the_overrun() {
    let srv = ServerProc::start(&[]);
    let v = udp_loopback(&srv, &["-t", "1", "-b", "0", "-l", "64", "--remote-rcvbuf", "4K", "-i", "0"]);
    let rows = directions_with_exact_identity(&v);
    let t = &v["tests"][0];
    assert_eq!(t["remote"]["streams"][0]["socket"]["rcvbuf_requested"], 4096);
    if u(&rows[0], "lost") > 0 {
        // Whatever the machine's speed, loss at the receiver must be named as such.
        let kinds: Vec<&str> =
            t["warnings"].as_array().unwrap().iter().filter_map(|w| w["kind"].as_str()).collect();
        assert!(u(&rows[0], "socket_drops") > 0, "{}", rows[0]);
        assert!(kinds.contains(&"receiver-overrun"), "{kinds:?}");
    }
}

#[test]
fn udp_rr_reports_latency_and_text_output_shows_udp_rows() {
    let srv = ServerProc::start(&[]);
    let port = srv.port.to_string();
    let v = json_of(&run(
        None,
        &["udp-rr", "127.0.0.1", "-p", &port, "-t", "1", "-r", "32,200", "--burst", "2", "-J"],
    ));
    let rr = &v["tests"][0]["summary"]["rr"];
    assert!(u(rr, "transactions") > 0 && u(&rr["latency"], "count") > 0, "{rr}");
    assert!(rr["lost"].is_u64());
    let out = run(None, &["udp", "127.0.0.1", "-p", &port, "-t", "1", "-b", "5M", "-i", "0.5"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success());
    for want in [
        "Lost/Expected",
        "(sent)",
        "% of target)",
        "receiver overrun drops",
        "jitter",
        "datagrams/s",
        "packets/s (skbs on lo)",
    ] {
        assert!(text.contains(want), "{want} missing in:\n{text}");
    }
}

#[test]
fn json_stream_intervals_carry_datagram_counts() {
    let srv = ServerProc::start(&[]);
    let port = srv.port.to_string();
    let out =
        run(None, &["udp", "127.0.0.1", "-p", &port, "-t", "1", "-b", "2M", "-i", "0.5", "--json-stream"]);
    assert!(out.status.success());
    let events: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let sent: u64 = events
        .iter()
        .filter(|e| e["event"] == "interval")
        .map(|e| u(&e["interval"]["streams"][0]["udp"], "sent"))
        .sum();
    let end = events.iter().find(|e| e["event"] == "end").unwrap();
    assert_eq!(sent, u(&end["result"]["summary"]["udp"][0], "sent"));
}

#[test]
fn bad_udp_flags_fail_with_one_line() {
    for args in [
        vec!["udp", "127.0.0.1", "-l", "8"],
        vec!["udp", "127.0.0.1", "-l", "70000"],
        vec!["udp", "127.0.0.1", "-b", "fast"],
        vec!["udp-rr", "127.0.0.1", "-r", "1,1"],
    ] {
        let out = run(None, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.trim_end().lines().any(|l| l.starts_with("error:")), "{args:?}: {err}");
    }
    let srv = ServerProc::start_in(None, "::1", &[]);
    let port = srv.port.to_string();
    let out = run(None, &["udp", "::1", "-p", &port, "-t", "1", "--no-checksum"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("IPv4 only"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Two namespaces and a veth pair (support::veth), UDP into `b` dropped at random.
struct Link {
    pair: Veth,
    b_addr: String,
}

impl Link {
    /// `tag` keeps names unique per test; `drop_permille` of UDP packets into B are dropped.
    fn new(tag: &str, subnet: u8, drop_permille: u32) -> Link {
        let pair = Veth::new("tlu", tag, subnet);
        let rules = format!(
            "table inet tlu {{\n chain input {{\n  type filter hook input priority 0; policy accept;\n  meta l4proto udp numgen random mod 1000 < {drop_permille} drop\n }}\n}}\n"
        );
        let mut nft = Command::new("ip")
            .args(["netns", "exec", &pair.b, "nft", "-f", "-"])
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        nft.stdin.take().unwrap().write_all(rules.as_bytes()).unwrap();
        assert!(nft.wait().unwrap().success(), "nft rules");
        Link { pair, b_addr: format!("198.18.{subnet}.2") }
    }
}

fn can_use_namespaces() -> bool {
    // SAFETY-free check: `id -u` rather than libc, to keep this crate's tests unsafe-free.
    let root = Command::new("id").arg("-u").output().map(|o| o.stdout.starts_with(b"0\n")).unwrap_or(false);
    let nft = Command::new("nft").arg("--version").output().map(|o| o.status.success()).unwrap_or(false);
    if !root || !nft {
        eprintln!("skipped: namespace loss tests need root and nftables (root {root}, nft {nft})");
    }
    root && nft
}

/// Runs a forward UDP test across a link dropping `permille` of UDP; checks the loss.
fn loss_within_bounds(tag: &str, subnet: u8, permille: u32) {
    let link = Link::new(tag, subnet, permille);
    let srv = ServerProc::start_in(Some(&link.pair.b), &link.b_addr, &[]);
    let port = srv.port.to_string();
    // One datagram per packet: with GSO, veth carries a train of datagrams as one packet past
    // the nftables hook, which would then drop trains, not independent datagrams.
    let args = [
        "udp",
        &link.b_addr,
        "-p",
        &port,
        "-t",
        "3",
        "-b",
        "20M",
        "-l",
        "1000",
        "-J",
        "-i",
        "0",
        "--no-offload",
    ];
    let v = json_of(&run(Some(&link.pair.a), &args));
    let d = &directions_with_exact_identity(&v)[0];
    // Path loss: what the receiving host's own socket dropped is reported apart.
    let (sent, lost) = (u(d, "sent") as f64, (u(d, "lost") - u(d, "socket_drops")) as f64);
    let p = f64::from(permille) / 1000.0;
    let (mean, sd) = (sent * p, (sent * p * (1.0 - p)).sqrt());
    eprintln!(
        "injected {:.1}%: lost {lost} of {sent} ({:.2}%), expected {mean:.0} ± {sd:.1} (1σ)",
        p * 100.0,
        100.0 * lost / sent
    );
    // Six standard deviations of a binomial: a false alarm about once in 10⁹ runs.
    assert!(
        (lost - mean).abs() <= 6.0 * sd + 2.0,
        "lost {lost} of {sent}: expected {mean:.0} ± {:.0}",
        6.0 * sd
    );
    assert_eq!(u(d, "duplicates"), 0);
    // udp-rr across the same link: lost requests are counted and retried, the test ends.
    let v = json_of(&run(Some(&link.pair.a), &["udp-rr", &link.b_addr, "-p", &port, "-t", "1", "-J"]));
    let rr = &v["tests"][0]["summary"]["rr"];
    assert!(u(rr, "transactions") > 0, "{rr}");
    if permille >= 100 {
        assert!(u(rr, "lost") > 0, "{rr}");
    }
}

#[test]
fn one_percent_injected_loss_is_measured_within_bounds() {
    if can_use_namespaces() {
        loss_within_bounds("l1", 31, 10);
    }
}

#[test]
fn ten_percent_injected_loss_is_measured_within_bounds() {
    if can_use_namespaces() {
        loss_within_bounds("l10", 32, 100);
    }
}
