//! `tcplab server`'s authentication, limits and operation flags, and `tcplab keygen`.

use std::path::PathBuf;

use clap::Args;

use crate::parse;

/// Keys, anonymous limits and daemon operation of `tcplab server`.
#[derive(Debug, Args, Clone, Default)]
pub struct OpsArgs {
    /// Serve only clients holding one of these pre-shared keys (one `key ID SECRET
    /// [class=NAME]` line each, `class NAME max-duration=… ` lines for limits; see
    /// docs/security.md). SIGHUP re-reads it.
    #[arg(long, value_name = "FILE")]
    pub keys: Option<PathBuf>,
    /// Longest test an anonymous client may run, seconds.
    #[arg(long, value_name = "SECS", value_parser = parse::seconds_ms, allow_negative_numbers = true)]
    pub anon_max_duration: Option<u64>,
    /// Highest total rate of an anonymous paced (UDP) test, e.g. 100M (k/M/G = powers of 1000).
    #[arg(long, value_name = "RATE", value_parser = parse::rate_bps)]
    pub anon_max_rate: Option<u64>,
    /// Most parallel streams (-P) of an anonymous test.
    #[arg(long, value_name = "N")]
    pub anon_max_streams: Option<u32>,
    /// Most anonymous tests at once.
    #[arg(long, value_name = "N")]
    pub anon_max_concurrent: Option<u32>,
    /// Most anonymous tests per minute from one address.
    #[arg(long, value_name = "N")]
    pub anon_tests_per_minute: Option<u32>,
    /// Detach and run in the background (needs --pidfile; logs go to --logfile). iperf3's -D.
    #[arg(short = 'D', long, requires = "pidfile")]
    pub daemon: bool,
    /// Write the server's process id here once it listens, and hold a lock on it; removed on
    /// exit. A file another running server holds refuses the start (a stale one is taken over).
    #[arg(long, value_name = "FILE")]
    pub pidfile: Option<PathBuf>,
    /// Append the log (one line per test) to FILE instead of stderr; SIGHUP reopens it (for
    /// logrotate: rename, then `kill -HUP`).
    #[arg(long, value_name = "FILE")]
    pub logfile: Option<PathBuf>,
}

/// `tcplab keygen`.
#[derive(Debug, Args)]
pub struct KeygenArgs {
    /// The key's id (letters, digits, . _ -).
    #[arg(long, default_value = "client")]
    pub id: String,
    /// The limits class the server puts this key in (a `class` line of its keys file).
    #[arg(long)]
    pub class: Option<String>,
    /// Write the entry to FILE (created with mode 0600; an existing file is refused).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}
