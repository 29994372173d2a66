//! CPU cost of moving data (measurement-methods.md §3–4).
//!
//! * Service demand (netperf): µs of CPU per KB (1024 bytes) for stream tests, per transaction
//!   for request/response tests: `util% × 10⁴ × cpus / units_per_second`.
//! * Figure of merit (Sandia, seed 001), stated for multi-core hosts as **M_core** =
//!   Mbit/s ÷ CPU-cores busy (utilisation × CPU count). It does not change with idle CPUs, and
//!   `service demand [µs/KB] = 8192 / M_core`.

use results::{CpuCost, CpuUsage};

/// Service demand for `units_per_s` units (KB/s or transactions/s) at `cpu`.
pub fn service_demand_us(cpu: &CpuUsage, units_per_s: f64) -> f64 {
    if units_per_s <= 0.0 {
        return 0.0;
    }
    cpu.util_pct * 1.0e4 * f64::from(cpu.cpus) / units_per_s
}

/// M_core = Mbit/s ÷ cores busy; `None` when no CPU was measurably busy.
pub fn figure_of_merit(cpu: &CpuUsage, bits_per_s: f64) -> Option<f64> {
    (cpu.cores_busy > 0.0).then(|| bits_per_s / 1.0e6 / cpu.cores_busy)
}

/// CPU cost of a stream test moving `bits_per_s` of goodput.
pub fn stream_cost(cpu: &CpuUsage, bits_per_s: f64) -> CpuCost {
    CpuCost {
        util_pct: cpu.util_pct,
        cores_busy: cpu.cores_busy,
        service_demand_us: service_demand_us(cpu, bits_per_s / 8.0 / 1024.0),
        service_demand_unit: "us/KB".into(),
        figure_of_merit: figure_of_merit(cpu, bits_per_s),
    }
}

/// CPU cost of a request/response test at `trans_per_s`.
pub fn rr_cost(cpu: &CpuUsage, trans_per_s: f64) -> CpuCost {
    CpuCost {
        util_pct: cpu.util_pct,
        cores_busy: cpu.cores_busy,
        service_demand_us: service_demand_us(cpu, trans_per_s),
        service_demand_unit: "us/tran".into(),
        figure_of_merit: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(util_pct: f64, cpus: u32) -> CpuUsage {
        CpuUsage { cpus, util_pct, cores_busy: util_pct / 100.0 * f64::from(cpus), ..CpuUsage::default() }
    }

    #[test]
    fn netperf_worked_examples() {
        // 10 Gbit/s at 25 % of 8 CPUs: 1.64 µs/KB; M_core 5000; M_sys would be 40000.
        let c = stream_cost(&cpu(25.0, 8), 10.0e9);
        assert!((c.service_demand_us - 1.6384).abs() < 1e-3, "{}", c.service_demand_us);
        assert_eq!(c.figure_of_merit, Some(5000.0));
        assert!((8192.0 / c.figure_of_merit.unwrap() - c.service_demand_us).abs() < 1e-9);
        // 20,000 trans/s at 6 % of 4 CPUs: 12 µs/transaction.
        assert!((rr_cost(&cpu(6.0, 4), 20_000.0).service_demand_us - 12.0).abs() < 1e-9);
    }

    #[test]
    fn sandia_examples_on_one_cpu() {
        assert_eq!(figure_of_merit(&cpu(100.0, 1), 10.0e6), Some(10.0));
        assert_eq!(figure_of_merit(&cpu(50.0, 1), 7.5e6), Some(15.0));
        assert_eq!(figure_of_merit(&cpu(0.0, 1), 7.5e6), None);
    }
}
