//! The log lines of refused and dropped connections, rate-limited per source (an IPv4
//! address, an IPv6 /64): the first [`LINES_PER_INTERVAL`] of each [`INTERVAL`] are
//! written, the rest counted, and one summary line per source says how many were not
//! written once its interval is over. An attacker's connections cost the log a few lines a
//! minute, not one each (issue 28: ~0.5 GB a day per address). Memory is bounded
//! ([`MAX_TRACKED`] sources); time is passed in, so the limits are tested without sleeping.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::pending::source;

/// Lines written per source and interval.
pub const LINES_PER_INTERVAL: u32 = 5;
/// The interval.
pub const INTERVAL: Duration = Duration::from_secs(60);
/// Most sources tracked at once; past it the oldest interval is summed up early.
pub const MAX_TRACKED: usize = 4096;

#[derive(Debug)]
struct Window {
    since: Instant,
    written: u32,
    held: u64,
    last: String,
}

/// Refusal lines per source.
#[derive(Debug, Default)]
pub struct Refusals {
    windows: Mutex<HashMap<IpAddr, Window>>,
}

impl Refusals {
    /// Logs `line` (a refusal of a connection from `ip`) unless its source is over its lines
    /// for this interval.
    pub fn log(&self, ip: IpAddr, line: &str) {
        for l in self.lines(ip, line, Instant::now()) {
            tracing::info!("{l}");
        }
    }

    /// Logs the summaries of the intervals over by now.
    pub fn flush(&self) {
        for l in self.flushed(Instant::now()) {
            tracing::info!("{l}");
        }
    }

    /// The lines to write for a refusal at `now`: a summary of the source's last interval if
    /// it is over, then `line` unless held back.
    fn lines(&self, ip: IpAddr, line: &str, now: Instant) -> Vec<String> {
        let src = source(ip);
        let mut map = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = Vec::new();
        if map.get(&src).is_some_and(|w| now.saturating_duration_since(w.since) >= INTERVAL) {
            out.extend(map.remove(&src).and_then(|w| summary(src, &w)));
        }
        if !map.contains_key(&src) && map.len() >= MAX_TRACKED {
            out.extend(evict_oldest(&mut map));
        }
        let w = map.entry(src).or_insert(Window { since: now, written: 0, held: 0, last: String::new() });
        if w.written < LINES_PER_INTERVAL {
            w.written += 1;
            out.push(line.to_string());
        } else {
            w.held += 1;
            w.last = line.to_string();
        }
        out
    }

    /// The summaries of the intervals over by `now` (those sources are forgotten).
    fn flushed(&self, now: Instant) -> Vec<String> {
        let mut map = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = Vec::new();
        map.retain(|src, w| {
            let over = now.saturating_duration_since(w.since) >= INTERVAL;
            if over {
                out.extend(summary(*src, w));
            }
            !over
        });
        out
    }

    /// Sources tracked now.
    #[cfg(test)]
    fn tracked(&self) -> usize {
        self.windows.lock().map(|m| m.len()).unwrap_or(0)
    }
}

fn evict_oldest(map: &mut HashMap<IpAddr, Window>) -> Option<String> {
    let (&src, _) = map.iter().min_by_key(|(_, w)| w.since)?;
    map.remove(&src).and_then(|w| summary(src, &w))
}

/// `198.18.0.66: 1200 more refusals in 60 s not logged (last: …)`, if any were held back.
fn summary(src: IpAddr, w: &Window) -> Option<String> {
    (w.held > 0).then(|| {
        format!("{src}: {} more refusals in {} s not logged (last: {})", w.held, INTERVAL.as_secs(), w.last)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(n: u32) -> IpAddr {
        IpAddr::from(std::net::Ipv4Addr::from(0xC612_0000 + n))
    }

    #[test]
    fn a_source_gets_a_few_lines_an_interval_then_one_summary() {
        let r = Refusals::default();
        let t0 = Instant::now();
        let mut written = Vec::new();
        for i in 0..1000u64 {
            written.extend(r.lines(ip(1), &format!("refused #{i}"), t0 + Duration::from_millis(i)));
        }
        assert_eq!(written.len(), LINES_PER_INTERVAL as usize);
        assert_eq!(r.lines(ip(2), "another source", t0).len(), 1, "each source has its own lines");
        assert!(r.flushed(t0 + INTERVAL - Duration::from_millis(1)).is_empty());
        let summaries = r.flushed(t0 + INTERVAL);
        assert_eq!(
            summaries,
            vec![format!("{}: 995 more refusals in 60 s not logged (last: refused #999)", ip(1))]
        );
        assert_eq!(r.tracked(), 0, "a source without held lines is forgotten silently");
        assert_eq!(r.lines(ip(1), "again", t0 + INTERVAL).len(), 1, "a new interval");
    }

    #[test]
    fn the_next_refusal_after_an_interval_brings_its_summary() {
        let r = Refusals::default();
        let t0 = Instant::now();
        for _ in 0..(LINES_PER_INTERVAL + 2) {
            r.lines(ip(1), "x", t0);
        }
        let out = r.lines(ip(1), "y", t0 + INTERVAL);
        assert_eq!(out.len(), 2);
        assert!(out[0].contains(": 2 more refusals"), "{out:?}");
        assert_eq!(out[1], "y");
    }

    #[test]
    fn memory_stays_bounded_and_nothing_held_is_lost() {
        let r = Refusals::default();
        let t0 = Instant::now();
        let mut summaries = 0;
        for n in 0..(MAX_TRACKED as u32 + 100) {
            for _ in 0..=LINES_PER_INTERVAL {
                let out = r.lines(ip(n), "x", t0 + Duration::from_micros(u64::from(n)));
                summaries += out.iter().filter(|l| l.contains("more refusals")).count();
            }
            assert!(r.tracked() <= MAX_TRACKED);
        }
        assert_eq!(summaries, 100, "each source evicted early is summed up");
    }
}
