//! The server's description of itself, sent in `accepted` (protocol version 2).

use serde::{Deserialize, Serialize};

/// System facts of the server host. Unknown fields are refused.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Host {
    /// Host name.
    pub hostname: String,
    /// Kernel name and release, e.g. `Linux 6.18.44`.
    pub kernel: String,
    /// CPU model name.
    pub cpu_model: String,
    /// Online CPUs.
    pub cpus: u32,
    /// Congestion controls the kernel offers.
    pub congestion_available: Vec<String>,
    /// The default congestion control.
    pub congestion_default: String,
    /// Whether the host looks like a virtual machine.
    pub virtualized: bool,
    /// tcplab version running there.
    pub tool_version: String,
}

#[cfg(test)]
mod tests {
    use crate::ctrl::{Accepted, Message};

    use super::*;

    /// An `accepted` frame body exactly as protocol 2 sends it (a UDP test).
    const ACCEPTED: &str = concat!(
        r#"{"type":"accepted","token":"000102030405060708090a0b0c0d0e0f","#,
        r#""host":{"hostname":"srv","kernel":"Linux 6.1.0","cpu_model":"Xeon","cpus":8,"#,
        r#""congestion_available":["reno","cubic"],"congestion_default":"cubic","virtualized":true,"#,
        r#""tool_version":"0.1.0"},"udp_ports":[40001,40002]}"#,
    );

    fn accepted() -> Accepted {
        Accepted {
            token: "000102030405060708090a0b0c0d0e0f".into(),
            host: Host {
                hostname: "srv".into(),
                kernel: "Linux 6.1.0".into(),
                cpu_model: "Xeon".into(),
                cpus: 8,
                congestion_available: vec!["reno".into(), "cubic".into()],
                congestion_default: "cubic".into(),
                virtualized: true,
                tool_version: "0.1.0".into(),
            },
            udp_ports: vec![40001, 40002],
        }
    }

    #[test]
    fn accepted_parses_from_and_emits_the_fixture() {
        assert_eq!(Message::decode(ACCEPTED.as_bytes()).unwrap(), Message::Accepted(accepted()));
        let bytes = Message::Accepted(accepted()).encode().unwrap();
        assert_eq!(&bytes[4..], ACCEPTED.as_bytes());
    }

    #[test]
    fn tcp_tests_leave_the_udp_ports_out() {
        let tcp = Accepted { udp_ports: Vec::new(), ..accepted() };
        let json = serde_json::to_string(&Message::Accepted(tcp.clone())).unwrap();
        assert!(json.ends_with(r#""tool_version":"0.1.0"}}"#), "{json}");
        assert_eq!(Message::decode(json.as_bytes()).unwrap(), Message::Accepted(tcp));
    }

    #[test]
    fn an_unknown_host_field_is_refused() {
        let extra = ACCEPTED.replace(r#""virtualized":true"#, r#""virtualized":true,"numa_nodes":2"#);
        let err = Message::decode(extra.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("numa_nodes"), "{err}");
    }
}
