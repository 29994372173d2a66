//! What a client asks a server to run: the body of a `setup` message.
//!
//! Part of the protocol's contract (protocol version 2): these types belong to the wire, not
//! to the archive. The archive's `results::TestSpec` has the same fields today, but the two
//! change separately; the engine converts between them in one place.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The parameters of one test, as sent in `setup`. Sizes in bytes, times in milliseconds.
///
/// The test's settings travel as one JSON object member each, named by the settings table's
/// wire name (`results::setting`: `send_len`, `sndbuf`, `duration_ms` …), `null` for an
/// optional setting left to the OS or the test type. The wire does not list them: the engine
/// converts a spec to and from this request by walking the table, and the server answers
/// `bad-field` naming a setting it does not know, a value of the wrong kind, or one out of
/// range (engine `limits`). A setting left out takes the test type's default, so a peer
/// that predates a setting is still understood (protocol 2, unchanged on the wire).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestRequest {
    /// The test type's stable id (`tcp-stream`, `udp-rr` …). A string, not an enum, so that a
    /// test type this server does not know is answered with `unsupported` naming it, and a
    /// new test type needs no protocol change.
    pub test: String,
    /// Record the server's end of the segment flow and return it with the results (a
    /// server without `--allow-trace` says why not). Absent when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trace_server: bool,
    /// Settings only the requested test type has, by name; the server refuses a name the
    /// test type does not declare. Absent when empty.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: BTreeMap<String, OptionValue>,
    /// Every other member: the test's settings by wire name (`null` = unset).
    #[serde(flatten)]
    pub settings: BTreeMap<String, Option<OptionValue>>,
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

    /// A `setup` frame body exactly as protocol 2 has always sent it (before its settings
    /// were named by the table).
    const SETUP: &str = concat!(
        r#"{"type":"setup","spec":{"test":"udp-stream","duration_ms":5000,"bytes_limit":null,"#,
        r#""parallel":2,"direction":"bidir","send_len":1200,"recv_len":1200,"request_len":1,"#,
        r#""response_len":1,"burst":4,"nodelay":false,"mss":null,"congestion":"cubic","#,
        r#""sndbuf":null,"rcvbuf":262144,"remote_sndbuf":null,"remote_rcvbuf":null,"#,
        r#""interval_ms":1000,"omit_ms":500,"cpu_local":1,"cpu_remote":null,"busy_poll":false,"#,
        r#""rate_bps":10000000,"no_checksum":true,"no_offload":false}}"#,
    );

    fn setup(body: &str) -> TestRequest {
        match Message::decode(body.as_bytes()) {
            Ok(Message::Setup { spec }) => spec,
            other => panic!("{other:?}"),
        }
    }

    fn json(bytes: &[u8]) -> serde_json::Value {
        serde_json::from_slice(bytes).unwrap()
    }

    #[test]
    fn a_protocol_2_setup_parses_by_name_and_is_sent_back_the_same() {
        let spec = setup(SETUP);
        assert_eq!(spec.test, "udp-stream");
        assert_eq!(spec.settings.len(), 24, "every member but the test's id is a setting");
        assert_eq!(spec.settings["parallel"], Some(OptionValue::Int(2)));
        assert_eq!(spec.settings["direction"], Some(OptionValue::Text("bidir".into())));
        assert_eq!(spec.settings["no_checksum"], Some(OptionValue::Bool(true)));
        assert_eq!(spec.settings["mss"], None, "null: unset");
        let bytes = Message::Setup { spec }.encode().unwrap();
        assert_eq!(json(&bytes[4..]), json(SETUP.as_bytes()), "same members and values");
        assert_eq!(bytes[..4], ((bytes.len() - 4) as u32).to_be_bytes());
    }

    #[test]
    fn unknown_settings_reach_the_server_by_name_and_malformed_values_are_refused() {
        let extra = SETUP.replace(r#""no_offload":false"#, r#""no_offload":false,"zerocopy":true"#);
        assert_eq!(setup(&extra).settings["zerocopy"], Some(OptionValue::Bool(true)));
        for parallel in ["-1", "1.5", "[1]", "{}"] {
            let body = SETUP.replace(r#""parallel":2"#, &format!(r#""parallel":{parallel}"#));
            assert!(Message::decode(body.as_bytes()).is_err(), "parallel {parallel} accepted");
        }
        assert!(Message::decode(SETUP.replace(r#""test":"udp-stream","#, "").as_bytes()).is_err());
    }

    #[test]
    fn options_are_absent_when_empty_and_carried_by_name_otherwise() {
        assert!(!SETUP.contains("options"));
        let with = SETUP.replace(
            r#""no_offload":false"#,
            r#""no_offload":false,"options":{"sink":"fsync","size":11534336}"#,
        );
        let spec = setup(&with);
        assert_eq!(spec.options.get("sink"), Some(&OptionValue::Text("fsync".into())));
        assert_eq!(spec.options.get("size"), Some(&OptionValue::Int(11_534_336)));
        assert!(!spec.settings.contains_key("options"));
        let again = Message::Setup { spec }.encode().unwrap();
        assert_eq!(json(&again[4..]), json(with.as_bytes()));
    }

    #[test]
    fn a_test_type_is_carried_by_id_for_the_server_to_judge() {
        assert_eq!(setup(&SETUP.replace("udp-stream", "file")).test, "file");
    }
}
