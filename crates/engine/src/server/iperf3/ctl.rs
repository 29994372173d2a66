//! The iperf3 control connection, server side: state bytes and length-prefixed JSON frames
//! (the codec in [`wire::iperf3`]), every read bounded in time and every frame in size
//! before anything is allocated.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use wire::iperf3::frame::{self, Head, HEAD_LEN};
use wire::iperf3::{ServerError, State};

use crate::control::{is_timeout, read_exact_by};
use crate::Error;

/// Longest a write to the control connection may block.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// One client's control connection.
#[derive(Debug)]
pub struct Ctl {
    stream: TcpStream,
}

impl Ctl {
    /// Wraps the accepted connection (blocking mode).
    pub fn new(stream: TcpStream) -> Ctl {
        let _ = stream.set_nodelay(true);
        let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
        Ctl { stream }
    }

    /// The connection, for its addresses.
    pub fn stream(&self) -> &TcpStream {
        &self.stream
    }

    /// Sends one state byte.
    pub fn send_state(&mut self, state: State) -> Result<(), Error> {
        self.write(&[state.to_byte()])
    }

    /// Sends SERVER_ERROR with iperf3's error number (errno 0).
    pub fn send_error(&mut self, i_errno: i32) -> Result<(), Error> {
        self.write(&ServerError { i_errno, errno: 0 }.encode())
    }

    /// Sends one JSON document as a frame.
    pub fn send_frame(&mut self, json: &[u8]) -> Result<(), Error> {
        let bytes = frame::encode(json, frame::MAX_RESULTS_BYTES)
            .map_err(|e| Error::Protocol { detail: e.to_string() })?;
        self.write(&bytes)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.stream
            .write_all(bytes)
            .map_err(|source| Error::Io { what: "writing to the iperf3 client", source })
    }

    /// Reads one frame of at most `max` bytes before `deadline`.
    pub fn recv_frame(&mut self, max: usize, deadline: Instant) -> Result<Vec<u8>, Error> {
        let mut head = [0u8; HEAD_LEN];
        read_exact_by(&mut self.stream, &mut head, deadline)?;
        match frame::decode_head(head, max).map_err(|e| Error::Protocol { detail: e.to_string() })? {
            Head::Body(len) => {
                let mut body = vec![0u8; len];
                read_exact_by(&mut self.stream, &mut body, deadline)?;
                Ok(body)
            }
            Head::State { state, .. } => Err(Error::Protocol {
                detail: format!("got {} where a JSON frame was expected", state.name()),
            }),
        }
    }

    /// Reads one state byte if it arrives before `deadline`; `None` when none did.
    pub fn poll_state(&mut self, deadline: Instant) -> Result<Option<State>, Error> {
        let left = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
        let _ = self.stream.set_read_timeout(Some(left));
        let mut byte = [0u8; 1];
        match self.stream.read(&mut byte) {
            Ok(0) => Err(Error::PeerClosed),
            Ok(_) => {
                State::from_byte(byte[0]).map(Some).map_err(|e| Error::Protocol { detail: e.to_string() })
            }
            Err(e) if is_timeout(&e) => Ok(None),
            Err(source) => Err(Error::Io { what: "reading the iperf3 control connection", source }),
        }
    }
}
