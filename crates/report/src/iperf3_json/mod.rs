//! `--iperf3-json`: a run's first test as the document `iperf3 -J` prints (start, intervals,
//! end), with iperf3's field names and units (seconds, bytes, bits_per_second, jitter_ms), so
//! tools that read iperf3's output read tcplab's.
//!
//! What tcplab does not know is `null`, never made up: the local address of each stream, the
//! cookie of a test against a tcplab server, the remote CPU when the server reported none.
//! `socket` numbers are stream numbers + 1 (iperf3 prints file descriptors). CPU figures are
//! process CPU in % of one core, as iperf3's are (tcplab's system-wide CPU is in `--json`).

mod end;
mod start;

use results::{Interval, Role, RunRecord, StreamInterval, TestKind, TestResult};
use serde_json::{json, Map, Value};

/// The document for `run`'s first test, pretty-printed; `{"error": …}` when it has none. A
/// failed test gets iperf3's top-level `error` string beside what was measured.
pub fn document(run: &RunRecord) -> String {
    match run.tests.first() {
        Some(t) => pretty(&test_document(run, t)),
        None => error_document(run.error.as_ref().map_or("no test ran", |e| e.message.as_str())),
    }
}

/// iperf3's document for a run that failed before any test: empty sections and `error`.
pub fn error_document(message: &str) -> String {
    pretty(&json!({ "start": {}, "intervals": [], "end": {}, "error": message }))
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

fn test_document(run: &RunRecord, t: &TestResult) -> Value {
    let mut doc = Map::new();
    doc.insert("start".into(), start::start(run, t));
    doc.insert(
        "intervals".into(),
        Value::Array(t.local.intervals.iter().map(|iv| interval(t, iv)).collect()),
    );
    doc.insert("end".into(), end::end(t));
    if let Some(e) = t.error.as_ref().or(run.error.as_ref()) {
        doc.insert("error".into(), Value::String(e.message.clone()));
    }
    Value::Object(doc)
}

/// Whether `t` is a UDP test (iperf3's UDP shapes apply).
fn is_udp(t: &TestResult) -> bool {
    t.spec.test == TestKind::UdpStream
}

/// `bytes` over `seconds` in bit/s, 0 for an empty window.
fn bps(bytes: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        bytes as f64 * 8.0 / seconds
    } else {
        0.0
    }
}

/// The role of local stream `index` (send or receive).
fn local_role(t: &TestResult, index: u32) -> Role {
    t.local.streams.iter().find(|s| s.index == index).map_or(Role::Send, |s| s.role)
}

fn interval(t: &TestResult, iv: &Interval) -> Value {
    let seconds = iv.end_s - iv.start_s;
    let streams: Vec<Value> = iv.streams.iter().map(|s| interval_stream(t, iv, s, seconds)).collect();
    let mut doc = json!({ "streams": streams });
    let forward: Vec<&StreamInterval> = iv
        .streams
        .iter()
        .filter(|s| (local_role(t, s.index) == Role::Send) == t.spec.client_sends())
        .collect();
    doc["sum"] = interval_sum(t, iv, &forward, seconds, t.spec.client_sends());
    if t.spec.direction == results::Direction::Bidir {
        let reverse: Vec<&StreamInterval> =
            iv.streams.iter().filter(|s| local_role(t, s.index) == Role::Recv).collect();
        doc["sum_bidir_reverse"] = interval_sum(t, iv, &reverse, seconds, false);
    }
    doc
}

fn interval_stream(t: &TestResult, iv: &Interval, s: &StreamInterval, seconds: f64) -> Value {
    let sender = local_role(t, s.index) == Role::Send;
    let mut v = json!({
        "socket": s.index + 1, "start": iv.start_s, "end": iv.end_s, "seconds": seconds,
        "bytes": s.bytes, "bits_per_second": bps(s.bytes, seconds),
    });
    if is_udp(t) {
        udp_fields(&mut v, s.udp.as_ref(), sender);
    } else if sender {
        v["retransmits"] = json!(s.retransmits);
        v["snd_cwnd"] = json!(s.cwnd_bytes);
        v["snd_wnd"] = Value::Null;
        v["rtt"] = json!(s.rtt_us);
        v["rttvar"] = Value::Null;
        v["pmtu"] = Value::Null;
    }
    v["omitted"] = json!(iv.omitted);
    v["sender"] = json!(sender);
    v
}

fn interval_sum(
    t: &TestResult,
    iv: &Interval,
    streams: &[&StreamInterval],
    seconds: f64,
    sender: bool,
) -> Value {
    let bytes: u64 = streams.iter().map(|s| s.bytes).sum();
    let mut v = json!({ "start": iv.start_s, "end": iv.end_s, "seconds": seconds, "bytes": bytes,
        "bits_per_second": bps(bytes, seconds) });
    if is_udp(t) {
        let counts = sum_udp(streams.iter().filter_map(|s| s.udp.as_ref()));
        udp_fields(&mut v, Some(&counts), sender);
    } else if sender {
        v["retransmits"] = json!(streams.iter().map(|s| s.retransmits).sum::<u64>());
    }
    v["omitted"] = json!(iv.omitted);
    v["sender"] = json!(sender);
    v
}

/// Adds iperf3's UDP fields: a sender's `packets`; a receiver's jitter, loss and packets.
fn udp_fields(v: &mut Value, c: Option<&results::UdpCounts>, sender: bool) {
    let c = c.cloned().unwrap_or_default();
    if sender {
        v["packets"] = json!(c.sent);
        return;
    }
    let packets = c.received.saturating_sub(c.duplicates) + c.lost;
    v["jitter_ms"] = json!(c.jitter_us / 1000.0);
    v["lost_packets"] = json!(c.lost);
    v["packets"] = json!(packets);
    v["lost_percent"] = json!(if packets > 0 { 100.0 * c.lost as f64 / packets as f64 } else { 0.0 });
}

fn sum_udp<'a>(counts: impl Iterator<Item = &'a results::UdpCounts>) -> results::UdpCounts {
    let mut total = results::UdpCounts::default();
    let mut n = 0.0;
    for c in counts {
        total.sent += c.sent;
        total.received += c.received;
        total.duplicates += c.duplicates;
        total.lost += c.lost;
        total.out_of_order += c.out_of_order;
        total.jitter_us += c.jitter_us;
        n += 1.0;
    }
    if n > 0.0 {
        total.jitter_us /= n;
    }
    total
}

#[cfg(test)]
mod tests;
