//! What a host is, recorded with every run so results can be compared across machines.

use serde::{Deserialize, Serialize};

/// System facts of one end.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    /// Host name.
    pub hostname: String,
    /// Kernel name and release, e.g. `Linux 6.18.44`.
    pub kernel: String,
    /// CPU model name.
    pub cpu_model: String,
    /// Online CPUs.
    pub cpus: u32,
    /// Congestion controls the kernel offers.
    pub congestion_available: Vec<String>,
    /// The default congestion control.
    pub congestion_default: String,
    /// Whether the host looks like a virtual machine (CPU figures are then approximate).
    pub virtualized: bool,
    /// tcplab version running there.
    pub tool_version: String,
}
