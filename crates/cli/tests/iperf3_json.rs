//! `--iperf3-json` has the shape of `iperf3 -J`: for TCP forward, -R and --bidir (tcplab
//! against a real iperf3 server) and UDP (tcplab against a tcplab server), every field path
//! of the document real iperf3 prints exists in tcplab's with the same JSON type (`null` where
//! tcplab does not know the value). Without an `iperf3` binary the tests say so and return.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

use std::collections::BTreeMap;
use std::process::{Command, Stdio};

use serde_json::Value;

use support::{stderr, tcplab, ServerProc};

/// Paths iperf3 3.12 prints that tcplab leaves out, with why.
const NOT_EMITTED: &[&str] = &[];

fn have_iperf3() -> bool {
    let ok = Command::new("iperf3").arg("--version").output().is_ok();
    if !ok {
        eprintln!("skipped: iperf3 is not installed (apt-get install iperf3)");
    }
    ok
}

/// Every path (arrays as `[]`) with its JSON type.
fn shape(v: &Value, path: String, out: &mut BTreeMap<String, &'static str>) {
    let kind = match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(a) => {
            a.iter().for_each(|x| shape(x, format!("{path}[]"), out));
            "array"
        }
        Value::Object(o) => {
            o.iter().for_each(|(k, x)| shape(x, format!("{path}.{k}"), out));
            "object"
        }
    };
    out.entry(path).or_insert(kind);
}

fn compare(theirs: &Value, ours: &Value, case: &str) {
    let (mut a, mut b) = (BTreeMap::new(), BTreeMap::new());
    shape(theirs, String::new(), &mut a);
    shape(ours, String::new(), &mut b);
    assert!(theirs.get("error").is_none() && a.len() > 50, "{case}: iperf3 itself failed: {theirs}");
    let mut problems = Vec::new();
    for (path, kind) in &a {
        match b.get(path) {
            _ if NOT_EMITTED.contains(&path.as_str()) => {}
            None => problems.push(format!("missing {path} ({kind})")),
            Some(&"null") => {}
            Some(k) if k != kind => problems.push(format!("{path}: iperf3 {kind}, tcplab {k}")),
            Some(_) => {}
        }
    }
    assert!(problems.is_empty(), "{case}: {problems:#?}");
}

fn iperf3_server() -> (std::process::Child, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new("iperf3")
        .args(["-s", "-B", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    (child, port)
}

fn iperf3_client(port: u16, extra: &[&str]) -> Value {
    let out = Command::new("iperf3")
        .args(["-c", "127.0.0.1", "-p", &port.to_string(), "-t", "1", "-J"])
        .args(extra)
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

fn ours(args: &[&str]) -> Value {
    let out = tcplab(args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn tcp_documents_have_iperf3s_shape() {
    if !have_iperf3() {
        return;
    }
    let (mut server, port) = iperf3_server();
    let addr = format!("127.0.0.1:{port}");
    for extra in [&[][..], &["-R"], &["--bidir"]] {
        let theirs = iperf3_client(port, extra);
        let mut args = vec!["stream", "--iperf3", &addr, "-t", "1", "--no-store", "--iperf3-json"];
        args.extend_from_slice(extra);
        compare(&theirs, &ours(&args), &format!("tcp {extra:?}"));
    }
    let _ = server.kill();
    let _ = server.wait();
}

#[test]
fn udp_documents_have_iperf3s_shape() {
    if !have_iperf3() {
        return;
    }
    let (mut server, port) = iperf3_server();
    let theirs = iperf3_client(port, &["-u", "-b", "10M"]);
    let _ = server.kill();
    let _ = server.wait();
    let native = ServerProc::start(&[]);
    let p = native.port.to_string();
    let doc = ours(&["udp", "127.0.0.1", "-p", &p, "-b", "10M", "-t", "1", "--no-store", "--iperf3-json"]);
    compare(&theirs, &doc, "udp");
}
