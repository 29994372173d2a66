#![allow(unsafe_code, reason = "netio is the one crate that calls libc directly; each block is one syscall")]
//! The only crate touching the OS (DESIGN.md §4): socket options, TCP_INFO, CPU counters,
//! host facts, randomness, the UDP fast paths ([`udp`]) and what the path carried
//! ([`path_counters`]). All `unsafe` of tcplab lives here, each block
//! a single documented libc call.

pub mod cgroup;
mod cmsg;
pub mod cpu;
pub mod file;
pub mod host;
pub mod listen;
pub mod mptcp;
pub mod mptcp_pm;
pub mod netlink;
pub mod netns;
pub mod packet_capture;
pub mod path_counters;
pub mod perf_ring;
pub mod process;
pub mod sched;
pub mod sockopt;
pub mod tcpinfo;
pub mod timestamping;
pub mod tracefs;
pub mod tun;
pub mod udp;
pub mod zerocopy;

pub use cpu::CpuSnapshot;
pub use netns::NetNs;
pub use sockopt::{DataSocketOpts, SockError};
pub use tcpinfo::TcpInfo;
pub use tun::Tun;

/// 128 random bits from the OS, for test tokens and nonces.
pub fn random_bytes<const N: usize>() -> std::io::Result<[u8; N]> {
    let mut out = [0u8; N];
    getrandom::fill(&mut out).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(out)
}
