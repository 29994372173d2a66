//! The iperf3 wire protocol (esnet/iperf 3.x), as bytes ↔ values. No I/O, no clock, no
//! entropy: callers read and write sockets, pass random bytes in and keep time.
//!
//! Reference: `/work/shared/reference/iperf3-protocol.md` (DESIGN.md §6 keeps this codec apart
//! from tcplab's native protocol).
//!
//! # A test on the control connection (TCP, port [`DEFAULT_PORT`])
//!
//! 1. Client sends the 37-byte [`Cookie`] ([`Cookie::from_random`], [`Cookie::encode`]); a
//!    server reads [`COOKIE_LEN`] bytes and checks them with [`Cookie::decode`].
//! 2. Server sends [`State::ParamExchange`] — or [`State::AccessDenied`] (0xFF) when busy — as
//!    one byte ([`State::to_byte`] / [`State::from_byte`]).
//! 3. Client sends a [`Params`] document as a JSON frame ([`Params::encode`] then
//!    [`frame::encode`] with [`frame::MAX_PARAMS_BYTES`]); a server reads the 4-byte head with
//!    [`frame::decode_head`] (bounded before any allocation) and the body with
//!    [`Params::decode`].
//! 4. Server sends [`State::CreateStreams`]; the client opens [`Params::data_connections`]
//!    streams: TCP connect + the same cookie, or UDP [`udp::CONNECT_MSG`] answered by
//!    [`udp::CONNECT_REPLY`]. Stream ids are [`stream_id`] of the opening order (1, 3, 4, …);
//!    for `--bidir` the client's sending streams come first.
//! 5. Server sends [`State::TestStart`] then [`State::TestRunning`]; data flows (UDP datagrams
//!    start with a [`udp::Header`]).
//! 6. Client sends [`State::TestEnd`]; server answers [`State::ExchangeResults`]; the client
//!    sends its [`Results`] frame first, then reads the server's (cap
//!    [`frame::MAX_RESULTS_BYTES`]).
//! 7. Server sends [`State::DisplayResults`]; client sends [`State::IperfDone`] and closes.
//!
//! Errors: at any point the server may send [`State::ServerError`] followed by eight bytes
//! ([`ServerError::decode`], text from [`error_text`]) or [`State::ServerTerminate`]. Where a
//! frame length is expected, [`frame::decode_head`] returns such a byte as
//! [`frame::Head::State`] instead of a 4 GB length.
//!
//! Numbers: every numeric field is read in integer or floating-point spelling; integers are
//! written as integers and non-finite floats as 0 ([`finite`]), which cJSON accepts.

mod cookie;
pub mod frame;
mod number;
mod params;
mod results;
mod state;
pub mod udp;

pub use cookie::{Cookie, COOKIE_CHARS, COOKIE_LEN};
pub use number::finite;
pub use params::{Params, Protocol};
pub use results::{stream_id, Results, StreamResults};
pub use state::{error_text, ServerError, State, SERVER_ERROR_PAYLOAD_LEN};

use thiserror::Error;

/// iperf3's TCP (control and data) and UDP port.
pub const DEFAULT_PORT: u16 = 5201;
/// Most streams per direction iperf3 allows.
pub const MAX_STREAMS: u32 = 128;
/// TCP block size iperf3 uses when `len` is absent.
pub const DEFAULT_TCP_BLOCK: usize = 128 * 1024;
/// UDP datagram size iperf3 uses when the control MSS is unknown.
pub const DEFAULT_UDP_BLOCK: usize = 1460;
/// UDP rate iperf3 uses when none is given, bit/s.
pub const DEFAULT_UDP_RATE: u64 = 1024 * 1024;

/// Why bytes are not valid iperf3 protocol.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Iperf3Error {
    /// A state byte iperf3 does not send (iperf3's `IEMESSAGE`).
    #[error("unexpected iperf3 control byte 0x{0:02x}")]
    UnknownState(u8),
    /// A cookie that is not 36 alphabet characters and a NUL.
    #[error("bad iperf3 cookie: {0}")]
    Cookie(&'static str),
    /// A frame announcing 0 bytes.
    #[error("iperf3 JSON frame of length 0")]
    EmptyFrame,
    /// A frame over the reader's cap.
    #[error("iperf3 JSON frame of {len} bytes exceeds the {max}-byte limit")]
    FrameTooLong {
        /// Announced length.
        len: usize,
        /// The cap.
        max: usize,
    },
    /// A frame body that is not the expected document.
    #[error("malformed iperf3 {what}: {reason}")]
    Json {
        /// Which document.
        what: &'static str,
        /// serde's explanation.
        reason: String,
    },
    /// A UDP datagram shorter than its header.
    #[error("iperf3 UDP datagram of {len} bytes, header needs {need}")]
    ShortDatagram {
        /// Bytes received.
        len: usize,
        /// Header bytes.
        need: usize,
    },
}

/// Decodes a JSON object into `T`; an array or scalar is refused (serde would otherwise read
/// a struct from an array).
fn decode_object<T: serde::de::DeserializeOwned>(json: &[u8], what: &'static str) -> Result<T, Iperf3Error> {
    let bad = |reason: String| Iperf3Error::Json { what, reason };
    match serde_json::from_slice(json).map_err(|e| bad(e.to_string()))? {
        v @ serde_json::Value::Object(_) => serde_json::from_value(v).map_err(|e| bad(e.to_string())),
        _ => Err(bad("not a JSON object".into())),
    }
}

#[cfg(test)]
mod proptests;
