//! The `end` object: per-stream sender and receiver totals, the direction sums and CPU.

use results::{Direction, Role, SideMeasurement, StreamStats, TestResult};
use serde_json::{json, Value};

use super::{bps, is_udp, udp_fields};

pub(super) fn end(t: &TestResult) -> Value {
    let pairs = pairs(t);
    let streams: Vec<Value> = pairs.iter().map(|p| stream(t, p)).collect();
    let mut v = json!({ "streams": streams });
    let forward: Vec<&Pair> = pairs.iter().filter(|p| p.client_sends == t.spec.client_sends()).collect();
    if is_udp(t) {
        v["sum"] = udp_sum(t, &forward);
    }
    v["sum_sent"] = sum(t, &forward, true);
    v["sum_received"] = sum(t, &forward, false);
    if t.spec.direction == Direction::Bidir {
        let reverse: Vec<&Pair> = pairs.iter().filter(|p| !p.client_sends).collect();
        v["sum_sent_bidir_reverse"] = sum(t, &reverse, true);
        v["sum_received_bidir_reverse"] = sum(t, &reverse, false);
    }
    v["cpu_utilization_percent"] = cpu(t);
    if !is_udp(t) {
        let cc = |m: Option<&SideMeasurement>| {
            m.and_then(|m| m.streams.first()).map(|s| s.socket.congestion.clone()).filter(|c| !c.is_empty())
        };
        let (local, remote) = (cc(Some(&t.local)), cc(t.remote.as_ref()));
        let remote = remote
            .or_else(|| iperf3_section(t, "congestion_used").and_then(|v| v.as_str().map(String::from)));
        let (snd, rcv) = if t.spec.client_sends() { (local, remote) } else { (remote, local) };
        v["sender_tcp_congestion"] = json!(snd);
        v["receiver_tcp_congestion"] = json!(rcv);
    }
    v
}

/// One stream as seen by its sender and its receiver.
struct Pair<'a> {
    index: u32,
    client_sends: bool,
    sender: Option<&'a StreamStats>,
    receiver: Option<&'a StreamStats>,
}

fn pairs(t: &TestResult) -> Vec<Pair<'_>> {
    let remote = |i: u32| t.remote.as_ref().and_then(|r| r.streams.iter().find(|s| s.index == i));
    t.local
        .streams
        .iter()
        .map(|s| {
            let client_sends = s.role == Role::Send;
            let (sender, receiver) =
                if client_sends { (Some(s), remote(s.index)) } else { (remote(s.index), Some(s)) };
            Pair { index: s.index, client_sends, sender, receiver }
        })
        .collect()
}

fn seconds_of(t: &TestResult, sender: bool, client_sends: bool) -> f64 {
    let local = t.local.measured_s;
    let remote = t.remote.as_ref().map_or(local, |r| r.measured_s);
    if sender == client_sends {
        local
    } else {
        remote
    }
}

fn part(t: &TestResult, p: &Pair, sender: bool) -> Value {
    let s = if sender { p.sender } else { p.receiver };
    let seconds = seconds_of(t, sender, p.client_sends);
    let bytes = s.map(|s| s.bytes);
    let mut v = json!({ "socket": p.index + 1, "start": 0, "end": seconds, "seconds": seconds,
        "bytes": bytes, "bits_per_second": bytes.map(|b| bps(b, seconds)) });
    if sender && !is_udp(t) {
        let tcp = s.and_then(|s| s.tcp.as_ref());
        v["retransmits"] = json!(tcp.map(|t| t.retransmits));
        v["max_snd_cwnd"] = json!(tcp.map(|t| t.cwnd_bytes));
        v["max_snd_wnd"] = json!(tcp.map(|t| t.snd_wnd_bytes));
        v["max_rtt"] = json!(tcp.map(|t| t.rtt_max_us));
        v["min_rtt"] = json!(tcp.map(|t| t.rtt_min_us));
        v["mean_rtt"] = json!(tcp.map(|t| t.rtt_mean_us));
    }
    v["sender"] = json!(p.client_sends == t.spec.client_sends());
    v
}

fn stream(t: &TestResult, p: &Pair) -> Value {
    if !is_udp(t) {
        return json!({ "sender": part(t, p, true), "receiver": part(t, p, false) });
    }
    let mut v = part(t, p, false);
    udp_fields(&mut v, p.receiver.and_then(|r| r.udp.as_ref()), false);
    v["out_of_order"] = json!(p.receiver.and_then(|r| r.udp.as_ref()).map(|u| u.out_of_order));
    json!({ "udp": v })
}

fn sum(t: &TestResult, pairs: &[&Pair], sender: bool) -> Value {
    let client_sends = pairs.first().is_some_and(|p| p.client_sends);
    let seconds = seconds_of(t, sender, client_sends);
    let bytes: u64 =
        pairs.iter().filter_map(|p| if sender { p.sender } else { p.receiver }).map(|s| s.bytes).sum();
    let mut v = json!({ "start": 0, "end": seconds, "seconds": seconds, "bytes": bytes,
        "bits_per_second": bps(bytes, seconds) });
    if sender && !is_udp(t) {
        let r: Option<u64> =
            pairs.iter().map(|p| p.sender.and_then(|s| s.tcp.as_ref()).map(|t| t.retransmits)).sum();
        v["retransmits"] = json!(r);
    }
    if is_udp(t) {
        let counts = super::sum_udp(pairs.iter().filter_map(|p| p.receiver.and_then(|r| r.udp.as_ref())));
        udp_fields(&mut v, Some(&counts), false);
    }
    v["sender"] = json!(client_sends == t.spec.client_sends());
    v
}

fn udp_sum(t: &TestResult, pairs: &[&Pair]) -> Value {
    let mut v = sum(t, pairs, false);
    if let Some(o) = v.as_object_mut() {
        o.remove("retransmits");
    }
    v
}

/// Process CPU in % of one core, as iperf3 reports it; the remote's is `null` when unknown.
fn cpu(t: &TestResult) -> Value {
    let of = |m: &SideMeasurement| {
        m.cpu.as_ref().filter(|c| c.window_s > 0.0).map(|c| {
            let (u, s) = (100.0 * c.process.user_s / c.window_s, 100.0 * c.process.system_s / c.window_s);
            (u + s, u, s)
        })
    };
    let local = of(&t.local);
    let remote = t.remote.as_ref().and_then(of).or_else(|| {
        let f = |k| iperf3_section(t, k).and_then(|v| v.as_f64());
        Some((f("process_cpu_total_pct")?, f("process_cpu_user_pct")?, f("process_cpu_system_pct")?))
    });
    json!({
        "host_total": local.map(|c| c.0), "host_user": local.map(|c| c.1), "host_system": local.map(|c| c.2),
        "remote_total": remote.map(|c| c.0), "remote_user": remote.map(|c| c.1), "remote_system": remote.map(|c| c.2),
    })
}

/// A value iperf3 reported about itself (`--iperf3`: the remote's `iperf3` section).
fn iperf3_section<'a>(t: &'a TestResult, key: &str) -> Option<&'a Value> {
    t.remote.as_ref()?.sections.get("iperf3")?.get(key)
}
