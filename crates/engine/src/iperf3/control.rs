//! The control connection to an iperf3 server: state bytes and JSON frames with deadlines,
//! each failure one [`Error`] that says what the server did.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use wire::iperf3::{frame, ServerError, State, SERVER_ERROR_PAYLOAD_LEN};
use wire::{ErrorCode, Rejection};

use crate::Error;

/// The control connection.
#[derive(Debug)]
pub struct Ctrl {
    stream: TcpStream,
}

impl Ctrl {
    /// Wraps a connected stream (TCP_NODELAY, as iperf3 sets it).
    pub fn new(stream: TcpStream) -> Ctrl {
        let _ = stream.set_nodelay(true);
        Ctrl { stream }
    }

    /// Writes raw bytes (the cookie).
    pub fn send_bytes(&mut self, bytes: &[u8], what: &'static str) -> Result<(), Error> {
        self.stream.write_all(bytes).map_err(|source| Error::Io { what, source })
    }

    /// Sends one state byte.
    pub fn send_state(&mut self, state: State) -> Result<(), Error> {
        self.send_bytes(&[state.to_byte()], "sending an iperf3 control byte")
    }

    /// Sends a JSON document as one frame.
    pub fn send_json(&mut self, json: &[u8], max: usize) -> Result<(), Error> {
        let bytes = frame::encode(json, max).map_err(|e| Error::Protocol { detail: e.to_string() })?;
        self.send_bytes(&bytes, "sending an iperf3 JSON frame")
    }

    /// Waits until `deadline` for a state byte. ACCESS_DENIED, SERVER_ERROR and
    /// SERVER_TERMINATE are returned as errors.
    pub fn recv_state(&mut self, deadline: Instant, waiting_for: &'static str) -> Result<State, Error> {
        let mut b = [0u8; 1];
        self.read_exact_by(&mut b, deadline, waiting_for)?;
        let state = State::from_byte(b[0]).map_err(|e| Error::Protocol {
            detail: format!("{e} while waiting for {waiting_for} (not an iperf3 3.x server?)"),
        })?;
        self.refusal(state, deadline).map(|()| state)
    }

    /// Polls for a state byte for at most `slice`; `None` if none arrived.
    pub fn poll_state(&mut self, slice: Duration) -> Result<Option<State>, Error> {
        let _ = self.stream.set_read_timeout(Some(slice.max(Duration::from_millis(1))));
        let mut b = [0u8; 1];
        match self.stream.read(&mut b) {
            Ok(0) => Err(Error::PeerClosed),
            Ok(_) => {
                let state = State::from_byte(b[0])
                    .map_err(|e| Error::Protocol { detail: format!("{e} during the test") })?;
                self.refusal(state, Instant::now() + Duration::from_secs(2)).map(|()| Some(state))
            }
            Err(e) if netio::udp::is_wait(&e) => Ok(None),
            Err(source) => Err(Error::Io { what: "reading the iperf3 control connection", source }),
        }
    }

    /// Reads one JSON frame of at most `max` bytes; a state byte where the length belongs is
    /// handled as that state (esnet/iperf#2072).
    pub fn recv_json(&mut self, max: usize, deadline: Instant, what: &'static str) -> Result<Vec<u8>, Error> {
        let mut head = [0u8; frame::HEAD_LEN];
        self.read_exact_by(&mut head[..1], deadline, what)?;
        if let Ok(state) = State::from_byte(head[0]) {
            if head[0] >= 0xfe || state == State::ServerTerminate {
                self.refusal(state, deadline)?;
            }
        }
        self.read_exact_by(&mut head[1..], deadline, what)?;
        let len = match frame::decode_head(head, max)
            .map_err(|e| Error::Protocol { detail: format!("{what}: {e}") })?
        {
            frame::Head::Body(len) => len,
            frame::Head::State { state, .. } => {
                return Err(Error::Protocol { detail: format!("{what}: unexpected {}", state.name()) })
            }
        };
        let mut body = vec![0u8; len];
        self.read_exact_by(&mut body, deadline, what)?;
        Ok(body)
    }

    /// Turns a refusing state into its error (reading SERVER_ERROR's payload).
    fn refusal(&mut self, state: State, deadline: Instant) -> Result<(), Error> {
        match state {
            State::AccessDenied => Err(Error::Rejected(Rejection::new(
                ErrorCode::Busy,
                "the iperf3 server is busy running a test",
            ))),
            State::ServerTerminate => {
                Err(Error::Protocol { detail: "the iperf3 server terminated the test".into() })
            }
            State::ServerError => {
                let mut p = [0u8; SERVER_ERROR_PAYLOAD_LEN];
                self.read_exact_by(&mut p, deadline, "the iperf3 error code")?;
                let e = ServerError::decode(p);
                let code = if e.i_errno == 121 { ErrorCode::Busy } else { ErrorCode::Internal };
                Err(Error::Rejected(Rejection::new(code, format!("iperf3: {e}"))))
            }
            _ => Ok(()),
        }
    }

    fn read_exact_by(&mut self, buf: &mut [u8], deadline: Instant, what: &'static str) -> Result<(), Error> {
        let mut got = 0;
        while got < buf.len() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::Timeout { what: waiting(what) });
            }
            let _ = self.stream.set_read_timeout(Some(left));
            match self.stream.read(&mut buf[got..]) {
                Ok(0) => return Err(Error::PeerClosed),
                Ok(n) => got += n,
                Err(e) if netio::udp::is_wait(&e) => {}
                Err(source) => {
                    return Err(Error::Io { what: "reading the iperf3 control connection", source })
                }
            }
        }
        Ok(())
    }
}

/// A static description of what was awaited (errors carry `&'static str`).
fn waiting(what: &'static str) -> &'static str {
    match what {
        "PARAM_EXCHANGE" => "waiting for the iperf3 server to ask for parameters",
        "CREATE_STREAMS" => "waiting for the iperf3 server to accept the parameters",
        "TEST_START" | "TEST_RUNNING" => "waiting for the iperf3 server to start the test",
        "EXCHANGE_RESULTS" | "DISPLAY_RESULTS" => "waiting for the iperf3 server's results",
        _ => "waiting for the iperf3 server",
    }
}
