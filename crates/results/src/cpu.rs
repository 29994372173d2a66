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

impl CpuUsage {
    /// The busiest CPU's share unavailable to other work: its utilisation plus the time the
    /// hypervisor stole (the host's average steal; per-CPU steal is not carried), 0–100+ %.
    pub fn busiest_unavailable_pct(&self) -> f64 {
        self.busiest_pct + self.steal_pct
    }

    /// Whether the system-wide CPU time (all CPUs, in cores) is below tcplab's own process
    /// time by more than `slack_pct` of a core: the system counters missed time (e.g. a
    /// hypervisor's), so figures built on them — service demand, M — cannot be trusted.
    pub fn system_below_process(&self, slack_pct: f64) -> bool {
        self.window_s > 0.0 && self.cores_busy * 100.0 + slack_pct < self.process.pct_of_core
    }
}

/// Busiest CPU (busy + stolen), %, from which an end's CPU counts as saturated.
pub const SATURATED_CPU_PCT: f64 = 95.0;

/// Share of all CPU time stolen by a hypervisor, %, from which a result's figures are doubtful.
pub const STOLEN_PCT: f64 = 10.0;

/// Percentage points of a core by which the system figure may fall short of the process
/// time before it counts as inconsistent (tick rounding of /proc/stat, a short window).
pub const ACCOUNTING_SLACK_PCT: f64 = 10.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steal_makes_a_cpu_unavailable_and_a_short_system_figure_is_caught() {
        let c = CpuUsage {
            window_s: 2.0,
            cores_busy: 0.6,
            busiest_pct: 70.0,
            steal_pct: 27.0,
            process: ProcessCpu { pct_of_core: 81.0, ..ProcessCpu::default() },
            ..CpuUsage::default()
        };
        assert_eq!(c.busiest_unavailable_pct(), 97.0);
        assert!(c.system_below_process(ACCOUNTING_SLACK_PCT));
        let consistent = CpuUsage { cores_busy: 0.85, ..c };
        assert!(!consistent.system_below_process(ACCOUNTING_SLACK_PCT));
    }
}
