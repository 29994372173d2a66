//! tcplab's run pipeline: the one path every command that runs tests takes (DESIGN.md §4).
//!
//! ```text
//! cli (flags → Config + specs)
//!   └─ single::run / suite::run / sweep::run / compare_cc::run   what to run
//!        └─ run::Run                                   the life of a run
//!             begin: report path checked, archive opened, run recorded, place started
//!             test:  place.measure ─ engine::run_test (registry: jobs, summary, headline)
//!                    → diagnose::annotate → output::Live (text / NDJSON) → recorder (SQLite)
//!             end:   place stopped, run closed, final text / JSON document / NDJSON error,
//!                    --report written, exit status 0 or 2 with one error line
//! ```
//!
//! Where tests run is a [`place::Place`]: a remote server, an embedded loopback server, or an
//! emulated path ([`emulated`]) with its own server. Signals ([`signals`]) and a closed stdout
//! ([`output::emit`]) stop or quiet a run without losing what it measured. Scheduled rounds
//! ([`schedule`]) write to a local [`spool`] pushed to the shared archive.
#![forbid(unsafe_code)]

pub mod compare_cc;
pub mod config;
pub mod emulated;
pub mod mesh;
pub mod output;
pub mod place;
pub mod points;
pub mod probe_source;
pub mod progress;
pub mod recorder;
pub mod repeat;
pub mod rtt_probe;
pub mod run;
pub mod schedule;
pub mod segment_capture;
pub mod segment_table;
pub mod segment_trace;
pub mod server_child;
pub mod server_trace;
pub mod signals;
pub mod single;
pub mod spool;
pub mod suite;
pub mod sweep;

pub use config::{Config, PathOptions, Storage, Target};

/// Deadline for connecting to a server and for each step of its handshake.
pub const HANDSHAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);
