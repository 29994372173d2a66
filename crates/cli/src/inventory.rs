//! A mesh inventory (`tcplab mesh INVENTORY`): a TOML file of hosts, each a `tcplab server
//! --allow-third-party`.
//!
//! ```toml
//! [[host]]
//! name = "kastor"              # its row and column in the matrix
//! address = "198.18.0.1:9180"  # HOST[:PORT], port 9180 by default
//! role = "both"                # sender, receiver or both (the default)
//! labels = { site = "lab" }    # optional, kept with the plan
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{bail, Context, Result};
use results::{MeshHost, MeshRole};
use serde::Deserialize;

/// Most hosts an inventory may list (a mesh of n hosts runs n² tests).
pub const MAX_HOSTS: usize = 64;
/// Longest host name.
const MAX_NAME: usize = 64;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    host: Vec<Entry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    name: String,
    address: String,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    #[serde(default)]
    role: Option<MeshRole>,
}

/// Reads and checks the inventory at `path`.
pub fn read(path: &Path) -> Result<Vec<MeshHost>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading the inventory {}", path.display()))?;
    parse(&text).with_context(|| format!("inventory {}", path.display()))
}

/// Parses and checks an inventory's text: unique names, addresses `HOST[:PORT]`, at least one
/// sender and one receiver, at most [`MAX_HOSTS`] hosts.
pub fn parse(text: &str) -> Result<Vec<MeshHost>> {
    let file: File = toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(1, |s| text[..s.start.min(text.len())].matches('\n').count() + 1);
        anyhow::anyhow!("line {line}: {}", e.message().trim())
    })?;
    if file.host.is_empty() || file.host.len() > MAX_HOSTS {
        bail!("lists {} hosts; a mesh takes 1 to {MAX_HOSTS}", file.host.len());
    }
    let mut names = BTreeSet::new();
    let mut hosts = Vec::new();
    for e in file.host {
        let name = e.name.trim().to_string();
        if name.is_empty() || name.len() > MAX_NAME || name.chars().any(|c| c.is_control() || c == ',') {
            bail!("host name '{}' must be 1 to {MAX_NAME} printable characters without commas", e.name);
        }
        if !names.insert(name.clone()) {
            bail!("host name '{name}' appears twice");
        }
        let (address, port) = crate::parse::host_port(e.address.trim())
            .map_err(|why| anyhow::anyhow!("host '{name}': address {why}"))?;
        let port = port.unwrap_or(engine::server::DEFAULT_PORT);
        hosts.push(MeshHost {
            name,
            address,
            port,
            labels: e.labels,
            role: e.role.unwrap_or(MeshRole::Both),
            machine: None,
        });
    }
    if !hosts.iter().any(|h| h.role.sends()) || !hosts.iter().any(|h| h.role.receives()) {
        bail!("needs at least one sender and one receiver (role = \"sender\", \"receiver\" or \"both\")");
    }
    Ok(hosts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_with_roles_labels_and_default_ports() {
        let hosts = parse(
            r#"
            [[host]]
            name = "a"
            address = "198.18.0.1"
            [[host]]
            name = "b"
            address = "198.18.0.2:9181"
            role = "receiver"
            labels = { site = "lab" }
            "#,
        )
        .unwrap();
        assert_eq!(hosts.len(), 2);
        assert_eq!((hosts[0].port, hosts[0].role), (9180, MeshRole::Both));
        assert_eq!((hosts[1].endpoint().as_str(), hosts[1].role), ("198.18.0.2:9181", MeshRole::Receiver));
        assert_eq!(hosts[1].labels["site"], "lab");
    }

    #[test]
    fn bad_inventories_say_what_is_wrong() {
        let err = |t: &str| format!("{:#}", parse(t).unwrap_err());
        let two = "[[host]]\nname=\"a\"\naddress=\"x\"\n[[host]]\nname=\"a\"\naddress=\"y\"\n";
        assert!(err(two).contains("appears twice"));
        assert!(err("[[host]]\nname=\"a\"\naddress=\"x:0\"\n").contains("host 'a': address"));
        assert!(err("[[host]]\nname=\"a\"\naddress=\"x\"\nrole=\"sender\"\n").contains("one receiver"));
        assert!(err("[[host]]\nname=\"a\"\naddress=\"x\"\nport=1\n").contains("port"));
        assert!(err("host = 3").starts_with("line 1: "), "{}", err("host = 3"));
        assert!(err("").contains("host"));
    }
}
