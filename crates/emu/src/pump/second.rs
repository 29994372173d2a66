//! A second emulated path between the same two namespaces: its own TUN pair, its own
//! address pair (198.18.2.1 ↔ 198.18.2.2 by default), its own [`PathConfig`] and its own
//! counters. With it a client has two routes to the server — what multipath transports
//! (MPTCP) need. The second path is not captured (`--pcap` covers the first).

use std::net::Ipv4Addr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;

use netio::mptcp_pm;

use super::shared::Shared;
use super::{report, setup, spawn_forwarders, Emulator, Error, Role};
use crate::spec::PathConfig;

/// Default client-side address of the second path.
pub const CLIENT_ADDR: Ipv4Addr = Ipv4Addr::new(198, 18, 2, 1);
/// Default server-side address of the second path.
pub const SERVER_ADDR: Ipv4Addr = Ipv4Addr::new(198, 18, 2, 2);

/// Extra subflows and accepted announcements per MPTCP connection set by
/// [`Emulator::enable_mptcp`] (one is needed for the second path; the kernel allows 8).
pub const MPTCP_SUBFLOWS: u32 = 2;

/// The running second path.
#[derive(Debug)]
pub struct SecondPath {
    spec: String,
    offload: bool,
    addrs: (Ipv4Addr, Ipv4Addr),
    pub(super) shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl SecondPath {
    pub(super) fn halt(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Emulator {
    /// Adds a second path between the two sides, client address `addrs.0`, server address
    /// `addrs.1` (both must differ from the first path's and lie in no subnet of it; the
    /// defaults are [`CLIENT_ADDR`] and [`SERVER_ADDR`]). `spec` is the text `path` was
    /// parsed from. Refused when a second path exists already.
    pub fn add_path(
        &mut self,
        spec: &str,
        path: &PathConfig,
        addrs: (Ipv4Addr, Ipv4Addr),
    ) -> Result<(), Error> {
        if self.second.is_some() {
            let source =
                std::io::Error::new(std::io::ErrorKind::AlreadyExists, "a second path exists already");
            return Err(Error::Setup { step: "adding a path".into(), source });
        }
        let first = [self.opts.client_addr, self.opts.server_addr];
        if first.contains(&addrs.0) || first.contains(&addrs.1) || addrs.0 == addrs.1 {
            let source = std::io::Error::new(std::io::ErrorKind::InvalidInput, "addresses already in use");
            return Err(Error::Setup { step: format!("second path {} ↔ {}", addrs.0, addrs.1), source });
        }
        let offload = self.opts.offload.resolve(path);
        let client_name = setup::device_name(&self.opts.prefix, 'c');
        let server_name = setup::device_name(&self.opts.prefix, 's');
        let client = setup::extra_device(&self.client, &client_name, addrs.0, addrs.1, path, offload)?;
        let server = setup::extra_device(&self.server, &server_name, addrs.1, addrs.0, path, offload)?;
        let shared = Arc::new(Shared::default());
        let tuns = (Arc::new(client), Arc::new(server));
        let threads = spawn_forwarders(path, &self.opts, &tuns, &shared, None)?;
        self.second = Some(SecondPath { spec: spec.to_string(), offload, addrs, shared, threads });
        Ok(())
    }

    /// Readies both sides for MPTCP over the two paths, through the in-kernel path manager
    /// ([`netio::mptcp_pm`]): each side takes up to [`MPTCP_SUBFLOWS`] extra subflows and
    /// announcements, and the server announces its second-path address, so a client opens a
    /// second subflow to it over the second path. An MPTCP server must then listen on
    /// `0.0.0.0`: the join arrives at the second address. Needs the second path.
    pub fn enable_mptcp(&self) -> Result<(), Error> {
        let Some(server_addr) = self.second_addr(Role::Server) else {
            let source = std::io::Error::new(std::io::ErrorKind::NotFound, "there is no second path");
            return Err(Error::Setup { step: "readying MPTCP".into(), source });
        };
        let limits = mptcp_pm::Limits { subflows: MPTCP_SUBFLOWS, add_addr_accepted: MPTCP_SUBFLOWS };
        let announce = mptcp_pm::Endpoint {
            addr: server_addr,
            id: 1,
            flags: mptcp_pm::EndpointFlags { signal: true, ..Default::default() },
            ifindex: None,
        };
        for role in [Role::Client, Role::Server] {
            let configure = || {
                mptcp_pm::set_limits(limits)?;
                match role {
                    Role::Server => mptcp_pm::add_endpoint(&announce),
                    Role::Client => Ok(()),
                }
            };
            self.netns(role).run(configure).and_then(|r| r).map_err(|source| Error::Setup {
                step: format!("MPTCP path manager on the {} side", role.name()),
                source,
            })?;
        }
        Ok(())
    }

    /// The address of `role`'s side on the second path, if there is one.
    pub fn second_addr(&self, role: Role) -> Option<Ipv4Addr> {
        self.second.as_ref().map(|s| match role {
            Role::Client => s.addrs.0,
            Role::Server => s.addrs.1,
        })
    }

    /// The second path's counters so far (kept apart from [`Emulator::report`]'s); after
    /// [`Emulator::stop`] they are gone, so read them before.
    pub fn second_report(&self) -> Option<results::EmuReport> {
        self.second.as_ref().map(|s| report::build(&s.spec, s.offload, &s.shared))
    }
}
