//! `--trace` against a remote server, in two network namespaces joined by a veth pair: a
//! server with `--allow-trace` records its end and sends its segments back, written by the
//! client as `NN-<test>.server.segments.*` and checked against the client's own table (the
//! same byte ranges of each direction, outstanding never above the announced window plus one
//! segment at the server too); a server without the flag says why and the test still runs.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

mod support;

use std::path::Path;
use std::process::{Command, Output};

use support::veth::Veth;
use support::{command_in, json_of, ServerProc};

fn root() -> bool {
    let out = Command::new("id").arg("-u").output().unwrap();
    let is_root = String::from_utf8_lossy(&out.stdout).trim() == "0";
    if !is_root {
        eprintln!("skipped: tracing a remote end needs root (namespaces, AF_PACKET, tracefs)");
    }
    is_root
}

/// A 1 s traced stream from namespace `ns` to `server` at `addr`.
fn traced(ns: &str, addr: &str, server: &ServerProc, dir: &Path, extra: &[&str]) -> Output {
    command_in(Some(ns))
        .args(["stream", addr, "-p", &server.port(), "-t", "1", "-i", "0", "--json", "--no-store"])
        .args(extra)
        .arg("--trace")
        .arg(dir)
        .output()
        .unwrap()
}

/// The rows of a segment table: the header and each row's cells.
fn table(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    (header, lines.map(|l| l.split(',').map(String::from).collect()).collect())
}

fn col(h: &[String], name: &str) -> usize {
    h.iter().position(|c| c == name).unwrap_or_else(|| panic!("no column {name}"))
}

/// The connection (client port) that carried the most data: the data connection, not the
/// control connection (whose start the server's capture, begun at setup, did not see).
fn busiest(path: &Path) -> String {
    let (h, rows) = table(path);
    let (c, l) = (col(&h, "conn"), col(&h, "len"));
    let mut bytes = std::collections::BTreeMap::<String, u64>::new();
    for r in &rows {
        *bytes.entry(r[c].clone()).or_default() += r[l].parse::<u64>().unwrap();
    }
    bytes.into_iter().max_by_key(|(_, b)| *b).unwrap().0
}

/// The byte ranges `dir`'s data covered on connection `conn`, merged: what crossed, whatever
/// the segmentation (the sender's TSO super-packets and the receiver's GRO ones differ).
fn covered(path: &Path, dir: &str, conn: &str) -> Vec<(u64, u64)> {
    let (h, rows) = table(path);
    let (d, s, l, c) = (col(&h, "dir"), col(&h, "seq"), col(&h, "len"), col(&h, "conn"));
    let mut ranges: Vec<(u64, u64)> = rows
        .iter()
        .filter(|r| r[d] == dir && r[l] != "0" && r[c] == conn)
        .map(|r| {
            let seq: u64 = r[s].parse().unwrap();
            (seq, seq + r[l].parse::<u64>().unwrap())
        })
        .collect();
    ranges.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::new();
    for (a, b) in ranges {
        match merged.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    merged
}

#[test]
fn the_servers_end_comes_back_and_matches_the_clients() {
    if !root() {
        return;
    }
    let link = Veth::new("tlrm", "t", 78);
    let server = ServerProc::start_in(Some(&link.a), "198.18.78.1", &["--allow-trace"]);
    let dir = tempfile::tempdir().unwrap();
    let out = traced(&link.b, "198.18.78.1", &server, dir.path(), &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let test = &json_of(&out)["tests"][0];
    let sources = test["segment_flow"]["sources"].as_array().unwrap();
    let end = sources.iter().find(|s| s["name"] == "server end").unwrap_or_else(|| panic!("{sources:?}"));
    assert_eq!(end["ok"], true, "{end}");
    let client = dir.path().join("01-tcp-stream.segments.csv");
    let server_table = dir.path().join("01-tcp-stream.server.segments.csv");
    let conn = busiest(&client);
    let at_client = covered(&client, "c2s", &conn);
    assert!(!at_client.is_empty() && at_client[0].1 > 1 << 20, "{at_client:?}");
    assert_eq!(covered(&server_table, "c2s", &conn), at_client, "the server saw the bytes the client sent");
    let (h, rows) = table(&server_table);
    assert!(rows.iter().all(|r| r[col(&h, "at")] == "server"), "rows at the server");
    let (o, w, l) = (col(&h, "outstanding"), col(&h, "peer_wnd"), col(&h, "len"));
    let (d, c) = (col(&h, "dir"), col(&h, "conn"));
    // The data as it reached the receiver: in flight at most the window it announced, plus
    // one segment.
    let data: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| r[d] == "c2s" && r[c] == conn && r[l] != "0" && !r[o].is_empty() && !r[w].is_empty())
        .collect();
    assert!(data.len() > 50, "{} data segments at the server", data.len());
    for r in data {
        let (out, wnd, len): (u64, u64, u64) =
            (r[o].parse().unwrap(), r[w].parse().unwrap(), r[l].parse().unwrap());
        assert!(out <= wnd + len.max(1448), "outstanding {out} above window {wnd} + one segment: {r:?}");
    }
    let columns = std::fs::read_to_string(dir.path().join("columns.txt")).unwrap();
    assert!(columns.contains("server.segments"), "{columns}");
    let leftovers = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name().to_string_lossy().starts_with(&format!("tcplab-server-trace-{}", server.pid()))
        })
        .count();
    assert_eq!(leftovers, 0, "the server removed its files");
}

#[test]
fn a_server_without_the_flag_says_why_and_the_test_runs() {
    if !root() {
        return;
    }
    let link = Veth::new("tlrm", "r", 79);
    let server = ServerProc::start_in(Some(&link.a), "198.18.79.1", &[]);
    let dir = tempfile::tempdir().unwrap();
    let out = traced(&link.b, "198.18.79.1", &server, dir.path(), &["-R"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("the server did not trace its end")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("not started with --allow-trace"), "{err}");
    assert!(!dir.path().join("01-tcp-stream.server.segments.csv").exists());
    let test = &json_of(&out)["tests"][0];
    assert!(test["summary"]["directions"][0]["receiver_bps"].as_f64().unwrap() > 0.0);
    assert!(dir.path().join("01-tcp-stream.segments.csv").exists(), "the client's end is still traced");
}
