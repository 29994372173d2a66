//! A congestion-control comparison (`tcplab compare-cc`, seed 003): one TCP stream per
//! control, an RTT probe beside each, the stream's throughput over the whole run and over
//! consecutive windows, and with `--concurrent` how the flows shared the path.
//!
//! The streams themselves are ordinary `tcp-stream` results in the run's `tests`; what is
//! here points into that list by index and adds only what the comparison computes.

use serde::{Deserialize, Serialize};

/// A mean and the sample standard deviation of `n` values (sd 0 when `n` is 1).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct MeanSd {
    /// Mean.
    pub mean: f64,
    /// Sample standard deviation (n − 1 in the denominator).
    pub sd: f64,
    /// Number of values.
    pub n: u32,
}

/// The comparison as asked and as measured.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CcStudy {
    /// Controls asked for, in order (`--cc`).
    pub asked: Vec<String>,
    /// Controls this kernel offers (`net.ipv4.tcp_available_congestion_control`).
    pub available: Vec<String>,
    /// Controls asked for that the kernel lacks: reported, never replaced by another.
    pub unavailable: Vec<String>,
    /// All controls ran at once through the path (`--concurrent`).
    pub concurrent: bool,
    /// Rounds: each round runs every available control once (`--rounds`).
    pub rounds: u32,
    /// Length of the short windows, ms (`--window`).
    pub window_ms: u64,
    /// How the RTT was probed.
    pub probe: ProbeMethod,
    /// One entry per stream run, in the order they ran.
    pub runs: Vec<CcRun>,
    /// The probes' series: one per sequential stream, one per round when concurrent.
    pub probes: Vec<RttProbe>,
    /// Per round, when the controls ran concurrently.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fairness: Vec<CcFairness>,
}

/// The RTT probe's method and settings.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ProbeMethod {
    /// `tcp-connect`: the time a TCP handshake to the server's control port takes.
    pub method: String,
    /// Time between probes, ms.
    pub interval_ms: u64,
    /// A probe not answered within this time counts as lost, ms.
    pub timeout_ms: u64,
    /// Probes taken on the idle path before each stream (or round).
    pub idle_probes: u32,
}

/// One stream of one control.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CcRun {
    /// The congestion control (`cubic`, `bbr` …).
    pub congestion: String,
    /// Round, from 1.
    pub round: u32,
    /// Index of the stream's result in the run's `tests`.
    pub test: usize,
    /// Index of the probe series that ran beside it in `probes`.
    pub probe: usize,
    /// Throughput (receiver's goodput) per interval over the measured run, bit/s.
    pub throughput_bps: Option<MeanSd>,
    /// The window means across the full windows, bit/s.
    pub windowed_bps: Option<MeanSd>,
    /// Consecutive full windows of `window_ms`.
    pub windows: Vec<CcWindow>,
    /// σ/μ of the per-interval throughput (0 = perfectly steady).
    pub stability: Option<f64>,
    /// Segments the sender retransmitted.
    pub retransmits: u64,
    /// Per interval: its end (s since the stream started) and throughput (bit/s).
    pub series: Vec<(f64, f64)>,
}

/// One window of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct CcWindow {
    /// Start, s since the stream started.
    pub start_s: f64,
    /// End, s since the stream started.
    pub end_s: f64,
    /// Throughput of the window's intervals, bit/s.
    pub bps: MeanSd,
}

/// The RTT probe beside one stream (or one concurrent round).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RttProbe {
    /// Round, from 1.
    pub round: u32,
    /// The controls it ran beside.
    pub beside: Vec<String>,
    /// Median of the probes on the idle path just before, µs.
    pub idle_rtt_us: Option<f64>,
    /// Every probe during the stream, in order.
    pub samples: Vec<ProbeSample>,
    /// Probes not answered within the timeout.
    pub lost: u32,
    /// Answered probes' RTT: mean ± sd, µs.
    pub rtt_us: Option<MeanSd>,
    /// Median, µs.
    pub p50_us: Option<f64>,
    /// 95th percentile, µs.
    pub p95_us: Option<f64>,
    /// Largest, µs.
    pub max_us: Option<f64>,
    /// How far the median rose above the idle RTT, µs.
    pub rise_p50_us: Option<f64>,
}

/// One probe.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ProbeSample {
    /// When it was sent, s since the stream started.
    pub at_s: f64,
    /// Its round trip, µs; `None` when it was lost.
    pub rtt_us: Option<f64>,
}

/// How the concurrent flows of one round shared the path.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CcFairness {
    /// Round, from 1.
    pub round: u32,
    /// Each flow's share of the total throughput over the measured run.
    pub shares: Vec<CcShare>,
    /// Jain's fairness index of the flows' mean throughputs: 1/n (one flow takes all) … 1.
    pub jain: Option<f64>,
    /// Per-interval Jain's index at or above which the flows count as converged.
    pub threshold: f64,
    /// From the start until the per-interval index reached the threshold and stayed there;
    /// `None`: it never did.
    pub convergence_s: Option<f64>,
}

/// One flow's share.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CcShare {
    /// The congestion control.
    pub congestion: String,
    /// Mean throughput, bit/s.
    pub bps: f64,
    /// Fraction of the flows' total.
    pub share: f64,
}
