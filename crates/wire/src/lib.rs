//! Bytes ↔ values for tcplab's native control protocol (DESIGN.md §6).
//!
//! Every connection to a tcplab server starts with a fixed-layout [`hello::Hello`] (44 bytes,
//! no parsing of variable-length data before the peer has said what it is). A control
//! connection then authenticates ([`auth`]: a fixed-layout pre-shared-key challenge-response,
//! or an anonymous marker) and carries [`frame`]s: a u32 big-endian length followed by that many bytes of
//! JSON encoding one [`ctrl::Message`]. Lengths are checked against [`frame::MAX_FRAME_BYTES`]
//! before anything is allocated. The messages carry the protocol's own types
//! ([`ctrl::TestRequest`], [`ctrl::Host`], [`ctrl::SideReport`]), not the archive's: this
//! crate does not depend on `results`. UDP tests put a 16-byte [`udp::Header`] in front of
//! every datagram. [`pcap`] holds the capture-file record format the link emulator writes.
//! [`iperf3`] is a separate codec for the iperf3 protocol. No I/O, no clock.
#![forbid(unsafe_code)]

pub mod auth;
pub mod ctrl;
pub mod frame;
pub mod hello;
pub mod iperf3;
pub mod pcap;
pub mod tcpip;
pub mod udp;

pub use ctrl::{ErrorCode, Message, Rejection};
pub use frame::{FrameDecoder, FrameError, MAX_FRAME_BYTES, MAX_RESULTS_FRAME_BYTES};
pub use hello::{
    machine_id, DataHello, Hello, HelloError, HelloKind, Token, DATA_HELLO_LEN, HELLO_LEN, MACHINE_FLAG,
    MACHINE_ID_LEN, PROTOCOL_VERSION,
};
pub use udp::Datagram;
