//! The control session as state machines without I/O: the server's end ([`server`]) and
//! the client's ([`client`]). They read no socket and no clock: the socket code
//! (`server/session.rs`, `client.rs`) waits for what the state asks, passes in what
//! happened and the time it happened ([`std::time::Instant`] as a value), and performs the
//! actions that come back (send this message, open the data connections, start the test,
//! release the slot). Every state has a deadline or a bounded wait, every refusal is
//! decided here, and every way out of a session releases what it holds exactly once; the
//! unit tests drive both ends in virtual time (DESIGN.md §6; STYLE.md: protocol state
//! machines tested deterministically).

pub mod client;
pub mod greeting;
pub mod server;

#[cfg(test)]
mod client_tests;
#[cfg(test)]
mod server_tests;
