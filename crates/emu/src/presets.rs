//! Named paths for the seed studies, each a path spec with a one-line description.
//!
//! A spec may start with a preset name and override any of its settings after it:
//! `transatlantic,loss=0.01%`. Rates of ATM presets are cell rates (the SONET payload for
//! OC-3c, the nominal rate for TAXI), so the cell tax comes from the AAL5 framing.

use serde::Serialize;

/// A named path spec.
///
/// Only `Serialize`: it is static data, listed (e.g. as JSON) but never read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Preset {
    /// Name used in specs.
    pub name: &'static str,
    /// One-line description for listings.
    pub description: &'static str,
    /// The settings, in the spec language.
    pub spec: &'static str,
}

const PRESETS: &[Preset] = &[
    Preset {
        name: "atm-oc3-clip",
        description: "OC-3c ATM at the 149.76 Mbit/s SONET payload rate, Classical IP MTU 9180, \
                      LLC/SNAP over AAL5 (seeds 000, 002)",
        spec: "rate=149.76mbit,atm=llc,mtu=9180",
    },
    Preset {
        name: "atm-oc3-lane",
        description: "OC-3c ATM at 149.76 Mbit/s, LAN Emulation with 1500-byte frames over AAL5 \
                      (seed 001)",
        spec: "rate=149.76mbit,atm=lane,mtu=1500",
    },
    Preset {
        name: "taxi-100",
        description: "100 Mbit/s TAXI ATM (no SONET, nominal rate as cell rate), Classical IP \
                      MTU 9180, LLC/SNAP over AAL5 (seed 002)",
        spec: "rate=100mbit,atm=llc,mtu=9180",
    },
    Preset {
        name: "taxi-140",
        description: "140 Mbit/s TAXI ATM (nominal rate as cell rate), IP MTU 9188 over AAL5 \
                      without encapsulation header (seed 004)",
        spec: "rate=140mbit,atm=vcmux,mtu=9188",
    },
    Preset {
        name: "ethernet-10",
        description: "10 Mbit/s Ethernet, MTU 1500, 38 bytes of framing per packet",
        spec: "rate=10mbit,overhead=38,mtu=1500",
    },
    Preset {
        name: "ethernet-100",
        description: "100 Mbit/s Ethernet, MTU 1500, 38 bytes of framing per packet (seed 001)",
        spec: "rate=100mbit,overhead=38,mtu=1500",
    },
    Preset {
        name: "gige",
        description: "1 Gbit/s Ethernet, MTU 1500, 38 bytes of framing per packet, no delay",
        spec: "rate=1gbit,overhead=38,mtu=1500",
    },
    Preset {
        name: "transatlantic",
        description: "1 Gbit/s Ethernet, 170 ms RTT (85 ms each way), MTU 1500, 100-packet queue \
                      (seed 003, Sunnyvale–Geneva)",
        spec: "rate=1gbit,overhead=38,delay=85ms,mtu=1500,queue=100pkt",
    },
    Preset {
        name: "transatlantic-bdp",
        description: "transatlantic with a queue of one bandwidth-delay product (21.25 MB = 1 Gbit/s \
                      × 170 ms) instead of 100 packets (1.2 ms), so the queue does not cap \
                      loss-based controls",
        spec: "rate=1gbit,overhead=38,delay=85ms,mtu=1500,queue=21250000B",
    },
    Preset {
        name: "snv-ams",
        description: "Sunnyvale–Amsterdam (seed 003): 1 Gbit/s Ethernet, MTU 1500, txqueuelen \
                      100; RTT 170 ms assumed, the seed states none",
        spec: "rate=1gbit,overhead=38,delay=85ms,mtu=1500,queue=100pkt",
    },
];

/// Every preset, in listing order.
pub fn all() -> &'static [Preset] {
    PRESETS
}

/// The preset called `name` (case-insensitive).
pub fn find(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_and_described() {
        let names: HashSet<_> = all().iter().map(|p| p.name).collect();
        assert_eq!(names.len(), all().len());
        for p in all() {
            assert!(!p.description.is_empty() && !p.description.contains('\n'));
            assert!(p.name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'));
        }
    }

    #[test]
    fn find_ignores_case() {
        assert_eq!(find("GigE").map(|p| p.name), Some("gige"));
        assert!(find("nope").is_none());
    }

    #[test]
    fn transatlantic_bdp_differs_from_transatlantic_only_in_its_queue() {
        let (a, b) = (find("transatlantic").unwrap().spec, find("transatlantic-bdp").unwrap().spec);
        let without_queue =
            |s: &'static str| s.split(',').filter(|i| !i.starts_with("queue=")).collect::<Vec<_>>();
        assert_eq!(without_queue(a), without_queue(b));
        // One BDP: 1 Gbit/s × 170 ms in bytes.
        assert!(b.ends_with(&format!("queue={}B", 1_000_000_000u64 * 170 / 1000 / 8)));
        let path: crate::PathConfig = "transatlantic-bdp".parse().unwrap();
        assert_eq!(path, b.parse().unwrap());
    }

    #[test]
    fn presets_list_as_json() {
        let json = serde_json::to_string(all()).unwrap();
        assert!(json.contains("\"name\":\"atm-oc3-clip\""));
    }
}
