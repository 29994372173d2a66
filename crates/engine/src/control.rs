//! A control connection: frames of [`Message`]s over a blocking TCP stream, every read bounded
//! by a deadline (DESIGN.md §6: a timeout in every state).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use wire::{FrameDecoder, Hello, Message, HELLO_LEN};

use crate::Error;

/// How often a blocked read wakes to check its deadline.
const READ_SLICE: Duration = Duration::from_millis(100);

/// One end of a control connection.
#[derive(Debug)]
pub struct Control {
    stream: TcpStream,
    decoder: FrameDecoder,
    peer: String,
}

impl Control {
    /// Wraps a server's connected stream: it reads only small requests.
    pub fn new(stream: TcpStream) -> Control {
        Control::with_decoder(stream, FrameDecoder::new())
    }

    /// Wraps a client's connected stream: it also reads the server's results, which grow
    /// with the test ([`wire::MAX_RESULTS_FRAME_BYTES`]).
    pub fn client(stream: TcpStream) -> Control {
        Control::with_decoder(stream, FrameDecoder::with_max(wire::MAX_RESULTS_FRAME_BYTES))
    }

    fn with_decoder(stream: TcpStream, decoder: FrameDecoder) -> Control {
        let peer = stream.peer_addr().map(|a| a.to_string()).unwrap_or_else(|_| "peer".into());
        let _ = stream.set_nodelay(true);
        Control { stream, decoder, peer }
    }

    /// The peer's address, for messages.
    pub fn peer(&self) -> &str {
        &self.peer
    }

    /// The local port of the connection (the server's listening port, where its data
    /// connections arrive too); 0 when unknown.
    pub fn local_port(&self) -> u16 {
        self.stream.local_addr().map(|a| a.port()).unwrap_or(0)
    }

    /// Sends one message.
    pub fn send(&mut self, msg: &Message) -> Result<(), Error> {
        let bytes = msg.encode().map_err(|e| Error::Protocol { detail: e.to_string() })?;
        let _ = self.stream.set_write_timeout(Some(Duration::from_secs(5)));
        self.stream
            .write_all(&bytes)
            .map_err(|source| Error::Io { what: "sending a control message", source })
    }

    /// Sends the fixed-layout hello.
    pub fn send_hello(&mut self, hello: &Hello) -> Result<(), Error> {
        self.stream
            .write_all(&hello.encode())
            .map_err(|source| Error::Io { what: "sending the hello", source })
    }

    /// Reads the peer's hello, waiting at most `timeout`.
    pub fn recv_hello(&mut self, timeout: Duration) -> Result<Hello, Error> {
        let mut buf = [0u8; HELLO_LEN];
        read_exact_by(&mut self.stream, &mut buf, Instant::now() + timeout)?;
        Hello::decode(&buf).map_err(|e| Error::Protocol { detail: e.to_string() })
    }

    /// Sends fixed-layout bytes (the authentication messages, [`wire::auth`]).
    pub fn send_raw(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let _ = self.stream.set_write_timeout(Some(Duration::from_secs(5)));
        self.stream
            .write_all(bytes)
            .map_err(|source| Error::Io { what: "sending the authentication", source })
    }

    /// Fills `buf` with the next bytes before `deadline` (nothing is buffered between the
    /// hellos and the first frame, so these are the peer's next bytes).
    pub fn recv_raw(&mut self, buf: &mut [u8], deadline: Instant) -> Result<(), Error> {
        read_exact_by(&mut self.stream, buf, deadline)
    }

    /// Gives bytes read with [`Control::recv_raw`] back to the frame decoder (they were the
    /// start of a frame after all).
    pub fn unread(&mut self, bytes: &[u8]) {
        self.decoder.push(bytes);
    }

    /// Reads the next message, waiting at most until `deadline`.
    pub fn recv_by(&mut self, deadline: Instant) -> Result<Message, Error> {
        loop {
            let frame = self.decoder.next_frame().map_err(|e| Error::Protocol { detail: e.to_string() })?;
            if let Some(body) = frame {
                return Message::decode(&body).map_err(|e| Error::Protocol { detail: e.to_string() });
            }
            self.fill(deadline)?;
        }
    }

    /// Reads the next message if one arrives before `deadline`; `Ok(None)` on timeout.
    pub fn poll_by(&mut self, deadline: Instant) -> Result<Option<Message>, Error> {
        match self.recv_by(deadline) {
            Ok(m) => Ok(Some(m)),
            Err(Error::Timeout { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Whether the peer has closed or reset the connection; what it sent stays unread.
    pub fn peer_gone(&self) -> bool {
        closed_by_peer(&self.stream)
    }

    fn fill(&mut self, deadline: Instant) -> Result<(), Error> {
        let wanted = self.decoder.wanted().map_err(|e| Error::Protocol { detail: e.to_string() })?;
        let mut buf = vec![0u8; wanted.clamp(1, 64 * 1024)];
        let n = read_some_by(&mut self.stream, &mut buf, deadline)?;
        self.decoder.push(&buf[..n]);
        Ok(())
    }
}

/// Reads at least one byte before `deadline`.
fn read_some_by(stream: &mut TcpStream, buf: &mut [u8], deadline: Instant) -> Result<usize, Error> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Error::Timeout { what: "waiting for the peer" });
        }
        let _ = stream.set_read_timeout(Some(left.min(READ_SLICE)));
        match stream.read(buf) {
            Ok(0) => return Err(Error::PeerClosed),
            Ok(n) => return Ok(n),
            Err(e) if is_timeout(&e) => continue,
            Err(source) => return Err(Error::Io { what: "reading the control connection", source }),
        }
    }
}

/// Fills `buf` before `deadline`.
pub(crate) fn read_exact_by(stream: &mut TcpStream, buf: &mut [u8], deadline: Instant) -> Result<(), Error> {
    let mut got = 0;
    while got < buf.len() {
        got += read_some_by(stream, &mut buf[got..], deadline)?;
    }
    Ok(())
}

/// Whether `stream`'s peer has closed (FIN) or reset it, without waiting and without
/// consuming what is waiting to be read.
pub(crate) fn closed_by_peer(stream: &TcpStream) -> bool {
    if stream.set_nonblocking(true).is_err() {
        return true;
    }
    let gone = match stream.peek(&mut [0u8; 1]) {
        Ok(n) => n == 0,
        Err(e) => !is_timeout(&e),
    };
    let _ = stream.set_nonblocking(false);
    gone
}

/// Whether an I/O error is a read/write timeout.
pub(crate) fn is_timeout(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_peer_is_seen_and_unread_bytes_are_left_alone() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        assert!(!closed_by_peer(&server), "an idle peer is there");
        client.write_all(b"x").unwrap();
        drop(client);
        // The byte sent before the close is read first; only then does the close show.
        let mut byte = [0u8; 1];
        let deadline = Instant::now() + Duration::from_secs(5);
        while server.peek(&mut byte).unwrap_or(0) == 0 && Instant::now() < deadline {}
        assert!(!closed_by_peer(&server), "a byte is waiting");
        server.read_exact(&mut byte).unwrap();
        assert_eq!(&byte, b"x");
        assert!(closed_by_peer(&server));
    }
}
