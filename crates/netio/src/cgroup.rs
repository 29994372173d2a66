//! CPU-quota throttling of this process's cgroup (cgroup v2 `cpu.stat` `throttled_usec`, or
//! cgroup v1 `cpu.stat` `throttled_time` in ns). A process held back by a CPU quota shows
//! little CPU time of its own; the throttled time is what says it wanted more.

use std::path::PathBuf;
use std::time::Duration;

/// Time the calling thread's cgroup has spent throttled so far, if the cgroup has a CPU
/// controller that reports it. The thread's, not the process's: over an emulated path with a
/// client CPU quota only the client's threads are in the quota (cgroup v1), and the server end
/// in the same process must not report the client's throttling as its own.
pub fn throttled() -> Option<Duration> {
    let membership = std::fs::read_to_string("/proc/thread-self/cgroup")
        .or_else(|_| std::fs::read_to_string("/proc/self/cgroup"))
        .ok()?;
    let (path, v2) = cpu_stat_path(&membership)?;
    let stat = std::fs::read_to_string(path).ok()?;
    parse_throttled(&stat, v2)
}

/// The `cpu.stat` file of the cgroup in `membership` (the text of /proc/self/cgroup), and
/// whether it is cgroup v2. The v1 cpu controller wins when both are listed.
fn cpu_stat_path(membership: &str) -> Option<(PathBuf, bool)> {
    let mut v2 = None;
    for line in membership.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let rel = path.trim_start_matches('/');
        if controllers.split(',').any(|c| c == "cpu") {
            return Some((PathBuf::from("/sys/fs/cgroup/cpu").join(rel).join("cpu.stat"), false));
        }
        if controllers.is_empty() {
            v2 = Some((PathBuf::from("/sys/fs/cgroup").join(rel).join("cpu.stat"), true));
        }
    }
    v2
}

fn parse_throttled(stat: &str, v2: bool) -> Option<Duration> {
    let key = if v2 { "throttled_usec" } else { "throttled_time" };
    let value: u64 = stat.lines().find_map(|l| l.strip_prefix(key)?.trim().parse().ok())?;
    Some(if v2 { Duration::from_micros(value) } else { Duration::from_nanos(value) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_v1_cpu_controller_before_v2() {
        let text = "4:memory:/x\n1:cpu,cpuacct:/tlm-1\n0::/y\n";
        let (path, v2) = cpu_stat_path(text).unwrap_or_default();
        assert_eq!(path, PathBuf::from("/sys/fs/cgroup/cpu/tlm-1/cpu.stat"));
        assert!(!v2);
        let (path, v2) = cpu_stat_path("0::/a/b\n").unwrap_or_default();
        assert_eq!(path, PathBuf::from("/sys/fs/cgroup/a/b/cpu.stat"));
        assert!(v2);
        assert_eq!(cpu_stat_path("garbage"), None);
    }

    #[test]
    fn reads_both_units() {
        let v1 = "nr_periods 5\nnr_throttled 2\nthrottled_time 3000000\n";
        assert_eq!(parse_throttled(v1, false), Some(Duration::from_millis(3)));
        let v2 = "usage_usec 10\nnr_throttled 1\nthrottled_usec 4000\n";
        assert_eq!(parse_throttled(v2, true), Some(Duration::from_millis(4)));
        assert_eq!(parse_throttled("throttled_usec x", true), None);
    }
}
