//! Statistics of measurements: latency histograms with nearest-rank percentiles and netperf's
//! CPU cost figures (service demand, figure of merit). No I/O, no clock.
#![forbid(unsafe_code)]

pub mod cost;
pub mod latency;

pub use latency::LatencyHistogram;
