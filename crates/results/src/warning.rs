//! Measurement-quality problems, stored with the result and shown with advice.

use serde::{Deserialize, Serialize};

use crate::cpu::{CpuUsage, ACCOUNTING_SLACK_PCT, SATURATED_CPU_PCT, STOLEN_PCT};

/// What kind of doubt a result carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WarningKind {
    /// The tool itself used most of a core: the number may be the tool's limit.
    ToolCpuSaturated,
    /// A CPU was saturated during the test.
    CpuSaturated,
    /// Client and server ran on the same host: CPU figures count both ends.
    SameHost,
    /// The host is a virtual machine: hypervisor work is invisible.
    Virtualized,
    /// The test was stopped before its end.
    Interrupted,
    /// Too little was measured to mean much.
    TooFewSamples,
    /// Retransmits seen on a path where they are reordering, not loss.
    SpuriousRetransmits,
    /// The kernel granted other socket buffer sizes than asked.
    BufferClamped,
    /// Request/response on one host without pinning: the scheduler chose whether the two ends
    /// shared a core, and latency depends on it.
    Unpinned,
    /// Both ends busy-polled on the same CPU: each spins through the other's time slice.
    SharedCoreSpin,
    /// Repeat-until-confident stopped at the iteration limit before reaching the width asked.
    ConfidenceNotMet,
    /// UDP: the receiver's socket buffer overflowed (the receiver could not keep up).
    ReceiverOverrun,
    /// UDP: sends failed on the sending host (ENOBUFS and the like).
    SendErrors,
    /// UDP: the sender did not reach the target rate.
    RateNotReached,
    /// The hypervisor stole a large share of CPU time: rates and CPU figures are unreliable.
    CpuStolen,
    /// A host's system-wide CPU figure is below tcplab's own process time: the system
    /// counters missed time, so service demand and M (built on them) are unreliable.
    CpuFiguresInconsistent,
    /// The goodput is far above the `--link` maximum: the link given is not the path measured.
    ReferenceExceeded,
    /// The link emulator (`--path`) released packets late: it, not the protocol, may have
    /// set the pace.
    EmulatorLate,
    /// A test asked for MPTCP and a connection went on as plain TCP.
    MptcpFallback,
    /// Iterations of a repeated test were set aside and run again: a hypervisor took a large
    /// share of CPU time during them.
    IterationsSetAside,
}

/// A typed warning plus the numbers and advice for a person.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Warning {
    /// Kind.
    pub kind: WarningKind,
    /// What was seen, with numbers.
    pub message: String,
    /// What to do about it.
    pub advice: String,
}

/// The "CPU saturated" warnings of a test's two ends (`(name, cpu)`): one per end whose busiest
/// CPU, stolen time counted as unavailable, reached [`SATURATED_CPU_PCT`]. Ends that share a
/// host read the same counters, so they get one warning naming the host, not two.
pub fn cpu_saturated(ends: [(&str, Option<&CpuUsage>); 2], shared_host: bool) -> Vec<Warning> {
    let busy: Vec<(&str, &CpuUsage)> = ends
        .into_iter()
        .filter_map(|(side, c)| c.map(|c| (side, c)))
        .filter(|(_, c)| c.busiest_unavailable_pct() >= SATURATED_CPU_PCT)
        .collect();
    let one = |who: String, c: &CpuUsage| {
        let stolen = match c.steal_pct >= 1.0 {
            true => format!(" (+{:.0}% of CPU time stolen by the hypervisor)", c.steal_pct),
            false => String::new(),
        };
        Warning {
            kind: WarningKind::CpuSaturated,
            message: format!(
                "{who} cpu{} was {:.0}% busy{stolen}: the result may be CPU-bound",
                c.busiest_cpu, c.busiest_pct
            ),
            advice: "compare with -P 2, or pin the ends to separate CPUs with -A 0,1 to see whether one core limits it".into(),
        }
    };
    match (shared_host, busy.as_slice()) {
        (true, [a, b, ..]) => {
            let c = if a.1.busiest_unavailable_pct() >= b.1.busiest_unavailable_pct() { a.1 } else { b.1 };
            vec![one("this host's (both ends')".into(), c)]
        }
        _ => busy.into_iter().map(|(side, c)| one(side.into(), c)).collect(),
    }
}

/// The "CPU stolen" warning when a hypervisor took [`STOLEN_PCT`] or more of an end's CPU time
/// (one warning for ends that share a host).
pub fn cpu_stolen(ends: [(&str, Option<&CpuUsage>); 2], shared_host: bool) -> Vec<Warning> {
    let stolen: Vec<(&str, f64)> = ends
        .into_iter()
        .filter_map(|(side, c)| c.map(|c| (side, c.steal_pct)))
        .filter(|(_, s)| *s >= STOLEN_PCT)
        .collect();
    let one = |who: &str, pct: f64| {
        Warning {
        kind: WarningKind::CpuStolen,
        message: format!("{pct:.0}% of {who}CPU time was stolen by the hypervisor: figures are unreliable"),
        advice: "rerun on a host whose CPUs are not shared with other guests; treat rates and CPU figures as lower bounds".into(),
    }
    };
    match (shared_host, stolen.as_slice()) {
        (true, [a, b, ..]) => vec![one("", a.1.max(b.1))],
        _ => stolen.into_iter().map(|(side, s)| one(&format!("the {side}'s "), s)).collect(),
    }
}

/// The warning of an end whose system-wide CPU time is below tcplab's own process time.
pub fn cpu_figures_inconsistent(ends: [(&str, Option<&CpuUsage>); 2]) -> Vec<Warning> {
    ends.into_iter()
        .filter_map(|(side, c)| c.map(|c| (side, c)))
        .filter(|(_, c)| c.system_below_process(ACCOUNTING_SLACK_PCT))
        .map(|(side, c)| Warning {
            kind: WarningKind::CpuFiguresInconsistent,
            message: format!(
                "{side}: the host's CPUs were {:.2} cores busy, less than tcplab's own {:.2} cores: the system counters missed time, so service demand and M are unreliable",
                c.cores_busy,
                c.process.pct_of_core / 100.0
            ),
            advice: "read tcplab's own process time (\"tcplab N% of a core\") instead of SD and M; on a virtual machine, see whether the hypervisor steals time".into(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ProcessCpu;

    fn cpu(busiest: f64, steal: f64) -> CpuUsage {
        CpuUsage { busiest_pct: busiest, steal_pct: steal, window_s: 1.0, ..CpuUsage::default() }
    }

    #[test]
    fn steal_counts_towards_saturation_and_one_host_gets_one_warning() {
        let (a, b) = (cpu(75.0, 27.0), cpu(99.0, 0.0));
        let apart = cpu_saturated([("client", Some(&a)), ("server", Some(&b))], false);
        assert_eq!(apart.len(), 2);
        assert!(apart[0].message.contains("client cpu0 was 75% busy (+27% of CPU time stolen"), "{apart:?}");
        let shared = cpu_saturated([("client", Some(&a)), ("server", Some(&b))], true);
        assert_eq!(shared.len(), 1);
        assert!(
            shared[0].message.starts_with("this host's (both ends') cpu0 was 75% busy (+27%"),
            "{shared:?}"
        );
        assert!(cpu_saturated([("client", Some(&cpu(75.0, 5.0))), ("server", None)], false).is_empty());
    }

    #[test]
    fn stolen_time_and_short_system_figures_are_warned() {
        let a = cpu(75.0, 34.0);
        let w = cpu_stolen([("client", Some(&a)), ("server", Some(&a))], true);
        assert_eq!(w.len(), 1);
        assert!(w[0].message.starts_with("34% of CPU time was stolen by the hypervisor"), "{w:?}");
        assert!(cpu_stolen([("client", Some(&cpu(75.0, 3.0))), ("server", None)], false).is_empty());
        let short = CpuUsage {
            cores_busy: 0.5,
            process: ProcessCpu { pct_of_core: 81.0, ..ProcessCpu::default() },
            ..a
        };
        let w = cpu_figures_inconsistent([("client", Some(&short)), ("server", None)]);
        assert!(w.len() == 1 && w[0].message.contains("less than tcplab's own 0.81 cores"), "{w:?}");
    }
}
