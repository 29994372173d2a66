//! UDP data streams: the 4-byte connect handshake and the header of every datagram.
//!
//! Handshake (fixed wire bytes whatever the host's byte order): the client sends
//! [`CONNECT_MSG`] `39 38 37 36` ("9876"); the server answers [`CONNECT_REPLY`] `36 37 38 39`
//! ("6789"), or [`LEGACY_CONNECT_REPLY`] `b1 68 de 3a` before iperf3 3.12.
//!
//! Datagram header (big-endian): sender time seconds (u32), microseconds (u32), then the
//! sequence number, u32 by default or u64 when `udp_counters_64bit` was negotiated. The first
//! datagram is number 1. Times are the sender's monotonic clock: only differences matter.

use super::Iperf3Error;

/// Client → server hello, "9876" (0x39383736 big-endian).
pub const CONNECT_MSG: [u8; 4] = *b"9876";
/// Server → client reply, "6789" (0x36373839 big-endian).
pub const CONNECT_REPLY: [u8; 4] = *b"6789";
/// Reply of servers before 3.12 (987654321 little-endian).
pub const LEGACY_CONNECT_REPLY: [u8; 4] = [0xb1, 0x68, 0xde, 0x3a];
/// Smallest datagram iperf3 accepts as `len` (header with a 64-bit counter).
pub const MIN_DATAGRAM: usize = 16;

/// Whether four received bytes are a server's connect reply (current or legacy).
pub fn is_connect_reply(bytes: &[u8]) -> bool {
    bytes == CONNECT_REPLY || bytes == LEGACY_CONNECT_REPLY
}

/// The header of a UDP data datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Sender time, whole seconds (monotonic clock, wrapped to 32 bits).
    pub sec: u32,
    /// Sender time, microseconds within the second.
    pub usec: u32,
    /// Sequence number, first = 1.
    pub seq: u64,
}

impl Header {
    /// Header bytes with 32- or 64-bit counters.
    pub fn len(counters_64bit: bool) -> usize {
        if counters_64bit {
            16
        } else {
            12
        }
    }

    /// A header for `seq` sent `elapsed_us` µs after the sender's clock origin.
    pub fn at(elapsed_us: u64, seq: u64) -> Header {
        Header { sec: (elapsed_us / 1_000_000) as u32, usec: (elapsed_us % 1_000_000) as u32, seq }
    }

    /// The send time in µs (within the 32-bit seconds range).
    pub fn sent_us(&self) -> u64 {
        u64::from(self.sec) * 1_000_000 + u64::from(self.usec)
    }

    /// Writes the header at the start of `buf`; false (nothing written) if `buf` is too short.
    /// With 32-bit counters the sequence number is truncated to its low 32 bits, as in iperf3.
    pub fn write(&self, buf: &mut [u8], counters_64bit: bool) -> bool {
        let Some(head) = buf.get_mut(..Header::len(counters_64bit)) else { return false };
        head[0..4].copy_from_slice(&self.sec.to_be_bytes());
        head[4..8].copy_from_slice(&self.usec.to_be_bytes());
        if counters_64bit {
            head[8..16].copy_from_slice(&self.seq.to_be_bytes());
        } else {
            head[8..12].copy_from_slice(&(self.seq as u32).to_be_bytes());
        }
        true
    }

    /// Reads the header of a received datagram.
    pub fn read(buf: &[u8], counters_64bit: bool) -> Result<Header, Iperf3Error> {
        let need = Header::len(counters_64bit);
        let head = buf.get(..need).ok_or(Iperf3Error::ShortDatagram { len: buf.len(), need })?;
        let word = |r: std::ops::Range<usize>| head[r].iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
        Ok(Header { sec: word(0..4) as u32, usec: word(4..8) as u32, seq: word(8..need) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handshake_bytes_are_fixed() {
        assert_eq!(u32::from_be_bytes(CONNECT_MSG), 0x3938_3736);
        assert_eq!(u32::from_be_bytes(CONNECT_REPLY), 0x3637_3839);
        assert_eq!(u32::from_le_bytes(LEGACY_CONNECT_REPLY), 987_654_321);
        assert!(is_connect_reply(b"6789") && is_connect_reply(&LEGACY_CONNECT_REPLY));
        assert!(!is_connect_reply(b"9876") && !is_connect_reply(b"678"));
    }

    #[test]
    fn header_literal_bytes() {
        let h = Header { sec: 0x0102_0304, usec: 999_999, seq: 0x0a0b_0c0d };
        let mut buf = [0u8; 16];
        assert!(h.write(&mut buf, false));
        assert_eq!(buf[..12], [1, 2, 3, 4, 0, 0x0f, 0x42, 0x3f, 0x0a, 0x0b, 0x0c, 0x0d]);
        assert_eq!(Header::read(&buf, false), Ok(h));
        assert!(h.write(&mut buf, true));
        assert_eq!(buf[8..16], [0, 0, 0, 0, 0x0a, 0x0b, 0x0c, 0x0d]);
        assert_eq!(Header::read(&buf, true), Ok(h));
        assert!(Header::read(&buf[..15], true).is_err());
        assert!(!h.write(&mut [0u8; 11], false));
    }

    #[test]
    fn time_splits_into_seconds_and_micros() {
        let h = Header::at(3_000_042, 7);
        assert_eq!((h.sec, h.usec, h.sent_us()), (3, 42, 3_000_042));
    }
}
