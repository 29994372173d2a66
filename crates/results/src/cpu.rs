//! CPU used on one end over a test's measured window (measurement-methods.md §2).

use serde::{Deserialize, Serialize};

/// System-wide and per-process CPU over a window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuUsage {
    /// CPUs counted.
    pub cpus: u32,
    /// Length of the window.
    pub window_s: f64,
    /// Average utilisation over all CPUs, 0–100 %.
    pub util_pct: f64,
    /// CPU-cores busy: `util_pct / 100 × cpus`.
    pub cores_busy: f64,
    /// Utilisation of each CPU, 0–100 %.
    pub per_cpu_pct: Vec<f64>,
    /// The busiest CPU's id.
    pub busiest_cpu: u32,
    /// The busiest CPU's utilisation.
    pub busiest_pct: f64,
    /// Shares of all CPU time, in %: user (incl. nice).
    pub user_pct: f64,
    /// System (kernel, outside interrupts).
    pub system_pct: f64,
    /// Hard interrupts.
    pub irq_pct: f64,
    /// Soft interrupts (most network receive work).
    pub softirq_pct: f64,
    /// Stolen by a hypervisor.
    pub steal_pct: f64,
    /// tcplab's own process time.
    pub process: ProcessCpu,
}

/// CPU charged to the tcplab process itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessCpu {
    /// User time.
    pub user_s: f64,
    /// System time.
    pub system_s: f64,
    /// (user + system) / window, in % of one core.
    pub pct_of_core: f64,
    /// Time the process's cgroup was held back by a CPU quota in the window (cgroup
    /// `cpu.stat` throttled time), seconds; 0 when there is no quota or no controller.
    #[serde(default)]
    pub throttled_s: f64,
}
