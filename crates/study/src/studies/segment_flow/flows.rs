//! Seed 004's figures read from traced segment flows (Figures 2, 3, 9/10 drawn, 14) and from
//! the grid's CPU figures (the panels (c)). A trace is one log of one run, as the paper's
//! were: a status from it is one reading of the set-up and says so.

use results::segment_flow::{FlowDirection, WireFindings};
use results::{TestResult, WarningKind};

use crate::compare::mbps;
use crate::status::{self, num, Sample, Status, Verdict};
use crate::Outcome;

/// Figure 2's traced cases: an 8 KiB window with 8192- and 8704-byte user data.
pub const FIG2: [&str; 2] = ["trace-w8K-u8192", "trace-w8K-u8704"];
/// Figure 14's traced cases: the 52428-byte window before (16384) and on (20480) the plateau.
pub const FIG14: [&str; 2] = ["trace-w52428-u16384", "trace-w52428-u20480"];
/// Figures 9 and 10's traced cases.
pub const FIG9_10: [&str; 2] = ["trace-w4K-u2048", "trace-w4K-u4096"];

/// The data direction of a traced case.
fn traced<'a>(out: &'a Outcome, key: &str) -> Option<&'a FlowDirection> {
    out.get(key)?.segment_flow.as_ref()?.directions.first()
}

/// Every data segment's size in the traced flow of `key`, as a sample over segments.
fn segment_sizes(out: &Outcome, key: &str) -> Option<Sample> {
    let d = traced(out, key)?;
    let values = d.sizes.iter().flat_map(|s| std::iter::repeat_n(f64::from(s.bytes), s.count as usize));
    Sample::new(values.collect())
}

/// Figure 2: with an 8 KiB window, 8704-byte user data leaves a short segment after the full
/// ones, so its segments are smaller on average than 8192-byte user data's.
pub fn figure2(out: &Outcome) -> Verdict {
    let (a, b) = (segment_sizes(out, FIG2[0]), segment_sizes(out, FIG2[1]));
    let v = status::ordered(&[("mean segment, u8192", a.as_ref(), "u8704", b.as_ref())]);
    let shares: Vec<String> =
        FIG2.iter().filter_map(|k| Some(format!("{k}: {}", sizes_line(traced(out, k)?)))).collect();
    let ev = format!(
        "{} (bytes, 95 % intervals over the traced segments of one run each). {}",
        v.evidence,
        shares.join("; ")
    );
    Verdict { evidence: ev, ..v }.because_level(
        "Linux fills each segment from the socket buffer whatever the write size (SunOS's socket \
         layer copied 4096 bytes at a time and sent each copy), so the 512 bytes an 8704-byte write \
         leaves join the next write's segment instead of going alone.",
    )
}

/// The three most common segment sizes with their shares.
fn sizes_line(d: &FlowDirection) -> String {
    let total: u64 = d.sizes.iter().map(|s| s.count).sum::<u64>().max(1);
    let mut sizes = d.sizes.clone();
    sizes.sort_by_key(|s| std::cmp::Reverse(s.count));
    let top: Vec<String> = sizes
        .iter()
        .take(3)
        .map(|s| format!("{} B {:.0} %", s.bytes, s.count as f64 * 100.0 / total as f64))
        .collect();
    top.join(", ")
}

/// Figure 3: on w4k-u4096 an acknowledgement sent by the delayed-ACK timer announces a window
/// below the 4096 set (bytes still in the receive buffer), and the segment sizes change.
pub fn figure3(out: &Outcome) -> Verdict {
    let Some(d) = traced(out, FIG9_10[1]) else { return Verdict::not_run("no traced flow of w4k-u4096") };
    let Some(w) = &d.wire else { return Verdict::not_run("the trace has no wire findings (no pcap)") };
    let end_ms = out.get(FIG9_10[1]).map_or(f64::MAX, |r| r.spec.duration_ms as f64);
    let test = d.window_series.iter().filter(|b| b.t_ms <= end_ms);
    let reduced = test.clone().filter(|b| b.window_min_bytes > 0 && b.window_min_bytes < 4096).count();
    let ev = format!(
        "{} of {} ACKs sent by the delayed-ACK timer; the announced window below 4096 bytes in {reduced} of {} \
         trace buckets; segments {} (one reading of the set-up: one traced run)",
        w.delayed_acks,
        w.acks,
        test.count(),
        sizes_line(d)
    );
    let status = match (w.delayed_acks > 0, reduced > 0) {
        (true, true) => Status::SameShape,
        (false, _) => return Verdict::new(Status::Differs, format!("{ev}: no ACK came from the timer")),
        (true, false) => {
            return Verdict::new(
                Status::Differs,
                format!("{ev}: the timer's ACKs announced the whole window"),
            )
        }
    };
    Verdict::new(status, ev)
}

/// Figure 14: on the plateau (u20480) the receiver acknowledges fewer bytes at a time than
/// before it (u16384), judged over the traced runs of each case (one data connection each).
pub fn figure14(out: &Outcome) -> Verdict {
    let (Some(before), Some(on)) = (bytes_per_ack(out, FIG14[0]), bytes_per_ack(out, FIG14[1])) else {
        return Verdict::not_run("the two traced flows (with wire findings) did not both run");
    };
    let v = status::ordered(&[("bytes per ACK, u16384", Some(&before), "u20480", Some(&on))]);
    let rate = |k: &str| out.get(k).and_then(mbps).map_or("–".to_string(), num);
    let ev = format!(
        "{} (over the traced runs, one data connection each: u16384 {}, u20480 {}); goodput {} and {} Mbit/s.",
        v.evidence,
        before.show(" bytes"),
        on.show(" bytes"),
        rate(FIG14[0]),
        rate(FIG14[1])
    );
    let v = Verdict { evidence: ev, ..v };
    // The cause is named only where the numbers show it: both cases near two segments an ACK.
    match two_segments(out) {
        Some(two) if [&before, &on].iter().all(|s| (s.mean() / two - 1.0).abs() <= NEAR) => {
            v.because(&ack_on_arrival(two))
        }
        _ => v,
    }
}

/// How near two segments per ACK both cases must be for Linux's ACK on arrival to be named.
const NEAR: f64 = 0.2;

/// Two full segments of the traced u16384 flow, bytes.
fn two_segments(out: &Outcome) -> Option<f64> {
    let w = traced(out, FIG14[0])?.wire.as_ref()?;
    (w.segment_bytes > 0).then(|| 2.0 * f64::from(w.segment_bytes))
}

/// Why Linux's flow does not change on the plateau, with two segments in bytes.
fn ack_on_arrival(two: f64) -> String {
    format!(
        "Both are within {:.0} % of two full segments ({} bytes): Linux acknowledges as data arrives, \
         about every second full segment, whatever size the application reads; the paper's change \
         came from BSD's window update after a read of at least two segments, which a 20480-byte \
         read is and a 16384-byte read is not.",
        NEAR * 100.0,
        num(two)
    )
}

/// Bytes acknowledged per ACK in each traced data connection of `key` (one per run), from
/// the wire findings; an archive written before those were kept per connection gives the
/// busiest connection's one reading.
fn bytes_per_ack(out: &Outcome, key: &str) -> Option<Sample> {
    let d = traced(out, key)?;
    let one = |w: &WireFindings| Some(w.segments_per_ack? * f64::from(w.segment_bytes));
    let values: Vec<f64> = if d.wire_connections.is_empty() {
        d.wire.iter().filter_map(one).collect()
    } else {
        d.wire_connections.iter().filter_map(one).collect()
    };
    Sample::new(values)
}

/// The grid's cases of the panels (c): 8192-byte user data at these windows.
const CPU_KEYS: [&str; 4] = ["w8K-u8192", "w16K-u8192", "w32K-u8192", "w52428-u8192"];

/// The panels (c): the receiving end busier than the sending one at each window. Where both
/// ends share one host, system-wide CPU counts both, so the ends cannot be told apart.
pub fn cpu_panels(out: &Outcome) -> Verdict {
    let runs: Vec<&TestResult> = CPU_KEYS.iter().filter_map(|k| out.get(k)).collect();
    if runs.is_empty() {
        return Verdict::not_run("the grid's 8192-byte cases did not run");
    }
    let util = |r: &TestResult, remote: bool| {
        let c = if remote { &r.summary.remote_cost } else { &r.summary.local_cost };
        c.as_ref().map(|c| c.util_pct)
    };
    if runs.iter().any(|r| r.warnings.iter().any(|w| w.kind == WarningKind::SameHost)) {
        let both: Vec<String> = CPU_KEYS
            .iter()
            .filter_map(|k| {
                Some(format!("{k} {} %", num(Sample::of(out.get(k)?, |r| util(r, false))?.mean())))
            })
            .collect();
        let why = format!(
            "the sender and the receiver ran on this one host (emulated path), and system-wide CPU counts both \
             ends, so the paper's transmit and receive panels cannot be told apart; both ends together: {} \
             (run `tcplab study segment-flow HOST` against a server on another host for the panels)",
            both.join(", ")
        );
        return Verdict::new(Status::NotReproducible, why);
    }
    let sample = |k: &str, remote: bool| Sample::of(out.get(k)?, |r| util(r, remote));
    let pairs: Vec<(String, Option<Sample>, Option<Sample>)> = CPU_KEYS
        .iter()
        .map(|k| (format!("receive CPU % at {k}"), sample(k, true), sample(k, false)))
        .collect();
    let refs: Vec<(&str, Option<&Sample>, &str, Option<&Sample>)> =
        pairs.iter().map(|(n, r, s)| (n.as_str(), r.as_ref(), "transmit", s.as_ref())).collect();
    status::ordered(&refs)
}

/// Figures 9 and 10 as the paper drew them, each traced case's panels, then the same
/// w4k-u4096 flow the Linux way (`linux`: the case's key) beside them as the evidence of
/// the difference.
pub fn plots(out: &Outcome, linux: &str) -> Vec<String> {
    let titled = FIG9_10.iter().map(|&k| {
        // Both traced cases have the 4 KiB window: the title names the user data size only,
        // so that "Fig. 10 … outstanding vs announced window" fits the plot's width.
        let label = k.trim_start_matches("trace-").to_lowercase();
        (k, format!("Fig. {} {}", fig_of(k), label.trim_start_matches("w4k-")))
    });
    titled
        .chain([(linux, "Linux's way u4096".to_string())])
        .filter_map(|(k, title)| Some(report::html::segment_flow_plots(&title, traced(out, k)?)))
        .flatten()
        .collect()
}

fn fig_of(key: &str) -> &'static str {
    if key.ends_with("u2048") {
        "9"
    } else {
        "10"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::outcome;
    use results::segment_flow::{SizeCount, WindowBucket};
    use results::{TestKind, TestSpec};

    fn done(key: &str, d: FlowDirection) -> crate::Done {
        let mut r = TestResult::new("stream", TestSpec::new(TestKind::TcpStream), "h:1", 0);
        r.spec.duration_ms = 2000;
        r.segment_flow = Some(results::SegmentFlow { directions: vec![d], ..Default::default() });
        crate::fixture::done(key, r)
    }

    fn sized(sizes: &[(u32, u64)]) -> FlowDirection {
        let sizes = sizes.iter().map(|&(bytes, count)| SizeCount { bytes, count }).collect();
        FlowDirection { sizes, ..FlowDirection::default() }
    }

    #[test]
    fn figure_2_orders_the_mean_segment_sizes_of_the_two_traces() {
        let out = outcome(vec![
            done(FIG2[0], sized(&[(8192, 400)])),
            done(FIG2[1], sized(&[(8192, 300), (512, 300)])),
        ]);
        let v = figure2(&out);
        assert_eq!(v.status, Status::SameShape, "{}", v.evidence);
        assert!(v.evidence.contains("512 B 50 %"), "{}", v.evidence);
        let flipped = outcome(vec![
            done(FIG2[0], sized(&[(8192, 300), (512, 300)])),
            done(FIG2[1], sized(&[(8192, 400)])),
        ]);
        assert_eq!(figure2(&flipped).status, Status::Differs);
        assert_eq!(figure2(&outcome(Vec::new())).status, Status::NotRun);
    }

    #[test]
    fn figure_3_needs_timer_acks_that_announce_a_smaller_window() {
        let flow = |delayed: u64, w: u64| {
            let window_series = vec![WindowBucket { t_ms: 5.0, window_min_bytes: w, ..Default::default() }];
            let wire = WireFindings { delayed_acks: delayed, acks: 50, ..Default::default() };
            FlowDirection { window_series, wire: Some(wire), ..sized(&[(4096, 10)]) }
        };
        let v = figure3(&outcome(vec![done(FIG9_10[1], flow(3, 3080))]));
        assert_eq!(v.status, Status::SameShape, "{}", v.evidence);
        assert_eq!(figure3(&outcome(vec![done(FIG9_10[1], flow(0, 3080))])).status, Status::Differs);
        assert_eq!(figure3(&outcome(vec![done(FIG9_10[1], flow(3, 4096))])).status, Status::Differs);
    }

    #[test]
    fn figure_14_orders_the_bytes_each_ack_acknowledges_over_the_traced_runs() {
        let flow = |per_ack: &[f64]| {
            let one = |&p: &f64| WireFindings {
                segments_per_ack: Some(p),
                segment_bytes: 9136,
                acks: 9,
                ..Default::default()
            };
            let wire_connections: Vec<WireFindings> = per_ack.iter().map(one).collect();
            FlowDirection {
                wire: wire_connections.first().cloned(),
                wire_connections,
                ..FlowDirection::default()
            }
        };
        let fig14 =
            |a: &[f64], b: &[f64]| figure14(&outcome(vec![done(FIG14[0], flow(a)), done(FIG14[1], flow(b))]));
        let v = fig14(&[2.0, 2.1, 1.9], &[1.5, 1.55, 1.45]);
        assert_eq!(v.status, Status::SameShape, "{}", v.evidence);
        assert!(v.evidence.contains("u16384 18272 ± 2270 bytes (95 % CI, n 3)"), "{}", v.evidence);
        let v = fig14(&[1.0, 1.05, 0.95], &[1.5, 1.55, 1.45]);
        assert_eq!(v.status, Status::Differs);
        // One and one and a half segments an ACK: not Linux's every second segment, so no cause.
        assert!(!v.evidence.contains("Linux acknowledges"), "{}", v.evidence);
        // The first quick run of 2026-11-27: reversed, both near two segments.
        let v = fig14(&[1.80, 1.85, 1.83], &[1.97, 2.0, 1.99]);
        assert_eq!(v.status, Status::Differs, "{}", v.evidence);
        assert!(v.evidence.ends_with(&ack_on_arrival(18272.0)), "{}", v.evidence);
        // The two readings that flipped between quick runs: within each other's spread.
        let v = fig14(&[1.949, 1.808, 1.9], &[1.872, 1.991, 1.85]);
        assert_eq!(v.status, Status::NotMeasurable, "{}", v.evidence);
        // One reading each (an older archive): no interval, so not measurable either.
        assert_eq!(fig14(&[2.0], &[1.5]).status, Status::NotMeasurable);
        assert_eq!(figure14(&outcome(Vec::new())).status, Status::NotRun);
    }

    #[test]
    fn the_cpu_panels_are_not_reproducible_when_both_ends_share_the_host() {
        let mut d = done("w8K-u8192", FlowDirection::default());
        d.result.warnings.push(results::Warning {
            kind: WarningKind::SameHost,
            message: "client and server share this host".into(),
            advice: String::new(),
        });
        d.result.summary.local_cost = Some(results::CpuCost { util_pct: 60.0, ..Default::default() });
        let v = cpu_panels(&outcome(vec![d]));
        assert_eq!(v.status, Status::NotReproducible, "{}", v.evidence);
        assert!(v.evidence.contains("w8K-u8192 60.0 %"), "{}", v.evidence);
        assert_eq!(cpu_panels(&outcome(Vec::new())).status, Status::NotRun);
    }
}
