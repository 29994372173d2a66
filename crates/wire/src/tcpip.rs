//! The IPv4/IPv6 and TCP headers of a captured packet, as a parsed value: the ports,
//! sequence and acknowledgement numbers, flags, raw window, payload length and the options a
//! SYN carries (MSS, window scale). Pure and checked: a short or foreign packet is `None`,
//! never a panic. Offsets are those of RFC 791, RFC 8200 and RFC 9293.

/// TCP flag bits as in the header's 13th byte.
pub mod flags {
    /// FIN.
    pub const FIN: u8 = 0x01;
    /// SYN.
    pub const SYN: u8 = 0x02;
    /// RST.
    pub const RST: u8 = 0x04;
    /// PSH.
    pub const PSH: u8 = 0x08;
    /// ACK.
    pub const ACK: u8 = 0x10;
}

/// IP protocol number of TCP.
const PROTO_TCP: u8 = 6;
/// Length of an IPv6 header (extension headers are not followed).
const IPV6_HEADER: usize = 40;
/// Smallest TCP header.
const TCP_MIN: usize = 20;

/// One TCP segment's header fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TcpSegment {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgement number (meaningful when [`flags::ACK`] is set).
    pub ack: u32,
    /// Flag bits (see [`flags`]).
    pub flags: u8,
    /// The window field, unscaled.
    pub window: u16,
    /// Payload bytes, from the IP length (a GSO super-packet counts whole).
    pub payload_len: u32,
    /// MSS option (SYN only).
    pub mss: Option<u16>,
    /// Window-scale option (SYN only).
    pub window_scale: Option<u8>,
    /// Whether the timestamps option is present.
    pub timestamps: bool,
}

impl TcpSegment {
    /// Whether flag bit `f` is set.
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }

    /// Sequence space the segment takes: payload, plus one for SYN and for FIN.
    pub fn seq_len(&self) -> u32 {
        self.payload_len + u32::from(self.has(flags::SYN)) + u32::from(self.has(flags::FIN))
    }

    /// `S`, `A`, `P`, `F`, `R` for the flags set, in that order (`.` for none).
    pub fn flag_letters(&self) -> String {
        let all =
            [(flags::SYN, 'S'), (flags::ACK, 'A'), (flags::PSH, 'P'), (flags::FIN, 'F'), (flags::RST, 'R')];
        let s: String = all.iter().filter(|(f, _)| self.has(*f)).map(|(_, c)| *c).collect();
        if s.is_empty() {
            ".".into()
        } else {
            s
        }
    }
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Parses the TCP segment in an IP packet whose first `captured.len()` bytes were kept of
/// `original_len`. `None` for anything that is not TCP over IPv4/IPv6 with whole headers.
pub fn parse(captured: &[u8], original_len: u32) -> Option<TcpSegment> {
    let version = captured.first()? >> 4;
    let (ip_header, ip_total, proto) = match version {
        4 => {
            let ihl = usize::from(captured.first()? & 0x0f) * 4;
            let total = u32::from(u16_at(captured, 2)?);
            // A GSO packet larger than 64 KiB (BIG TCP) has 0 here: take the original length.
            let total = if total == 0 { original_len } else { total };
            (ihl, total, *captured.get(9)?)
        }
        6 => {
            let payload = u32::from(u16_at(captured, 4)?);
            let total = if payload == 0 { original_len } else { payload + IPV6_HEADER as u32 };
            (IPV6_HEADER, total, *captured.get(6)?)
        }
        _ => return None,
    };
    if proto != PROTO_TCP || ip_header < 20 {
        return None;
    }
    let tcp = captured.get(ip_header..)?;
    let doff = usize::from(tcp.get(12)? >> 4) * 4;
    if doff < TCP_MIN || tcp.len() < doff {
        return None;
    }
    let headers = u32::try_from(ip_header + doff).ok()?;
    let mut seg = TcpSegment {
        src_port: u16_at(tcp, 0)?,
        dst_port: u16_at(tcp, 2)?,
        seq: u32_at(tcp, 4)?,
        ack: u32_at(tcp, 8)?,
        flags: *tcp.get(13)?,
        window: u16_at(tcp, 14)?,
        payload_len: ip_total.saturating_sub(headers),
        mss: None,
        window_scale: None,
        timestamps: false,
    };
    options(tcp.get(TCP_MIN..doff)?, &mut seg);
    Some(seg)
}

/// Reads MSS and window scale from the options.
fn options(mut opts: &[u8], seg: &mut TcpSegment) {
    while let Some(&kind) = opts.first() {
        match kind {
            0 => return,
            1 => {
                opts = opts.get(1..).unwrap_or_default();
                continue;
            }
            _ => {}
        }
        let Some(&len) = opts.get(1) else { return };
        let len = usize::from(len);
        let Some(body) = opts.get(2..len.max(2)) else { return };
        match (kind, body) {
            (2, [a, b]) => seg.mss = Some(u16::from_be_bytes([*a, *b])),
            (3, [s]) => seg.window_scale = Some(*s),
            (8, b) if b.len() == 8 => seg.timestamps = true,
            _ => {}
        }
        if len < 2 {
            return;
        }
        opts = opts.get(len..).unwrap_or_default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// IPv4 + TCP SYN from 10.0.0.1:40000 to 10.0.0.2:5201 with MSS 1460 and WS 7.
    fn syn() -> Vec<u8> {
        let mut p = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
        let tcp = [
            0x9c, 0x40, 0x14, 0x51, 0, 0, 0x10, 0, 0, 0, 0, 0, 0xb0, 0x02, 0xff, 0xff, 0, 0, 0, 0,
            // MSS 1460, NOP, WS 7, SACK-permitted, NOP, NOP, NOP, NOP, timestamps
            2, 4, 0x05, 0xb4, 1, 3, 3, 7, 4, 2, 1, 1, 1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0,
        ];
        p.extend_from_slice(&tcp);
        let total = p.len() as u16;
        p[2..4].copy_from_slice(&total.to_be_bytes());
        p
    }

    #[test]
    fn a_syn_gives_ports_flags_and_options() {
        let p = syn();
        let s = parse(&p, p.len() as u32).unwrap_or_default();
        assert_eq!((s.src_port, s.dst_port, s.seq, s.window), (40000, 5201, 4096, 65535));
        assert_eq!((s.mss, s.window_scale, s.payload_len, s.timestamps), (Some(1460), Some(7), 0, true));
        assert_eq!((s.flag_letters(), s.seq_len()), ("S".to_string(), 1));
    }

    #[test]
    fn payload_length_comes_from_the_ip_header_not_the_capture() {
        let mut p = syn();
        p[33] = flags::ACK | flags::PSH;
        let total = (p.len() + 60000) as u16;
        p[2..4].copy_from_slice(&total.to_be_bytes());
        let s = parse(&p, u32::from(total)).unwrap_or_default();
        assert_eq!((s.payload_len, s.flag_letters()), (60000, "AP".to_string()));
    }

    #[test]
    fn short_and_foreign_packets_are_none() {
        let p = syn();
        for cut in 0..40 {
            assert_eq!(parse(&p[..cut], 100), None, "cut at {cut}");
        }
        let mut udp = p.clone();
        udp[9] = 17;
        assert_eq!(parse(&udp, 100), None);
        assert_eq!(parse(&[0x60; 3], 3), None);
    }

    #[test]
    fn odd_options_do_not_panic() {
        let mut p = syn();
        for v in [0u8, 1, 2, 255] {
            for i in 40..p.len() {
                let keep = p[i];
                p[i] = v;
                let _ = parse(&p, p.len() as u32);
                p[i] = keep;
            }
        }
    }
}
