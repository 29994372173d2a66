//! The one log line a server writes per test (or per refused connection): peer, key id or
//! `anonymous`, test type, measured time, bytes, result and reason. The logger adds the time:
//!
//! ```text
//! 2026-11-23T19:30:01.123Z INFO engine::server::record: 127.0.0.1:40112: finished tcp-stream key=alice duration_s=2.00 bytes=5368709120
//! 2026-11-23T19:30:02.456Z INFO engine::server::record: 127.0.0.1:40120: refused - key=mallory duration_s=0.00 bytes=0 reason="authentication failed (unknown key id or wrong secret)"
//! ```

use std::net::SocketAddr;

use results::SideMeasurement;

/// What is known of one control connection so far.
#[derive(Debug)]
pub struct Record {
    peer: SocketAddr,
    /// The key id the client presented (authenticated or not); `None`: anonymous.
    pub key: Option<String>,
    /// The test type, once the client asked for one.
    pub test: Option<&'static str>,
    measured_s: f64,
    bytes: u64,
}

impl Record {
    /// Nothing known but the peer.
    pub fn new(peer: SocketAddr) -> Record {
        Record { peer, key: None, test: None, measured_s: 0.0, bytes: 0 }
    }

    /// Takes the server side's time and bytes (all streams, both directions).
    pub fn measured(&mut self, side: &SideMeasurement) {
        self.measured_s = side.measured_s;
        self.bytes = side.streams.iter().map(|s| s.bytes_total).sum();
    }

    /// The line for `result` (`finished`, `refused`, `failed`) and why.
    pub fn line(&self, result: &str, reason: Option<&str>) -> String {
        // A reason can quote what the peer sent: escaped and quoted, so it stays one line.
        let reason = reason.map(|r| format!(" reason={r:?}")).unwrap_or_default();
        format!(
            "{}: {result} {} key={} duration_s={:.2} bytes={}{reason}",
            self.peer,
            self.test.unwrap_or("-"),
            self.key.as_deref().unwrap_or(crate::limits::ANONYMOUS),
            self.measured_s,
            self.bytes
        )
    }

    /// Logs a refusal's line, rate-limited per source ([`super::refusals`]).
    pub fn log_refused(&self, gate: &super::refusals::Refusals, reason: &str) {
        gate.log(self.peer.ip(), &self.line("refused", Some(reason)));
    }

    /// Logs the line at info level.
    pub fn log(&self, result: &str, reason: Option<&str>) {
        tracing::info!("{}", self.line(result, reason));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_names_everything_and_quotes_the_reason() {
        let mut r = Record::new("127.0.0.1:4000".parse().unwrap());
        assert_eq!(
            r.line("refused", Some("busy")),
            "127.0.0.1:4000: refused - key=anonymous duration_s=0.00 bytes=0 reason=\"busy\""
        );
        r.key = Some("alice".into());
        r.test = Some("tcp-stream");
        let mut side = SideMeasurement { measured_s: 2.0, ..Default::default() };
        let json = r#"{"index":0,"role":"recv","bytes":7,"bytes_total":7,"calls":1,"transactions":0,
            "socket":{"sndbuf_requested":null,"sndbuf_actual":0,"rcvbuf_requested":null,"rcvbuf_actual":0,
            "mss":0,"congestion":"","nodelay":false},"tcp":null,"placement":{"pinned_cpu":null,"cpus_seen":[],
            "thread_busy_pct":null},"udp":null}"#;
        let stream: results::StreamStats = serde_json::from_str(json).unwrap();
        side.streams = vec![stream.clone(), stream];
        r.measured(&side);
        assert_eq!(
            r.line("finished", None),
            "127.0.0.1:4000: finished tcp-stream key=alice duration_s=2.00 bytes=14"
        );
        let forged = "a \"b\"\n2026-11-23T19:30:03Z INFO x: 1.2.3.4:5: finished tcp-stream key=admin\x1b[2J";
        let line = r.line("failed", Some(forged));
        assert!(!line.contains('\n') && !line.contains('\x1b'), "{line}");
        assert!(line.ends_with(r#"reason="a \"b\"\n2026-11-23T19:30:03Z INFO x: 1.2.3.4:5: finished tcp-stream key=admin\u{1b}[2J""#), "{line}");
    }
}
