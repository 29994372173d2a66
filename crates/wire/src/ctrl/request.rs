//! What a client asks a server to run: the body of a `setup` message.
//!
//! Part of the protocol's contract (protocol version 2): these types belong to the wire, not
//! to the archive. The archive's `results::TestSpec` has the same fields today, but the two
//! change separately; the engine converts between them in one place.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Which way bulk data flows, seen from the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// `forward`: client sends, server receives.
    Forward,
    /// `reverse`: server sends, client receives.
    Reverse,
    /// `bidir`: both at once.
    Bidir,
}

/// The parameters of one test, as sent in `setup`. Sizes in bytes, times in milliseconds.
///
/// Every field is required except the `Option`s, which may be `null` or left out. Unknown
/// fields are refused. The server checks ranges (engine `limits`) and answers `bad-field`
/// naming the field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestRequest {
    /// The test type's stable id (`tcp-stream`, `udp-rr` …). A string, not an enum, so that a
    /// test type this server does not know is answered with `unsupported` naming it, and a
    /// new test type needs no protocol change.
    pub test: String,
    /// Time limit; 0 when the test is limited by `bytes_limit` only.
    pub duration_ms: u64,
    /// Total bytes to send over all streams of one direction.
    pub bytes_limit: Option<u64>,
    /// Parallel streams (or flows) per direction.
    pub parallel: u32,
    /// Data direction.
    pub direction: Direction,
    /// Bytes per write.
    pub send_len: u32,
    /// Bytes per read.
    pub recv_len: u32,
    /// Request size (rr, crr, udp-rr).
    pub request_len: u32,
    /// Response size (rr, crr, udp-rr).
    pub response_len: u32,
    /// Transactions in flight per flow (rr, udp-rr); datagrams per pacing step (udp-stream).
    pub burst: u32,
    /// TCP_NODELAY on every data socket.
    pub nodelay: bool,
    /// TCP_MAXSEG requested.
    pub mss: Option<u32>,
    /// Congestion control requested on both ends.
    pub congestion: Option<String>,
    /// SO_SNDBUF on the client's data sockets.
    pub sndbuf: Option<u32>,
    /// SO_RCVBUF on the client's data sockets.
    pub rcvbuf: Option<u32>,
    /// SO_SNDBUF on the server's data sockets.
    pub remote_sndbuf: Option<u32>,
    /// SO_RCVBUF on the server's data sockets.
    pub remote_rcvbuf: Option<u32>,
    /// Interval report period; 0 = no interval reports.
    pub interval_ms: u64,
    /// Leading time excluded from summaries.
    pub omit_ms: u64,
    /// CPU the client's worker threads are pinned to.
    pub cpu_local: Option<u32>,
    /// CPU the server's worker threads are pinned to.
    pub cpu_remote: Option<u32>,
    /// Spin on non-blocking reads (both ends).
    pub busy_poll: bool,
    /// UDP: target rate of each stream, bit/s of UDP payload (0 = as fast as possible).
    pub rate_bps: u64,
    /// UDP: send without UDP checksums (IPv4 only).
    pub no_checksum: bool,
    /// UDP: one datagram per call, no GSO/GRO.
    pub no_offload: bool,
    /// Record the server's end of the segment flow and return it with the results (a
    /// server without `--allow-trace` says why not). Absent when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trace_server: bool,
    /// Settings only the requested test type has, by name; the server refuses a name the
    /// test type does not declare. Absent when empty.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: BTreeMap<String, OptionValue>,
}

/// The value of a test type's own setting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OptionValue {
    /// On/off.
    Bool(bool),
    /// A size, count or time in the setting's unit.
    Int(u64),
    /// A name.
    Text(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ctrl::Message;

    /// A `setup` frame body exactly as protocol 2 sends it.
    const SETUP: &str = concat!(
        r#"{"type":"setup","spec":{"test":"udp-stream","duration_ms":5000,"bytes_limit":null,"#,
        r#""parallel":2,"direction":"bidir","send_len":1200,"recv_len":1200,"request_len":1,"#,
        r#""response_len":1,"burst":4,"nodelay":false,"mss":null,"congestion":"cubic","#,
        r#""sndbuf":null,"rcvbuf":262144,"remote_sndbuf":null,"remote_rcvbuf":null,"#,
        r#""interval_ms":1000,"omit_ms":500,"cpu_local":1,"cpu_remote":null,"busy_poll":false,"#,
        r#""rate_bps":10000000,"no_checksum":true,"no_offload":false}}"#,
    );

    fn request() -> TestRequest {
        TestRequest {
            test: "udp-stream".into(),
            duration_ms: 5000,
            bytes_limit: None,
            parallel: 2,
            direction: Direction::Bidir,
            send_len: 1200,
            recv_len: 1200,
            request_len: 1,
            response_len: 1,
            burst: 4,
            nodelay: false,
            mss: None,
            congestion: Some("cubic".into()),
            sndbuf: None,
            rcvbuf: Some(262_144),
            remote_sndbuf: None,
            remote_rcvbuf: None,
            interval_ms: 1000,
            omit_ms: 500,
            cpu_local: Some(1),
            cpu_remote: None,
            busy_poll: false,
            rate_bps: 10_000_000,
            no_checksum: true,
            no_offload: false,
            trace_server: false,
            options: BTreeMap::new(),
        }
    }

    #[test]
    fn setup_parses_from_and_emits_the_fixture() {
        let parsed = Message::decode(SETUP.as_bytes()).unwrap();
        assert_eq!(parsed, Message::Setup { spec: request() });
        let bytes = Message::Setup { spec: request() }.encode().unwrap();
        assert_eq!(&bytes[4..], SETUP.as_bytes());
        assert_eq!(bytes[..4], (SETUP.len() as u32).to_be_bytes());
    }

    #[test]
    fn every_direction_has_its_id() {
        let dirs =
            [(Direction::Forward, "forward"), (Direction::Reverse, "reverse"), (Direction::Bidir, "bidir")];
        for (dir, id) in dirs {
            assert_eq!(serde_json::to_string(&dir).unwrap(), format!("\"{id}\""));
        }
    }

    #[test]
    fn an_unknown_field_in_the_spec_is_refused() {
        let extra = SETUP.replace(r#""no_offload":false"#, r#""no_offload":false,"zerocopy":true"#);
        let err = Message::decode(extra.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("zerocopy"), "{err}");
    }

    #[test]
    fn a_missing_required_field_is_refused() {
        let missing = SETUP.replace(r#","busy_poll":false"#, "");
        let err = Message::decode(missing.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("busy_poll"), "{err}");
    }

    #[test]
    fn wrong_types_in_the_spec_are_refused() {
        for parallel in [r#""many""#, "-1", "4294967296", "1.5", "null"] {
            let body = SETUP.replace(r#""parallel":2"#, &format!(r#""parallel":{parallel}"#));
            assert!(Message::decode(body.as_bytes()).is_err(), "parallel {parallel} accepted");
        }
    }

    #[test]
    fn options_are_absent_when_empty_and_carried_by_name_otherwise() {
        assert!(!SETUP.contains("options"));
        let with = SETUP.replace(
            r#""no_offload":false"#,
            r#""no_offload":false,"options":{"sink":"fsync","size":11534336}"#,
        );
        match Message::decode(with.as_bytes()).unwrap() {
            Message::Setup { spec } => {
                assert_eq!(spec.options.get("sink"), Some(&OptionValue::Text("fsync".into())));
                assert_eq!(spec.options.get("size"), Some(&OptionValue::Int(11_534_336)));
                let again = Message::Setup { spec }.encode().unwrap();
                assert_eq!(&again[4..], with.as_bytes());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_test_type_is_carried_by_id_for_the_server_to_judge() {
        let file = SETUP.replace("udp-stream", "file");
        match Message::decode(file.as_bytes()).unwrap() {
            Message::Setup { spec } => assert_eq!(spec.test, "file"),
            other => panic!("{other:?}"),
        }
    }
}
