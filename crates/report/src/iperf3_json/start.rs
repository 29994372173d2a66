//! The `start` object: connection, host, timestamp and the test's parameters.

use results::{Direction, End, RunRecord, TestResult};
use serde_json::{json, Value};

use super::is_udp;

pub(super) fn start(run: &RunRecord, t: &TestResult) -> Value {
    let (host, port) = split_addr(&t.server);
    let connected: Vec<Value> = t
        .local
        .streams
        .iter()
        .map(|s| {
            json!({ "socket": s.index + 1, "local_host": null, "local_port": null,
            "remote_host": host, "remote_port": port })
        })
        .collect();
    let first = t.local.streams.first().map(|s| s.socket.clone()).unwrap_or_default();
    let secs = t.started_unix_ms / 1000;
    let asked = t.spec.buffers(End::Client);
    let window = asked.send.or(asked.receive).unwrap_or(0);
    let cookie = t.local.sections.get("iperf3_cookie").cloned().unwrap_or(Value::Null);
    let mut v = json!({
        "connected": connected,
        "version": format!("tcplab {}", run.tool_version),
        "system_info": system_info(run),
        "timestamp": { "time": rfc1123(secs), "timesecs": secs },
        "connecting_to": { "host": host, "port": port },
        "cookie": cookie,
        "tcp_mss_default": first.mss,
        "target_bitrate": t.spec.rate_bps,
        "sock_bufsize": window,
        "sndbuf_actual": first.send.actual,
        "rcvbuf_actual": first.receive.actual,
        "test_start": test_start(t),
    });
    if is_udp(t) {
        if let Some(o) = v.as_object_mut() {
            o.remove("tcp_mss_default");
        }
    }
    v
}

fn test_start(t: &TestResult) -> Value {
    let s = &t.spec;
    json!({
        "protocol": if is_udp(t) { "UDP" } else { "TCP" },
        "num_streams": s.parallel,
        "blksize": s.send_len,
        "omit": s.omit_ms / 1000,
        "duration": s.duration_ms.saturating_sub(s.omit_ms) / 1000,
        "bytes": s.bytes_limit.unwrap_or(0),
        "blocks": 0,
        "reverse": u8::from(s.direction == Direction::Reverse),
        "tos": 0,
        "target_bitrate": s.rate_bps,
        "bidir": u8::from(s.direction == Direction::Bidir),
    })
}

fn system_info(run: &RunRecord) -> String {
    let h = &run.local_host;
    format!("Linux {} {} {}", h.hostname, h.kernel, h.cpu_model).trim().to_string()
}

/// `host:port` (or `[v6]:port`) split; the port is `null` when there is none.
fn split_addr(addr: &str) -> (String, Value) {
    match addr.rsplit_once(':') {
        Some((h, p)) if p.parse::<u16>().is_ok() => {
            (h.trim_matches(['[', ']']).to_string(), json!(p.parse::<u16>().unwrap_or(0)))
        }
        _ => (addr.to_string(), Value::Null),
    }
}

/// RFC 1123 time in GMT, as iperf3 prints it: `Mon, 23 Nov 2026 20:09:26 GMT`.
pub(super) fn rfc1123(unix_secs: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] =
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let (days, rem) = (unix_secs / 86_400, unix_secs % 86_400);
    let (y, m, d) = civil(days as i64);
    let weekday = DAYS[(days % 7) as usize];
    let month = MONTHS[(m - 1) as usize];
    format!("{weekday}, {d:02} {month} {y} {:02}:{:02}:{:02} GMT", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Days since 1970-01-01 → (year, month 1–12, day 1–31), proleptic Gregorian (H. Hinnant's
/// civil-from-days).
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}
