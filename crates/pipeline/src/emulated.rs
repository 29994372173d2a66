//! Tests over an emulated path (`--path`): the emulator, an embedded server in the server
//! side's namespace, and the client run in the client side's namespace.
//!
//! The server is bound by a thread inside the server namespace (its sockets live there);
//! the client's test runs on the calling thread after it entered the client namespace, so
//! every socket and thread it creates is on the client side. With a CPU quota on the
//! server side the server runs as a child process instead, so the quota does not throttle
//! the emulator; a client quota moves the test's threads (cgroup v1) into the quota. An
//! emulator quota starts the emulator's threads inside it (cgroup v1), so that the emulator,
//! not either end, runs short of CPU: the diagnosis corpus's "emulator late" case.

use std::net::{IpAddr, SocketAddr};

use anyhow::{bail, Context, Result};
use emu::pump::{cgroup::CpuQuota, Emulator, Options, Role};
use emu::PathConfig;
use engine::client::ClientOptions;
use engine::server::ServerHandle;
use engine::{Server, ServerConfig};
use results::{EmuReport, EmuTally};

use crate::config::PathOptions;
use crate::server_child::ServerChild;

/// Where the test's server runs.
#[derive(Debug)]
enum ServerKind {
    InProcess(ServerHandle),
    Child(ServerChild),
}

/// A running emulated path with a server on its far side.
#[derive(Debug)]
pub struct Session {
    emu: Emulator,
    spec: String,
    path: PathConfig,
    /// The second path (`--path2`): its spec as given and its configuration.
    second: Option<(String, PathConfig)>,
    server: ServerKind,
    port: u16,
    quotas: Quotas,
}

/// The CPU limits in percent of one CPU: each side's, and the emulator's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostCpu {
    /// Client side.
    pub client: Option<u32>,
    /// Server side.
    pub server: Option<u32>,
    /// The emulator's forwarding threads.
    pub emulator: Option<u32>,
}

/// The quota cgroups of a [`HostCpu`]; each is removed when dropped.
#[derive(Debug, Default)]
pub struct Quotas {
    /// The client side's.
    pub client: Option<CpuQuota>,
    /// The server side's.
    pub server: Option<CpuQuota>,
    /// The emulator's.
    pub emulator: Option<CpuQuota>,
}

/// Parses `client=20%,server=50%,emulator=5%` (any may be left out; `%` optional).
pub fn parse_host_cpu(text: &str) -> Result<HostCpu> {
    let mut out = HostCpu::default();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let Some((side, value)) = item.split_once('=') else {
            bail!("--host-cpu: expected SIDE=PERCENT (client, server or emulator), got `{item}`");
        };
        let pct: u32 = value
            .trim()
            .trim_end_matches('%')
            .parse()
            .ok()
            .filter(|p| (1..=1000).contains(p))
            .with_context(|| format!("--host-cpu: `{value}` is not a percentage between 1% and 1000%"))?;
        match side.trim() {
            "client" => out.client = Some(pct),
            "server" => out.server = Some(pct),
            "emulator" => out.emulator = Some(pct),
            other => bail!("--host-cpu: unknown side `{other}` (use client, server or emulator)"),
        }
    }
    Ok(out)
}

/// Adds the second path `spec` (`--path2`) to `emu` and readies both sides for MPTCP over the
/// two paths (the server announces its second address); the path's configuration.
pub fn second_path(emu: &mut Emulator, spec: &str) -> Result<PathConfig> {
    let path: PathConfig = spec.parse().with_context(|| format!("--path2 `{spec}`"))?;
    let addrs = (emu::pump::second::CLIENT_ADDR, emu::pump::second::SERVER_ADDR);
    emu.add_path(spec, &path, addrs).context("adding the second emulated path")?;
    emu.enable_mptcp().context("readying MPTCP over the two paths")?;
    Ok(path)
}

/// Parses the spec and builds the emulator's options from `p`.
pub fn emulator_options(p: &PathOptions) -> Result<(PathConfig, Options)> {
    let spec = &p.spec;
    let path: PathConfig = spec.parse().with_context(|| format!("--path `{spec}`"))?;
    let opts = Options { seed: p.seed, capture: p.pcap.clone(), ..Options::default() };
    Ok((path, opts))
}

/// Creates the quota cgroups asked for.
pub fn quotas(cpu: HostCpu) -> Result<Quotas> {
    if cpu == HostCpu::default() {
        return Ok(Quotas::default());
    }
    CpuQuota::remove_stale(emu::pump::DEFAULT_PREFIX);
    let make = |role: &str, pct: Option<u32>| {
        pct.map(|p| {
            CpuQuota::create(&format!("{}{}-{role}", emu::pump::DEFAULT_PREFIX, std::process::id()), p)
        })
        .transpose()
    };
    Ok(Quotas {
        client: make("client", cpu.client)?,
        server: make("server", cpu.server)?,
        emulator: make("emulator", cpu.emulator)?,
    })
}

/// Starts the emulator, its forwarding threads inside `quota` when there is one (they
/// inherit the cgroup of the thread that starts them; the caller's thread leaves it after)
/// and then at normal priority.
pub fn start_emulator(
    spec: &str,
    path: &PathConfig,
    opts: &Options,
    quota: Option<&CpuQuota>,
) -> Result<Emulator> {
    let Some(q) = quota else {
        return Emulator::start(spec, path, opts).context("starting the link emulator");
    };
    let _inside = q.enter_thread("the emulator").context("emulator CPU quota")?;
    // A quota's cgroup grants no real-time runtime: the threads run at normal priority.
    let opts = Options { realtime: false, ..opts.clone() };
    Emulator::start(spec, path, &opts).context("starting the link emulator")
}

/// Starts the test's server in the server side's namespace: in this process, or as a child
/// process inside `quota`. It listens with an MPTCP socket when the test asks for MPTCP
/// (`mptcp`) or there is a second path (`multipath`); with a second path on every address,
/// so that the second subflow joins at the second path's.
fn start_server(
    emu: &Emulator,
    multipath: bool,
    mptcp: bool,
    quota: Option<&CpuQuota>,
) -> Result<(ServerKind, u16)> {
    let ip = if multipath {
        IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED)
    } else {
        IpAddr::V4(emu.addr(Role::Server))
    };
    let bind = SocketAddr::new(ip, 0);
    let mptcp = mptcp || multipath;
    match quota {
        None => {
            let cfg = ServerConfig { bind, max_concurrent: 4, mptcp, ..ServerConfig::default() };
            // Spawned inside the namespace, so that the server's threads (and the UDP
            // sockets they bind to the path's address) live there too.
            let handle = emu.netns(Role::Server).run(|| Server::bind(cfg).and_then(|s| s.spawn()))??;
            let port = handle.addr.port();
            Ok((ServerKind::InProcess(handle), port))
        }
        Some(quota) => {
            let child = ServerChild::spawn(emu.netns(Role::Server), bind, Some(quota), mptcp)?;
            let port = child.port;
            Ok((ServerKind::Child(child), port))
        }
    }
}

impl Session {
    /// Starts the emulator and a server on its far side.
    pub fn start(p: &PathOptions) -> Result<Session> {
        let spec = &p.spec;
        let (path, opts) = emulator_options(p)?;
        let cpu = p.host_cpu.as_deref().map(parse_host_cpu).transpose()?.unwrap_or_default();
        let quotas = quotas(cpu)?;
        let mut emu = start_emulator(spec, &path, &opts, quotas.emulator.as_ref())?;
        let second = match &p.path2 {
            Some(spec2) => Some((spec2.clone(), second_path(&mut emu, spec2)?)),
            None => None,
        };
        let (server, port) = start_server(&emu, second.is_some(), p.mptcp, quotas.server.as_ref())?;
        Ok(Session { emu, spec: spec.clone(), path, second, server, port, quotas })
    }

    /// Client options pointing at the server across the link.
    pub fn client_options(&self, base: ClientOptions) -> ClientOptions {
        ClientOptions {
            host: self.emu.addr(Role::Server).to_string(),
            port: self.port,
            bind: None,
            family: None,
            ..base
        }
    }

    /// Runs `f` on this thread inside the client side (and its CPU quota).
    pub fn in_client<T>(&self, f: impl FnOnce() -> T) -> Result<T> {
        let _ns = self.emu.netns(Role::Client).enter().context("entering the client namespace")?;
        let _quota = match &self.quotas.client {
            Some(q) => Some(q.enter_thread("the client side of a test").context("client CPU quota")?),
            None => None,
        };
        Ok(f())
    }

    /// The emulated path: its spec as given and its configuration.
    pub fn path(&self) -> (&str, &PathConfig) {
        (&self.spec, &self.path)
    }

    /// The second emulated path (`--path2`), if there is one: its spec and configuration.
    pub fn second_path(&self) -> Option<(&str, &PathConfig)> {
        self.second.as_ref().map(|(s, p)| (s.as_str(), p))
    }

    /// Captures each side's device into `BASE.client.pcap` / `BASE.server.pcap` from now on,
    /// or stops with `None` (`--trace`).
    pub fn capture_to(&self, base: Option<&std::path::Path>) -> Result<()> {
        Ok(self.emu.capture_to(base)?)
    }

    /// Counters so far, the second path's (`--path2`) with them.
    pub fn report(&self) -> EmuReport {
        EmuReport { second_path: self.emu.second_report().map(Box::new), ..self.emu.report() }
    }

    /// Stops the server and the emulator.
    pub fn finish(self) -> Result<EmuReport> {
        match self.server {
            ServerKind::InProcess(h) => h.shutdown(),
            ServerKind::Child(c) => c.stop(),
        }
        if let Some(failure) = self.emu.failure() {
            bail!("link emulator: {failure}");
        }
        // The second path's counters are gone once the emulator stops.
        let second_path = self.emu.second_report().map(Box::new);
        Ok(EmuReport { second_path, ..self.emu.stop()? })
    }
}

/// Runs `f` in the client side of `session`, or directly without one.
pub fn in_client<T>(session: Option<&Session>, f: impl FnOnce() -> T) -> Result<T> {
    match session {
        Some(s) => s.in_client(f),
        None => Ok(f()),
    }
}

/// Counters accumulated between `before` and `after` (lateness figures are `after`'s).
pub fn delta(after: &EmuReport, before: &EmuReport) -> EmuReport {
    let sub = |a: EmuTally, b: EmuTally| EmuTally {
        packets: a.packets.saturating_sub(b.packets),
        bytes: a.bytes.saturating_sub(b.bytes),
    };
    let mut out = after.clone();
    for (d, b) in out.directions.iter_mut().zip(&before.directions) {
        d.offered = sub(d.offered, b.offered);
        d.delivered = sub(d.delivered, b.delivered);
        d.drops_loss_model = sub(d.drops_loss_model, b.drops_loss_model);
        d.drops_queue_overflow = sub(d.drops_queue_overflow, b.drops_queue_overflow);
        d.drops_cell_loss = sub(d.drops_cell_loss, b.drops_cell_loss);
        d.duplicates = sub(d.duplicates, b.duplicates);
        d.wire_bytes = d.wire_bytes.saturating_sub(b.wire_bytes);
        d.lost_cells = d.lost_cells.saturating_sub(b.lost_cells);
    }
    if let (Some(a), Some(b)) = (&after.second_path, &before.second_path) {
        out.second_path = Some(Box::new(delta(a, b)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_cpu_parses_and_rejects() {
        let c = parse_host_cpu("client=20%,server=50").unwrap();
        assert_eq!(c, HostCpu { client: Some(20), server: Some(50), emulator: None });
        assert_eq!(parse_host_cpu("emulator=5%").unwrap().emulator, Some(5));
        assert!(parse_host_cpu("client=0%").is_err());
        assert!(parse_host_cpu("router=5%").is_err());
        assert!(parse_host_cpu("client").is_err());
    }

    /// A test's counters are what crossed each path during it: the second path's too.
    #[test]
    fn delta_subtracts_each_paths_counters() {
        let report = |path: &str, packets: u64| EmuReport {
            path: path.into(),
            offload: false,
            directions: vec![results::EmuDirection {
                direction: "up".into(),
                offered: EmuTally { packets, bytes: packets * 1500 },
                ..Default::default()
            }],
            second_path: None,
        };
        let two =
            |a: u64, b: u64| EmuReport { second_path: Some(Box::new(report("b", b))), ..report("a", a) };
        let d = delta(&two(100, 40), &two(10, 4));
        assert_eq!(d.directions[0].offered.packets, 90);
        let second = d.second_path.expect("the second path's counters");
        assert_eq!((second.path.as_str(), second.directions[0].offered.packets), ("b", 36));
        assert_eq!(second.directions[0].offered.bytes, 36 * 1500);
        assert!(delta(&report("a", 5), &report("a", 1)).second_path.is_none());
    }
}
