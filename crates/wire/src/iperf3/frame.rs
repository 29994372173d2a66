//! JSON frames on the control connection: a u32 big-endian length, then that many bytes of
//! unformatted JSON (no NUL).
//!
//! A reader checks the 4-byte header with [`decode_head`] before reading or allocating the body.
//! Because a SERVER_ERROR or ACCESS_DENIED byte can arrive where a length is expected (iperf3
//! misreads it as a ~4 GB length, esnet/iperf#2072), a first byte of 0xFE or 0xFF is returned
//! as a state byte instead.

use super::{Iperf3Error, State};

/// Bytes of the length header.
pub const HEAD_LEN: usize = 4;
/// Largest parameter document a server accepts (iperf3's `MAX_PARAMS_JSON_STRING`, 8 KiB).
pub const MAX_PARAMS_BYTES: usize = 8 * 1024;
/// Largest results document a reader accepts (16 MiB: iperf3 has no cap, and
/// `get_server_output` text can be long).
pub const MAX_RESULTS_BYTES: usize = 16 * 1024 * 1024;

/// What the four bytes read where a frame header belongs are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Head {
    /// A frame body of this many bytes follows.
    Body(usize),
    /// A state byte (ACCESS_DENIED or SERVER_ERROR) arrived instead; `rest` are the three bytes
    /// read after it (for SERVER_ERROR, the start of its eight-byte payload).
    State {
        /// The state.
        state: State,
        /// The three bytes after the state byte.
        rest: [u8; 3],
    },
}

/// Checks a frame header against `max` (see [`MAX_PARAMS_BYTES`], [`MAX_RESULTS_BYTES`]).
pub fn decode_head(head: [u8; HEAD_LEN], max: usize) -> Result<Head, Iperf3Error> {
    if head[0] >= 0xfe {
        return Ok(Head::State { state: State::from_byte(head[0])?, rest: [head[1], head[2], head[3]] });
    }
    match u32::from_be_bytes(head) as usize {
        0 => Err(Iperf3Error::EmptyFrame),
        len if len > max => Err(Iperf3Error::FrameTooLong { len, max }),
        len => Ok(Head::Body(len)),
    }
}

/// Encodes one JSON document as a frame; refuses an empty one or one over `max` bytes.
pub fn encode(json: &[u8], max: usize) -> Result<Vec<u8>, Iperf3Error> {
    if json.is_empty() {
        return Err(Iperf3Error::EmptyFrame);
    }
    if json.len() > max {
        return Err(Iperf3Error::FrameTooLong { len: json.len(), max });
    }
    let mut out = Vec::with_capacity(HEAD_LEN + json.len());
    out.extend_from_slice(&(json.len() as u32).to_be_bytes());
    out.extend_from_slice(json);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads() {
        assert_eq!(decode_head([0, 0, 0, 2], MAX_PARAMS_BYTES), Ok(Head::Body(2)));
        assert_eq!(decode_head([0, 0, 0x20, 0], MAX_PARAMS_BYTES), Ok(Head::Body(8192)));
        assert_eq!(
            decode_head([0, 0, 0x20, 1], MAX_PARAMS_BYTES),
            Err(Iperf3Error::FrameTooLong { len: 8193, max: 8192 })
        );
        assert_eq!(decode_head([0, 0, 0, 0], MAX_PARAMS_BYTES), Err(Iperf3Error::EmptyFrame));
        assert!(decode_head([0x7f, 0, 0, 0], MAX_RESULTS_BYTES).is_err());
        assert_eq!(
            decode_head([0xfe, 0, 0, 0], MAX_RESULTS_BYTES),
            Ok(Head::State { state: State::ServerError, rest: [0, 0, 0] })
        );
        assert!(matches!(
            decode_head([0xff, 1, 2, 3], 10),
            Ok(Head::State { state: State::AccessDenied, .. })
        ));
    }

    #[test]
    fn encode_prefixes_big_endian_length() {
        assert_eq!(encode(b"{}", 10), Ok(vec![0, 0, 0, 2, b'{', b'}']));
        assert!(encode(b"", 10).is_err());
        assert!(encode(&[b' '; 11], 10).is_err());
    }
}
