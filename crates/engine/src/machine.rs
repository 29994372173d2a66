//! Which machine a server runs on, from its hello: a client that sets
//! [`wire::MACHINE_FLAG`] gets a machine id after the server hello ([`wire::machine_id`]), so
//! that servers that are one machine (one kernel, one boot) can be told apart from servers
//! that are not. The question ends after the hellos: the client closes before
//! authenticating, which the server takes as a peer that went away during its greeting.

use std::net::TcpStream;
use std::time::Instant;

use wire::{Hello, MACHINE_FLAG, MACHINE_ID_LEN};

use crate::client::{resolve, ClientOptions};
use crate::control::Control;
use crate::{protocol, Error};

/// The machine id of the server at `opts`, asked with `nonce` (ask every server with one
/// nonce to compare their answers); `None` from a server that predates the flag.
pub fn machine_id(opts: &ClientOptions, nonce: &[u8; 32]) -> Result<Option<[u8; MACHINE_ID_LEN]>, Error> {
    let addr = resolve(opts)?;
    let stream = TcpStream::connect_timeout(&addr, opts.timeout)
        .map_err(|source| Error::Connect { addr: addr.to_string(), source })?;
    let mut ctrl = Control::client(stream);
    ctrl.send_hello(&Hello::control(*nonce).with(MACHINE_FLAG))?;
    let hello = ctrl.recv_hello(opts.timeout)?;
    protocol::check_server_hello(&hello, addr)?;
    if !hello.has(MACHINE_FLAG) {
        return Ok(None);
    }
    let mut id = [0u8; MACHINE_ID_LEN];
    ctrl.recv_raw(&mut id, Instant::now() + opts.timeout)?;
    Ok(Some(id))
}
