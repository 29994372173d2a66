//! Third-party tests and meshes (`tcplab mesh`): which host ran a test against which, and the
//! plan of a sender × receiver matrix. A mesh is stored as a sweep ([`crate::Sweep`]) whose
//! plan carries a [`MeshPlan`]; its single axis lists the cells, and each point's parameters
//! name the cell's `sender` and `receiver`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A test one server (the client end) ran against another (the server end) on request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThirdParty {
    /// The server asked to run the test, `host:port`: its client end.
    pub from: String,
    /// The server it ran the test against, `host:port`: its server end.
    pub to: String,
    /// The client end's name in a mesh inventory, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_name: Option<String>,
    /// The server end's name in a mesh inventory, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_name: Option<String>,
}

/// What a host does in a mesh.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MeshRole {
    /// Only sends (a row of the matrix).
    Sender,
    /// Only receives (a column).
    Receiver,
    /// Both (the default).
    Both,
}

impl MeshRole {
    /// Whether the host has a row.
    pub fn sends(self) -> bool {
        self != MeshRole::Receiver
    }

    /// Whether the host has a column.
    pub fn receives(self) -> bool {
        self != MeshRole::Sender
    }
}

/// One host of a mesh inventory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeshHost {
    /// Its name in the matrix.
    pub name: String,
    /// Host name or address of its `tcplab server`.
    pub address: String,
    /// Its control port.
    pub port: u16,
    /// Free-form labels from the inventory (`site = "lab"`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Sender, receiver or both.
    pub role: MeshRole,
    /// The machine its server said it runs on (hex of the id after its hello, which one
    /// mesh's hosts share exactly when they are one machine); `None` when not asked or
    /// the server did not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
}

impl MeshHost {
    /// `address:port`, with brackets around an IPv6 address.
    pub fn endpoint(&self) -> String {
        if self.address.contains(':') && !self.address.starts_with('[') {
            format!("[{}]:{}", self.address, self.port)
        } else {
            format!("{}:{}", self.address, self.port)
        }
    }
}

/// One ordered pair: `sender` runs the test's client end against `receiver`. A cell whose
/// two ends are the same host is that host's loop-back baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeshCell {
    /// Index of the sending host in [`MeshPlan::hosts`].
    pub sender: u32,
    /// Index of the receiving host.
    pub receiver: u32,
}

impl MeshCell {
    /// Whether this is a loop-back baseline.
    pub fn is_baseline(self) -> bool {
        self.sender == self.receiver
    }
}

/// What a mesh was asked to measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeshPlan {
    /// The inventory file as given.
    pub inventory: String,
    /// The hosts, in inventory order.
    pub hosts: Vec<MeshHost>,
    /// The cells in the order their points are numbered.
    pub cells: Vec<MeshCell>,
}

impl MeshPlan {
    /// Host `i`'s name (`?` if out of range).
    pub fn name(&self, i: u32) -> &str {
        self.hosts.get(i as usize).map_or("?", |h| h.name.as_str())
    }

    /// For each host, the index of the first host on the same machine (itself when it shares
    /// its machine with no earlier host, or its machine is not known).
    pub fn machines(&self) -> Vec<u32> {
        let same = |a: &MeshHost, b: &MeshHost| a.machine.is_some() && a.machine == b.machine;
        let first = |h: &MeshHost, i: usize| self.hosts[..i].iter().position(|e| same(e, h)).unwrap_or(i);
        self.hosts.iter().enumerate().map(|(i, h)| first(h, i) as u32).collect()
    }

    /// The groups of two or more hosts that are one machine, by name, in inventory order.
    pub fn shared_machines(&self) -> Vec<Vec<&str>> {
        let of = self.machines();
        let mut out: Vec<Vec<&str>> = Vec::new();
        for (first, _) in of.iter().enumerate().filter(|&(i, &m)| i as u32 == m) {
            let names: Vec<&str> = (0..of.len())
                .filter(|&i| of[i] as usize == first)
                .map(|i| self.hosts[i].name.as_str())
                .collect();
            if names.len() > 1 {
                out.push(names);
            }
        }
        out
    }

    /// Indices of the hosts with a row, in inventory order.
    pub fn senders(&self) -> Vec<u32> {
        (0..self.hosts.len() as u32).filter(|&i| self.hosts[i as usize].role.sends()).collect()
    }

    /// Indices of the hosts with a column, in inventory order.
    pub fn receivers(&self) -> Vec<u32> {
        (0..self.hosts.len() as u32).filter(|&i| self.hosts[i as usize].role.receives()).collect()
    }
}
