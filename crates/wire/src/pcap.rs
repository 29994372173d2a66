//! pcap file format (libpcap "classic" files) with nanosecond timestamps: the global header
//! and per-record headers, as bytes. Pure: the caller writes them where it likes.
//!
//! Layout (little-endian as written here; readers detect byte order from the magic):
//! a 24-byte file header, then per packet a 16-byte record header followed by the bytes.

/// Magic number of a pcap file whose timestamps are in nanoseconds.
pub const MAGIC_NANOS: u32 = 0xa1b2_3c4d;

/// `LINKTYPE_RAW`: each record is a bare IPv4 or IPv6 packet.
pub const LINKTYPE_RAW: u32 = 101;

/// Largest number of bytes kept per packet (`snaplen`).
pub const SNAPLEN: u32 = 262_144;

/// Length of [`file_header`].
pub const FILE_HEADER_BYTES: usize = 24;

/// Length of [`record_header`].
pub const RECORD_HEADER_BYTES: usize = 16;

/// The file header: magic, version 2.4, zone 0, sigfigs 0, snaplen, link type.
pub fn file_header(linktype: u32) -> [u8; FILE_HEADER_BYTES] {
    let mut out = [0u8; FILE_HEADER_BYTES];
    out[0..4].copy_from_slice(&MAGIC_NANOS.to_le_bytes());
    out[4..6].copy_from_slice(&2u16.to_le_bytes());
    out[6..8].copy_from_slice(&4u16.to_le_bytes());
    out[16..20].copy_from_slice(&SNAPLEN.to_le_bytes());
    out[20..24].copy_from_slice(&linktype.to_le_bytes());
    out
}

/// The header of one record captured at `unix_nanos` (nanoseconds since 1970), keeping
/// `captured_len` of the packet's `original_len` bytes.
pub fn record_header(unix_nanos: u64, captured_len: u32, original_len: u32) -> [u8; RECORD_HEADER_BYTES] {
    let secs = u32::try_from(unix_nanos / 1_000_000_000).unwrap_or(u32::MAX);
    let nanos = (unix_nanos % 1_000_000_000) as u32;
    let mut out = [0u8; RECORD_HEADER_BYTES];
    out[0..4].copy_from_slice(&secs.to_le_bytes());
    out[4..8].copy_from_slice(&nanos.to_le_bytes());
    out[8..12].copy_from_slice(&captured_len.to_le_bytes());
    out[12..16].copy_from_slice(&original_len.to_le_bytes());
    out
}

/// How many bytes of a packet of `len` bytes to keep.
pub fn captured_len(len: usize) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX).min(SNAPLEN)
}

/// Magic number of a pcap file whose timestamps are in microseconds.
pub const MAGIC_MICROS: u32 = 0xa1b2_c3d4;

/// What a file header says: the byte order, the timestamp unit and the link type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileInfo {
    /// Fields are big-endian.
    pub big_endian: bool,
    /// Timestamps' fraction is in nanoseconds (else microseconds).
    pub nanos: bool,
    /// Link type of the records.
    pub linktype: u32,
}

/// Reads a file header; `None` if it is not a classic pcap header.
pub fn parse_file_header(b: &[u8]) -> Option<FileInfo> {
    let magic: [u8; 4] = b.get(0..4)?.try_into().ok()?;
    let (big_endian, nanos) = match (u32::from_le_bytes(magic), u32::from_be_bytes(magic)) {
        (MAGIC_NANOS, _) => (false, true),
        (MAGIC_MICROS, _) => (false, false),
        (_, MAGIC_NANOS) => (true, true),
        (_, MAGIC_MICROS) => (true, false),
        _ => return None,
    };
    let info = FileInfo { big_endian, nanos, linktype: 0 };
    Some(FileInfo { linktype: info.u32_at(b, 20)?, ..info })
}

/// One record's header, read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordInfo {
    /// Capture time, ns since 1970.
    pub unix_nanos: u64,
    /// Bytes kept (that follow the header).
    pub captured_len: u32,
    /// Bytes the packet had.
    pub original_len: u32,
}

impl FileInfo {
    fn u32_at(&self, b: &[u8], at: usize) -> Option<u32> {
        let v: [u8; 4] = b.get(at..at + 4)?.try_into().ok()?;
        Some(if self.big_endian { u32::from_be_bytes(v) } else { u32::from_le_bytes(v) })
    }

    /// Reads a record header of this file; `None` if short or longer than [`SNAPLEN`].
    pub fn parse_record_header(&self, b: &[u8]) -> Option<RecordInfo> {
        let (secs, frac) = (u64::from(self.u32_at(b, 0)?), u64::from(self.u32_at(b, 4)?));
        let frac_ns = if self.nanos { frac } else { frac * 1000 };
        let captured_len = self.u32_at(b, 8)?;
        if captured_len > SNAPLEN {
            return None;
        }
        Some(RecordInfo {
            unix_nanos: secs * 1_000_000_000 + frac_ns,
            captured_len,
            original_len: self.u32_at(b, 12)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_header_bytes() {
        assert_eq!(
            file_header(LINKTYPE_RAW),
            [0x4d, 0x3c, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 101, 0, 0, 0]
        );
    }

    #[test]
    fn record_header_splits_seconds_and_nanos() {
        let h = record_header(1_700_000_000_123_456_789, 60, 1500);
        assert_eq!(&h[0..4], &1_700_000_000u32.to_le_bytes());
        assert_eq!(&h[4..8], &123_456_789u32.to_le_bytes());
        assert_eq!(&h[8..12], &60u32.to_le_bytes());
        assert_eq!(&h[12..16], &1500u32.to_le_bytes());
    }

    #[test]
    fn capture_is_capped_at_snaplen() {
        assert_eq!(captured_len(1500), 1500);
        assert_eq!(captured_len(1 << 20), SNAPLEN);
    }

    #[test]
    fn headers_read_back() {
        let info = parse_file_header(&file_header(LINKTYPE_RAW));
        assert_eq!(info, Some(FileInfo { big_endian: false, nanos: true, linktype: LINKTYPE_RAW }));
        let h = record_header(1_700_000_000_123_456_789, 60, 1500);
        let r = info.and_then(|i| i.parse_record_header(&h));
        assert_eq!(
            r,
            Some(RecordInfo { unix_nanos: 1_700_000_000_123_456_789, captured_len: 60, original_len: 1500 })
        );
        assert_eq!(parse_file_header(&[0u8; 24]), None);
        assert_eq!(info.and_then(|i| i.parse_record_header(&h[..10])), None);
    }
}
