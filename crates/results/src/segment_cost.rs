//! The `segment-cost` test's own section (seed 004's Figure 4): per message size, the stack
//! time of a send and of a receive, by two methods — `SO_TIMESTAMPING` software timestamps
//! (method A) and tracepoint pairs from a private tracefs instance (method B). Each end
//! measures its own side (client: send, server: receive) and sends summaries, not samples.

use serde::{Deserialize, Serialize};

/// The name of the section in measurements and summaries.
pub const SECTION: &str = "segment-cost";

/// A distribution of intervals, ns: median, p99 and a 95 % confidence interval of the median
/// (order statistics, binomial ranks).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Dist {
    /// Samples.
    pub n: u64,
    /// Median, ns.
    pub median_ns: f64,
    /// 99th percentile, ns.
    pub p99_ns: f64,
    /// Lower end of the median's 95 % confidence interval, ns.
    pub ci_lo_ns: f64,
    /// Upper end, ns.
    pub ci_hi_ns: f64,
}

/// One method's figures at one size, at one end.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MethodRow {
    /// Per send call (send side: call → last byte handed to the device) or per receive
    /// (receive side, method A: last segment into the stack → the call returned; method B:
    /// per copied skb, into the stack → copied).
    pub dist: Option<Dist>,
    /// Packets (segments, or GSO super-packets) the device got per send call (method B).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packets_per_call: Option<f64>,
    /// Calls or copies that could not be paired with their other event.
    pub unpaired: u64,
    /// Events the kernel lost (method B) or lines that did not parse.
    pub lost: u64,
}

/// One size at one end.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SizeRow {
    /// Message size, bytes.
    pub size: u32,
    /// Messages exchanged at this size.
    pub messages: u64,
    /// Segments per message at the connection's MSS (⌈size / MSS⌉).
    pub segments: u32,
    /// Method A, `SO_TIMESTAMPING`.
    pub timestamping: MethodRow,
    /// Method B, tracepoint pairs.
    pub tracepoints: MethodRow,
}

/// What one end measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CostSide {
    /// The MSS the connection sent with.
    pub mss: u32,
    /// Per size, in the order run.
    pub rows: Vec<SizeRow>,
    /// Method A's state: `None` when it worked, else why not (one line).
    pub timestamping_off: Option<String>,
    /// Which transmit timestamp method A used (`TX_SOFTWARE`, or `TX_SCHED` where the device
    /// gives no software timestamp).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tx_point: Option<String>,
    /// Method B's state: `None` when it worked, else why not (one line).
    pub tracepoints_off: Option<String>,
}

/// Both ends summed up: the send side from the sender, the receive side from the receiver.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SegmentCost {
    /// The sending end (the client).
    pub send: Option<CostSide>,
    /// The receiving end (the server).
    pub receive: Option<CostSide>,
}

/// Which end's figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// The sender's (per send call, shared over its segments).
    Send,
    /// The receiver's (per segment already).
    Receive,
}

impl Way {
    /// `send` or `receive`.
    pub fn name(self) -> &'static str {
        match self {
            Way::Send => "send",
            Way::Receive => "receive",
        }
    }
}

impl SizeRow {
    /// How many of a figure's samples make one segment: a send time covers a whole call,
    /// shared over its segments; a receive time is per segment already.
    pub fn segments_per_sample(&self, way: Way) -> f64 {
        match way {
            Way::Send => f64::from(self.segments.max(1)),
            Way::Receive => 1.0,
        }
    }

    /// Each method's median per segment, ns: (`SO_TIMESTAMPING`, tracepoints).
    pub fn per_segment_ns(&self, way: Way) -> (Option<f64>, Option<f64>) {
        let per = self.segments_per_sample(way);
        (self.timestamping.dist.map(|d| d.median_ns / per), self.tracepoints.dist.map(|d| d.median_ns / per))
    }
}

impl SegmentCost {
    /// The section of a test's summary, when it has one that reads.
    pub fn of(summary: &crate::Summary) -> Option<SegmentCost> {
        serde_json::from_value(summary.sections.get(SECTION)?.clone()).ok()
    }

    /// Both sides with their [`Way`].
    pub fn sides(&self) -> [(Way, Option<&CostSide>); 2] {
        [(Way::Send, self.send.as_ref()), (Way::Receive, self.receive.as_ref())]
    }
}

impl Dist {
    /// The distribution of `samples` (sorted in place); `None` when empty.
    pub fn of(samples: &mut [u64]) -> Option<Dist> {
        if samples.is_empty() {
            return None;
        }
        samples.sort_unstable();
        let n = samples.len();
        let at = |rank: f64| samples[(rank.max(0.0) as usize).min(n - 1)] as f64;
        let half = 1.96 * (n as f64).sqrt() / 2.0;
        let mid = n as f64 / 2.0;
        let median = match n % 2 {
            1 => at(mid.floor()),
            _ => (at(mid - 1.0) + at(mid)) / 2.0,
        };
        Some(Dist {
            n: n as u64,
            median_ns: median,
            p99_ns: at((n as f64 * 0.99).ceil() - 1.0),
            ci_lo_ns: at((mid - half).floor() - 1.0),
            ci_hi_ns: at((mid + half).ceil()),
        })
    }

    /// Whether every value is finite, non-negative and in order.
    pub fn is_sane(&self) -> bool {
        let v = [self.median_ns, self.p99_ns, self.ci_lo_ns, self.ci_hi_ns];
        v.iter().all(|x| x.is_finite() && *x >= 0.0)
            && self.ci_lo_ns <= self.median_ns
            && self.median_ns <= self.ci_hi_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_p99_and_ci_by_order_statistics() {
        let mut v: Vec<u64> = (1..=100).rev().collect();
        let d = Dist::of(&mut v).unwrap();
        assert_eq!((d.n, d.median_ns, d.p99_ns), (100, 50.5, 99.0));
        assert!(d.ci_lo_ns < 50.0 && d.ci_hi_ns > 51.0 && d.ci_lo_ns >= 38.0 && d.ci_hi_ns <= 62.0, "{d:?}");
        assert!(d.is_sane());
        let one = Dist::of(&mut [7]).unwrap();
        assert_eq!((one.median_ns, one.p99_ns, one.ci_lo_ns, one.ci_hi_ns), (7.0, 7.0, 7.0, 7.0));
        assert!(Dist::of(&mut []).is_none());
    }
}
