//! Binary ring-buffer pages of tracefs (`per_cpu/cpuN/trace_pipe_raw`) → typed events, the
//! same [`Event`]s a text line gives, without the kernel formatting each event as text.
//!
//! A page is a time stamp, a commit word (bytes of data; bit 31: events were missed before
//! this page, bit 30: their count is stored as 8 bytes after the data) and the data: events,
//! each behind a 4-byte header of `type_len` (5 bits) and `time_delta` (27 bits). `type_len`
//! 1–28 is a record of that many 4-byte words; 0 a record whose length (+4) is the next word;
//! 29 padding (with delta 0: the rest of the page); 30 a time extension and 31 an absolute
//! time stamp (8 bytes each). A record starts with its event's id (`common_type`); the
//! fields are where the event's `format` file says. The pages come from the kernel, but any
//! bytes are decoded without a panic: what does not fit ends the page, counted as malformed.

pub mod format;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

pub use format::{Field, Format, FormatError, PageLayout};

use crate::line::{Event, Probe, Retransmit};

const TYPE_PADDING: u32 = 29;
const TYPE_TIME_EXTEND: u32 = 30;
const TYPE_TIME_STAMP: u32 = 31;
const MISSED_EVENTS: u64 = 1 << 31;
const MISSED_STORED: u64 = 1 << 30;
const AF_INET: u64 = 2;
const AF_INET6: u64 = 10;

/// Where `tcp:tcp_probe`'s fields are.
#[derive(Debug, Clone, Copy)]
struct ProbeLayout {
    id: u16,
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

/// Where `tcp:tcp_retransmit_skb`'s fields are.
#[derive(Debug, Clone, Copy)]
struct RetransmitLayout {
    id: u16,
    family: Field,
    sport: Field,
    dport: Field,
    saddr: Field,
    daddr: Field,
    saddr_v6: Field,
    daddr_v6: Field,
}

/// Decodes the pages of one tracefs instance.
#[derive(Debug, Clone)]
pub struct Decoder {
    page: PageLayout,
    probe: ProbeLayout,
    retransmit: RetransmitLayout,
}

/// What one page held besides its events.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PageSummary {
    /// Events of the two tracepoints handed over.
    pub events: u64,
    /// The page says events were missed before it: `Some(n)` with their count, `Some(0)`
    /// when the kernel had no room to store it (the instance's per-CPU stats count them).
    pub missed: Option<u64>,
    /// Bytes that were not a whole event (the page was cut short).
    pub malformed: bool,
}

impl Decoder {
    /// A decoder from the texts of `events/header_page`, `events/tcp/tcp_probe/format` and
    /// `events/tcp/tcp_retransmit_skb/format`.
    pub fn new(header_page: &str, probe: &str, retransmit: &str) -> Result<Decoder, FormatError> {
        let page = PageLayout::parse(header_page)?;
        let p = Format::parse(probe)?;
        let u32f = |f: &Format, name| f.field(name, Some(4));
        let probe = ProbeLayout {
            id: p.id,
            saddr: p.field("saddr", Some(28))?,
            daddr: p.field("daddr", Some(28))?,
            data_len: p.field("data_len", None)?,
            snd_nxt: u32f(&p, "snd_nxt")?,
            snd_una: u32f(&p, "snd_una")?,
            snd_cwnd: u32f(&p, "snd_cwnd")?,
            ssthresh: u32f(&p, "ssthresh")?,
            snd_wnd: u32f(&p, "snd_wnd")?,
            srtt: u32f(&p, "srtt")?,
            rcv_wnd: u32f(&p, "rcv_wnd")?,
            sock_cookie: p.field("sock_cookie", Some(8))?,
        };
        let r = Format::parse(retransmit)?;
        let retransmit = RetransmitLayout {
            id: r.id,
            family: r.field("family", Some(2))?,
            sport: r.field("sport", Some(2))?,
            dport: r.field("dport", Some(2))?,
            saddr: r.field("saddr", Some(4))?,
            daddr: r.field("daddr", Some(4))?,
            saddr_v6: r.field("saddr_v6", Some(16))?,
            daddr_v6: r.field("daddr_v6", Some(16))?,
        };
        Ok(Decoder { page, probe, retransmit })
    }

    /// Bytes of a whole page (the buffer one read of `trace_pipe_raw` needs).
    pub fn page_bytes(&self) -> usize {
        self.page.page_bytes()
    }

    /// Hands each event of `page` (one read of `trace_pipe_raw`) to `out`, in page order.
    pub fn page(&self, page: &[u8], out: &mut dyn FnMut(Event)) -> PageSummary {
        let mut sum = PageSummary::default();
        let (Some(mut ts), Some(commit)) = (uint(page, self.page.timestamp), uint(page, self.page.commit))
        else {
            sum.malformed = !page.is_empty();
            return sum;
        };
        let start = self.page.data.offset;
        let len = usize::try_from(commit & 0xfff_ffff).unwrap_or(usize::MAX);
        let Some(data) = start.checked_add(len).and_then(|end| page.get(start..end)) else {
            sum.malformed = true;
            return sum;
        };
        if commit & MISSED_EVENTS != 0 {
            let stored = page.get(start + len..).and_then(|b| uint(b, Field { offset: 0, size: 8 }));
            sum.missed = Some(if commit & MISSED_STORED != 0 { stored.unwrap_or(0) } else { 0 });
        }
        let mut at = 0usize;
        while at < data.len() {
            let Some(step) = self.event(data, at, &mut ts, &mut sum, out) else {
                sum.malformed = true;
                break;
            };
            if step == 0 {
                break;
            }
            at += step;
        }
        sum
    }

    /// Reads the event at `at`; its length in bytes (0: the page ends here), `None` when it
    /// does not fit.
    fn event(
        &self,
        data: &[u8],
        at: usize,
        ts: &mut u64,
        sum: &mut PageSummary,
        out: &mut dyn FnMut(Event),
    ) -> Option<usize> {
        let header = u32::try_from(uint(data, Field { offset: at, size: 4 })?).ok()?;
        let (type_len, delta) = (header & 0x1f, u64::from(header >> 5));
        let word = || uint(data, Field { offset: at + 4, size: 4 });
        match type_len {
            TYPE_PADDING if delta == 0 => Some(0),
            TYPE_PADDING => {
                *ts = ts.wrapping_add(delta);
                usize::try_from(word()?).ok()?.checked_add(4).filter(|n| *n >= 8)
            }
            TYPE_TIME_EXTEND => {
                *ts = ts.wrapping_add((word()? << 27) | delta);
                Some(8)
            }
            TYPE_TIME_STAMP => {
                let abs = (word()? << 27) | delta;
                *ts = abs | (*ts & !((1u64 << 59) - 1));
                Some(8)
            }
            0 => {
                *ts = ts.wrapping_add(delta);
                let len = usize::try_from(word()?).ok()?;
                let record = data.get(at + 8..(at + 4).checked_add(len)?)?;
                self.record(record, *ts, sum, out);
                (len >= 4).then_some(4 + len)
            }
            n => {
                *ts = ts.wrapping_add(delta);
                let len = 4 * n as usize;
                self.record(data.get(at + 4..at + 4 + len)?, *ts, sum, out);
                Some(4 + len)
            }
        }
    }

    /// One record: an event of ours, or another (ignored).
    fn record(&self, r: &[u8], t_ns: u64, sum: &mut PageSummary, out: &mut dyn FnMut(Event)) {
        let Some(id) = uint(r, Field { offset: 0, size: 2 }) else { return };
        let event = if id == u64::from(self.probe.id) {
            self.probe(r, t_ns).map(Event::Probe)
        } else if id == u64::from(self.retransmit.id) {
            self.retransmit(r, t_ns).map(Event::Retransmit)
        } else {
            return;
        };
        match event {
            Some(e) => {
                sum.events += 1;
                out(e);
            }
            None => sum.malformed = true,
        }
    }

    fn probe(&self, r: &[u8], t_ns: u64) -> Option<Probe> {
        let l = &self.probe;
        let u32_at = |f: Field| uint(r, f).and_then(|v| u32::try_from(v).ok());
        Some(Probe {
            t_ns,
            src: sockaddr(r.get(l.saddr.offset..l.saddr.offset + l.saddr.size)?)?,
            dst: sockaddr(r.get(l.daddr.offset..l.daddr.offset + l.daddr.size)?)?,
            data_len: u32_at(l.data_len)?,
            snd_nxt: u32_at(l.snd_nxt)?,
            snd_una: u32_at(l.snd_una)?,
            snd_cwnd: u32_at(l.snd_cwnd)?,
            ssthresh: u32_at(l.ssthresh)?,
            snd_wnd: u32_at(l.snd_wnd)?,
            srtt_us: u32_at(l.srtt)?,
            rcv_wnd: u32_at(l.rcv_wnd)?,
            sock_cookie: uint(r, l.sock_cookie)?,
        })
    }

    fn retransmit(&self, r: &[u8], t_ns: u64) -> Option<Retransmit> {
        let l = &self.retransmit;
        let port = |f: Field| uint(r, f).and_then(|v| u16::try_from(v).ok());
        let bytes = |f: Field| r.get(f.offset..f.offset + f.size);
        let (s, d): (IpAddr, IpAddr) = match uint(r, l.family)? {
            AF_INET6 => (v6(bytes(l.saddr_v6)?)?.into(), v6(bytes(l.daddr_v6)?)?.into()),
            _ => (v4(bytes(l.saddr)?)?.into(), v4(bytes(l.daddr)?)?.into()),
        };
        Some(Retransmit {
            t_ns,
            src: SocketAddr::new(s, port(l.sport)?),
            dst: SocketAddr::new(d, port(l.dport)?),
        })
    }
}

/// An unsigned field of 1, 2, 4 or 8 bytes in host order.
fn uint(b: &[u8], f: Field) -> Option<u64> {
    let s = b.get(f.offset..f.offset.checked_add(f.size)?)?;
    Some(match f.size {
        1 => u64::from(s[0]),
        2 => u64::from(u16::from_ne_bytes(s.try_into().ok()?)),
        4 => u64::from(u32::from_ne_bytes(s.try_into().ok()?)),
        8 => u64::from_ne_bytes(s.try_into().ok()?),
        _ => return None,
    })
}

fn v4(b: &[u8]) -> Option<Ipv4Addr> {
    Some(Ipv4Addr::from(<[u8; 4]>::try_from(b.get(..4)?).ok()?))
}

fn v6(b: &[u8]) -> Option<Ipv6Addr> {
    Some(Ipv6Addr::from(<[u8; 16]>::try_from(b.get(..16)?).ok()?))
}

/// A `struct sockaddr_in` or `sockaddr_in6` (family in host order, port in network order).
fn sockaddr(b: &[u8]) -> Option<SocketAddr> {
    let family = uint(b, Field { offset: 0, size: 2 })?;
    let port = u16::from_be_bytes(b.get(2..4)?.try_into().ok()?);
    match family {
        AF_INET => Some(SocketAddr::new(v4(b.get(4..)?)?.into(), port)),
        AF_INET6 => Some(SocketAddr::new(v6(b.get(8..)?)?.into(), port)),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
