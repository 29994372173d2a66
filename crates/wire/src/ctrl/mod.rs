//! Control messages: JSON objects tagged by `type`, one per frame.
//!
//! This module is the control protocol's contract at [`PROTOCOL_VERSION`] (see
//! `docs/protocol.md`). Every type a message carries is defined here or in the submodules
//! ([`request`], [`host`], [`side`]) and belongs to the protocol, not to the archive: the
//! engine converts them to and from the `results` types in one file, so a change to what is
//! stored cannot change what is sent. A change to any type here changes the protocol and
//! needs a new [`PROTOCOL_VERSION`]; peers of different versions refuse each other at the
//! hello, before any message.
//!
//! Unknown message types and unknown fields are refused (serde `deny_unknown_fields` on every
//! payload type), so a field a peer thinks it set is never silently ignored.
//!
//! [`PROTOCOL_VERSION`]: crate::PROTOCOL_VERSION

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::frame::{self, FrameError};

pub mod host;
pub mod request;
pub mod side;
pub mod third_party;

pub use host::Host;
pub use request::{OptionValue, TestRequest};
pub use side::{
    BufferGrant, CpuReport, CpuSeen, IntervalReport, LatencyReport, PathReading, PathWindow, Placement,
    ProcessCpu, Role, SideReport, SocketReport, StreamInterval, StreamReport, TcpInfoReport, UdpCounts,
};
pub use third_party::{ThirdPartyReport, ThirdPartyRequest, ThirdPartyStatus};

/// Why a server refused something; the code maps to a client exit path and a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorCode {
    /// Another test is running; try again later.
    Busy,
    /// The peer speaks another protocol version.
    BadVersion,
    /// A frame or message could not be decoded.
    BadMessage,
    /// A field is out of range or inconsistent.
    BadField,
    /// The server cannot do what was asked (e.g. an unknown congestion control).
    Unsupported,
    /// The peer said nothing for too long.
    Timeout,
    /// A message arrived that does not fit the current state.
    OutOfState,
    /// Something failed on the server (socket error, thread spawn).
    Internal,
    /// The request exceeds the server's policy for this client (its key class, or the
    /// anonymous limits): duration, rate, streams, concurrent tests, tests per minute.
    Limit,
}

impl ErrorCode {
    /// The kebab-case code.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Busy => "busy",
            ErrorCode::BadVersion => "bad-version",
            ErrorCode::BadMessage => "bad-message",
            ErrorCode::BadField => "bad-field",
            ErrorCode::Unsupported => "unsupported",
            ErrorCode::Timeout => "timeout",
            ErrorCode::OutOfState => "out-of-state",
            ErrorCode::Internal => "internal",
            ErrorCode::Limit => "limit",
        }
    }
}

/// A structured refusal: code, text and, where one field is to blame, its name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rejection {
    /// Machine-readable code.
    pub code: ErrorCode,
    /// One line for a person.
    pub message: String,
    /// The offending field, if any.
    pub field: Option<String>,
    /// For `busy`: when it may be worth trying again, ms.
    pub retry_after_ms: Option<u64>,
}

impl Rejection {
    /// A rejection without a field.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Rejection {
        Rejection { code, message: message.into(), field: None, retry_after_ms: None }
    }

    /// A `bad-field` rejection naming the field.
    pub fn field(field: &str, message: impl Into<String>) -> Rejection {
        Rejection {
            code: ErrorCode::BadField,
            message: message.into(),
            field: Some(field.to_string()),
            retry_after_ms: None,
        }
    }
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.field {
            Some(field) => write!(f, "{} ({}: {})", self.message, self.code.as_str(), field),
            None => write!(f, "{} ({})", self.message, self.code.as_str()),
        }
    }
}

/// Server's acceptance of a test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Accepted {
    /// The test's token, 32 hex digits; data connections present it.
    pub token: String,
    /// The server host.
    pub host: Host,
    /// UDP tests: the server's UDP port for each data flow, in stream order. Each flow's
    /// client socket sends a data hello with the token there until the server says `ready`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub udp_ports: Vec<u16>,
}

/// Every control message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Message {
    /// Client → server: run this test.
    Setup {
        /// The parameters.
        spec: TestRequest,
    },
    /// Server → client: accepted; open the data connections.
    Accepted(Accepted),
    /// Server → client: all data connections are in place.
    Ready {},
    /// Client → server: start measuring now.
    Start {},
    /// Client → server: stop early (Ctrl-C, client-side failure).
    Stop {
        /// Why, for the server's log.
        reason: String,
    },
    /// Server → client: what the server measured.
    Results {
        /// The server's side.
        side: Box<SideReport>,
    },
    /// Either way: a refusal or failure; the sender closes after it.
    Error(Rejection),
    /// Client → server A: run a test against server B (only with `--allow-third-party`).
    ThirdParty(ThirdPartyRequest),
    /// Server A → client: both ends of the third-party test.
    ThirdPartyResults(Box<ThirdPartyReport>),
}

/// Why a frame body is not a message.
#[derive(Debug, Error)]
pub enum DecodeError {
    /// Not a JSON message of a known type with valid fields.
    #[error("malformed control message: {detail}")]
    Malformed {
        /// serde's description, including line and column.
        detail: String,
    },
}

impl Message {
    /// Parses one frame body.
    pub fn decode(body: &[u8]) -> Result<Message, DecodeError> {
        serde_json::from_slice(body).map_err(|e| DecodeError::Malformed { detail: e.to_string() })
    }

    /// Encodes as one frame (length prefix included).
    pub fn encode(&self) -> Result<Vec<u8>, FrameError> {
        // Serializing plain data to a Vec cannot fail; an empty body is refused by `frame`.
        let body = serde_json::to_vec(self).unwrap_or_default();
        match self {
            Message::Results { .. } | Message::ThirdPartyResults(_) => {
                frame::encode_max(&body, frame::MAX_RESULTS_FRAME_BYTES)
            }
            _ => frame::encode(&body),
        }
    }

    /// A short name for logs and out-of-state errors.
    pub fn name(&self) -> &'static str {
        match self {
            Message::Setup { .. } => "setup",
            Message::Accepted(_) => "accepted",
            Message::Ready {} => "ready",
            Message::Start {} => "start",
            Message::Stop { .. } => "stop",
            Message::Results { .. } => "results",
            Message::Error(_) => "error",
            Message::ThirdParty(_) => "third-party",
            Message::ThirdPartyResults(_) => "third-party-results",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_has_a_fixed_encoding() {
        let bytes = Message::Start {}.encode().unwrap();
        assert_eq!(bytes, b"\x00\x00\x00\x10{\"type\":\"start\"}".to_vec());
    }

    #[test]
    fn ready_stop_and_error_match_their_fixtures() {
        let version = concat!(
            r#"{"type":"error","code":"bad-version","message":"client speaks tcplab protocol 1, "#,
            r#"this server 2: upgrade the older side","field":null,"retry_after_ms":null}"#,
        );
        let fixtures = [
            (Message::Ready {}, r#"{"type":"ready"}"#),
            (Message::Stop { reason: "interrupted".into() }, r#"{"type":"stop","reason":"interrupted"}"#),
            (
                Message::Error(Rejection::new(
                    ErrorCode::BadVersion,
                    "client speaks tcplab protocol 1, this server 2: upgrade the older side",
                )),
                version,
            ),
        ];
        for (message, json) in fixtures {
            assert_eq!(Message::decode(json.as_bytes()).unwrap(), message);
            assert_eq!(&message.encode().unwrap()[4..], json.as_bytes());
        }
    }

    #[test]
    fn a_third_party_request_matches_its_fixture() {
        let json = concat!(
            r#"{"type":"third-party","spec":{"test":"tcp-stream","duration_ms":2000,"bytes_limit":null,"#,
            r#""parallel":1,"direction":"forward","send_len":131072,"recv_len":131072,"request_len":1,"#,
            r#""response_len":1,"burst":1,"nodelay":false,"mss":null,"congestion":null,"sndbuf":null,"#,
            r#""rcvbuf":null,"remote_sndbuf":null,"remote_rcvbuf":null,"interval_ms":1000,"omit_ms":0,"#,
            r#""cpu_local":null,"cpu_remote":null,"busy_poll":false,"rate_bps":0,"no_checksum":false,"#,
            r#""no_offload":false},"to_host":"198.18.0.2","to_port":9180}"#,
        );
        let Message::ThirdParty(req) = Message::decode(json.as_bytes()).unwrap() else {
            panic!("not third-party")
        };
        let duration = req.spec.settings.get("duration_ms").cloned().flatten();
        assert_eq!(
            (req.to_host.as_str(), req.to_port, duration),
            ("198.18.0.2", 9180, Some(OptionValue::Int(2000)))
        );
        let again = Message::ThirdParty(req).encode().unwrap();
        let value = |b: &[u8]| serde_json::from_slice::<serde_json::Value>(b).unwrap();
        assert_eq!(value(&again[4..]), value(json.as_bytes()), "same members and values");
        assert!(Message::decode(br#"{"type":"third-party","to_host":"b","to_port":1}"#).is_err());
    }

    #[test]
    fn error_round_trips() {
        let m = Message::Error(Rejection::field("parallel", "at most 128 streams"));
        let bytes = m.encode().unwrap();
        assert_eq!(Message::decode(&bytes[4..]).unwrap(), m);
    }

    #[test]
    fn unknown_fields_and_types_are_refused() {
        assert!(Message::decode(br#"{"type":"start","extra":1}"#).is_err());
        assert!(Message::decode(br#"{"type":"launch"}"#).is_err());
        assert!(Message::decode(br#"{"type":"error","code":"busy","message":3}"#).is_err());
        assert!(Message::decode(b"\xff\xfe").is_err());
    }
}
