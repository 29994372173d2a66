//! The header every UDP test datagram starts with, and how a receiver tells a datagram apart
//! from the UDP hello and the end marker.
//!
//! Layout (16 bytes, big-endian; the rest of the datagram is payload):
//!
//! | offset | len | field |
//! |---|---|---|
//! | 0 | 8 | sequence number; bit 63 set = end marker, then bits 0–62 are the count sent |
//! | 8 | 8 | send time, ns since the sender's start (its monotonic clock) |
//!
//! A sender numbers its datagrams 0, 1, 2 … without gaps. After its last datagram it sends a
//! few end markers carrying how many it sent, so the receiver can finish draining as soon as it
//! has seen them all. A UDP hello ([`crate::DataHello`], 76 bytes starting with `TCPLAB`) read
//! as a header would be sequence 0x5443_504C_4142_…, about 6 × 10¹⁸: no sender gets there, so
//! a 76-byte datagram that decodes as a data hello is one.

use thiserror::Error;

use crate::hello::{DataHello, DATA_HELLO_LEN};

/// Bytes of the header; also the smallest datagram a UDP test sends.
pub const HEADER_LEN: usize = 16;
/// The largest UDP payload over IPv4 (65535 − 20 IP − 8 UDP).
pub const MAX_DATAGRAM: usize = 65_507;
const END_FLAG: u64 = 1 << 63;
const SEQ: std::ops::Range<usize> = 0..8;
const SENT_NS: std::ops::Range<usize> = 8..16;

/// The parsed header of a data datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Sequence number (0-based, below 2⁶³).
    pub seq: u64,
    /// Send time, ns since the sender's start.
    pub sent_ns: u64,
}

/// What a received datagram is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Datagram {
    /// Test data.
    Data(Header),
    /// The sender is done: it sent `sent` data datagrams.
    End {
        /// Data datagrams sent.
        sent: u64,
        /// When the marker was sent, ns since the sender's start.
        sent_ns: u64,
    },
    /// A UDP hello (setup; stale copies may still arrive during the test).
    Hello(DataHello),
}

/// Why bytes are not a test datagram.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum UdpError {
    /// Fewer bytes than the header.
    #[error("datagram too short: {len} of {HEADER_LEN} bytes")]
    Short {
        /// Bytes received.
        len: usize,
    },
}

impl Header {
    /// Writes the header into the first [`HEADER_LEN`] bytes of `buf`; returns false (and
    /// writes nothing) if `buf` is shorter or `seq` uses the reserved top bit.
    pub fn write(&self, buf: &mut [u8]) -> bool {
        if self.seq & END_FLAG != 0 {
            return false;
        }
        write_words(buf, self.seq, self.sent_ns)
    }
}

/// Writes an end marker saying `sent` datagrams were sent.
pub fn write_end(buf: &mut [u8], sent: u64, sent_ns: u64) -> bool {
    write_words(buf, (sent & !END_FLAG) | END_FLAG, sent_ns)
}

fn write_words(buf: &mut [u8], a: u64, b: u64) -> bool {
    let Some(head) = buf.get_mut(..HEADER_LEN) else { return false };
    head[SEQ].copy_from_slice(&a.to_be_bytes());
    head[SENT_NS].copy_from_slice(&b.to_be_bytes());
    true
}

/// Classifies one received datagram.
pub fn classify(buf: &[u8]) -> Result<Datagram, UdpError> {
    if buf.len() == DATA_HELLO_LEN {
        if let Ok(h) = DataHello::decode(buf) {
            return Ok(Datagram::Hello(h));
        }
    }
    let head = buf.get(..HEADER_LEN).ok_or(UdpError::Short { len: buf.len() })?;
    let word = |r: std::ops::Range<usize>| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&head[r]);
        u64::from_be_bytes(b)
    };
    let (seq, sent_ns) = (word(SEQ), word(SENT_NS));
    if seq & END_FLAG != 0 {
        return Ok(Datagram::End { sent: seq & !END_FLAG, sent_ns });
    }
    Ok(Datagram::Data(Header { seq, sent_ns }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hello::Token;

    #[test]
    fn data_header_has_the_documented_layout() {
        let mut buf = [0xEEu8; 20];
        assert!(Header { seq: 0x0102_0304_0506_0708, sent_ns: 1_000_000_007 }.write(&mut buf));
        assert_eq!(buf, [1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0x3B, 0x9A, 0xCA, 0x07, 0xEE, 0xEE, 0xEE, 0xEE]);
        let parsed = classify(&buf).unwrap();
        assert_eq!(parsed, Datagram::Data(Header { seq: 0x0102_0304_0506_0708, sent_ns: 1_000_000_007 }));
    }

    #[test]
    fn end_marker_fixture() {
        let mut buf = [0u8; 16];
        assert!(write_end(&mut buf, 5, 9));
        assert_eq!(buf, [0x80, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 9]);
        assert_eq!(classify(&buf), Ok(Datagram::End { sent: 5, sent_ns: 9 }));
    }

    #[test]
    fn a_hello_is_told_apart_from_data() {
        let h = DataHello::new(Token([3; 16]), 2, [7; 32]);
        assert_eq!(classify(&h.encode()), Ok(Datagram::Hello(h)));
        // 76 bytes that are not a hello are data.
        let mut buf = [0u8; 76];
        buf[7] = 1;
        assert_eq!(classify(&buf), Ok(Datagram::Data(Header { seq: 1, sent_ns: 0 })));
    }

    #[test]
    fn short_buffers_are_refused_both_ways() {
        assert_eq!(classify(&[0; 15]), Err(UdpError::Short { len: 15 }));
        assert!(!Header { seq: 1, sent_ns: 1 }.write(&mut [0; 15]));
        assert!(!Header { seq: END_FLAG, sent_ns: 1 }.write(&mut [0; 16]));
        assert!(!write_end(&mut [0; 8], 1, 1));
    }
}
