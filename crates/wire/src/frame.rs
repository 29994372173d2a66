//! Length-prefixed frames: a u32 big-endian length, then that many bytes.
//!
//! The length is checked before any byte of the body is buffered: zero and anything above the
//! reader's cap are refused, so a peer cannot make the reader allocate more than the cap. A
//! server reads only small requests ([`MAX_FRAME_BYTES`]); a client also reads the server's
//! results, whose intervals grow with the test ([`MAX_RESULTS_FRAME_BYTES`]).

use thiserror::Error;

/// Largest frame body of every message but the server's results (64 KiB).
pub const MAX_FRAME_BYTES: usize = 64 * 1024;
/// Largest frame body of the server's results, and so the client's cap (32 MiB: an hour of
/// 1 s intervals of tens of streams).
pub const MAX_RESULTS_FRAME_BYTES: usize = 32 * 1024 * 1024;
const HEADER_BYTES: usize = 4;

/// Why a byte stream is not a sequence of frames.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum FrameError {
    /// A length of zero: never sent by a tcplab peer.
    #[error("frame length 0")]
    Empty,
    /// A length over the cap.
    #[error("frame length {len} exceeds the {max}-byte limit")]
    TooLong { len: u64, max: usize },
}

/// Checks a frame header and returns the body length it announces (at most [`MAX_FRAME_BYTES`]).
pub fn body_len(header: [u8; HEADER_BYTES]) -> Result<usize, FrameError> {
    body_len_max(header, MAX_FRAME_BYTES)
}

fn body_len_max(header: [u8; HEADER_BYTES], max: usize) -> Result<usize, FrameError> {
    let len = u32::from_be_bytes(header);
    match len as usize {
        0 => Err(FrameError::Empty),
        n if n > max => Err(FrameError::TooLong { len: len.into(), max }),
        n => Ok(n),
    }
}

/// Encodes `body` as one frame. Fails if the body is empty or over [`MAX_FRAME_BYTES`].
pub fn encode(body: &[u8]) -> Result<Vec<u8>, FrameError> {
    encode_max(body, MAX_FRAME_BYTES)
}

/// Encodes `body` as one frame of at most `max` bytes.
pub fn encode_max(body: &[u8], max: usize) -> Result<Vec<u8>, FrameError> {
    if body.is_empty() {
        return Err(FrameError::Empty);
    }
    if body.len() > max {
        return Err(FrameError::TooLong { len: body.len() as u64, max });
    }
    let mut out = Vec::with_capacity(HEADER_BYTES + body.len());
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(body);
    Ok(out)
}

/// Incremental decoder: push bytes as they arrive, take whole frames out.
///
/// It never holds more than one frame's header and body (at most 4 + its cap bytes) beyond
/// what the caller pushed in one call.
#[derive(Debug)]
pub struct FrameDecoder {
    buf: Vec<u8>,
    max: usize,
}

impl Default for FrameDecoder {
    fn default() -> FrameDecoder {
        FrameDecoder::with_max(MAX_FRAME_BYTES)
    }
}

impl FrameDecoder {
    /// An empty decoder capped at [`MAX_FRAME_BYTES`] (a server's).
    pub fn new() -> FrameDecoder {
        FrameDecoder::default()
    }

    /// An empty decoder capped at `max` bytes per frame (a client's:
    /// [`MAX_RESULTS_FRAME_BYTES`]).
    pub fn with_max(max: usize) -> FrameDecoder {
        FrameDecoder { buf: Vec::new(), max }
    }

    /// Appends received bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes buffered and not yet returned.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// How many more bytes are needed before [`FrameDecoder::next_frame`] can return a frame.
    pub fn wanted(&self) -> Result<usize, FrameError> {
        match self.header() {
            None => Ok(HEADER_BYTES - self.buf.len()),
            Some(h) => Ok((HEADER_BYTES + body_len_max(h, self.max)?).saturating_sub(self.buf.len())),
        }
    }

    /// Takes the next complete frame body, if one is buffered.
    pub fn next_frame(&mut self) -> Result<Option<Vec<u8>>, FrameError> {
        let Some(header) = self.header() else { return Ok(None) };
        let len = body_len_max(header, self.max)?;
        if self.buf.len() < HEADER_BYTES + len {
            return Ok(None);
        }
        let body = self.buf[HEADER_BYTES..HEADER_BYTES + len].to_vec();
        self.buf.drain(..HEADER_BYTES + len);
        Ok(Some(body))
    }

    fn header(&self) -> Option<[u8; HEADER_BYTES]> {
        let h = self.buf.get(..HEADER_BYTES)?;
        Some([h[0], h[1], h[2], h[3]])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_decoder_takes_large_results_and_a_server_decoder_does_not() {
        let body = vec![b'x'; MAX_FRAME_BYTES + 1];
        let frame = encode_max(&body, MAX_RESULTS_FRAME_BYTES).unwrap();
        assert!(encode(&body).is_err());
        let mut server = FrameDecoder::new();
        server.push(&frame);
        assert!(matches!(server.next_frame(), Err(FrameError::TooLong { .. })));
        let mut client = FrameDecoder::with_max(MAX_RESULTS_FRAME_BYTES);
        client.push(&frame);
        assert_eq!(client.next_frame().unwrap().map(|b| b.len()), Some(body.len()));
    }

    #[test]
    fn boundary_lengths() {
        assert_eq!(body_len([0, 0, 0, 0]), Err(FrameError::Empty));
        assert_eq!(body_len([0, 0, 0, 1]), Ok(1));
        assert_eq!(body_len([0, 1, 0, 0]), Ok(MAX_FRAME_BYTES));
        assert_eq!(body_len([0, 1, 0, 1]), Err(FrameError::TooLong { len: 65_537, max: MAX_FRAME_BYTES }));
        assert!(body_len([0x80, 0, 0, 0]).is_err());
        assert!(body_len([0xff, 0xff, 0xff, 0xff]).is_err());
    }

    #[test]
    fn frames_split_anywhere_reassemble() {
        let mut stream = encode(b"{\"a\":1}").unwrap();
        stream.extend(encode(b"[]").unwrap());
        for split in 0..stream.len() {
            let mut d = FrameDecoder::new();
            d.push(&stream[..split]);
            let mut got = Vec::new();
            while let Some(f) = d.next_frame().unwrap() {
                got.push(f);
            }
            d.push(&stream[split..]);
            while let Some(f) = d.next_frame().unwrap() {
                got.push(f);
            }
            assert_eq!(got, vec![b"{\"a\":1}".to_vec(), b"[]".to_vec()]);
        }
    }

    #[test]
    fn an_error_byte_where_a_length_belongs_is_refused_before_buffering() {
        let mut d = FrameDecoder::new();
        d.push(&[0xfe, 0, 0, 0]);
        assert!(matches!(d.next_frame(), Err(FrameError::TooLong { .. })));
        assert!(d.wanted().is_err());
    }

    #[test]
    fn wanted_counts_down() {
        let mut d = FrameDecoder::new();
        assert_eq!(d.wanted(), Ok(4));
        d.push(&[0, 0, 0, 3, b'x']);
        assert_eq!(d.wanted(), Ok(2));
    }
}
