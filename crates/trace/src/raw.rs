//! Binary tracepoint records (`perf_event_open(2)` samples of `tcp:tcp_probe` and
//! `tcp:tcp_retransmit_skb`) → the same typed events the text lines give ([`crate::line`]),
//! without the kernel formatting text. Field offsets come from the event's `format` file
//! (tracefs `events/tcp/<event>/format`), never from constants: they change between kernels.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use crate::line::{Event, Probe, Retransmit};

const AF_INET: u16 = 2;
const AF_INET6: u16 = 10;

/// A field of a record: byte offset and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// Offset from the record's start.
    pub offset: usize,
    /// Size in bytes.
    pub size: usize,
}

/// The fields of an event's `format` file, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Format {
    fields: HashMap<String, Field>,
}

impl Format {
    /// Reads a `format` file's text: lines `field:TYPE NAME[N];\toffset:O;\tsize:S;…`.
    pub fn parse(text: &str) -> Format {
        let mut fields = HashMap::new();
        for line in text.lines() {
            let mut name = None;
            let (mut offset, mut size) = (None, None);
            for part in line.split(';').map(str::trim) {
                if let Some(decl) = part.strip_prefix("field:") {
                    let last = decl.split_whitespace().next_back().unwrap_or_default();
                    name = Some(last.split('[').next().unwrap_or_default().to_string());
                } else if let Some(v) = part.strip_prefix("offset:") {
                    offset = v.parse().ok();
                } else if let Some(v) = part.strip_prefix("size:") {
                    size = v.parse().ok();
                }
            }
            if let (Some(n), Some(offset), Some(size)) = (name, offset, size) {
                fields.insert(n, Field { offset, size });
            }
        }
        Format { fields }
    }

    fn get(&self, name: &str, size: usize) -> Result<Field, String> {
        match self.fields.get(name) {
            Some(f) if f.size == size || (size == 0 && f.size > 0) => Ok(*f),
            Some(f) => Err(format!("field {name} is {} bytes, expected {size}", f.size)),
            None => Err(format!("no field {name}")),
        }
    }
}

/// Where `tcp:tcp_probe`'s fields are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeLayout {
    saddr: Field,
    daddr: Field,
    data_len: Field,
    snd_nxt: Field,
    snd_una: Field,
    snd_cwnd: Field,
    ssthresh: Field,
    snd_wnd: Field,
    srtt: Field,
    rcv_wnd: Field,
    sock_cookie: Field,
}

impl ProbeLayout {
    /// The layout of `format`; the error names the field missing or of another size.
    pub fn of(f: &Format) -> Result<ProbeLayout, String> {
        Ok(ProbeLayout {
            saddr: f.get("saddr", 28)?,
            daddr: f.get("daddr", 28)?,
            data_len: f.get("data_len", 2)?,
            snd_nxt: f.get("snd_nxt", 4)?,
            snd_una: f.get("snd_una", 4)?,
            snd_cwnd: f.get("snd_cwnd", 4)?,
            ssthresh: f.get("ssthresh", 4)?,
            snd_wnd: f.get("snd_wnd", 4)?,
            srtt: f.get("srtt", 4)?,
            rcv_wnd: f.get("rcv_wnd", 4)?,
            sock_cookie: f.get("sock_cookie", 8)?,
        })
    }

    /// The event of one raw record taken at `t_ns`; `None` when it is too short or its
    /// addresses are of no known family.
    pub fn decode(&self, t_ns: u64, raw: &[u8]) -> Option<Event> {
        Some(Event::Probe(Probe {
            t_ns,
            src: sockaddr(bytes(raw, self.saddr)?)?,
            dst: sockaddr(bytes(raw, self.daddr)?)?,
            data_len: u32::from(u16_at(raw, self.data_len)?),
            snd_nxt: u32_at(raw, self.snd_nxt)?,
            snd_una: u32_at(raw, self.snd_una)?,
            snd_cwnd: u32_at(raw, self.snd_cwnd)?,
            ssthresh: u32_at(raw, self.ssthresh)?,
            snd_wnd: u32_at(raw, self.snd_wnd)?,
            srtt_us: u32_at(raw, self.srtt)?,
            rcv_wnd: u32_at(raw, self.rcv_wnd)?,
            sock_cookie: u64::from_ne_bytes(bytes(raw, self.sock_cookie)?.try_into().ok()?),
        }))
    }
}

/// Where `tcp:tcp_retransmit_skb`'s fields are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetransmitLayout {
    sport: Field,
    dport: Field,
    family: Field,
    saddr: Field,
    daddr: Field,
    saddr_v6: Field,
    daddr_v6: Field,
}

impl RetransmitLayout {
    /// The layout of `format`; the error names the field missing or of another size.
    pub fn of(f: &Format) -> Result<RetransmitLayout, String> {
        Ok(RetransmitLayout {
            sport: f.get("sport", 2)?,
            dport: f.get("dport", 2)?,
            family: f.get("family", 2)?,
            saddr: f.get("saddr", 4)?,
            daddr: f.get("daddr", 4)?,
            saddr_v6: f.get("saddr_v6", 16)?,
            daddr_v6: f.get("daddr_v6", 16)?,
        })
    }

    /// The event of one raw record taken at `t_ns`.
    pub fn decode(&self, t_ns: u64, raw: &[u8]) -> Option<Event> {
        let (sport, dport) = (u16_at(raw, self.sport)?, u16_at(raw, self.dport)?);
        let (src, dst): (IpAddr, IpAddr) = match u16_at(raw, self.family)? {
            AF_INET => (v4(bytes(raw, self.saddr)?)?.into(), v4(bytes(raw, self.daddr)?)?.into()),
            AF_INET6 => (v6(bytes(raw, self.saddr_v6)?)?.into(), v6(bytes(raw, self.daddr_v6)?)?.into()),
            _ => return None,
        };
        Some(Event::Retransmit(Retransmit {
            t_ns,
            src: SocketAddr::new(src, sport),
            dst: SocketAddr::new(dst, dport),
        }))
    }
}

fn bytes(raw: &[u8], f: Field) -> Option<&[u8]> {
    raw.get(f.offset..f.offset.checked_add(f.size)?)
}

fn u16_at(raw: &[u8], f: Field) -> Option<u16> {
    Some(u16::from_ne_bytes(bytes(raw, f)?.try_into().ok()?))
}

fn u32_at(raw: &[u8], f: Field) -> Option<u32> {
    Some(u32::from_ne_bytes(bytes(raw, f)?.try_into().ok()?))
}

fn v4(b: &[u8]) -> Option<Ipv4Addr> {
    Some(Ipv4Addr::from(<[u8; 4]>::try_from(b.get(..4)?).ok()?))
}

fn v6(b: &[u8]) -> Option<Ipv6Addr> {
    Some(Ipv6Addr::from(<[u8; 16]>::try_from(b.get(..16)?).ok()?))
}

/// A `struct sockaddr_in` or `sockaddr_in6` as the kernel keeps it: family in host order,
/// port in network order, then the address.
fn sockaddr(b: &[u8]) -> Option<SocketAddr> {
    let family = u16::from_ne_bytes(b.get(..2)?.try_into().ok()?);
    let port = u16::from_be_bytes(b.get(2..4)?.try_into().ok()?);
    let ip: IpAddr = match family {
        AF_INET => v4(b.get(4..)?)?.into(),
        AF_INET6 => v6(b.get(8..)?)?.into(),
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROBE_FORMAT: &str = "name: tcp_probe\nID: 2273\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
\tfield:__u8 saddr[28];\toffset:8;\tsize:28;\tsigned:0;\n\
\tfield:__u8 daddr[28];\toffset:36;\tsize:28;\tsigned:0;\n\
\tfield:__u16 sport;\toffset:64;\tsize:2;\tsigned:0;\n\
\tfield:__u16 dport;\toffset:66;\tsize:2;\tsigned:0;\n\
\tfield:__u16 family;\toffset:68;\tsize:2;\tsigned:0;\n\
\tfield:__u32 mark;\toffset:72;\tsize:4;\tsigned:0;\n\
\tfield:__u16 data_len;\toffset:76;\tsize:2;\tsigned:0;\n\
\tfield:__u32 snd_nxt;\toffset:80;\tsize:4;\tsigned:0;\n\
\tfield:__u32 snd_una;\toffset:84;\tsize:4;\tsigned:0;\n\
\tfield:__u32 snd_cwnd;\toffset:88;\tsize:4;\tsigned:0;\n\
\tfield:__u32 ssthresh;\toffset:92;\tsize:4;\tsigned:0;\n\
\tfield:__u32 snd_wnd;\toffset:96;\tsize:4;\tsigned:0;\n\
\tfield:__u32 srtt;\toffset:100;\tsize:4;\tsigned:0;\n\
\tfield:__u32 rcv_wnd;\toffset:104;\tsize:4;\tsigned:0;\n\
\tfield:__u64 sock_cookie;\toffset:112;\tsize:8;\tsigned:0;\n\
\tfield:const void * skbaddr;\toffset:120;\tsize:8;\tsigned:0;\n\nprint fmt: \"...\"\n";

    fn put(raw: &mut [u8], at: usize, b: &[u8]) {
        raw[at..at + b.len()].copy_from_slice(b);
    }

    #[test]
    fn a_probe_record_decodes_as_its_text_line_would() {
        let layout = ProbeLayout::of(&Format::parse(PROBE_FORMAT)).unwrap();
        let mut raw = vec![0u8; 136];
        put(&mut raw, 8, &AF_INET.to_ne_bytes());
        put(&mut raw, 10, &35932u16.to_be_bytes());
        put(&mut raw, 12, &[127, 0, 0, 1]);
        put(&mut raw, 36, &AF_INET.to_ne_bytes());
        put(&mut raw, 38, &9391u16.to_be_bytes());
        put(&mut raw, 40, &[127, 0, 0, 1]);
        put(&mut raw, 76, &44u16.to_ne_bytes());
        for (at, v) in
            [(80, 7u32), (84, 5), (88, 10), (92, 2_147_483_647), (96, 65536), (100, 42), (104, 131_072)]
        {
            put(&mut raw, at, &v.to_ne_bytes());
        }
        put(&mut raw, 112, &0x1234u64.to_ne_bytes());
        let Some(Event::Probe(p)) = layout.decode(99, &raw) else { panic!("not a probe") };
        assert_eq!(p.src, "127.0.0.1:35932".parse().unwrap());
        assert_eq!(p.dst, "127.0.0.1:9391".parse().unwrap());
        assert_eq!((p.t_ns, p.data_len, p.snd_nxt, p.snd_una, p.snd_cwnd), (99, 44, 7, 5, 10));
        assert_eq!((p.snd_wnd, p.srtt_us, p.rcv_wnd, p.sock_cookie), (65536, 42, 131_072, 0x1234));
        assert_eq!(layout.decode(1, &raw[..100]), None, "a short record");
        put(&mut raw, 8, &77u16.to_ne_bytes());
        assert_eq!(layout.decode(1, &raw), None, "an unknown family");
    }

    #[test]
    fn a_format_without_a_field_names_it() {
        let text = PROBE_FORMAT.replace("snd_wnd", "other");
        assert_eq!(ProbeLayout::of(&Format::parse(&text)).unwrap_err(), "no field snd_wnd");
        let text = PROBE_FORMAT.replace("offset:100;\tsize:4", "offset:100;\tsize:8");
        assert!(ProbeLayout::of(&Format::parse(&text)).unwrap_err().contains("srtt"));
    }
}
