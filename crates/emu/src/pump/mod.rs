//! The TUN pump: the I/O half of the emulator (the rest of this crate is the pure model).
//!
//! [`Emulator::start`] creates two anonymous network namespaces — the client side and the
//! server side — with a TUN device in each, addressed point-to-point (198.18.0.1 ↔
//! 198.18.0.2 by default), the path's MTU set, and TCP buffer maxima raised for the path's
//! bandwidth-delay product. One thread per direction moves packets from one device through
//! a [`crate::Link`] to the other.
//!
//! Teardown needs no bookkeeping: the devices are non-persistent (they vanish with the
//! pump's file descriptors) and the namespaces are held only by this process's handles and
//! by the processes inside them, which [`Emulator::stop_processes`] ends and which get
//! `SIGKILL` when their parent thread dies ([`netio::NetNs::spawn`]). After `kill -9` of the emulator nothing is left, and there is
//! no stale set to clean at the next start. Only a CPU-quota cgroup ([`cgroup`]) is a named
//! object; it is removed on drop and stale empty ones with the same prefix are removed at
//! the next start.

pub mod buffers;
pub mod capture;
pub mod cgroup;
pub mod early_wake;
pub mod forward;
pub mod lateness;
pub mod report;
pub mod second;
pub mod setup;
pub mod shared;

use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;

use netio::NetNs;

use crate::spec::{Direction, PathConfig};
use capture::Captures;
use forward::{Clock, Forwarder};
use shared::Shared;

/// Default client-side address (RFC 2544 benchmarking range).
pub const CLIENT_ADDR: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
/// Default server-side address.
pub const SERVER_ADDR: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
/// Default prefix of device and cgroup names.
pub const DEFAULT_PREFIX: &str = "tle";

/// An end of the emulated path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The client side (sends `up`).
    Client = 0,
    /// The server side (sends `down`).
    Server = 1,
}

impl Role {
    /// The side that sends in `direction`.
    pub fn source(direction: Direction) -> Role {
        match direction {
            Direction::Up => Role::Client,
            Direction::Down => Role::Server,
        }
    }

    /// The side that receives in `direction`.
    pub fn sink(direction: Direction) -> Role {
        match direction {
            Direction::Up => Role::Server,
            Direction::Down => Role::Client,
        }
    }

    /// `client` or `server`.
    pub fn name(self) -> &'static str {
        match self {
            Role::Client => "client",
            Role::Server => "server",
        }
    }
}

/// Why the emulator could not start or run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Namespaces and TUN devices need root.
    #[error("the link emulator needs root (network namespaces and TUN devices)")]
    NotRoot,
    /// A setup step failed.
    #[error("{step}: {source}")]
    Setup {
        /// What was being done.
        step: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// A capture file could not be written.
    #[error("capture file {}: {source}", path.display())]
    Capture {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A CPU quota could not be set up.
    #[error("CPU quota: {step}: {source}")]
    Cgroup {
        /// What was being done.
        step: String,
        /// Why it failed.
        source: std::io::Error,
    },
}

/// How to build the emulator.
#[derive(Debug, Clone)]
pub struct Options {
    /// Client-side address.
    pub client_addr: Ipv4Addr,
    /// Server-side address.
    pub server_addr: Ipv4Addr,
    /// Prefix of device names (at most 8 bytes; a per-run suffix is appended).
    pub prefix: String,
    /// Seed of the links' random streams.
    pub seed: u64,
    /// Base name of capture files (`BASE.client.pcap`, `BASE.server.pcap`).
    pub capture: Option<PathBuf>,
    /// Whether 64 KB TCP super-packets cross the pump (TUN offload).
    pub offload: Offload,
    /// Run the pump threads under SCHED_FIFO so a busy host delays them less.
    pub realtime: bool,
}

/// TUN offload: whether TCP super-packets (GSO) cross the pump instead of single packets.
///
/// With offload the kernel hands the pump up to 64 KB at a time, cutting its per-packet
/// work about thirtyfold, which fast long paths need on a small machine. Where a direction
/// draws per packet (loss, cell loss, duplication) each super-packet is split into real
/// segments first, so every segment gets its own draw. Elsewhere the link charges framing,
/// queue space and serialization per segment ([`crate::Link::enqueue_segments`]) but a
/// super-packet leaves as a whole when its last segment is due, so its first segment
/// arrives up to one super-packet's serialization time late (0.5 ms at 1 Gbit/s).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Offload {
    /// On when every direction runs at 500 Mbit/s or more (or unlimited).
    #[default]
    Auto,
    /// Always.
    On,
    /// Never.
    Off,
}

/// Slowest rate at which [`Offload::Auto`] turns offload on.
const AUTO_OFFLOAD_MIN_BPS: u64 = 500_000_000;

impl Offload {
    /// Whether `path` runs with offload.
    pub fn resolve(self, path: &PathConfig) -> bool {
        let fast = [path.up.rate, path.down.rate]
            .iter()
            .all(|r| r.is_none_or(|r| r.bits_per_sec() >= AUTO_OFFLOAD_MIN_BPS));
        match self {
            Offload::Off => false,
            Offload::Auto => fast,
            Offload::On => true,
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            client_addr: CLIENT_ADDR,
            server_addr: SERVER_ADDR,
            prefix: DEFAULT_PREFIX.to_string(),
            seed: 1,
            capture: None,
            offload: Offload::Auto,
            realtime: true,
        }
    }
}

/// A running emulated path; stops and tears down when dropped.
#[derive(Debug)]
pub struct Emulator {
    spec: String,
    offload: bool,
    client: NetNs,
    server: NetNs,
    opts: Options,
    shared: Arc<Shared>,
    captures: Arc<Captures>,
    threads: Vec<JoinHandle<()>>,
    second: Option<second::SecondPath>,
}

impl Emulator {
    /// Builds both sides and starts forwarding. `spec` is the text `path` was parsed
    /// from, kept for reports.
    pub fn start(spec: &str, path: &PathConfig, opts: &Options) -> Result<Emulator, Error> {
        if !netio::netns::is_root() {
            return Err(Error::NotRoot);
        }
        let client_name = setup::device_name(&opts.prefix, 'c');
        let server_name = setup::device_name(&opts.prefix, 's');
        let offload = opts.offload.resolve(path);
        let client = setup::side(&client_name, opts.client_addr, opts.server_addr, path, offload)?;
        let server = setup::side(&server_name, opts.server_addr, opts.client_addr, path, offload)?;
        let captures = Arc::new(match opts.capture.as_deref() {
            Some(base) => Captures::create(base)?,
            None => Captures::default(),
        });
        let shared = Arc::new(Shared::default());
        let tuns = (Arc::new(client.tun), Arc::new(server.tun));
        let threads = spawn_forwarders(path, opts, &tuns, &shared, Some(&captures))?;
        Ok(Emulator {
            spec: spec.to_string(),
            offload,
            client: client.ns,
            server: server.ns,
            opts: opts.clone(),
            shared,
            captures,
            threads,
            second: None,
        })
    }

    /// The namespace of `role`'s side.
    pub fn netns(&self, role: Role) -> &NetNs {
        match role {
            Role::Client => &self.client,
            Role::Server => &self.server,
        }
    }

    /// The address of `role`'s side.
    pub fn addr(&self, role: Role) -> Ipv4Addr {
        match role {
            Role::Client => self.opts.client_addr,
            Role::Server => self.opts.server_addr,
        }
    }

    /// Captures from now on into `BASE.client.pcap` and `BASE.server.pcap` (closing the files
    /// written so far), or stops capturing with `None`. Refused when `--pcap` owns the capture.
    pub fn capture_to(&self, base: Option<&std::path::Path>) -> Result<(), Error> {
        if let Some(owner) = &self.opts.capture {
            let source = std::io::Error::other("the capture is already written there (--pcap)");
            return Err(Error::Capture { path: owner.clone(), source });
        }
        self.captures.switch(base)
    }

    /// The counters so far.
    pub fn report(&self) -> results::EmuReport {
        report::build(&self.spec, self.offload, &self.shared)
    }

    /// Ends every process left on either side (SIGTERM, `grace`, SIGKILL; see
    /// [`NetNs::stop_processes`]), so that the namespaces go with this emulator: a server
    /// started through a shell, its children and daemons included.
    pub fn stop_processes(&self, grace: std::time::Duration) -> Result<netio::netns::Stopped, Error> {
        let mut all = netio::netns::Stopped::default();
        for role in [Role::Client, Role::Server] {
            let s = self.netns(role).stop_processes(grace).map_err(|source| Error::Setup {
                step: format!("stopping the processes on the {} side", role.name()),
                source,
            })?;
            all.terminated += s.terminated;
            all.killed += s.killed;
        }
        Ok(all)
    }

    /// The error that stopped forwarding, if one did.
    pub fn failure(&self) -> Option<String> {
        self.shared.failure().or_else(|| self.second.as_ref().and_then(|s| s.shared.failure()))
    }

    /// Stops forwarding, flushes captures and returns the final counters.
    pub fn stop(mut self) -> Result<results::EmuReport, Error> {
        self.halt();
        let report = self.report();
        if let Some(base) = &self.opts.capture {
            self.captures.flush().map_err(|source| Error::Capture { path: base.clone(), source })?;
        }
        Ok(report)
    }

    fn halt(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        if let Some(second) = &mut self.second {
            second.halt();
        }
    }
}

/// Starts one forwarding thread per direction.
fn spawn_forwarders(
    path: &PathConfig,
    opts: &Options,
    (client, server): &(Arc<netio::Tun>, Arc<netio::Tun>),
    shared: &Arc<Shared>,
    captures: Option<&Arc<Captures>>,
) -> Result<Vec<JoinHandle<()>>, Error> {
    let clock = Clock::new();
    let mut threads = Vec::new();
    for (direction, input, output) in [(Direction::Up, client, server), (Direction::Down, server, client)] {
        let forwarder = Forwarder {
            direction,
            link: path.build_link(direction, opts.seed),
            input: Arc::clone(input),
            output: Arc::clone(output),
            shared: Arc::clone(shared),
            captures: captures.cloned(),
            clock,
            realtime: opts.realtime,
        };
        let thread = std::thread::Builder::new()
            .name(format!("emu-{direction}"))
            .spawn(move || forwarder.run())
            .map_err(|source| {
                shared.stop.store(true, Ordering::Relaxed); // stops a thread already started
                Error::Setup { step: "starting a pump thread".into(), source }
            })?;
        threads.push(thread);
    }
    Ok(threads)
}

impl Drop for Emulator {
    fn drop(&mut self) {
        self.halt();
        let _ = self.captures.flush();
    }
}
