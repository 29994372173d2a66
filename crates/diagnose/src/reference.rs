//! What "theoretical" means for a result.

use model::{goodput, Link, Stack};
use results::{Reference, ReferenceKind};

/// The maximum goodput of `link` for `stack` (full-size segments), as a reference.
pub fn link_reference(link: &Link, stack: &Stack) -> model::Result<Reference> {
    let max = goodput::max_goodput(link, stack)?;
    Ok(Reference {
        kind: ReferenceKind::Link,
        description: format!("{link} · {stack} · MTU {}", link.mtu_bytes()),
        limit_bps: max.goodput_bps,
    })
}

/// The link an emulated path (`--path SPEC`) serializes at, as a reference: tcplab emulates
/// that link, so its maximum goodput is the test's theoretical limit. The stack is what Linux
/// sends over it: IPv4 with TCP timestamps, or IPv4/UDP for a UDP test (`--link`'s defaults).
pub fn path_reference(spec: &str, link: &Link, udp: bool) -> model::Result<Reference> {
    let stack: Stack = if udp { "ipv4:udp" } else { "ipv4:tcp:ts" }.parse()?;
    let stack = &stack;
    let max = goodput::max_goodput(link, stack)?;
    Ok(Reference {
        kind: ReferenceKind::Link,
        description: format!("emulated path {spec}: {link} · {stack} · MTU {}", link.mtu_bytes()),
        limit_bps: max.goodput_bps,
    })
}

/// A stream measured on loopback in the same run, as the reference of the others.
pub fn loopback_baseline(label: &str, goodput_bps: f64) -> Reference {
    Reference {
        kind: ReferenceKind::LoopbackBaseline,
        description: format!("loopback baseline ({label} in this run)"),
        limit_bps: goodput_bps,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oc3c_reference_is_134_51() {
        let link: Link = "atm:oc3c:mtu=9180".parse().unwrap_or_else(|_| unreachable!());
        let stack: Stack = "tcp".parse().unwrap_or_else(|_| unreachable!());
        let r = link_reference(&link, &stack).map(|r| (r.limit_bps / 1e4).round() / 100.0);
        assert_eq!(r, Ok(134.51));
    }

    #[test]
    fn a_path_reference_names_the_path() {
        let link: Link =
            "raw:149.76m:overhead=16:cell=48:cellover=5:mtu=9180".parse().unwrap_or_else(|_| unreachable!());
        let r = path_reference("atm-oc3-clip", &link, false);
        assert!(
            r.as_ref().is_ok_and(|r| r.kind == ReferenceKind::Link
                && r.description.starts_with("emulated path atm-oc3-clip: raw:")),
            "{r:?}"
        );
        assert_eq!(r.map(|r| (r.limit_bps / 1e4).round() / 100.0), Ok(134.34));
    }
}
