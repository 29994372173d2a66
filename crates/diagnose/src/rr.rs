//! What bounded a request/response test's transaction rate (seed 000's TCP_RR): the path's
//! round trip, Nagle waiting on a delayed ACK, a saturated CPU at one end, or, on an idle
//! host, the time to wake the sleeping thread at each end for every transaction.

use model::human::micros;
use results::{Cause, Finding, LatencySummary, Role, RrSummary, TestResult};

use crate::facts::{busiest_thread, side_cpu, streams, SideCpu};
use crate::rules::{pct, CPU_SATURATED_PCT, THROTTLED_PCT};
use crate::Path;

/// Share of the median transaction the configured round trip must reach to be the limit
/// (the rest is the ends' and the emulator's own time).
pub const PATH_RTT_FRAC: f64 = 0.5;
/// Time beyond the path's round trip in the median transaction from which Nagle waiting on
/// a delayed ACK (Linux's at least 40 ms) is the limit, µs.
pub const DELAYED_ACK_US: f64 = 30_000.0;
/// Median transaction below which an unsaturated host's wake-ups are the limit, µs.
pub const WAKE_UP_US: f64 = 2_000.0;

/// The measured facts of a request/response test.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RrFacts {
    /// The transaction summary.
    pub rr: RrSummary,
    /// Request and response sizes, bytes.
    pub sizes: (u32, u32),
    /// Transactions each flow keeps in flight (`--burst`).
    pub burst: u32,
    /// TCP_NODELAY on (UDP: no Nagle at all).
    pub nodelay: bool,
    /// The client and server spin instead of sleeping (`--busy-poll`).
    pub busy_poll: bool,
    /// The emulated path's configured round trip, µs, when there was one.
    pub path_rtt_us: Option<f64>,
    /// The client's CPU, when measured.
    pub client_cpu: Option<SideCpu>,
    /// The server's CPU, when measured.
    pub server_cpu: Option<SideCpu>,
}

impl RrFacts {
    /// Facts of `result`, when it measured transactions.
    pub fn of(result: &TestResult, path: Option<&Path>) -> Option<RrFacts> {
        let rr = result.summary.rr.clone().filter(|rr| rr.latency.count > 0)?;
        let udp = rr.lost.is_some();
        let cpu = |side: Option<&results::SideMeasurement>, role| {
            let s = streams(side, role);
            let threads = u32::try_from(s.len().max(1)).unwrap_or(u32::MAX);
            side.and_then(|m| m.cpu.as_ref()).map(|c| side_cpu(c, threads, false, busiest_thread(&s)))
        };
        Some(RrFacts {
            sizes: (result.spec.request_len, result.spec.response_len),
            burst: result.spec.burst.max(1),
            nodelay: result.spec.nodelay || udp,
            busy_poll: result.spec.busy_poll,
            path_rtt_us: path.map(|p| p.rtt_us).filter(|&r| r > 0.0),
            client_cpu: cpu(Some(&result.local), Role::Request),
            server_cpu: cpu(result.remote.as_ref(), Role::Respond),
            rr,
        })
    }

    fn latency(&self) -> &LatencySummary {
        &self.rr.latency
    }
}

/// Every request/response rule.
pub const ALL: [fn(&RrFacts) -> Option<Finding>; 4] = [path_rtt, delayed_ack, cpu, wake_up];

/// The median transaction is the path's round trip.
pub fn path_rtt(f: &RrFacts) -> Option<Finding> {
    let rtt = f.path_rtt_us?;
    let p50 = f.latency().p50_us;
    if rtt < PATH_RTT_FRAC * p50 {
        return None;
    }
    let in_flight = f64::from(f.rr.flows.max(1)) * f64::from(f.burst.max(1));
    let bound = in_flight * 1e6 / rtt;
    Some(Finding {
        cause: Cause::PathRtt,
        weight: 0.95,
        evidence: format!(
            "the path's round trip is {}, the median transaction {} ({} of it): at most {:.0} transactions/s with {in_flight:.0} in flight, {:.0} measured",
            micros(rtt),
            micros(p50),
            pct(rtt / p50),
            bound.max(f.rr.trans_per_s),
            f.rr.trans_per_s
        ),
        advice: "the round trip is the limit: more transactions in flight (--burst, -P) raise the rate, nothing lowers the latency".into(),
        bound_bps: None,
    })
}

/// Nagle holding a small write until the peer's delayed ACK (≥ 40 ms on Linux).
pub fn delayed_ack(f: &RrFacts) -> Option<Finding> {
    if f.nodelay {
        return None;
    }
    let extra = f.latency().p50_us - f.path_rtt_us.unwrap_or(0.0);
    if extra < DELAYED_ACK_US {
        return None;
    }
    Some(Finding {
        cause: Cause::StopAndGo,
        weight: 0.94,
        evidence: format!(
            "with Nagle on, the median transaction took {} beyond the path's round trip: a small write waited for the peer's delayed ACK (40 ms or more on Linux)",
            micros(extra)
        ),
        advice: "set -N (TCP_NODELAY) so small requests and responses leave at once".into(),
        bound_bps: None,
    })
}

/// An end whose data thread was saturated or held back by a CPU quota.
pub fn cpu(f: &RrFacts) -> Option<Finding> {
    let ends = [("client", f.client_cpu.as_ref()), ("server", f.server_cpu.as_ref())];
    let (who, c, _) = ends
        .into_iter()
        .filter_map(|(who, c)| {
            c.map(|c| (who, c, c.thread_busy_pct.unwrap_or(c.process_pct) + c.throttled_pct))
        })
        .filter(|(_, c, demand)| *demand >= CPU_SATURATED_PCT || c.throttled_pct >= THROTTLED_PCT)
        .max_by(|a, b| a.2.total_cmp(&b.2))?;
    if f.busy_poll && c.throttled_pct < THROTTLED_PCT {
        // Spinning by request: a busy thread is how --busy-poll waits, not a limit.
        return None;
    }
    Some(Finding {
        cause: Cause::HostCpu,
        weight: 0.9,
        evidence: format!(
            "the {who}'s data thread was busy {:.0}% of the time{}; median transaction {}",
            c.thread_busy_pct.unwrap_or(c.process_pct),
            if c.throttled_pct >= 1.0 {
                format!(" and throttled by its cgroup CPU quota {:.0}% of the time", c.throttled_pct.min(100.0))
            } else {
                String::new()
            },
            micros(f.latency().p50_us)
        ),
        advice: format!("the {who} cannot turn transactions around faster on this CPU: remove its quota, or a faster host"),
        bound_bps: None,
    })
}

/// An idle host: each transaction waits for a sleeping thread at each end to wake.
pub fn wake_up(f: &RrFacts) -> Option<Finding> {
    let p50 = f.latency().p50_us;
    if f.busy_poll || p50 >= WAKE_UP_US || f.path_rtt_us.is_some_and(|r| r >= 0.5 * p50) {
        return None;
    }
    let busiest = [f.client_cpu.as_ref(), f.server_cpu.as_ref()]
        .into_iter()
        .flatten()
        .filter_map(|c| c.thread_busy_pct)
        .reduce(f64::max);
    // `cpu` names a saturated end first; here only what was measured is said.
    let threads = match busiest {
        Some(b) => format!("no end's thread saturated (the busiest ran {b:.0}% of the time)"),
        None => "no end's thread time measured".to_string(),
    };
    Some(Finding {
        cause: Cause::WakeUp,
        weight: 0.7,
        evidence: format!(
            "median transaction {} with {threads}: each transaction waits for a sleeping thread at each end to wake",
            micros(p50)
        ),
        advice: "--busy-poll spins instead of sleeping, and -A pins the ends to CPUs of their own: both shorten the wake-up".into(),
        bound_bps: None,
    })
}

/// The finding when no rule applies, as a sentence.
pub fn nothing_found(f: &RrFacts) -> Finding {
    Finding {
        cause: Cause::Unknown,
        weight: 0.0,
        evidence: format!(
            "No limit was found: the median transaction took {} (p99 {}), {}, and no end's CPU was saturated.",
            micros(f.latency().p50_us),
            micros(f.latency().p99_us),
            match f.path_rtt_us {
                Some(r) => format!("the path's round trip is {}", micros(r)),
                None => "no emulated path".to_string(),
            }
        ),
        advice: "run longer (-t), or pin the ends (-A) to see what changes".into(),
        bound_bps: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(p50_us: f64) -> RrFacts {
        let mut rr =
            RrSummary { flows: 1, trans_per_s: 1e6 / p50_us, rtt_from_rate_us: p50_us, ..Default::default() };
        rr.latency.p50_us = p50_us;
        rr.latency.p99_us = p50_us * 2.0;
        rr.latency.count = 1000;
        RrFacts { rr, nodelay: true, burst: 1, ..RrFacts::default() }
    }

    fn best(f: &RrFacts) -> Option<Cause> {
        ALL.iter().filter_map(|r| r(f)).max_by(|a, b| a.weight.total_cmp(&b.weight)).map(|x| x.cause)
    }

    #[test]
    fn each_bound_names_its_cause() {
        let mut f = facts(40.0);
        assert_eq!(best(&f), Some(Cause::WakeUp));
        f = facts(20_300.0);
        f.path_rtt_us = Some(20_000.0);
        assert_eq!(best(&f), Some(Cause::PathRtt));
        f.rr.flows = 2;
        f.burst = 4;
        let x = path_rtt(&f).map(|x| x.evidence).unwrap_or_default();
        assert!(x.contains("at most 400 transactions/s with 8 in flight"), "{x}");
        f = facts(40_100.0);
        f.nodelay = false;
        assert_eq!(best(&f), Some(Cause::StopAndGo));
        f = facts(300.0);
        f.client_cpu = Some(SideCpu { thread_busy_pct: Some(97.0), ..SideCpu::default() });
        assert_eq!(best(&f), Some(Cause::HostCpu));
        f.busy_poll = true;
        assert_eq!(best(&f), None, "spinning by request is not a limit");
    }
}
