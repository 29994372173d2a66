//! One host's saturated core (loopback, `tcplab run` without HOST): both ends, and the
//! kernel's network work their calls cause, share the host's CPUs. A loopback sender's
//! thread does the whole transmit path and, in the same context, most of the receive path
//! (softirq), so the core it runs on can be full while the thread itself is charged less
//! than [`crate::rules::CPU_SATURATED_PCT`] — the rest goes to softirq, the peer's thread or
//! other work on that core. When the CPU an end's data thread ran on was saturated and the
//! thread took a large share of it, that end's CPU is the limit: named with its evidence
//! (the CPU, the thread's share, how much of tcplab's time was in the kernel and, when
//! traced, that TCP's windows had room), rather than "not identified".

use results::{Cause, Finding};

use crate::facts::{Facts, SideCpu};
use crate::rules::{traced_room, BUSIEST_CPU_PCT};

/// Share of one core a data thread must take, on its saturated CPU, to be that CPU's user.
pub const THREAD_ON_FULL_CORE_PCT: f64 = 50.0;

/// Weight: below the CPU and other-load rules (they measure a saturated thread, or another
/// process, directly), above the trace's word that the sender did not fill the windows.
const WEIGHT: f64 = 0.8;

/// On one host, the end whose data thread ran on a saturated CPU and took the most of it.
pub fn saturated_core(f: &Facts) -> Option<Finding> {
    if !f.same_host {
        return None;
    }
    let ends = [
        (Cause::SenderCpu, "sender", f.sender_cpu.as_ref()),
        (Cause::ReceiverCpu, "receiver", f.receiver_cpu.as_ref()),
    ];
    let (cause, who, c, cpu, cpu_pct, busy) = ends
        .into_iter()
        .filter_map(|(cause, who, c)| {
            let c = c?;
            let (cpu, pct) = c.thread_cpu?;
            let busy = c.thread_busy_pct?;
            let full = pct + c.steal_pct >= BUSIEST_CPU_PCT && busy >= THREAD_ON_FULL_CORE_PCT;
            full.then_some((cause, who, c, cpu, pct, busy))
        })
        .max_by(|a, b| a.5.total_cmp(&b.5))?;
    let trace = traced_room(f).map(|t| format!("; {t}")).unwrap_or_default();
    Some(Finding {
        cause,
        weight: WEIGHT,
        evidence: format!(
            "cpu{cpu} {cpu_pct:.0}% busy{}, where the {who}'s data thread ran {busy:.0}% of the time; {} of tcplab's CPU time in the kernel{}{trace}",
            stolen(c),
            pct(c.kernel_share),
            if c.shared { " (one process for both ends)" } else { "" },
        ),
        advice: format!(
            "the {who}'s core is full, mostly in the kernel's network path (on loopback the sender's thread does most of the receive work too): spread the load with -P 2, use larger {}, or pin the ends apart (-A 0,1)",
            if cause == Cause::SenderCpu { "writes (-l)" } else { "reads (--recv-len)" }
        ),
        bound_bps: None,
    })
}

fn stolen(c: &SideCpu) -> String {
    if c.steal_pct >= 1.0 {
        format!(" + {:.0}% stolen", c.steal_pct)
    } else {
        String::new()
    }
}

fn pct(frac: f64) -> String {
    format!("{:.0}%", frac * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::segment_flow::{FlowDirection, WireFindings};

    /// `tcplab run`'s loopback stream on a quiet 2-core host: one process for both ends,
    /// the sender's thread 72% of a core on cpu0, which was full; 93% of the time in the
    /// kernel; the receiver's thread on cpu1, not full.
    fn loopback() -> Facts {
        let side = |busy: f64, cpu: u32, cpu_pct: f64| SideCpu {
            process_pct: 110.0,
            threads: 2,
            shared: true,
            thread_busy_pct: Some(busy),
            thread_cpu: Some((cpu, cpu_pct)),
            kernel_share: 0.93,
            busiest_pct: 100.0,
            busiest_cpu: 0,
            cores_busy: 1.7,
            softirq_cores: 0.5,
            util_pct: 85.0,
            ..SideCpu::default()
        };
        Facts {
            direction: "client→server".into(),
            client_sends: true,
            goodput_bps: 20e9,
            same_host: true,
            mss_bytes: Some(65483),
            send_len: 131_072,
            recv_len: 131_072,
            avg_write_bytes: Some(131_072.0),
            avg_read_bytes: Some(131_072.0),
            sender_cpu: Some(side(72.0, 0, 100.0)),
            receiver_cpu: Some(side(40.0, 1, 70.0)),
            ..Facts::default()
        }
    }

    #[test]
    fn a_loopback_sender_on_a_full_core_is_named_with_its_evidence() {
        let f = loopback();
        let d = crate::diagnose(&f);
        assert_eq!(d.primary.cause, Cause::SenderCpu, "{d:?}");
        assert_eq!(
            d.primary.evidence,
            "cpu0 100% busy, where the sender's data thread ran 72% of the time; 93% of tcplab's CPU time in the kernel (one process for both ends)"
        );
        assert!(d.primary.advice.contains("-P 2"), "{}", d.primary.advice);
    }

    #[test]
    fn traced_the_finding_cites_the_trace() {
        let mut f = loopback();
        let wire = WireFindings {
            traced_ms: 4000.0,
            unlimited_time: 0.9,
            window_limited_time: 0.04,
            cwnd_limited_time: 0.06,
            ..Default::default()
        };
        f.segment_flow = Some(FlowDirection { wire: Some(wire), ..Default::default() });
        let d = crate::diagnose(&f);
        assert_eq!(d.primary.cause, Cause::SenderCpu);
        assert!(
            d.primary.evidence.ends_with("; trace: window and cwnd had room 90% of 4000 ms of sending (window-limited 4%, cwnd-limited 6%): the sender did not fill what TCP allowed"),
            "{}",
            d.primary.evidence
        );
    }

    #[test]
    fn only_a_full_core_on_one_host_with_the_thread_on_it() {
        let mut f = loopback();
        f.same_host = false;
        assert!(saturated_core(&f).is_none(), "separate hosts: the CPU rules measure each end");
        let mut f = loopback();
        f.sender_cpu = f.sender_cpu.map(|c| SideCpu { thread_cpu: Some((0, 80.0)), ..c });
        assert!(saturated_core(&f).is_none(), "its core was not full");
        let mut f = loopback();
        f.sender_cpu = f.sender_cpu.map(|c| SideCpu { thread_busy_pct: Some(30.0), ..c });
        assert!(saturated_core(&f).is_none(), "the thread took little of it: someone else filled it");
        let mut f = loopback();
        f.sender_cpu = f.sender_cpu.map(|c| SideCpu { thread_cpu: None, ..c });
        assert!(saturated_core(&f).is_none(), "not sampled: not known to be there");
    }

    #[test]
    fn the_busier_end_on_a_full_core_is_named() {
        let mut f = loopback();
        f.receiver_cpu =
            f.receiver_cpu.map(|c| SideCpu { thread_busy_pct: Some(80.0), thread_cpu: Some((1, 99.0)), ..c });
        assert_eq!(saturated_core(&f).map(|x| x.cause), Some(Cause::ReceiverCpu));
    }
}
