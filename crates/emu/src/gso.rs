//! GSO super-packets as TUN devices with offload deliver them: a 10-byte virtio-net header,
//! then one IPv4 packet of up to 64 KB whose TCP payload the kernel would cut into
//! `gso_size` segments. Pure parsing and surgery, so the pump can charge the link per
//! segment and keep only the segments the queue admits.
//!
//! Header layout (`struct virtio_net_hdr`, little-endian on the machines tcplab targets):
//! `flags u8 | gso_type u8 | hdr_len u16 | gso_size u16 | csum_start u16 | csum_offset u16`.

/// Length of the virtio-net header.
pub const VNET_HDR_BYTES: usize = 10;
/// `VIRTIO_NET_HDR_GSO_TCPV4`.
const GSO_TCPV4: u8 = 1;
/// `VIRTIO_NET_HDR_GSO_ECN` flag bit of `gso_type`.
const GSO_ECN: u8 = 0x80;

/// The segments a super-packet stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segments {
    /// IP + TCP header bytes repeated in each segment.
    pub header_bytes: u32,
    /// IP length of each segment, in order.
    pub lens: Vec<u32>,
}

fn u16_le(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

fn u16_be(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

/// The segments of `frame` (virtio header + IPv4 packet) if it is a TCPv4 super-packet;
/// `None` for anything else (plain packets, IPv6, malformed input).
pub fn segments(frame: &[u8]) -> Option<Segments> {
    let gso_type = *frame.get(1)? & !GSO_ECN;
    let gso_size = u32::from(u16_le(frame, 4)?);
    if gso_type != GSO_TCPV4 || gso_size == 0 {
        return None;
    }
    let ip = frame.get(VNET_HDR_BYTES..)?;
    if ip.first()? >> 4 != 4 {
        return None;
    }
    let ihl = u32::from(ip.first()? & 0x0f) * 4;
    let doff = u32::from(ip.get(ihl as usize + 12)? >> 4) * 4;
    let header = ihl + doff;
    let total = u32::try_from(ip.len()).ok()?;
    if ihl < 20 || doff < 20 || header >= total {
        return None;
    }
    let payload = total - header;
    let count = payload.div_ceil(gso_size);
    let lens = (0..count).map(|i| header + gso_size.min(payload - i * gso_size)).collect();
    Some(Segments { header_bytes: header, lens })
}

/// Cuts a super-packet to its first `keep` segments (fixing the IPv4 total length and
/// header checksum); the TCP checksum stays partial, as the virtio header says.
pub fn truncate(frame: &mut Vec<u8>, segments: &Segments, keep: usize) {
    let ip_len: u32 = segments.lens.iter().take(keep).map(|l| l - segments.header_bytes).sum::<u32>()
        + segments.header_bytes;
    let Ok(ip_len16) = u16::try_from(ip_len) else { return };
    frame.truncate(VNET_HDR_BYTES + ip_len as usize);
    let Some(ip) = frame.get_mut(VNET_HDR_BYTES..) else { return };
    let ihl = usize::from(ip.first().copied().unwrap_or(0) & 0x0f) * 4;
    if ip.len() < ihl || ihl < 20 {
        return;
    }
    ip[2..4].copy_from_slice(&ip_len16.to_be_bytes());
    ip[10..12].copy_from_slice(&[0, 0]);
    let sum = ipv4_checksum(&ip[..ihl]);
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
}

/// `VIRTIO_NET_HDR_F_NEEDS_CSUM`: the TCP checksum field holds the pseudo-header sum only.
const F_NEEDS_CSUM: u8 = 1;
const TCP_FIN: u8 = 0x01;
const TCP_PSH: u8 = 0x08;
const TCP_CWR: u8 = 0x80;

/// Splits a super-packet into the frames of its segments, as the kernel's segmentation
/// would: each gets a copy of the IP and TCP headers with its own IP length, IP id (+1 per
/// segment), checksum and TCP sequence number; FIN and PSH stay on the last segment, CWR on
/// the first; the virtio header says "no GSO" and keeps the checksum-offload fields, with the
/// pseudo-header sum for the segment's length in the TCP checksum field.
pub fn split(frame: &[u8], segments: &Segments) -> Vec<Vec<u8>> {
    let hdr = segments.header_bytes as usize;
    let Some(headers) = frame.get(VNET_HDR_BYTES..VNET_HDR_BYTES + hdr) else { return Vec::new() };
    let payload = frame.get(VNET_HDR_BYTES + hdr..).unwrap_or_default();
    let mss = usize::from(u16_le(frame, 4).unwrap_or(0)).max(1);
    let count = segments.lens.len();
    payload
        .chunks(mss)
        .enumerate()
        .map(|(i, chunk)| {
            let mut out = Vec::with_capacity(VNET_HDR_BYTES + hdr + chunk.len());
            out.extend_from_slice(frame.get(..VNET_HDR_BYTES).unwrap_or(&[0; VNET_HDR_BYTES]));
            out[1] = 0; // GSO none
            out[4..6].copy_from_slice(&[0, 0]); // gso_size
            out.extend_from_slice(headers);
            out.extend_from_slice(chunk);
            fix_segment(&mut out, i, count, mss);
            out
        })
        .collect()
}

/// Rewrites the headers of segment `i` of `count` (frame = virtio header + IP + TCP + data).
fn fix_segment(frame: &mut [u8], i: usize, count: usize, mss: usize) {
    let needs_csum = frame.first().is_some_and(|f| f & F_NEEDS_CSUM != 0);
    let Some(ip) = frame.get_mut(VNET_HDR_BYTES..) else { return };
    let ihl = usize::from(ip.first().copied().unwrap_or(0) & 0x0f) * 4;
    if ihl < 20 || ip.len() < ihl + 20 {
        return;
    }
    let ip_len = ip.len() as u16;
    let id = u16_be(ip, 4).unwrap_or(0).wrapping_add(i as u16);
    ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
    ip[4..6].copy_from_slice(&id.to_be_bytes());
    ip[10..12].copy_from_slice(&[0, 0]);
    let sum = ipv4_checksum(&ip[..ihl]);
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    let (addrs, tcp) = ip.split_at_mut(ihl);
    let seq = u32::from_be_bytes([tcp[4], tcp[5], tcp[6], tcp[7]]).wrapping_add((i * mss) as u32);
    tcp[4..8].copy_from_slice(&seq.to_be_bytes());
    if i + 1 < count {
        tcp[13] &= !(TCP_FIN | TCP_PSH);
    }
    if i > 0 {
        tcp[13] &= !TCP_CWR;
    }
    if needs_csum {
        let tcp_len = tcp.len() as u32;
        let words = (12..20).step_by(2).filter_map(|at| u16_be(addrs, at)).map(u32::from);
        let mut sum: u32 = words.sum::<u32>() + 6 + tcp_len;
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        tcp[16..18].copy_from_slice(&(sum as u16).to_be_bytes());
    }
}

/// The Internet checksum of an IPv4 header whose checksum field is zero.
fn ipv4_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = (0..header.len() / 2).filter_map(|i| u16_be(header, 2 * i)).map(u32::from).sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A TCPv4 super-packet: 20-byte IP header, 32-byte TCP header, `payload` bytes.
    fn frame(payload: usize, gso_size: u16) -> Vec<u8> {
        let mut f = vec![0u8; VNET_HDR_BYTES];
        f[0] = 1; // NEEDS_CSUM
        f[1] = GSO_TCPV4;
        f[4..6].copy_from_slice(&gso_size.to_le_bytes());
        let total = 20 + 32 + payload;
        let mut ip = vec![0u8; total];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        ip[8] = 64;
        ip[9] = 6;
        ip[12..16].copy_from_slice(&[198, 18, 0, 1]);
        ip[16..20].copy_from_slice(&[198, 18, 0, 2]);
        ip[20 + 12] = 8 << 4;
        f.extend_from_slice(&ip);
        f
    }

    #[test]
    fn splits_into_mss_segments() {
        let s = segments(&frame(1448 * 3 + 100, 1448)).unwrap();
        assert_eq!(s.header_bytes, 52);
        assert_eq!(s.lens, vec![1500, 1500, 1500, 152]);
    }

    #[test]
    fn plain_and_malformed_frames_are_not_super_packets() {
        let mut plain = frame(100, 1448);
        plain[1] = 0;
        assert_eq!(segments(&plain), None);
        assert_eq!(segments(&frame(100, 1448)[..20]), None);
        assert_eq!(segments(&[]), None);
        let mut v6 = frame(3000, 1448);
        v6[VNET_HDR_BYTES] = 0x60;
        assert_eq!(segments(&v6), None);
    }

    #[test]
    fn split_segments_carry_their_own_headers() {
        let mut f = frame(1448 * 2 + 10, 1448);
        let tcp = VNET_HDR_BYTES + 20;
        f[tcp + 4..tcp + 8].copy_from_slice(&1000u32.to_be_bytes());
        f[tcp + 13] = TCP_CWR | TCP_PSH | TCP_FIN | 0x10;
        f[VNET_HDR_BYTES + 4..VNET_HDR_BYTES + 6].copy_from_slice(&7u16.to_be_bytes());
        let s = segments(&f).unwrap();
        let out = split(&f, &s);
        assert_eq!(out.iter().map(Vec::len).collect::<Vec<_>>(), vec![10 + 1500, 10 + 1500, 10 + 62]);
        for (i, seg) in out.iter().enumerate() {
            let ip = &seg[VNET_HDR_BYTES..];
            assert_eq!(seg[1], 0, "no GSO");
            assert_eq!(u16::from_be_bytes([ip[2], ip[3]]) as usize, ip.len());
            assert_eq!(u16::from_be_bytes([ip[4], ip[5]]), 7 + i as u16, "IP id");
            assert_eq!(ipv4_checksum(&ip[..20]), 0, "IP checksum");
            let seq = u32::from_be_bytes([ip[24], ip[25], ip[26], ip[27]]);
            assert_eq!(seq, 1000 + 1448 * i as u32);
            let flags = ip[33];
            assert_eq!(flags & TCP_CWR != 0, i == 0);
            assert_eq!(flags & (TCP_FIN | TCP_PSH) != 0, i == 2);
            assert_eq!(flags & 0x10, 0x10, "ACK kept");
        }
        let payload: Vec<u8> = out.iter().flat_map(|s| s[VNET_HDR_BYTES + 52..].to_vec()).collect();
        assert_eq!(payload, f[VNET_HDR_BYTES + 52..]);
    }

    #[test]
    fn truncation_fixes_length_and_checksum() {
        let mut f = frame(1448 * 4, 1448);
        let s = segments(&f).unwrap();
        truncate(&mut f, &s, 2);
        assert_eq!(f.len(), VNET_HDR_BYTES + 52 + 2 * 1448);
        let ip = &f[VNET_HDR_BYTES..];
        assert_eq!(u16::from_be_bytes([ip[2], ip[3]]) as usize, 52 + 2 * 1448);
        // A correct header sums to 0xffff, i.e. its checksum over itself is zero.
        assert_eq!(ipv4_checksum(&ip[..20]), 0);
    }
}
