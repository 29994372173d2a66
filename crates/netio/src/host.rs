//! Facts about this host, recorded with every run.

use results::HostInfo;

const CC_AVAILABLE: &str = "/proc/sys/net/ipv4/tcp_available_congestion_control";
const CC_DEFAULT: &str = "/proc/sys/net/ipv4/tcp_congestion_control";

/// Describes this host. Missing facts are left empty rather than failing.
pub fn host_info() -> HostInfo {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        cpuinfo
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_default()
    };
    HostInfo {
        hostname: read_trimmed("/proc/sys/kernel/hostname"),
        kernel: format!("Linux {}", read_trimmed("/proc/sys/kernel/osrelease")),
        cpu_model: field("model name"),
        cpus: online_cpus(),
        congestion_available: congestion_available(),
        congestion_default: read_trimmed(CC_DEFAULT),
        virtualized: field("flags").split_whitespace().any(|f| f == "hypervisor"),
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
    }
}

/// Congestion controls the kernel offers now.
pub fn congestion_available() -> Vec<String> {
    read_trimmed(CC_AVAILABLE).split_whitespace().map(str::to_string).collect()
}

/// CPUs online.
pub fn online_cpus() -> u32 {
    std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1)
}

/// The kernel's id of this boot (`/proc/sys/kernel/random/boot_id`); empty when unreadable.
pub fn boot_id() -> String {
    read_trimmed("/proc/sys/kernel/random/boot_id")
}

/// This host's name; empty when unreadable.
pub fn hostname() -> String {
    read_trimmed("/proc/sys/kernel/hostname")
}

/// When process `pid` started, in clock ticks since boot (field 22 of `/proc/PID/stat`);
/// `None` when there is no such process or the file does not parse.
pub fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat_field(&stat, 22)?.parse().ok()
}

/// Whether process `pid` exists and is not a zombie, and — when `started` is given — is the
/// same process that started then (not a later one that was given the recycled pid).
pub fn pid_alive(pid: u32, started: Option<u64>) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
    let running = stat_field(&stat, 3).is_some_and(|state| state != "Z" && state != "X");
    let same = match started {
        Some(t) => stat_field(&stat, 22).and_then(|f| f.parse::<u64>().ok()) == Some(t),
        None => true,
    };
    running && same
}

/// Field `n` (1-based, as in proc(5)) of a `/proc/PID/stat` line. The command name (field 2)
/// is in parentheses and may hold spaces and parentheses itself, so fields from 3 on are
/// counted after its last `)`.
fn stat_field(stat: &str, n: usize) -> Option<&str> {
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(n.checked_sub(3)?)
}

fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path).map(|s| s.trim().to_string()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_count_past_a_command_with_spaces_and_parens() {
        let line = "4242 (my (odd) cmd) S 1 4242 4242 0 -1 4194560 10 0 0 0 1 2 0 0 20 0 1 0 987654 12 34";
        assert_eq!(stat_field(line, 3), Some("S"));
        assert_eq!(stat_field(line, 22), Some("987654"));
        assert_eq!(stat_field(line, 2), None);
        assert_eq!(stat_field("garbage", 3), None);
    }

    #[test]
    fn this_process_is_alive_and_a_wrong_start_time_is_not_it() {
        let me = std::process::id();
        let started = process_start(me);
        assert!(started.is_some());
        assert!(pid_alive(me, started));
        assert!(pid_alive(me, None));
        assert!(!pid_alive(me, started.map(|t| t + 1)));
        assert!(!boot_id().is_empty());
    }

    #[test]
    fn a_killed_and_reaped_child_is_gone() {
        let mut child =
            std::process::Command::new("cat").stdin(std::process::Stdio::piped()).spawn().expect("cat runs");
        let pid = child.id();
        let started = process_start(pid);
        assert!(pid_alive(pid, started), "cat waits for its input");
        child.kill().expect("cat is killed");
        child.wait().expect("cat is reaped");
        assert!(!pid_alive(pid, started));
    }
}
