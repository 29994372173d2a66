//! `segment-cost`: the stack time of one segment against its size (seed 004's Figure 4).
//! One connection with `TCP_NODELAY`; per size (the `sizes` option, in order, an equal share
//! of the test's time each) the client sends one message and waits for an 8-byte reply, so
//! segments never overlap. The client measures the send side, the server the receive side,
//! each by two methods where it can — `SO_TIMESTAMPING` software timestamps (method A, no
//! root needed) and tracepoint pairs (method B, root and tracefs) — and says in one line
//! why a method did not work. docs/trace.md ("segment-cost") says what each interval holds.

mod client;
mod probe;
mod server;
pub mod view;

use std::time::Duration;

use results::segment_cost::{CostSide, SegmentCost, Way, SECTION};
use results::setting::ValueKind;
use results::{
    Direction, Figure, FigureValue, Metric, ParamValue, Role, Shape, SideMeasurement, Summary, TestKind,
    TestSpec,
};
use wire::Rejection;

use crate::registry::{self, Data, Info, TestType, Transport, TypeOption};
use crate::side::{End, Job, WorkDebug};
use crate::Error;

/// The reply to each message, bytes.
pub const REPLY_LEN: usize = 8;
/// The smallest message (room for the size it carries, and above a pure ACK's length).
pub const MIN_SIZE: u32 = 64;
/// The largest message.
pub const MAX_SIZE: u32 = 1 << 20;
/// At most this many sizes in one test.
pub const MAX_SIZES: usize = 32;
/// Seed 004's sizes: 64 B to 64 KiB, doubling.
pub const DEFAULT_SIZES: &str = "64,128,256,512,1024,2048,4096,8192,16384,32768,65536";

const OPTIONS: [TypeOption; 1] = [TypeOption {
    name: "sizes",
    kind: ValueKind::Text,
    about: "message sizes in bytes, comma-separated, run in this order (64 to 1M each)",
}];

/// The sizes of `spec`, checked.
pub fn sizes(spec: &TestSpec) -> Result<Vec<u32>, Rejection> {
    let text = match spec.options.get("sizes") {
        Some(ParamValue::Text(t)) => t.as_str(),
        Some(_) => {
            return Err(Rejection::field("options.sizes", "sizes is a comma-separated list of byte counts"))
        }
        None => DEFAULT_SIZES,
    };
    let field = |m: String| Rejection::field("options.sizes", m);
    let mut out = Vec::new();
    for part in text.split(',') {
        let v: u32 = part.trim().parse().map_err(|_| field(format!("'{part}' is not a byte count")))?;
        if !(MIN_SIZE..=MAX_SIZE).contains(&v) {
            return Err(field(format!("{v} is outside {MIN_SIZE}..{MAX_SIZE} bytes")));
        }
        if out.contains(&v) {
            return Err(field(format!("{v} is listed twice")));
        }
        out.push(v);
    }
    if out.len() > MAX_SIZES {
        return Err(field(format!("{} sizes, at most {MAX_SIZES}", out.len())));
    }
    Ok(out)
}

/// A message of `size` bytes whose first four carry the size.
pub fn message(size: u32) -> Vec<u8> {
    let mut m = crate::stream::payload(size as usize);
    m[..4].copy_from_slice(&size.to_be_bytes());
    m
}

/// The `segment-cost` test type.
#[derive(Debug)]
pub struct SegmentCostTest;

impl TestType for SegmentCostTest {
    fn info(&self) -> &'static Info {
        &Info {
            kind: TestKind::SegmentCost,
            command: "segment-cost",
            netperf_name: "none (seed 004, Figure 4)",
            about: "Send and receive stack time per segment against segment size (seed 004 Fig. 4): ping-pong of one message per size, timed by SO_TIMESTAMPING and by tracepoint pairs (root)",
            transport: Transport::TcpConnections,
            headline: Metric::TransactionRate,
            shape: Shape::Transactions,
        }
    }

    fn defaults(&self) -> TestSpec {
        let mut s = TestSpec { nodelay: true, ..TestSpec::new(TestKind::SegmentCost) };
        s.duration_ms = 11_000;
        s.options.insert("sizes".into(), ParamValue::Text(DEFAULT_SIZES.into()));
        s
    }

    fn label(&self, spec: &TestSpec) -> String {
        match sizes(spec) {
            Ok(v) => format!("segment-cost {} sizes", v.len()),
            Err(_) => "segment-cost".into(),
        }
    }

    fn check(&self, spec: &TestSpec) -> Result<(), Rejection> {
        if spec.parallel != 1 || spec.direction != Direction::Forward {
            return Err(Rejection::field("parallel", "segment-cost runs one connection, client to server"));
        }
        if !spec.nodelay {
            return Err(Rejection::field("nodelay", "segment-cost needs TCP_NODELAY (one send, one burst)"));
        }
        let n = sizes(spec)?.len() as u64;
        if spec.duration_ms / n.max(1) < 100 {
            return Err(Rejection::field("duration_ms", format!("at least 100 ms per size ({n} sizes)")));
        }
        Ok(())
    }

    fn data_connections(&self, _spec: &TestSpec) -> u32 {
        1
    }

    fn jobs(&self, spec: &TestSpec, end: End, data: Data) -> Result<Vec<Job>, Error> {
        let Data::Tcp(sockets) = data else { return Err(registry::unexpected(self, &data)) };
        let list = sizes(spec).map_err(Error::Rejected)?;
        let per_size = Duration::from_millis(spec.duration_ms / list.len().max(1) as u64);
        let mut jobs = Vec::with_capacity(1);
        for ds in sockets {
            let index = ds.index;
            let (sock, probe) = ds.split().map_err(crate::stream::prepare_error)?;
            let list = list.clone();
            let (role, work): (Role, crate::side::Work) = match end {
                End::Client => (Role::Request, Box::new(move |ctx| client::run(sock, list, per_size, ctx))),
                End::Server => (Role::Respond, Box::new(move |ctx| server::run(sock, list, ctx))),
            };
            jobs.push(Job { index, role, socket: Some(probe), work: WorkDebug(work) });
        }
        Ok(jobs)
    }

    fn summarize(
        &self,
        spec: &TestSpec,
        local: &SideMeasurement,
        remote: Option<&SideMeasurement>,
    ) -> Summary {
        let mut s = crate::summarize::transactions(spec, local, remote, self.headline(), 1);
        let mut notes = Vec::new();
        let mut side_of = |m: Option<&SideMeasurement>, end: &str| {
            let v = m?.sections.get(SECTION)?;
            side_from_section(v).map_err(|e| notes.push(format!("{end}'s figures ignored: {e}"))).ok()
        };
        let cost = SegmentCost {
            send: side_of(Some(local), "the sender"),
            receive: side_of(remote, "the receiver"),
        };
        s.figures = figures(&cost);
        s.own_plots = vec![view::plot("processing time per segment", &cost)];
        s.own_tables = vec![view::table(&cost)];
        s.figures.extend(notes.into_iter().map(|n| Figure::new("note", FigureValue::Text(n))));
        s.sections.insert(SECTION.into(), serde_json::to_value(&cost).unwrap_or_default());
        s
    }

    fn options(&self) -> &'static [TypeOption] {
        &OPTIONS
    }
}

/// One end's section, checked: it may come from a peer.
pub fn side_from_section(v: &serde_json::Value) -> Result<CostSide, String> {
    let side: CostSide =
        serde_json::from_value(v.clone()).map_err(|e| format!("segment-cost section: {e}"))?;
    if side.rows.len() > MAX_SIZES {
        return Err(format!("segment-cost section: {} rows, at most {MAX_SIZES}", side.rows.len()));
    }
    let dists = side.rows.iter().flat_map(|r| [r.timestamping.dist, r.tracepoints.dist]).flatten();
    if dists.clone().any(|d| !d.is_sane()) {
        return Err("segment-cost section: a time is negative, not a number or out of order".into());
    }
    let too_long = |t: &Option<String>| t.as_ref().is_some_and(|t| t.len() > 300);
    if too_long(&side.timestamping_off) || too_long(&side.tracepoints_off) {
        return Err("segment-cost section: a reason longer than 300 characters".into());
    }
    Ok(side)
}

/// One line per size: each side's median per segment by `SO_TIMESTAMPING` (tracepoints in
/// brackets); then how far the two methods agree, what was unpaired or lost, and why a
/// method did not work. The typed figures are the section's rows.
pub fn figures(c: &SegmentCost) -> Vec<Figure> {
    let mut out = Vec::new();
    let sizes = c.send.iter().chain(&c.receive).flat_map(|s| s.rows.iter().map(|r| r.size));
    let mut sizes: Vec<u32> = sizes.collect();
    sizes.sort_unstable();
    sizes.dedup();
    for size in sizes {
        let parts: Vec<String> = c
            .sides()
            .into_iter()
            .filter_map(|(way, side)| Some(format!("{} {}", way.name(), per_segment_text(side?, size, way)?)))
            .collect();
        let label = message_label(c, size);
        out.push(Figure::new(label, FigureValue::Text(parts.join(" · "))));
    }
    for (way, side) in c.sides() {
        let Some(side) = side else {
            out.push(note(format!("no {}-side figures (that end reported none)", way.name())));
            continue;
        };
        if let Some(r) = agreement(side, way) {
            out.push(Figure::new(
                format!("{} side, tracepoints ÷ SO_TIMESTAMPING", way.name()),
                FigureValue::Text(r),
            ));
        }
        let way = way.name();
        let unpaired: u64 = side.rows.iter().map(|r| r.timestamping.unpaired + r.tracepoints.unpaired).sum();
        let lost: u64 = side.rows.iter().map(|r| r.tracepoints.lost).sum();
        out.push(Figure::new(format!("{way} side unpaired"), FigureValue::Count(unpaired)));
        out.push(Figure::new(format!("{way} side trace events lost"), FigureValue::Count(lost)));
        for why in [&side.timestamping_off, &side.tracepoints_off].into_iter().flatten() {
            out.push(note(format!("{way} side: {why}")));
        }
    }
    out
}

/// `64.0 KiB message (2 segments at MSS 32.0 KiB), per segment`: the size is a message's,
/// the times each side's per segment (the sender's shared over the message's segments).
fn message_label(c: &SegmentCost, size: u32) -> String {
    let human = |b: u32| model::human::size(f64::from(b));
    let found = c
        .sides()
        .into_iter()
        .filter_map(|(_, s)| s)
        .find_map(|s| Some((s.rows.iter().find(|r| r.size == size)?, s.mss)));
    match found {
        Some((row, mss)) if mss > 0 => {
            let n = row.segments;
            let s = if n == 1 { "" } else { "s" };
            format!("{} message ({n} segment{s} at MSS {}), per segment", human(size), human(mss))
        }
        _ => format!("{} message, per segment", human(size)),
    }
}

fn note(text: String) -> Figure {
    Figure::new("note", FigureValue::Text(text))
}

/// `3.79 µs (tracepoints 3.06 µs)` for `size`, or `None` when neither method has it.
fn per_segment_text(side: &CostSide, size: u32, way: Way) -> Option<String> {
    let row = side.rows.iter().find(|r| r.size == size)?;
    let us = |ns: f64| model::human::micros(ns / 1e3);
    match row.per_segment_ns(way) {
        (Some(a), Some(b)) => Some(format!("{} (tracepoints {})", us(a), us(b))),
        (Some(a), None) => Some(us(a)),
        (None, Some(b)) => Some(format!("tracepoints {}", us(b))),
        (None, None) => None,
    }
}

/// `0.81–0.97 over 6 sizes`: the range of the methods' ratio, where both measured.
fn agreement(side: &CostSide, way: Way) -> Option<String> {
    let ratios: Vec<f64> = side
        .rows
        .iter()
        .filter_map(|r| match r.per_segment_ns(way) {
            (Some(a), Some(b)) if a > 0.0 => Some(b / a),
            _ => None,
        })
        .collect();
    let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = ratios.iter().copied().fold(0.0, f64::max);
    (!ratios.is_empty()).then(|| format!("{lo:.2}–{hi:.2} over {} sizes", ratios.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::{validate, Limits};

    fn with_sizes(text: &str) -> TestSpec {
        let mut s = SegmentCostTest.defaults();
        s.options.insert("sizes".into(), ParamValue::Text(text.into()));
        s
    }

    #[test]
    fn sizes_are_checked_by_option() {
        assert_eq!(sizes(&with_sizes("64, 128")).ok(), Some(vec![64, 128]));
        for bad in ["", "63", "64,64", "abc", "2000000"] {
            let r = validate(&with_sizes(bad), &Limits::default());
            assert_eq!(r.err().and_then(|r| r.field).as_deref(), Some("options.sizes"), "{bad}");
        }
        let mut short = with_sizes(DEFAULT_SIZES);
        short.duration_ms = 500;
        assert!(validate(&short, &Limits::default()).is_err(), "under 100 ms per size");
    }

    #[test]
    fn messages_carry_their_size() {
        assert_eq!(message(4096)[..4], 4096u32.to_be_bytes());
        assert_eq!(message(64).len(), 64);
    }

    #[test]
    fn a_peer_section_with_bad_numbers_is_refused() {
        let good = serde_json::json!({"mss": 1448, "rows": [{"size": 64, "messages": 3, "segments": 1,
            "timestamping": {"dist": {"n": 3, "median_ns": 5.0, "p99_ns": 9.0, "ci_lo_ns": 4.0, "ci_hi_ns": 6.0}, "unpaired": 0, "lost": 0},
            "tracepoints": {"dist": null, "unpaired": 1, "lost": 0}}], "timestamping_off": null, "tracepoints_off": "tracepoints: not root"});
        let side = side_from_section(&good).unwrap();
        let f = figures(&SegmentCost { send: Some(side), receive: None });
        assert!(
            f.iter().any(|f| f.label == "64 B message (1 segment at MSS 1.41 KiB), per segment"
                && f.value == FigureValue::Text(format!("send {}", model::human::micros(0.005)))),
            "{f:?}"
        );
        assert!(f.iter().any(|f| f.value == FigureValue::Text("send side: tracepoints: not root".into())));
        let mut bad = good.clone();
        bad["rows"][0]["timestamping"]["dist"]["median_ns"] = serde_json::json!(-1.0);
        assert!(side_from_section(&bad).is_err());
    }
}
