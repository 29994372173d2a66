//! The results document each side sends during EXCHANGE_RESULTS (iperf3's `send_results()` /
//! `get_results()`); the client sends first.
//!
//! Required fields are required as in iperf3 (a missing one is `IERECVRESULTS`); numbers are
//! read in either spelling. `jitter` is in seconds. `omitted_errors` and `omitted_packets`
//! travel both or neither.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::number::{
    de_count, de_float, de_int, de_opt_float, de_opt_int, de_opt_string, ser_float, ser_opt_float,
};
use super::Iperf3Error;

/// One side's results.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Results {
    /// The side's process CPU (user + system), percent, as iperf3 measures it.
    #[serde(deserialize_with = "de_float", serialize_with = "ser_float")]
    pub cpu_util_total: f64,
    /// Process user CPU, percent.
    #[serde(deserialize_with = "de_float", serialize_with = "ser_float")]
    pub cpu_util_user: f64,
    /// Process system CPU, percent.
    #[serde(deserialize_with = "de_float", serialize_with = "ser_float")]
    pub cpu_util_system: f64,
    /// −1 if this side only received; 0/1 whether TCP_INFO retransmits are available.
    #[serde(deserialize_with = "de_int")]
    pub sender_has_retransmits: i64,
    /// Congestion control actually used.
    #[serde(default, deserialize_with = "de_opt_string", skip_serializing_if = "Option::is_none")]
    pub congestion_used: Option<String>,
    /// One entry per stream, matched by id.
    pub streams: Vec<StreamResults>,
    /// The server's `-J` output (server → client, with `get_server_output`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_output_json: Option<Value>,
    /// The server's text output (server → client, with `get_server_output`).
    #[serde(default, deserialize_with = "de_opt_string", skip_serializing_if = "Option::is_none")]
    pub server_output_text: Option<String>,
}

/// One stream's results.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamResults {
    /// Stream id: 1, 3, 4, 5, … (never 2).
    #[serde(deserialize_with = "de_int")]
    pub id: i64,
    /// Sender: bytes sent after the omit period; receiver: bytes received.
    #[serde(deserialize_with = "de_count")]
    pub bytes: u64,
    /// TCP retransmits of a sending stream, else −1.
    #[serde(deserialize_with = "de_int")]
    pub retransmits: i64,
    /// UDP jitter in **seconds**.
    #[serde(deserialize_with = "de_float", serialize_with = "ser_float")]
    pub jitter: f64,
    /// UDP datagrams lost.
    #[serde(deserialize_with = "de_int")]
    pub errors: i64,
    /// UDP losses during the omit period.
    #[serde(default, deserialize_with = "de_opt_int", skip_serializing_if = "Option::is_none")]
    pub omitted_errors: Option<i64>,
    /// UDP datagrams (the highest sequence number seen, for a receiver).
    #[serde(deserialize_with = "de_int")]
    pub packets: i64,
    /// UDP datagrams during the omit period.
    #[serde(default, deserialize_with = "de_opt_int", skip_serializing_if = "Option::is_none")]
    pub omitted_packets: Option<i64>,
    /// Seconds from the stream's start (always 0).
    #[serde(
        default,
        deserialize_with = "de_opt_float",
        serialize_with = "ser_opt_float",
        skip_serializing_if = "Option::is_none"
    )]
    pub start_time: Option<f64>,
    /// Seconds from the stream's start to its end.
    #[serde(
        default,
        deserialize_with = "de_opt_float",
        serialize_with = "ser_opt_float",
        skip_serializing_if = "Option::is_none"
    )]
    pub end_time: Option<f64>,
}

impl Results {
    /// Decodes a results document (the body of one frame).
    pub fn decode(json: &[u8]) -> Result<Results, Iperf3Error> {
        let r: Results = super::decode_object(json, "results")?;
        if let Some(s) = r.streams.iter().find(|s| s.omitted_errors.is_some() != s.omitted_packets.is_some())
        {
            return Err(Iperf3Error::Json {
                what: "results",
                reason: format!("stream {}: omitted_errors and omitted_packets must come together", s.id),
            });
        }
        Ok(r)
    }

    /// Encodes the document, unformatted (the body of one frame).
    pub fn encode(&self) -> Result<Vec<u8>, Iperf3Error> {
        serde_json::to_vec(self).map_err(|e| Iperf3Error::Json { what: "results", reason: e.to_string() })
    }

    /// The stream with this id.
    pub fn stream(&self, id: i64) -> Option<&StreamResults> {
        self.streams.iter().find(|s| s.id == id)
    }
}

/// The id of the `index`-th stream a client opens (0-based): 1, 3, 4, 5, …
pub fn stream_id(index: u32) -> i64 {
    if index == 0 {
        1
    } else {
        i64::from(index) + 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_real_iperf3_server_document_decodes() {
        // Captured from a Debian iperf3 3.12 server that received one TCP stream for 1 s: its
        // cJSON prints −1 as 2⁶⁴−1.
        let doc = br#"{"cpu_util_total":17.053434106671158,"cpu_util_user":1.014531736014842,"cpu_util_system":16.0391979514282,"sender_has_retransmits":18446744073709551615,"congestion_used":"bbr","streams":[{"id":1,"bytes":420271503,"retransmits":18446744073709551615,"jitter":0,"errors":0,"packets":0,"start_time":0,"end_time":1.014947}]}"#;
        let r = Results::decode(doc).unwrap();
        assert_eq!(r.sender_has_retransmits, -1);
        assert_eq!(r.stream(1).map(|s| (s.bytes, s.retransmits)), Some((420_271_503, -1)));
        assert_eq!(r.congestion_used.as_deref(), Some("bbr"));
        assert_eq!(Results::decode(&r.encode().unwrap()).unwrap(), r);
    }

    #[test]
    fn missing_required_fields_and_half_omitted_pairs_are_refused() {
        assert!(Results::decode(
            br#"{"cpu_util_total":1,"cpu_util_user":1,"cpu_util_system":0,"streams":[]}"#
        )
        .is_err());
        let half = br#"{"cpu_util_total":1,"cpu_util_user":1,"cpu_util_system":0,"sender_has_retransmits":0,"streams":[{"id":1,"bytes":1,"retransmits":0,"jitter":0,"errors":0,"packets":0,"omitted_errors":0}]}"#;
        assert!(Results::decode(half).is_err());
        let negative = br#"{"cpu_util_total":1,"cpu_util_user":1,"cpu_util_system":0,"sender_has_retransmits":0,"streams":[{"id":1,"bytes":-1,"retransmits":0,"jitter":0,"errors":0,"packets":0}]}"#;
        assert!(Results::decode(negative).is_err());
    }

    #[test]
    fn non_finite_floats_are_written_as_zero() {
        let r = Results { cpu_util_total: f64::NAN, ..Results::default() };
        let text = String::from_utf8(r.encode().unwrap()).unwrap();
        assert!(text.starts_with(r#"{"cpu_util_total":0.0,"#), "{text}");
    }

    #[test]
    fn stream_ids_skip_two() {
        assert_eq!((0..4).map(stream_id).collect::<Vec<_>>(), vec![1, 3, 4, 5]);
    }
}
