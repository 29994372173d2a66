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

fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path).map(|s| s.trim().to_string()).unwrap_or_default()
}
