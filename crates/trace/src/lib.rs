//! Segment-flow reconstruction and analysis from wire events (DESIGN.md §4, seed 004).
//! Sans-I/O: text lines of the kernel's tracepoints go in, rows of the segment table and
//! a bounded summary come out; the caller reads tracefs (netio) and writes the files.
//!
//! * [`mod@line`]: one `trace_pipe` line → a typed event (`tcp:tcp_probe`,
//!   `tcp:tcp_retransmit_skb`, the kernel's lost-event lines).
//! * [`segment`]: events → rows: which end, which way, which connection, relative sequence.
//! * [`table`]: rows → the CSV table and its documented columns.
//! * [`analysis`]: rows → per-direction sizes, outstanding vs window, stop-and-go, evidence.
//! * [`mod@wire`], [`wire_table`]: captured packets → the wire segment table, joined with the
//!   probe rows (cwnd, srtt, snd_wnd of the sending socket).
//! * [`time_seq`]: the wire table → a bounded tcptrace-style time-sequence graph.
//! * [`Trace`]: the three together for one test.
#![forbid(unsafe_code)]

pub mod analysis;
pub mod cost;
pub mod line;
pub mod live;
pub mod raw;
pub mod segment;
pub mod table;
pub mod time_seq;
pub mod wire;
pub mod wire_analysis;
pub mod wire_table;

use results::SegmentFlow;

pub use line::{parse, Event, ParseError};
pub use segment::{Dir, End, Kind, Segment, Segmenter};

/// The tracepoints a trace reads, as `system/event`.
pub const EVENTS: [&str; 2] = ["tcp/tcp_probe", "tcp/tcp_retransmit_skb"];

/// The trace of one test: lines in, table rows out as they come, the summary at the end.
#[derive(Debug)]
pub struct Trace {
    segmenter: Segmenter,
    rows: Vec<Segment>,
    events: u64,
    malformed: u64,
    first_error: Option<ParseError>,
}

impl Trace {
    /// A trace of a test against `server_port`.
    pub fn new(server_port: u16) -> Trace {
        Trace {
            segmenter: Segmenter::new(server_port),
            rows: Vec::new(),
            events: 0,
            malformed: 0,
            first_error: None,
        }
    }

    /// Reads one line; returns its table row, if it makes one.
    pub fn line(&mut self, line: &str) -> Option<&Segment> {
        let event = match parse(line) {
            Ok(Some(e)) => e,
            Ok(None) => return None,
            Err(e) => {
                self.malformed += 1;
                self.first_error.get_or_insert(e);
                return None;
            }
        };
        self.event(event)
    }

    /// Takes one event; returns its table row, if it makes one.
    pub fn event(&mut self, event: Event) -> Option<&Segment> {
        if !matches!(event, Event::Lost(_)) {
            self.events += 1;
        }
        let row = self.segmenter.push(event)?;
        self.rows.push(row);
        self.rows.last()
    }

    /// Events read (lost-event lines not counted).
    pub fn events(&self) -> u64 {
        self.events
    }

    /// The first line that did not parse, and why.
    pub fn first_error(&self) -> Option<&ParseError> {
        self.first_error.as_ref()
    }

    /// The trace-clock time the rows' `t_ns` count from.
    pub fn origin_ns(&self) -> Option<u64> {
        self.segmenter.origin_ns()
    }

    /// The rows so far.
    pub fn rows(&self) -> &[Segment] {
        &self.rows
    }

    /// The summary: `lost_in_kernel` adds the losses the instance's counters report beyond
    /// the `LOST` lines read.
    pub fn summary(&self, lost_in_kernel: u64) -> SegmentFlow {
        let mut ends: Vec<&str> = self.rows.iter().map(|r| r.end.name()).collect();
        ends.sort_unstable();
        ends.dedup();
        SegmentFlow {
            source: format!("tracefs {}", EVENTS.map(|e| e.replace('/', ":")).join(" + ")),
            ends: ends.into_iter().map(String::from).collect(),
            events: self.events,
            lost_events: self.segmenter.lost.max(lost_in_kernel),
            malformed_lines: self.malformed,
            files: Vec::new(),
            sources: Vec::new(),
            intervals: Vec::new(),
            directions: analysis::directions(&self.rows),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_counts_events_losses_and_malformed_lines() {
        let mut t = Trace::new(9391);
        for l in include_str!("../tests/fixtures/tracefs_lines.txt").lines() {
            t.line(l);
        }
        t.line("CPU:0 [LOST 5 EVENTS]");
        t.line("  x-1 [000] ..... 9.000001: tcp_probe: src=garbage");
        assert_eq!(t.rows().len(), 7);
        let s = t.summary(2);
        assert_eq!((s.events, s.lost_events, s.malformed_lines), (20, 5, 1));
        assert_eq!(s.ends, vec!["client", "server"]);
        assert_eq!(s.source, "tracefs tcp:tcp_probe + tcp:tcp_retransmit_skb");
        assert!(matches!(t.first_error(), Some(ParseError::Missing { .. } | ParseError::Value { .. })));
        assert_eq!(s.directions.len(), 1);
        assert_eq!(s.directions[0].direction, "client→server");
    }
}
