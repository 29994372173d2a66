//! Building the two sides of an emulated path: a namespace per side, a TUN device created
//! inside it, a point-to-point address pair, the path's MTU, and TCP buffer maxima sized
//! for the path's bandwidth-delay product.

use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicU32, Ordering};

use netio::{NetNs, Tun};

use super::Error;
use crate::spec::PathConfig;

/// Fresh namespaces start with a 4 MiB `tcp_wmem` maximum; never go below the kernel's
/// defaults.
const MIN_BUFFER_MAX_BYTES: u64 = 32 << 20;
/// Largest buffer maximum set (the kernel's int limit is 2 GiB; stay well below).
const MAX_BUFFER_MAX_BYTES: u64 = 1 << 30;
/// TUN transmit queue: the kernel queues packets here until the pump reads them.
const TXQUEUELEN: u32 = 10_000;

/// One end of the path: its namespace, its device and its address.
#[derive(Debug)]
pub struct Endpoint {
    /// The side's network namespace.
    pub ns: NetNs,
    /// The TUN device inside it (the pump's end of the link).
    pub tun: Tun,
    /// This side's address.
    pub addr: Ipv4Addr,
}

/// Interface name of one side of the `n`-th emulator of this process, e.g. `tle4711-0c`:
/// unique per process and run, at most 15 bytes.
pub fn device_name(prefix: &str, role: char) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let name = format!("{prefix}{}-{n}{role}", std::process::id());
    let max = netio::tun::MAX_NAME_BYTES;
    if name.len() <= max {
        return name;
    }
    // Keep the prefix and the distinguishing tail.
    let tail = &name[name.len() - (max - prefix.len().min(max - 4))..];
    format!("{}{tail}", &prefix[..prefix.len().min(max - 4)])
}

/// Creates a namespace with a configured TUN device in it.
pub fn side(
    name: &str,
    addr: Ipv4Addr,
    peer: Ipv4Addr,
    path: &PathConfig,
    offload: bool,
) -> Result<Endpoint, Error> {
    let step = |what: &str| format!("{what} for {name}");
    // Sysctls first: with IPv6 off before the device exists, no router solicitation or
    // other IPv6 chatter ever crosses the emulated link.
    let sysctls = sysctls(path);
    let (ns, tun) = NetNs::create(|| {
        write_sysctls(&sysctls)?;
        let tun = Tun::create(name, offload)?;
        configure(name, addr, peer, path.mtu_bytes)?;
        Ok(tun)
    })
    .map_err(|source| Error::Setup {
        step: step("creating namespace, sysctls, TUN device and addresses"),
        source,
    })?;
    Ok(Endpoint { ns, tun, addr })
}

/// Creates one more configured TUN device in the existing namespace `ns` (a second path),
/// raising the TCP buffer maxima if `path` needs larger ones.
pub fn extra_device(
    ns: &NetNs,
    name: &str,
    addr: Ipv4Addr,
    peer: Ipv4Addr,
    path: &PathConfig,
    offload: bool,
) -> Result<Tun, Error> {
    let max = buffer_max_bytes(path);
    ns.run(|| {
        raise_buffer_max(max)?;
        let tun = Tun::create(name, offload)?;
        configure(name, addr, peer, path.mtu_bytes)?;
        Ok(tun)
    })
    .and_then(|r| r)
    .map_err(|source| Error::Setup { step: format!("creating TUN device and addresses for {name}"), source })
}

/// Sets the TCP buffer maxima of the calling thread's namespace to `max` where they are lower.
fn raise_buffer_max(max: u64) -> std::io::Result<()> {
    for (key, default) in [("net/ipv4/tcp_rmem", 131_072), ("net/ipv4/tcp_wmem", 16_384)] {
        let now = std::fs::read_to_string(format!("/proc/sys/{key}"))?;
        let current = now.split_whitespace().nth(2).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        if current < max {
            write_sysctls(&[(key.to_string(), format!("4096 {default} {max}"))])?;
        }
    }
    Ok(())
}

/// Inside the new namespace, over netlink (no iproute2 needed): loopback up, the device's
/// point-to-point address pair (which routes `peer` over it), MTU and queue, then the device up.
fn configure(name: &str, addr: Ipv4Addr, peer: Ipv4Addr, mtu: u32) -> std::io::Result<()> {
    use netio::netlink::{add_peer_address, set_link, LinkSettings};
    set_link("lo", &LinkSettings { up: Some(true), ..LinkSettings::default() })?;
    add_peer_address(name, addr, peer)?;
    set_link(name, &LinkSettings { mtu: Some(mtu), txqueuelen: Some(TXQUEUELEN), up: Some(true) })
}

/// The sysctls of an endpoint namespace: no IPv6 on new devices, TCP buffers ≥ 4 × BDP.
fn sysctls(path: &PathConfig) -> Vec<(String, String)> {
    let mut out = vec![
        ("net/ipv6/conf/all/disable_ipv6".to_string(), "1".to_string()),
        ("net/ipv6/conf/default/disable_ipv6".to_string(), "1".to_string()),
    ];
    let max = buffer_max_bytes(path);
    out.push(("net/ipv4/tcp_rmem".into(), format!("4096 131072 {max}")));
    out.push(("net/ipv4/tcp_wmem".into(), format!("4096 16384 {max}")));
    out
}

/// TCP buffer maximum for `path`: 4 × (BDP + the larger queue), within fixed bounds. Linux
/// advertises about half of a receive buffer and a sender needs the window plus overhead.
pub fn buffer_max_bytes(path: &PathConfig) -> u64 {
    let rtt = path.up.delay + path.down.delay + path.up.jitter + path.down.jitter;
    let rate = [path.up.rate, path.down.rate].iter().flatten().map(|r| r.bits_per_sec()).max().unwrap_or(0);
    let bdp = u128::from(rate) * rtt.as_nanos() / 8 / 1_000_000_000;
    let queue = [path.up.queue.bytes, path.down.queue.bytes].iter().flatten().copied().max().unwrap_or(0);
    let queue_pkts =
        [path.up.queue.packets, path.down.queue.packets].iter().flatten().copied().max().unwrap_or(0);
    let queue = queue.max(queue_pkts.saturating_mul(u64::from(path.mtu_bytes)));
    let want = u64::try_from(bdp).unwrap_or(u64::MAX).saturating_add(queue).saturating_mul(4);
    want.clamp(MIN_BUFFER_MAX_BYTES, MAX_BUFFER_MAX_BYTES)
}

fn write_sysctls(items: &[(String, String)]) -> std::io::Result<()> {
    for (key, value) in items {
        std::fs::write(format!("/proc/sys/{key}"), value)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{key} = {value}: {e}")))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fit_and_differ() {
        let a = device_name("tle", 'c');
        let b = device_name("tle", 'c');
        assert_ne!(a, b);
        assert!(a.starts_with("tle") && a.len() <= 15);
        let long = device_name("averyverylongprefix", 's');
        assert!(long.len() <= 15 && long.ends_with('s'));
    }

    #[test]
    fn buffers_cover_the_bdp() {
        let transatlantic: PathConfig = "transatlantic".parse().unwrap();
        // 21.25 MB BDP + 150 KB queue, × 4.
        assert_eq!(buffer_max_bytes(&transatlantic), 4 * (21_250_000 + 150_000));
        let lan: PathConfig = "gige".parse().unwrap();
        assert_eq!(buffer_max_bytes(&lan), MIN_BUFFER_MAX_BYTES);
    }
}
