//! What the archive says about a stored run without loading it: one line of `tcplab history`,
//! and which process wrote the run (to tell a run in progress from one whose process is gone).

use crate::Headline;

/// One stored run, listed.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    /// Run id.
    pub id: i64,
    /// `test`, `suite` or `sweep`.
    pub kind: String,
    /// `running`, `complete`, `interrupted`, `failed` or `abandoned`.
    pub status: String,
    /// Start.
    pub started_unix_ms: u64,
    /// Server asked for.
    pub server: String,
    /// Tests (or sweep points) stored.
    pub tests: u32,
    /// Sweep points planned (sweeps only).
    pub points_total: Option<u32>,
    /// Label of the first test.
    pub first_label: Option<String>,
    /// The best headline over the run's tests: of the first metric (in `results::METRICS`
    /// order) that any test measured; `None` when no test measured one.
    pub best: Option<Headline>,
    /// Command line.
    pub command_line: Vec<String>,
    /// The process that wrote the run; `None` for runs stored before this was recorded.
    pub owner: Option<Owner>,
}

/// The process that writes a run, as the host it ran on knew it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// Process id.
    pub pid: u32,
    /// The process's start time in clock ticks since boot, when known (guards against a
    /// recycled pid).
    pub pid_start: Option<u64>,
    /// The kernel's boot id (`/proc/sys/kernel/random/boot_id`) when the run began.
    pub boot_id: String,
    /// Host name.
    pub hostname: String,
}
