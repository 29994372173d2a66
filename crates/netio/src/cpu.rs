//! CPU counters: per-CPU ticks from /proc/stat (system-wide, so softirq work on other CPUs is
//! counted) and the process's own time from getrusage (measurement-methods.md §2).

use std::io;
use std::time::{Duration, Instant};

use results::{CpuUsage, ProcessCpu};

/// One CPU's tick counters (USER_HZ units), guest time excluded (it is inside user/nice).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTicks {
    /// CPU number.
    pub id: u32,
    /// user + nice.
    pub user: u64,
    /// system.
    pub system: u64,
    /// idle + iowait.
    pub idle: u64,
    /// irq.
    pub irq: u64,
    /// softirq.
    pub softirq: u64,
    /// steal.
    pub steal: u64,
}

impl CpuTicks {
    fn total(&self) -> u64 {
        self.user + self.system + self.idle + self.irq + self.softirq + self.steal
    }
}

/// Parses the `cpuN` lines of /proc/stat (the aggregate `cpu` line is skipped).
pub fn parse_proc_stat(text: &str) -> Vec<CpuTicks> {
    text.lines().filter_map(parse_cpu_line).collect()
}

fn parse_cpu_line(line: &str) -> Option<CpuTicks> {
    let mut words = line.split_ascii_whitespace();
    let id = words.next()?.strip_prefix("cpu")?.parse().ok()?;
    let v: Vec<u64> = words.map_while(|w| w.parse().ok()).collect();
    let f = |i: usize| v.get(i).copied().unwrap_or(0);
    if v.len() < 4 {
        return None;
    }
    Some(CpuTicks {
        id,
        user: f(0) + f(1),
        system: f(2),
        idle: f(3) + f(4),
        irq: f(5),
        softirq: f(6),
        steal: f(7),
    })
}

/// Counters at one instant.
#[derive(Debug, Clone)]
pub struct CpuSnapshot {
    at: Instant,
    cpus: Vec<CpuTicks>,
    process: Duration,
    process_user: Duration,
    throttled: Option<Duration>,
}

impl CpuSnapshot {
    /// Reads /proc/stat and getrusage now.
    pub fn take() -> io::Result<CpuSnapshot> {
        let text = std::fs::read_to_string("/proc/stat")?;
        let (user, system) = process_times()?;
        Ok(CpuSnapshot {
            at: Instant::now(),
            cpus: parse_proc_stat(&text),
            process: user + system,
            process_user: user,
            throttled: crate::cgroup::throttled(),
        })
    }

    /// Utilisation between `self` (start) and `end`.
    pub fn usage_until(&self, end: &CpuSnapshot) -> CpuUsage {
        let window = end.at.saturating_duration_since(self.at).as_secs_f64();
        let user = end.process_user.saturating_sub(self.process_user).as_secs_f64();
        let total = end.process.saturating_sub(self.process).as_secs_f64();
        let process = ProcessCpu {
            user_s: user,
            system_s: total - user,
            pct_of_core: if window > 0.0 { 100.0 * total / window } else { 0.0 },
            throttled_s: match (self.throttled, end.throttled) {
                (Some(s), Some(e)) => e.saturating_sub(s).as_secs_f64(),
                _ => 0.0,
            },
        };
        CpuUsage { window_s: window, process, ..usage_between(&self.cpus, &end.cpus) }
    }
}

/// System-wide utilisation from two sets of per-CPU ticks.
pub fn usage_between(start: &[CpuTicks], end: &[CpuTicks]) -> CpuUsage {
    let deltas: Vec<CpuTicks> =
        end.iter().filter_map(|e| start.iter().find(|s| s.id == e.id).map(|s| delta(s, e))).collect();
    // Steal is time this guest wanted a CPU and did not get it: not work done here.
    let per_cpu: Vec<f64> = deltas.iter().map(|d| pct(d.total() - d.idle - d.steal, d.total())).collect();
    let (busiest_cpu, busiest_pct) =
        deltas.iter().zip(&per_cpu).fold((0, 0.0), |best, (d, &p)| if p > best.1 { (d.id, p) } else { best });
    let sum = deltas.iter().fold(CpuTicks::default(), |a, d| add(&a, d));
    let cpus = deltas.len() as u32;
    let util = if cpus == 0 { 0.0 } else { per_cpu.iter().sum::<f64>() / f64::from(cpus) };
    CpuUsage {
        cpus,
        util_pct: util,
        cores_busy: util / 100.0 * f64::from(cpus),
        per_cpu_pct: per_cpu,
        busiest_cpu,
        busiest_pct,
        user_pct: pct(sum.user, sum.total()),
        system_pct: pct(sum.system, sum.total()),
        irq_pct: pct(sum.irq, sum.total()),
        softirq_pct: pct(sum.softirq, sum.total()),
        steal_pct: pct(sum.steal, sum.total()),
        ..CpuUsage::default()
    }
}

fn pct(part: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        100.0 * part as f64 / total as f64
    }
}

fn delta(s: &CpuTicks, e: &CpuTicks) -> CpuTicks {
    CpuTicks {
        id: e.id,
        user: e.user.saturating_sub(s.user),
        system: e.system.saturating_sub(s.system),
        idle: e.idle.saturating_sub(s.idle),
        irq: e.irq.saturating_sub(s.irq),
        softirq: e.softirq.saturating_sub(s.softirq),
        steal: e.steal.saturating_sub(s.steal),
    }
}

fn add(a: &CpuTicks, b: &CpuTicks) -> CpuTicks {
    CpuTicks {
        id: 0,
        user: a.user + b.user,
        system: a.system + b.system,
        idle: a.idle + b.idle,
        irq: a.irq + b.irq,
        softirq: a.softirq + b.softirq,
        steal: a.steal + b.steal,
    }
}

/// The process's (user, system) CPU time so far.
fn process_times() -> io::Result<(Duration, Duration)> {
    // SAFETY: an all-zero rusage is valid; getrusage fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32).saturating_mul(1000));
    Ok((tv(ru.ru_utime), tv(ru.ru_stime)))
}

/// CPU time the calling thread has run, ns (`/proc/thread-self/schedstat`, first field:
/// the scheduler's exact runtime, brought up to date at the thread's last switch or tick);
/// `None` where the file is missing or does not parse.
pub fn thread_cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str =
        "cpu  10 0 10 80 0 0 0 0 0 0\ncpu0 5 0 5 40 0 0 0 0 0 0\ncpu1 5 0 5 40 0 0 0 0 0 0\nintr 1 2\n";
    const B: &str = "cpu  0\ncpu0 55 0 25 60 10 0 50 0 0 0\ncpu1 5 0 10 135 0 0 0 0 0 0\n";

    #[test]
    fn parses_per_cpu_lines_only() {
        let t = parse_proc_stat(A);
        assert_eq!(t.len(), 2);
        assert_eq!(t[1], CpuTicks { id: 1, user: 5, system: 5, idle: 40, ..CpuTicks::default() });
    }

    #[test]
    fn utilisation_per_cpu_and_busiest() {
        let u = usage_between(&parse_proc_stat(A), &parse_proc_stat(B));
        // cpu0: busy 50+20+50 = 120 of 150 -> 80 %; cpu1: busy 5 of 100 -> 5 %.
        assert_eq!(u.per_cpu_pct, vec![80.0, 5.0]);
        assert_eq!((u.busiest_cpu, u.busiest_pct), (0, 80.0));
        assert!((u.util_pct - 42.5).abs() < 1e-9);
        assert!((u.cores_busy - 0.85).abs() < 1e-9);
        assert!((u.softirq_pct - 20.0).abs() < 1e-9);
    }

    #[test]
    fn steal_is_not_counted_as_busy() {
        let a = parse_proc_stat("cpu0 0 0 0 0 0 0 0 0\n");
        let b = parse_proc_stat("cpu0 10 0 10 50 0 0 0 30\n");
        let u = usage_between(&a, &b);
        assert!((u.util_pct - 20.0).abs() < 1e-9, "{}", u.util_pct);
        assert!((u.steal_pct - 30.0).abs() < 1e-9);
    }

    #[test]
    fn garbage_lines_are_ignored() {
        assert!(parse_proc_stat("cpuX 1 2 3 4\ncpu0 1 2\nhello").is_empty());
    }

    #[test]
    fn a_snapshot_pair_is_sane() {
        let a = CpuSnapshot::take().unwrap();
        let b = CpuSnapshot::take().unwrap();
        let u = a.usage_until(&b);
        assert!(u.util_pct >= 0.0 && u.util_pct <= 100.0);
        assert!(u.cpus >= 1);
    }
}
