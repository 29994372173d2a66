//! Hosts as network namespaces joined by a bridge in a namespace of its own (the asking client
//! runs there), addresses `198.18.SUBNET.i+1/24`: for the mesh and fleet tests. Needs root;
//! removed on drop, also when an assertion fails.
#![allow(dead_code, clippy::unwrap_used, reason = "test support")]

use std::process::Command;

fn sh(args: &[&str]) {
    let out = Command::new(args[0]).args(&args[1..]).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// The bridge namespace and the host namespaces, removed on drop.
pub struct Lab {
    /// The bridge's namespace (the asking client's).
    pub bridge: String,
    /// One namespace per host.
    pub hosts: Vec<String>,
    subnet: u8,
}

impl Lab {
    /// `n` hosts named `PREFIX-hI-PID` on 198.18.`subnet`.0/24 (`prefix` ≤ 4 characters:
    /// device names are short).
    pub fn new(prefix: &str, subnet: u8, n: usize) -> Lab {
        let id = std::process::id() % 100_000;
        let lab = Lab {
            bridge: format!("{prefix}-br-{id}"),
            hosts: (0..n).map(|i| format!("{prefix}-h{i}-{id}")).collect(),
            subnet,
        };
        sh(&["ip", "netns", "add", &lab.bridge]);
        sh(&["ip", "-n", &lab.bridge, "link", "add", "br0", "type", "bridge"]);
        sh(&["ip", "-n", &lab.bridge, "addr", "add", &format!("198.18.{subnet}.254/24"), "dev", "br0"]);
        for dev in ["br0", "lo"] {
            sh(&["ip", "-n", &lab.bridge, "link", "set", dev, "up"]);
        }
        for (i, ns) in lab.hosts.iter().enumerate() {
            let (h, b) = (format!("{prefix}h{i}{id}"), format!("{prefix}b{i}{id}"));
            sh(&["ip", "netns", "add", ns]);
            sh(&[
                "ip",
                "link",
                "add",
                &h,
                "netns",
                ns,
                "type",
                "veth",
                "peer",
                "name",
                &b,
                "netns",
                &lab.bridge,
            ]);
            sh(&["ip", "-n", &lab.bridge, "link", "set", &b, "master", "br0", "up"]);
            sh(&["ip", "-n", ns, "addr", "add", &format!("{}/24", lab.addr(i)), "dev", &h]);
            sh(&["ip", "-n", ns, "link", "set", &h, "up"]);
            sh(&["ip", "-n", ns, "link", "set", "lo", "up"]);
        }
        lab
    }

    /// Host `i`'s address.
    pub fn addr(&self, i: usize) -> String {
        format!("198.18.{}.{}", self.subnet, i + 1)
    }

    /// Host `i`'s end of its link (the device in its namespace).
    pub fn device(&self, i: usize) -> String {
        let id = self.hosts[i].rsplit('-').next().unwrap_or_default();
        let prefix = self.hosts[i].split('-').next().unwrap_or_default();
        format!("{prefix}h{i}{id}")
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for ns in self.hosts.iter().chain([&self.bridge]) {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
    }
}

/// Whether this process may make namespaces (root); says so when not.
pub fn can_use_namespaces() -> bool {
    let root = Command::new("id").arg("-u").output().map(|o| o.stdout.starts_with(b"0\n")).unwrap_or(false);
    if !root {
        eprintln!("skipped: this test needs root for network namespaces");
    }
    root
}
