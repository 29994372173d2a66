//! Statistics of measurements: latency histograms with nearest-rank percentiles and netperf's
//! CPU cost figures (service demand, figure of merit), and the receiver's accounting of UDP
//! datagrams ([`datagrams`]). No I/O, no clock.
#![forbid(unsafe_code)]

pub mod cost;
pub mod datagrams;
pub mod latency;

pub use latency::LatencyHistogram;
