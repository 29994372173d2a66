//! Two network namespaces joined by a veth pair on 198.18.`subnet`.0/24 (the benchmarking
//! range): `a` holds .1, `b` holds .2. Names carry a prefix, a tag and this process's id, so
//! parallel tests never meet; both namespaces are removed on drop, also when a test fails.

use std::process::Command;

/// The pair.
pub struct Veth {
    /// The namespace holding 198.18.`subnet`.1.
    pub a: String,
    /// The namespace holding 198.18.`subnet`.2.
    pub b: String,
    /// `a`'s end of the link (a device in namespace `a`).
    pub dev_a: String,
}

/// Runs a command that must succeed.
pub fn sh(args: &[&str]) {
    let out = Command::new(args[0]).args(&args[1..]).output().expect("the command runs");
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

impl Veth {
    /// Makes the namespaces `{prefix}-{tag}a-{pid}` and `…b…` and the link between them.
    pub fn new(prefix: &str, tag: &str, subnet: u8) -> Veth {
        let id = std::process::id() % 100_000;
        let (va, vb) = (format!("{prefix}{tag}a{id}"), format!("{prefix}{tag}b{id}"));
        let pair = Veth {
            a: format!("{prefix}-{tag}a-{id}"),
            b: format!("{prefix}-{tag}b-{id}"),
            dev_a: va.clone(),
        };
        sh(&["ip", "netns", "add", &pair.a]);
        sh(&["ip", "netns", "add", &pair.b]);
        sh(&[
            "ip", "link", "add", &va, "netns", &pair.a, "type", "veth", "peer", "name", &vb, "netns", &pair.b,
        ]);
        for (ns, dev, host) in [(&pair.a, &va, 1), (&pair.b, &vb, 2)] {
            sh(&["ip", "-n", ns, "addr", "add", &format!("198.18.{subnet}.{host}/24"), "dev", dev]);
            sh(&["ip", "-n", ns, "link", "set", dev, "up"]);
            sh(&["ip", "-n", ns, "link", "set", "lo", "up"]);
        }
        pair
    }
}

impl Drop for Veth {
    fn drop(&mut self) {
        for ns in [&self.a, &self.b] {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
    }
}
