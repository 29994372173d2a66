//! One text line of a tracefs `trace_pipe` → a typed event. The lines look like
//!
//! ```text
//!  session 127.0.0-20959 [001] ..s2.  3714.444175: tcp_probe: family=AF_INET src=127.0.0.1:35932 dest=127.0.0.1:9391 mark=0x0 data_len=44 snd_nxt=0x6b4e46f0 ...
//! ```
//!
//! The task name before the pid may hold spaces and brackets, so the line is read from the
//! event name outwards: the token before `: tcp_probe: ` is the timestamp, the fields after
//! it are `key=value` pairs in the order of the event's `print fmt`. Lines of other events
//! and comment lines are `Ok(None)`; the kernel's `CPU:N [LOST M EVENTS]` lines are counted.

use std::net::{IpAddr, SocketAddr};

/// A `tcp:tcp_probe` event: a segment arrived at an established socket. The socket's state
/// is as it was before the segment was processed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    /// Trace clock, ns.
    pub t_ns: u64,
    /// The socket's own address.
    pub src: SocketAddr,
    /// The peer's address.
    pub dst: SocketAddr,
    /// Payload bytes of the arriving segment.
    pub data_len: u32,
    /// Next sequence number the socket will send.
    pub snd_nxt: u32,
    /// Oldest unacknowledged sequence number.
    pub snd_una: u32,
    /// Congestion window, segments.
    pub snd_cwnd: u32,
    /// Slow-start threshold, segments.
    pub ssthresh: u32,
    /// The window the peer announced, bytes (scaled).
    pub snd_wnd: u32,
    /// Smoothed RTT, µs.
    pub srtt_us: u32,
    /// The window this socket announces, bytes.
    pub rcv_wnd: u32,
    /// The socket's cookie.
    pub sock_cookie: u64,
}

/// A `tcp:tcp_retransmit_skb` event: the socket retransmitted a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retransmit {
    /// Trace clock, ns.
    pub t_ns: u64,
    /// The retransmitting socket's address.
    pub src: SocketAddr,
    /// The peer's address.
    pub dst: SocketAddr,
}

/// What a line said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A segment's arrival.
    Probe(Probe),
    /// A retransmission.
    Retransmit(Retransmit),
    /// The kernel dropped this many events on one CPU (ring buffer full).
    Lost(u64),
}

/// Why a line could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// No `secs.frac:` timestamp before the event name.
    #[error("no timestamp before the event name")]
    Timestamp,
    /// A field the event always has is missing.
    #[error("field {field} missing")]
    Missing {
        /// The field.
        field: &'static str,
    },
    /// A field's value is not what its format prints.
    #[error("field {field}: cannot read {value:?}")]
    Value {
        /// The field.
        field: &'static str,
        /// What was there (at most 64 characters).
        value: String,
    },
}

const PROBE: &str = ": tcp_probe: ";
const RETRANSMIT: &str = ": tcp_retransmit_skb: ";

/// Reads one line. `Ok(None)`: a comment, a blank line or another event.
pub fn parse(line: &str) -> Result<Option<Event>, ParseError> {
    let line = line.trim_end();
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    if let Some(n) = lost(line) {
        return Ok(Some(Event::Lost(n)));
    }
    if let Some(at) = line.find(PROBE) {
        let t_ns = timestamp(&line[..at])?;
        return probe(t_ns, &Fields(&line[at + PROBE.len()..])).map(|p| Some(Event::Probe(p)));
    }
    if let Some(at) = line.find(RETRANSMIT) {
        let t_ns = timestamp(&line[..at])?;
        return retransmit(t_ns, &Fields(&line[at + RETRANSMIT.len()..])).map(|r| Some(Event::Retransmit(r)));
    }
    Ok(None)
}

/// `CPU:1 [LOST 12 EVENTS]` → 12.
fn lost(line: &str) -> Option<u64> {
    let rest = line.trim_start().strip_prefix("CPU:")?;
    let (_, tail) = rest.split_once("[LOST ")?;
    tail.strip_suffix(" EVENTS]")?.trim().parse().ok()
}

/// The last token of `head` (`3714.444175`) in ns; 6 or 9 fraction digits, or none.
fn timestamp(head: &str) -> Result<u64, ParseError> {
    let token = head.split_whitespace().next_back().ok_or(ParseError::Timestamp)?;
    let (secs, frac) = token.split_once('.').unwrap_or((token, ""));
    let secs: u64 = secs.parse().map_err(|_| ParseError::Timestamp)?;
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ParseError::Timestamp);
    }
    let frac_ns = if frac.is_empty() {
        0
    } else {
        let v: u64 = frac.parse().map_err(|_| ParseError::Timestamp)?;
        v * 10u64.pow(9 - frac.len() as u32)
    };
    secs.checked_mul(1_000_000_000).and_then(|s| s.checked_add(frac_ns)).ok_or(ParseError::Timestamp)
}

/// The `key=value` fields after the event name.
struct Fields<'a>(&'a str);

impl Fields<'_> {
    fn raw(&self, field: &'static str) -> Result<&str, ParseError> {
        self.0
            .split_whitespace()
            .find_map(|kv| kv.split_once('=').filter(|(k, _)| *k == field).map(|(_, v)| v))
            .ok_or(ParseError::Missing { field })
    }

    /// A number printed with `%u`, `%d` or `%#x` (`0x1f`, or `0` for zero).
    fn number(&self, field: &'static str) -> Result<u64, ParseError> {
        let v = self.raw(field)?;
        let parsed = match v.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16),
            None => v.parse(),
        };
        parsed.map_err(|_| bad(field, v))
    }

    fn u32(&self, field: &'static str) -> Result<u32, ParseError> {
        let v = self.number(field)?;
        u32::try_from(v).map_err(|_| bad(field, &v.to_string()))
    }

    /// A cookie or pointer printed in hex without `0x`.
    fn hex(&self, field: &'static str) -> Result<u64, ParseError> {
        let v = self.raw(field)?;
        u64::from_str_radix(v.trim_start_matches("0x"), 16).map_err(|_| bad(field, v))
    }

    fn socket(&self, field: &'static str) -> Result<SocketAddr, ParseError> {
        let v = self.raw(field)?;
        v.parse().map_err(|_| bad(field, v))
    }

    fn ip(&self, field: &'static str) -> Result<IpAddr, ParseError> {
        let v = self.raw(field)?;
        v.parse().map_err(|_| bad(field, v))
    }

    fn port(&self, field: &'static str) -> Result<u16, ParseError> {
        let v = self.number(field)?;
        u16::try_from(v).map_err(|_| bad(field, &v.to_string()))
    }
}

fn bad(field: &'static str, value: &str) -> ParseError {
    ParseError::Value { field, value: value.chars().take(64).collect() }
}

fn probe(t_ns: u64, f: &Fields) -> Result<Probe, ParseError> {
    Ok(Probe {
        t_ns,
        src: f.socket("src")?,
        dst: f.socket("dest")?,
        data_len: f.u32("data_len")?,
        snd_nxt: f.u32("snd_nxt")?,
        snd_una: f.u32("snd_una")?,
        snd_cwnd: f.u32("snd_cwnd")?,
        ssthresh: f.u32("ssthresh")?,
        snd_wnd: f.u32("snd_wnd")?,
        srtt_us: f.u32("srtt")?,
        rcv_wnd: f.u32("rcv_wnd")?,
        sock_cookie: f.hex("sock_cookie")?,
    })
}

fn retransmit(t_ns: u64, f: &Fields) -> Result<Retransmit, ParseError> {
    let v6 = f.raw("family")? == "AF_INET6";
    let (s, d) = if v6 { ("saddrv6", "daddrv6") } else { ("saddr", "daddr") };
    Ok(Retransmit {
        t_ns,
        src: SocketAddr::new(f.ip(s)?, f.port("sport")?),
        dst: SocketAddr::new(f.ip(d)?, f.port("dport")?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines captured on a Linux 6.18 host (loopback and an emulated path), verbatim.
    const CAPTURED: &str = include_str!("../tests/fixtures/tracefs_lines.txt");

    fn only(line: &str) -> Event {
        match parse(line) {
            Ok(Some(e)) => e,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn reads_a_captured_probe_line_whose_task_name_has_spaces() {
        let line = CAPTURED.lines().find(|l| l.contains("session 127.0.0-20959")).unwrap_or_default();
        let Event::Probe(p) = only(line) else { panic!("not a probe: {line}") };
        assert_eq!(p.t_ns, 3_714_444_175_000);
        assert_eq!(p.src, "127.0.0.1:35932".parse().unwrap_or(p.dst));
        assert_eq!(p.dst.port(), 9391);
        assert_eq!((p.data_len, p.snd_nxt, p.snd_una), (44, 0x6b4e_46f0, 0x6b4e_46f0));
        assert_eq!(
            (p.snd_cwnd, p.ssthresh, p.snd_wnd, p.srtt_us, p.rcv_wnd),
            (11, 2_147_483_647, 65536, 35, 65536)
        );
        assert_eq!(p.sock_cookie, 2);
    }

    #[test]
    fn reads_a_captured_retransmission() {
        let line = CAPTURED.lines().find(|l| l.contains("tcp_retransmit_skb")).unwrap_or_default();
        let Event::Retransmit(r) = only(line) else { panic!("not a retransmission: {line}") };
        assert_eq!(r.t_ns, 3_725_528_097_000);
        assert_eq!(r.src, "198.18.0.1:36862".parse().unwrap_or(r.dst));
        assert_eq!(r.dst, "198.18.0.2:37747".parse().unwrap_or(r.src));
    }

    #[test]
    fn every_captured_line_is_an_event_or_a_comment() {
        let mut events = 0;
        for line in CAPTURED.lines() {
            match parse(line) {
                Ok(Some(_)) => events += 1,
                Ok(None) => assert!(line.starts_with('#'), "{line}"),
                Err(e) => panic!("{line}: {e}"),
            }
        }
        assert_eq!(events, 20);
    }

    #[test]
    fn ipv6_zero_hex_and_lost_lines() {
        let line = "  x-1 [000] ..s1. 10.000000001: tcp_probe: family=AF_INET6 src=[::1]:5201 dest=[::1]:40000 mark=0x0 data_len=0 snd_nxt=0 snd_una=0x0 snd_cwnd=10 ssthresh=7 snd_wnd=512 srtt=9 rcv_wnd=1024 sock_cookie=a skbaddr=0 skaddr=0";
        let Event::Probe(p) = only(line) else { panic!("not a probe") };
        assert_eq!((p.t_ns, p.src.port(), p.snd_nxt, p.sock_cookie), (10_000_000_001, 5201, 0, 10));
        assert_eq!(only("CPU:1 [LOST 12 EVENTS]"), Event::Lost(12));
        assert_eq!(parse("  x-1 [000] ..... 1.5: sched_switch: prev=a"), Ok(None));
    }

    #[test]
    fn broken_lines_say_which_field() {
        let cut =
            "x-1 [000] ..... 5.000001: tcp_probe: family=AF_INET src=1.2.3.4:1 dest=1.2.3.4:2 data_len=7";
        assert_eq!(parse(cut), Err(ParseError::Missing { field: "snd_nxt" }));
        let wide = cut.replace("data_len=7", "data_len=7 snd_nxt=0x1ffffffff");
        assert!(matches!(parse(&wide), Err(ParseError::Value { field: "snd_nxt", .. })));
        assert_eq!(parse("tcp_probe: src=1"), Ok(None));
        assert_eq!(parse("x : tcp_probe: src=1"), Err(ParseError::Timestamp));
        assert_eq!(parse("x 1.1234567890: tcp_probe: src=1"), Err(ParseError::Timestamp));
    }

    proptest::proptest! {
        #[test]
        fn never_panics(s in "\\PC*") {
            let _ = parse(&s);
        }

        #[test]
        fn never_panics_near_the_format(t in 0u64..1u64<<40, len in "[0-9a-fx]{0,12}", tail in "[ =a-z0-9_:.]{0,40}") {
            let line = format!("a-1 [0] . {t}.5: tcp_probe: src=1.1.1.1:1 dest=2.2.2.2:2 data_len={len} {tail}");
            let _ = parse(&line);
        }
    }
}
