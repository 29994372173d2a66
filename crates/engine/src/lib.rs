//! tcplab's test engines: the client and server sides of each test type over the native
//! control protocol, the server itself, and the summaries built from both ends' measurements.
//!
//! One file per test type under [`registry`] (re-exported: [`stream`], [`rr`], [`crr`], [`udp`], [`udp_rr`]) plus the
//! [`registry`]; UDP flows are set up by [`udp_flow`]; the
//! [`client`] and [`server`] drive them. They speak the protocol's own message types and
//! convert to and from the archive's in one file, [`protocol`].
#![forbid(unsafe_code)]

pub mod auth;
pub mod client;
pub mod control;
pub mod iperf3;
pub mod limits;
pub mod machine;
pub mod meter;
pub mod pacing;
pub mod protocol;
pub mod registry;
pub mod server;
pub mod session;
pub mod side;
pub mod stop;
pub mod summarize;
pub mod third_party;
pub mod udp_flow;
pub mod udp_path;
pub mod udp_summary;

use std::io;

pub use client::{run_test, ClientOptions, Observer};
pub use registry::{crr, rr, stream, udp, udp_rr};
pub use server::{Server, ServerConfig};
pub use stop::StopFlag;

/// What went wrong in the engine.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An I/O call failed.
    #[error("{what}: {source}")]
    Io { what: &'static str, source: io::Error },
    /// Connecting to the server failed.
    #[error("connecting to {addr}: {source}")]
    Connect { addr: String, source: io::Error },
    /// The peer broke the protocol.
    #[error("protocol error: {detail}")]
    Protocol { detail: String },
    /// The server speaks another protocol version (seen in its hello).
    #[error("server {server} speaks tcplab protocol {theirs}, this client {ours}: upgrade the older side")]
    ServerVersion { server: String, theirs: u16, ours: u16 },
    /// A value from the peer breaks an invariant of what it describes.
    #[error("protocol error: invalid {field} from the server: {why}")]
    Invalid { field: String, why: String },
    /// The peer refused (busy, bad field, unsupported …). Its code is [`Error::code`], shown
    /// beside the message by whoever shows it, so not repeated here; a field at fault is
    /// named with its flag.
    #[error("server refused: {}", refusal(.0))]
    Rejected(wire::Rejection),
    /// Nothing arrived in time.
    #[error("timed out {what}")]
    Timeout { what: &'static str },
    /// The peer closed the connection.
    #[error("the peer closed the connection")]
    PeerClosed,
    /// A socket option could not be applied.
    #[error(transparent)]
    Socket(#[from] netio::SockError),
    /// Stopped by the user.
    #[error("interrupted")]
    Interrupted,
    /// Authentication failed or was refused (no secret in the text).
    #[error("{detail}")]
    Auth { detail: String },
    /// This client cannot run what was asked against this kind of server (`--iperf3`).
    #[error("{0}")]
    Unsupported(String),
}

/// A rejection's message, with the field at fault and its flag: `… (cpu_remote, -A/--affinity)`.
fn refusal(r: &wire::Rejection) -> String {
    match r.field.as_deref() {
        Some(field) => match results::setting::by_id(field) {
            Some(s) => format!("{} ({field}, {})", r.message, s.flag),
            None => format!("{} ({field})", r.message),
        },
        None => r.message.clone(),
    }
}

impl Error {
    /// A stable code for results and JSON (`busy`, `connect`, `timeout` …).
    pub fn code(&self) -> &'static str {
        match self {
            Error::Io { .. } => "io",
            Error::Connect { .. } => "connect",
            Error::Protocol { .. } | Error::Invalid { .. } => "protocol",
            Error::ServerVersion { .. } => "bad-version",
            Error::Rejected(r) => r.code.as_str(),
            Error::Timeout { .. } => "timeout",
            Error::PeerClosed => "peer-vanished",
            Error::Socket(_) => "socket-option",
            Error::Interrupted => "interrupted",
            Error::Auth { .. } => "auth",
            Error::Unsupported(_) => "unsupported",
        }
    }
}

#[cfg(test)]
mod tests {
    use wire::{ErrorCode, Rejection};

    use super::Error;

    #[test]
    fn a_refusal_says_its_code_once_and_names_the_flag_at_fault() {
        let busy = Error::Rejected(Rejection::new(ErrorCode::Busy, "the server is busy"));
        assert_eq!(busy.to_string(), "server refused: the server is busy");
        assert_eq!(busy.code(), "busy");
        let field = Error::Rejected(Rejection::field("cpu_remote", "CPU 9 is not available here"));
        assert_eq!(
            field.to_string(),
            "server refused: CPU 9 is not available here (cpu_remote, -A/--affinity)"
        );
    }
}
