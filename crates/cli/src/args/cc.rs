//! `tcplab compare-cc`: congestion controls compared over a path (seed 003).

use clap::Args;

use super::emu::PathArgs;
use super::{OutputArgs, StoreArgs};
use crate::parse;

/// `tcplab compare-cc [HOST] --path SPEC --cc reno,cubic,bbr -t 1000 --window 80`.
#[derive(Debug, Args)]
pub struct CompareCcArgs {
    /// Server to test against; without it and without --path, an embedded server on 127.0.0.1.
    pub host: Option<String>,
    /// Server control port (with HOST only).
    #[arg(short, long, default_value_t = 9180)]
    pub port: u16,
    #[command(flatten)]
    pub path: PathArgs,
    /// Congestion controls to compare, in order; those the kernel lacks are reported and left out.
    #[arg(long = "cc", value_name = "LIST", value_delimiter = ',', default_value = "reno,cubic,bbr")]
    pub controls: Vec<String>,
    /// Seconds per stream.
    #[arg(short = 't', long = "time", value_name = "SECS", value_parser = parse::seconds_ms, allow_negative_numbers = true, default_value = "60")]
    pub time_ms: u64,
    /// Seconds per short window (the seed's 80 s column).
    #[arg(long = "window", value_name = "SECS", value_parser = parse::seconds_ms, allow_negative_numbers = true, default_value = "10")]
    pub window_ms: u64,
    /// Seconds between throughput samples (interval reports).
    #[arg(short = 'i', long = "interval", value_name = "SECS", value_parser = parse::seconds_ms, allow_negative_numbers = true, default_value = "1")]
    pub interval_ms: u64,
    /// Seconds at the start of each stream left out of its figures (slow start).
    #[arg(short = 'O', long = "omit", value_name = "SECS", value_parser = parse::seconds_ms, allow_negative_numbers = true, default_value = "0")]
    pub omit_ms: u64,
    /// Run every control this many times, interleaved (reno, cubic, bbr, reno, …) to spread
    /// drift. (`--rounds` counts scheduled comparisons, with --every.)
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: u32,
    /// All controls at once through the path: per-flow shares, Jain's index, convergence time
    /// (a remote server needs --max-concurrent at least the number of controls).
    #[arg(long)]
    pub concurrent: bool,
    /// Seconds between RTT probes (TCP handshakes to the server's control port).
    #[arg(long, value_name = "SECS", value_parser = parse::seconds_ms, allow_negative_numbers = true, default_value = "0.2")]
    pub probe_interval: u64,
    /// Bytes per write (K, M = powers of 1024).
    #[arg(short = 'l', long = "len", value_parser = parse::size_u32, default_value = "128K")]
    pub len: u32,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub schedule: super::mesh::ScheduleArgs,
}
