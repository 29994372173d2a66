//! Statistics of measurements: latency histograms with nearest-rank percentiles, netperf's
//! CPU cost figures (service demand, figure of merit), Student-t quantiles ([`student`]),
//! repeat-until-confident ([`confidence`]) the difference of two runs ([`compare`]), throughput
//! series in windows and the fairness of concurrent flows ([`series`]), whether a path got
//! slower than its own history ([`regression`])
//! and the receiver's accounting of UDP datagrams ([`datagrams`]). No I/O, no clock.
#![forbid(unsafe_code)]

pub mod compare;
pub mod confidence;
pub mod cost;
pub mod datagrams;
pub mod latency;
pub mod regression;
pub mod series;
pub mod student;

pub use latency::LatencyHistogram;
