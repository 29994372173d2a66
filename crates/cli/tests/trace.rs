//! `--trace DIR` end to end: the real binary traces a stream on loopback and over an emulated
//! path with tracefs and packet capture; the probe table must be plausible (sizes within a
//! GSO super-packet, outstanding bytes never above the announced window plus one segment),
//! the wire segment table must hold the same segments with the same sizes as the pcap files
//! read by tshark, the summary must be in the result and the HTML report must draw the
//! segment-flow plots in headless Chromium. Needs root (tracefs, AF_PACKET, and namespaces
//! for the path); elsewhere the tests say they skipped; without tshark the pcap comparison
//! says it skipped (CI installs it).
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

mod support;

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use support::{chromium, json_of, stderr, tcplab, ServerProc};

/// Largest payload of one segment as the kernel hands it over (a GSO/GRO super-packet).
const MAX_SUPER_PACKET: u64 = 65535;

fn root() -> bool {
    let out = Command::new("id").arg("-u").output().unwrap();
    let is_root = String::from_utf8_lossy(&out.stdout).trim() == "0";
    if !is_root {
        eprintln!("skipped: --trace needs root (tracefs)");
    }
    is_root
}

/// One row of the segment table, by column name.
struct Row(Vec<String>);

impl Row {
    fn get(&self, header: &[String], name: &str) -> String {
        let i = header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}"));
        self.0[i].clone()
    }

    fn num(&self, header: &[String], name: &str) -> u64 {
        self.get(header, name).parse().unwrap_or_else(|_| panic!("{name}: {:?}", self.0))
    }
}

fn table(path: &Path) -> (Vec<String>, Vec<Row>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    let rows: Vec<Row> = lines.map(|l| Row(l.split(',').map(String::from).collect())).collect();
    assert!(rows.iter().all(|r| r.0.len() == header.len()), "ragged rows");
    (header, rows)
}

/// Checks the table of one forward stream and returns its largest data segment.
fn check_stream_table(path: &Path) -> u64 {
    let (h, rows) = table(path);
    let data: Vec<&Row> =
        rows.iter().filter(|r| r.get(&h, "kind") == "data" && r.get(&h, "dir") == "c2s").collect();
    assert!(data.len() > 100, "{} data segments", data.len());
    assert!(data.iter().all(|r| r.get(&h, "end") == "server"), "data arrives at the server");
    let max_len = data.iter().map(|r| r.num(&h, "len")).max().unwrap();
    assert!(max_len > 0 && max_len <= MAX_SUPER_PACKET, "largest segment {max_len}");
    let acks: Vec<&Row> =
        rows.iter().filter(|r| r.get(&h, "end") == "client" && r.get(&h, "kind") == "ack").collect();
    assert!(acks.len() > 10, "{} ACKs at the sender", acks.len());
    for a in &acks {
        let (out, wnd) = (a.num(&h, "outstanding"), a.num(&h, "snd_wnd"));
        assert!(out <= wnd + max_len, "outstanding {out} above window {wnd} + one segment: {:?}", a.0);
    }
    let t: Vec<f64> = rows.iter().map(|r| r.get(&h, "t_us").parse().unwrap()).collect();
    assert!(t.windows(2).filter(|w| w[1] < w[0]).count() * 100 <= t.len(), "rows are in time order");
    max_len
}

fn check_summary(test: &Value) {
    let flow = &test["segment_flow"];
    assert_eq!(flow["ends"], serde_json::json!(["client", "server"]));
    assert!(flow["events"].as_u64().unwrap() > 100);
    let d = &flow["directions"][0];
    assert_eq!(d["direction"], "client→server");
    let evidence: Vec<&str> = d["evidence"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(
        evidence.iter().any(|e| e.contains("window-limited: outstanding = announced window")),
        "{evidence:?}"
    );
    let points = ["size_series", "window_series", "zoom"]
        .iter()
        .map(|k| d[k].as_array().unwrap().len())
        .sum::<usize>();
    assert!(points > 0 && points <= 5000, "{points} points");
}

/// The segments of one capture point of the wire table, as (dir, seq, len).
fn wire_segments(path: &Path, at: &str) -> Vec<(String, u64, u64)> {
    let (h, rows) = table(path);
    rows.iter()
        .filter(|r| r.get(&h, "at") == at)
        .map(|r| (r.get(&h, "dir"), r.num(&h, "seq"), r.num(&h, "len")))
        .collect()
}

/// The same segments as tshark reads them from `pcap` (the server on `port`).
fn tshark_segments(pcap: &Path, port: u16) -> Option<Vec<(String, u64, u64)>> {
    let out = Command::new("tshark")
        .args(["-n", "-r"])
        .arg(pcap)
        .args(["-o", "tcp.relative_sequence_numbers:TRUE", "-T", "fields", "-E", "separator=,"])
        .args(["-e", "tcp.dstport", "-e", "tcp.seq", "-e", "tcp.len"])
        .output();
    let out = match out {
        Ok(o) => o,
        Err(e) => {
            assert!(std::env::var_os("CI").is_none(), "tshark is required in CI (.ci/packages): {e}");
            eprintln!("skipped the tshark check of {}: {e}", pcap.display());
            return None;
        }
    };
    assert!(out.status.success(), "tshark: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let rows = text
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let dir = if f[0].parse::<u16>().unwrap() == port { "c2s" } else { "s2c" };
            (dir.to_string(), f[1].parse().unwrap(), f[2].parse().unwrap())
        })
        .collect();
    Some(rows)
}

/// The wire table: same segments as each pcap per tshark, NDJSON rows as many as CSV rows,
/// and outstanding never above the window announced to the sender plus one segment.
fn check_wire_table(dir: &Path, base: &str, points: &[&str], port: u16) {
    let csv = dir.join(format!("{base}.segments.csv"));
    for at in points {
        let ours = wire_segments(&csv, at);
        assert!(ours.len() > 50, "{} segments captured at {at}", ours.len());
        let pcap = dir.join(format!("{base}.{at}.pcap"));
        if let Some(theirs) = tshark_segments(&pcap, port) {
            assert_eq!(ours.len(), theirs.len(), "segments at {at}: table vs tshark");
            let differ = ours.iter().zip(&theirs).position(|(a, b)| a != b);
            assert_eq!(
                differ,
                None,
                "first differing segment at {at}: {:?}",
                differ.map(|i| (&ours[i], &theirs[i]))
            );
        }
    }
    let (h, rows) = table(&csv);
    let json = std::fs::read_to_string(dir.join(format!("{base}.segments.ndjson"))).unwrap();
    assert_eq!(json.lines().count(), rows.len(), "NDJSON and CSV rows");
    for line in json.lines().take(1000) {
        let v: Value = serde_json::from_str(line).unwrap();
        assert!(v["len"].is_u64() && v["dir"].is_string(), "{line}");
    }
    let sender_side = points[0];
    let sent: Vec<&Row> = rows
        .iter()
        .filter(|r| r.get(&h, "at") == sender_side && r.get(&h, "dir") == "c2s" && r.num(&h, "len") > 0)
        .filter(|r| !r.get(&h, "peer_wnd").is_empty() && !r.get(&h, "outstanding").is_empty())
        .collect();
    assert!(sent.len() > 50, "{} data segments at the sender", sent.len());
    for r in &sent {
        let (out, wnd, len) = (r.num(&h, "outstanding"), r.num(&h, "peer_wnd"), r.num(&h, "len"));
        assert!(out <= wnd + len.max(1448), "outstanding {out} above window {wnd} + one segment: {:?}", r.0);
    }
    assert!(sent.iter().any(|r| !r.get(&h, "cwnd").is_empty()), "cwnd joined from tcp_probe");
}

/// The time-sequence graph of the forward direction: as many data segments as the wire table
/// holds for its connection at its capture point, its bars within the sequence space the
/// table shows, bounded in size, and the standalone SVG beside the tables.
fn check_time_sequence(test: &Value, dir: &Path, base: &str) {
    let ts = &test["segment_flow"]["directions"][0]["time_sequence"];
    let (conn, at) = (ts["connection"].as_u64().unwrap().to_string(), ts["at"].as_str().unwrap());
    let (h, rows) = table(&dir.join(format!("{base}.segments.csv")));
    let data: Vec<&Row> = rows
        .iter()
        .filter(|r| r.get(&h, "at") == at && r.get(&h, "conn") == conn && r.get(&h, "dir") == "c2s")
        .filter(|r| r.num(&h, "len") > 0)
        .collect();
    assert_eq!(
        ts["data_segments"].as_u64().unwrap(),
        data.len() as u64,
        "segments in the graph vs the table"
    );
    let top = unwrapped_top(&h, &data);
    let mut views = vec![&ts["overview"]];
    views.extend(ts.get("zoom").filter(|z| !z.is_null()));
    for v in views {
        let bars = v["bars"].as_array().unwrap();
        assert!(
            !bars.is_empty() && bars.len() + v["acks"].as_array().unwrap().len() <= 4800,
            "{} bars",
            bars.len()
        );
        assert!(bars.iter().all(|b| b["end"].as_u64().unwrap() <= top), "a bar past {top}");
    }
    let svg = std::fs::read_to_string(dir.join(format!("{base}.tseq.svg"))).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("time-sequence") && svg.contains("class=\"segments\""));
}

/// The highest sequence number the table's data segments reach, their 32-bit `seq` unwrapped
/// in table order, each placed nearest the one before (a fast loopback sends more than 4 GiB
/// in a second).
fn unwrapped_top(h: &[String], data: &[&Row]) -> u64 {
    const WRAP: i128 = 1 << 32;
    let (mut last, mut top) = (None::<i128>, 0i128);
    for r in data {
        let seq = i128::from(r.num(h, "seq"));
        let at = match last {
            None => seq,
            Some(l) => [-WRAP, 0, WRAP]
                .map(|w| (l - l.rem_euclid(WRAP)) + seq + w)
                .into_iter()
                .min_by_key(|c| (c - l).abs())
                .unwrap(),
        };
        last = Some(at);
        top = top.max(at + i128::from(r.num(h, "len")));
    }
    u64::try_from(top).unwrap()
}

fn check_sources(test: &Value, capture: &str) {
    let sources = test["segment_flow"]["sources"].as_array().unwrap();
    let names: Vec<&str> = sources.iter().filter_map(|s| s["name"].as_str()).collect();
    assert!(names.iter().any(|n| n.starts_with(capture)), "{names:?}");
    assert!(names.iter().any(|n| n.starts_with("perf_event") || n.starts_with("tracefs")), "{names:?}");
    for s in sources {
        assert_eq!(s["ok"], true, "{s}");
        assert!(s["events"].as_u64().unwrap() > 0, "{s}");
        assert!(s["lost"].is_u64(), "{s}");
    }
}

fn check_report(path: &Path) {
    if let Some(r) = chromium::render(path, path.parent().unwrap()) {
        assert!(r.plots >= 5 && r.drawn == r.plots && r.errors == 0 && r.fetches == 0, "{r:?}");
    } else {
        assert!(std::env::var_os("CI").is_none(), "chromium is required in CI (.ci/packages)");
        eprintln!("skipped the browser check: chromium is not installed");
    }
    let html = std::fs::read_to_string(path).unwrap();
    for title in [
        "Segment flow",
        "client→server: segment size",
        "client→server: outstanding vs announced window",
        "outstanding vs window, zoomed",
        "client→server: time-sequence",
    ] {
        assert!(html.contains(title), "report lacks {title}");
    }
}

/// No tracefs instance of a process that has ended is left behind.
fn no_instances_left() {
    let Ok(dir) = std::fs::read_dir("/sys/kernel/tracing/instances") else { return };
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let pid = name
            .strip_prefix("tcplab-")
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(pid) = pid {
            assert!(Path::new(&format!("/proc/{pid}")).exists(), "instance {name} outlived its process");
        }
    }
}

/// The server's port of the path test: the destination of the wire table's first segment.
fn server_port(dir: &Path) -> u16 {
    let pcap = dir.join("trace/01-tcp-stream.client.pcap");
    let bytes = std::fs::read(pcap).unwrap();
    // File header (24), record header (16), IPv4 header (20), then the source and destination port.
    u16::from_be_bytes([bytes[24 + 16 + 22], bytes[24 + 16 + 23]])
}

fn run_traced(args: &[&str], dir: &Path) -> Value {
    run_traced_env(args, dir, &[])
}

/// As [`run_traced`], with `env` set for tcplab.
fn run_traced_env(args: &[&str], dir: &Path, env: &[(&str, &str)]) -> Value {
    let report = dir.join("report.html");
    let trace = dir.join("trace");
    let mut all = args.to_vec();
    let (trace, report) = (trace.to_str().unwrap(), report.to_str().unwrap());
    all.extend(["-t", "1", "-i", "0", "--json", "--no-store", "--trace", trace, "--report", report]);
    let out = support::command().args(&all).envs(env.iter().copied()).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    json_of(&out)["tests"][0].clone()
}

#[test]
fn loopback_stream_is_traced_at_both_ends() {
    if !root() {
        return;
    }
    let srv = ServerProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let port = srv.port();
    let t = run_traced(&["stream", "127.0.0.1", "-p", &port], dir.path());
    check_stream_table(&dir.path().join("trace/01-tcp-stream.probes.csv"));
    check_wire_table(&dir.path().join("trace"), "01-tcp-stream", &["client"], port.parse().unwrap());
    check_sources(&t, "AF_PACKET");
    check_summary(&t);
    assert!(dir.path().join("trace/01-tcp-stream.flow.json").is_file());
    assert!(std::fs::read_to_string(dir.path().join("trace/columns.txt")).unwrap().contains("outstanding"));
    check_time_sequence(&t, &dir.path().join("trace"), "01-tcp-stream");
    check_report(&dir.path().join("report.html"));
    no_instances_left();
}

/// A server on this host's loopback, even one that allows tracing, is not asked for its own
/// table (this end's sources see both ends): the client says so in one line.
#[test]
fn a_local_server_is_not_asked_for_its_table_and_the_client_says_why() {
    if !root() {
        return;
    }
    let srv = ServerProc::start(&["--allow-trace"]);
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    let args = ["stream", "127.0.0.1", "-p", &srv.port(), "-t", "0.5", "-i", "0", "--no-store", "--trace"];
    let out = support::command().args(args).arg(&trace).output().unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let why = "--trace: the server is on this host's loopback, where this end's capture and probes already record both ends";
    assert_eq!(err.matches(why).count(), 1, "{err}");
    assert!(!trace.join("01-tcp-stream.server.segments.csv").exists());
}

#[test]
fn rr_is_traced_both_ways() {
    if !root() {
        return;
    }
    let srv = ServerProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let port = srv.port();
    // The tracefs text reader, which perf rings replace where the kernel allows them.
    let t = run_traced_env(&["rr", "127.0.0.1", "-p", &port], dir.path(), &[("TCPLAB_TRACE_TEXT", "1")]);
    let names: Vec<&str> =
        t["segment_flow"]["sources"].as_array().unwrap().iter().filter_map(|s| s["name"].as_str()).collect();
    assert!(names.iter().any(|n| n.starts_with("tracefs tcp:tcp_probe")), "{names:?}");
    let dirs: Vec<&str> = t["segment_flow"]["directions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["direction"].as_str())
        .collect();
    assert_eq!(dirs, vec!["client→server", "server→client"]);
    let (h, rows) = table(&dir.path().join("trace/01-tcp-rr.probes.csv"));
    for (end, dir) in [("server", "c2s"), ("client", "s2c")] {
        let n = rows
            .iter()
            .filter(|r| r.get(&h, "kind") == "data" && r.get(&h, "end") == end && r.get(&h, "dir") == dir)
            .count();
        assert!(n > 100, "{n} requests or responses arriving at the {end}");
    }
    no_instances_left();
}

#[test]
fn an_emulated_path_is_traced_with_its_segment_size() {
    if !root() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let t = run_traced(&["stream", "--path", "rate=50mbit,delay=5ms"], dir.path());
    let max_len = check_stream_table(&dir.path().join("trace/01-tcp-stream.probes.csv"));
    let port = t["segment_flow"]["files"].as_array().map(|_| server_port(dir.path())).unwrap();
    check_wire_table(&dir.path().join("trace"), "01-tcp-stream", &["client", "server"], port);
    check_sources(&t, "emulator pump");
    check_summary(&t);
    // The emulated link carries Ethernet-sized packets: no super-packets arrive.
    let sizes = t["segment_flow"]["directions"][0]["sizes"].as_array().unwrap();
    assert!(sizes[0]["bytes"].as_u64().unwrap() <= 1460, "{sizes:?}");
    assert!(max_len <= 1460, "largest {max_len}");
    let srtt = table(&dir.path().join("trace/01-tcp-stream.probes.csv"));
    let (h, rows) = srtt;
    let rtts: Vec<u64> = rows
        .iter()
        .filter(|r| r.get(&h, "end") == "client" && r.get(&h, "kind") == "ack")
        .map(|r| r.num(&h, "srtt_us"))
        .collect();
    assert!(rtts.iter().any(|&r| r >= 10_000), "the path's 10 ms round trip shows in srtt");
    check_time_sequence(&t, &dir.path().join("trace"), "01-tcp-stream");
    check_report(&dir.path().join("report.html"));
    no_instances_left();
}

#[test]
fn live_summaries_stream_as_events() {
    if !root() {
        return;
    }
    let srv = ServerProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    let port = srv.port();
    let args = ["stream", "127.0.0.1", "-p", &port, "-t", "2", "-i", "1", "--json-stream", "--no-store"];
    let out = tcplab(&[&args[..], &["--trace", trace.to_str().unwrap()]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    let events: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let flows: Vec<&Value> = events.iter().filter(|e| e["event"] == "segment-flow").collect();
    assert!(!flows.is_empty(), "no segment-flow event in {text}");
    let f = &flows[0]["flow"];
    assert_eq!(f["direction"], "client→server");
    assert!(f["segments"].as_u64().unwrap() > 0 && f["max_segment_bytes"].as_u64().unwrap() > 0, "{f}");
    for k in
        ["mean_segment_bytes", "acks_per_segment", "max_outstanding_bytes", "window_bytes", "window_full_ms"]
    {
        assert!(f[k].is_number(), "{k} in {f}");
    }
    let end = events.iter().find(|e| e["event"] == "end").unwrap();
    let kept = end["result"]["segment_flow"]["intervals"].as_array().unwrap().len();
    assert_eq!(kept, flows.len(), "the result keeps what was shown");
}

/// A number in `line` just before `after` (`"… 12 rows ooo=1"` → 12 for `" rows ooo=1"`).
fn number_before(line: &str, after: &str) -> u64 {
    let at = line.find(after).unwrap_or_else(|| panic!("no {after:?} in {line}"));
    let digits: String = line[..at].chars().rev().take_while(|c| c.is_ascii_digit()).collect();
    digits.chars().rev().collect::<String>().parse().unwrap_or_else(|_| panic!("{line}"))
}

/// Over a path that loses 1 % and reorders (±1 ms jitter), a traced stream names its three
/// retransmission counts in one line and counts reordering apart: the capture at the
/// receiver's device flags resent segments retx=1 (gaps older than 3 ms: the path's 10 ms
/// round trip) and overtaken ones ooo=1 (younger gaps), never both on one row, and the line
/// agrees with the table.
#[test]
fn retransmissions_are_named_and_reordering_is_counted_apart() {
    if !root() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    let path = "rate=50mbit,delay=5ms,jitter=1ms,reorder,loss=1%";
    let args = ["stream", "--path", path, "-t", "2", "-i", "0", "--no-store", "--trace"];
    let out = support::command().args(args).arg(&trace).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = support::stdout(&out);
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("retransmissions: TCP_INFO retr"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains("(segments the sender resent, whole test)") && line.contains("tcp:tcp_retransmit_skb"),
        "{line}"
    );
    let (retx, ooo) = (number_before(line, " of "), number_before(line, " rows ooo=1"));
    assert!(retx > 0, "1 % loss resends segments: {line}");
    assert!(ooo > 0, "±1 ms jitter with reorder overtakes segments: {line}");
    let (h, rows) = table(&trace.join("01-tcp-stream.segments.csv"));
    let at_server: Vec<&Row> = rows
        .iter()
        .filter(|r| r.get(&h, "at") == "server" && r.get(&h, "dir") == "c2s" && r.num(&h, "len") > 0)
        .collect();
    assert!(
        at_server.iter().all(|r| r.num(&h, "retx") + r.num(&h, "ooo") <= 1),
        "a row both resent and reordered"
    );
    let (conn, _) = at_server
        .iter()
        .fold(std::collections::HashMap::<String, u64>::new(), |mut m, r| {
            *m.entry(r.get(&h, "conn")).or_default() += r.num(&h, "len");
            m
        })
        .into_iter()
        .max_by_key(|(_, b)| *b)
        .unwrap();
    let busiest = at_server.iter().filter(|r| r.get(&h, "conn") == conn);
    let count = |col: &str| busiest.clone().filter(|r| r.num(&h, col) == 1).count() as u64;
    assert_eq!((count("retx"), count("ooo")), (retx, ooo), "{line}");
    no_instances_left();
}

/// `--trace-level probes` runs only the socket probes and `wire` only the capture; each run
/// prints what its reader cost (CPU time and lost events) and names only the sources it ran.
#[test]
fn trace_levels_run_their_sources_and_say_what_they_cost() {
    if !root() {
        return;
    }
    let srv = ServerProc::start(&[]);
    for (level, file, absent, source) in [
        ("probes", "01-tcp-stream.probes.csv", "01-tcp-stream.client.pcap", "tcp:tcp_probe"),
        ("wire", "01-tcp-stream.segments.csv", "01-tcp-stream.probes.csv", "AF_PACKET"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("trace");
        let args = [
            "stream",
            "127.0.0.1",
            "-p",
            &srv.port(),
            "-t",
            "1",
            "-i",
            "0",
            "--no-store",
            "--trace-level",
            level,
            "--trace",
        ];
        let out = support::command().args(args).arg(&trace).output().unwrap();
        assert!(out.status.success(), "{level}: {}", stderr(&out));
        assert!(trace.join(file).is_file() && !trace.join(absent).exists(), "{level}");
        let text = support::stdout(&out);
        let cost = text
            .lines()
            .find(|l| l.trim_start().starts_with("trace cost:"))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(
            cost.contains(source) && cost.contains(" ms CPU (") && cost.contains("events lost"),
            "{level}: {cost}"
        );
        assert_eq!(cost.matches(" ms CPU").count(), 1, "{level}: one source: {cost}");
    }
    let bad = tcplab(&["stream", "127.0.0.1", "-p", &srv.port(), "--trace-level", "probes"]);
    assert_eq!(bad.status.code(), Some(2), "--trace-level without --trace");
    no_instances_left();
}
