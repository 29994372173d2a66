//! Link and stack spec strings, as given on the command line.
//!
//! # Link specs
//!
//! ```text
//! link   = kind *( sep field )           ; case-insensitive, surrounding blanks ignored
//! sep    = ":" / ","
//! field  = name / name "=" value
//! ```
//!
//! The first field after the kind may be positional (the rate or the physical layer); every
//! other field is a flag or `name=value`. Each setting may be given once.
//!
//! | kind | positional (or key) | options |
//! |---|---|---|
//! | `ethernet`, `eth` | RATE (`rate=`) | `mtu=BYTES` (default 1500), `jumbo` (= `mtu=9000`), `vlan` (802.1Q tag) |
//! | `atm` | `oc3c` (`oc3`, `stm1`), `oc12c` (`oc12`, `stm4`), `taxi100`, `taxi140` (`phy=`) | `aal5` (default) or `aal34`; `llc` (RFC 2684 LLC/SNAP, default), `vcmux` or `lane`; `mtu=BYTES` (default 9180, 1500 with `lane`) |
//! | `taxi` | `100` or `140` | as `atm` |
//! | `raw` | RATE (`rate=`) | `overhead=BYTES` (per packet, may be negative), `cell=BYTES` (cell payload), `cellover=BYTES` (per cell, needs `cell`), `mtu=BYTES` (default 1500) |
//!
//! RATE and BYTES are read as everywhere in tcplab ([`crate::units`]): RATE is bits per second
//! with an optional prefix `k`, `m`, `g`, `t` (powers of 1000) and optional `bit`: `1g`,
//! `100mbit`, `149.76m`; `bps` is refused as ambiguous. BYTES may carry `K`, `M` (powers of
//! 1024): `mtu=9K` is 9216. MTUs are 68 ..= 65535; overheads and cell sizes at most 65535 in
//! magnitude.
//!
//! Examples: `ethernet:1g`, `ethernet:10g:mtu=9000`, `ethernet:100m:vlan`,
//! `atm:oc3c:mtu=9180`, `atm:oc3c:lane`, `atm:oc3c:vcmux`, `taxi:140:aal34`,
//! `raw:rate=100mbit,overhead=20,cell=48,cellover=5,mtu=1500`.
//!
//! # Stack specs
//!
//! Fields separated by `:`, `,`, `+` or `/`, in any order: `ipv4` (`v4`, default) or `ipv6`
//! (`v6`); `tcp` (default) or `udp`; `ts` (`timestamps`, TCP only); `opts=BYTES` (further TCP
//! option bytes). Examples: `tcp`, `tcp+ts`, `ipv4/tcp+ts`, `ipv6:tcp:ts`, `udp`.
//!
//! Every [`Link`] and [`Stack`] displays as a spec that parses back to it. Parsing never
//! panics; every failure is an [`Error::Spec`] naming the field and the reason.

use std::fmt;
use std::str::FromStr;

use crate::atm::{self, Aal, Atm, Encapsulation, Phy};
use crate::error::{Error, Result, SpecReason};
use crate::ethernet::{self, Ethernet};
use crate::link::{Link, MAX_MTU_BYTES, MIN_MTU_BYTES};
use crate::raw::{self, Cells, Raw};
use crate::stack::{Ip, Stack, Transport};
use crate::units::{parse_size, BitRate};

/// One field of a spec: `name` or `name=value`.
#[derive(Debug, Clone, Copy)]
struct Field<'a> {
    text: &'a str,
    name: &'a str,
    value: Option<&'a str>,
}

impl<'a> Field<'a> {
    fn new(text: &'a str) -> Self {
        match text.split_once('=') {
            Some((name, value)) => Self { text, name, value: Some(value) },
            None => Self { text, name: text, value: None },
        }
    }
}

/// Parsing state: the spec for error messages and the settings already given.
struct Parser<'a> {
    spec: &'a str,
    seen: Vec<&'static str>,
}

impl<'a> Parser<'a> {
    fn new(spec: &'a str) -> Self {
        Self { spec, seen: Vec::new() }
    }

    fn error(&self, field: &str, reason: SpecReason) -> Error {
        Error::Spec { spec: self.spec.to_string(), field: field.to_string(), reason }
    }

    /// Records that `field` sets `setting`; a second field setting it is a conflict.
    fn claim(&mut self, field: &Field, setting: &'static str) -> Result<()> {
        if self.seen.contains(&setting) {
            return Err(self.error(field.text, SpecReason::Conflict));
        }
        self.seen.push(setting);
        Ok(())
    }

    fn unknown(&self, field: &Field, flags: &[&str], keys: &[&str]) -> Error {
        let reason = match field.value {
            Some(_) if flags.contains(&field.name) => SpecReason::UnexpectedValue,
            None if keys.contains(&field.name) => SpecReason::MissingValue,
            _ => SpecReason::UnknownOption,
        };
        self.error(field.text, reason)
    }

    fn rate(&mut self, field: &Field, text: &str) -> Result<BitRate> {
        self.claim(field, "rate")?;
        let rate = BitRate::parse(text).map_err(|e| self.bad_quantity(field, e))?;
        if rate.0 == 0 {
            return Err(self.error(field.text, SpecReason::OutOfRange { expected: "a rate > 0 bit/s" }));
        }
        Ok(rate)
    }

    /// An [`Error::Quantity`] from reading `field`, as a spec error about that field.
    fn bad_quantity(&self, field: &Field, error: Error) -> Error {
        match error {
            Error::Quantity { reason, .. } => self.error(field.text, SpecReason::BadQuantity(reason)),
            other => other,
        }
    }

    /// A byte count (`1500`, `9K`) of at most `max`.
    fn count(&self, field: &Field, text: &str, max: u64) -> Result<u64> {
        let value = parse_size(text).map_err(|e| self.bad_quantity(field, e))?;
        if value > max {
            let expected = "at most 65535";
            return Err(self.error(field.text, SpecReason::OutOfRange { expected }));
        }
        Ok(value)
    }

    fn mtu(&mut self, field: &Field, text: &str) -> Result<u64> {
        self.claim(field, "mtu")?;
        let mtu = self.count(field, text, MAX_MTU_BYTES)?;
        if mtu < MIN_MTU_BYTES {
            let expected = "68 ..= 65535";
            return Err(self.error(field.text, SpecReason::OutOfRange { expected }));
        }
        Ok(mtu)
    }

    fn signed(&self, field: &Field, text: &str) -> Result<i64> {
        let (negative, digits) = match text.strip_prefix('-') {
            Some(digits) => (true, digits),
            None => (false, text),
        };
        let magnitude = overhead_i64(self.count(field, digits, raw::MAX_OVERHEAD_BYTES)?);
        Ok(if negative { -magnitude } else { magnitude })
    }
}

/// A bounded byte count as a signed value.
fn overhead_i64(bytes: u64) -> i64 {
    i64::try_from(bytes).unwrap_or(i64::MAX)
}

/// Splits `spec` into its kind and fields; empty fields are refused.
fn split<'a>(parser: &Parser, lower: &'a str, seps: &[char]) -> Result<Vec<Field<'a>>> {
    let fields: Vec<Field<'a>> = lower.split(seps).map(Field::new).collect();
    match fields.iter().find(|f| f.name.is_empty()) {
        Some(empty) => Err(parser.error(empty.text, SpecReason::Empty)),
        None => Ok(fields),
    }
}

impl FromStr for Link {
    type Err = Error;

    /// Parses a link spec (grammar in the [module docs](self)).
    fn from_str(spec: &str) -> Result<Self> {
        let mut parser = Parser::new(spec);
        let lower = spec.trim().to_ascii_lowercase();
        let fields = split(&parser, &lower, &[':', ','])?;
        let Some((kind, fields)) = fields.split_first() else {
            return Err(parser.error(spec, SpecReason::Empty));
        };
        let link = match kind.text {
            "ethernet" | "eth" => parse_ethernet(&mut parser, fields)?,
            "atm" => parse_atm(&mut parser, fields, phy_by_name)?,
            "taxi" => parse_atm(&mut parser, fields, taxi_by_rate)?,
            "raw" => parse_raw(&mut parser, fields)?,
            _ => return Err(parser.error(kind.text, SpecReason::UnknownKind)),
        };
        link.validate().map_err(|err| match err {
            Error::OutOfRange { name, expected, .. } => {
                parser.error(name, SpecReason::OutOfRange { expected })
            }
            other => other,
        })?;
        Ok(link)
    }
}

fn parse_ethernet(p: &mut Parser, fields: &[Field]) -> Result<Link> {
    let mut eth = Ethernet::new(BitRate(0));
    let mut rate = None;
    for (index, f) in fields.iter().enumerate() {
        match (f.name, f.value) {
            ("vlan", None) => {
                p.claim(f, "vlan")?;
                eth.vlan = true;
            }
            ("jumbo", None) => {
                p.claim(f, "mtu")?;
                eth.mtu_bytes = ethernet::JUMBO_MTU_BYTES;
            }
            ("mtu", Some(v)) => eth.mtu_bytes = p.mtu(f, v)?,
            ("rate", Some(v)) => rate = Some(p.rate(f, v)?),
            (word, None) if index == 0 => rate = Some(p.rate(f, word)?),
            _ => return Err(p.unknown(f, &["vlan", "jumbo"], &["mtu", "rate"])),
        }
    }
    eth.rate = rate.ok_or_else(|| p.error(p.spec, SpecReason::MissingRate))?;
    Ok(Link::Ethernet(eth))
}

fn phy_by_name(name: &str) -> Option<Phy> {
    match name {
        "oc3c" | "oc3" | "stm1" => Some(Phy::Oc3c),
        "oc12c" | "oc12" | "stm4" => Some(Phy::Oc12c),
        "taxi100" => Some(Phy::Taxi100),
        "taxi140" => Some(Phy::Taxi140),
        _ => None,
    }
}

fn taxi_by_rate(rate: &str) -> Option<Phy> {
    match rate {
        "100" => Some(Phy::Taxi100),
        "140" => Some(Phy::Taxi140),
        _ => None,
    }
}

fn aal_flag(name: &str) -> Option<Aal> {
    match name {
        "aal5" => Some(Aal::Aal5),
        "aal34" => Some(Aal::Aal34),
        _ => None,
    }
}

fn encapsulation_flag(name: &str) -> Option<Encapsulation> {
    match name {
        "llc" => Some(Encapsulation::LlcSnap),
        "vcmux" => Some(Encapsulation::VcMux),
        "lane" => Some(Encapsulation::Lane),
        _ => None,
    }
}

const ATM_FLAGS: [&str; 5] = ["aal5", "aal34", "llc", "vcmux", "lane"];

fn parse_atm(p: &mut Parser, fields: &[Field], read_phy: fn(&str) -> Option<Phy>) -> Result<Link> {
    let (mut phy, mut mtu) = (None, None);
    let mut link = Atm::clip(Phy::Oc3c);
    for (index, f) in fields.iter().enumerate() {
        let flag = f.value.is_none().then_some(f.name);
        if let Some(aal) = flag.and_then(aal_flag) {
            p.claim(f, "aal")?;
            link.aal = aal;
        } else if let Some(encap) = flag.and_then(encapsulation_flag) {
            p.claim(f, "encapsulation")?;
            link.encapsulation = encap;
        } else {
            match (f.name, f.value, index) {
                ("mtu", Some(v), _) => mtu = Some(p.mtu(f, v)?),
                ("phy", Some(v), _) | (v, None, 0) => {
                    p.claim(f, "phy")?;
                    let unknown = || p.error(f.text, SpecReason::UnknownPhy);
                    phy = Some(read_phy(v).ok_or_else(unknown)?);
                }
                _ => return Err(p.unknown(f, &ATM_FLAGS, &["mtu", "phy"])),
            }
        }
    }
    link.phy = phy.ok_or_else(|| p.error(p.spec, SpecReason::MissingRate))?;
    link.mtu_bytes = mtu.unwrap_or(default_atm_mtu(link.encapsulation));
    Ok(Link::Atm(link))
}

fn default_atm_mtu(encapsulation: Encapsulation) -> u64 {
    match encapsulation {
        Encapsulation::Lane => atm::LANE_MTU_BYTES,
        Encapsulation::LlcSnap | Encapsulation::VcMux => atm::CLIP_MTU_BYTES,
    }
}

fn parse_raw(p: &mut Parser, fields: &[Field]) -> Result<Link> {
    let mut link = Raw::new(BitRate(0));
    let (mut rate, mut cell, mut cell_overhead) = (None, None, None);
    for (index, f) in fields.iter().enumerate() {
        match (f.name, f.value) {
            ("rate", Some(v)) => rate = Some(p.rate(f, v)?),
            ("mtu", Some(v)) => link.mtu_bytes = p.mtu(f, v)?,
            ("overhead", Some(v)) => {
                p.claim(f, "overhead")?;
                link.overhead_bytes = p.signed(f, v)?;
            }
            ("cell", Some(v)) => {
                p.claim(f, "cell")?;
                cell = Some(p.count(f, v, raw::MAX_OVERHEAD_BYTES)?);
            }
            ("cellover", Some(v)) => {
                p.claim(f, "cellover")?;
                cell_overhead = Some((f.text, p.count(f, v, raw::MAX_OVERHEAD_BYTES)?));
            }
            (word, None) if index == 0 => rate = Some(p.rate(f, word)?),
            _ => return Err(p.unknown(f, &[], &["rate", "mtu", "overhead", "cell", "cellover"])),
        }
    }
    link.rate = rate.ok_or_else(|| p.error(p.spec, SpecReason::MissingRate))?;
    link.cells = match (cell, cell_overhead) {
        (Some(size_bytes), over) => {
            Some(Cells { size_bytes, overhead_bytes: over.map_or(0, |(_, bytes)| bytes) })
        }
        (None, Some((text, _))) => {
            return Err(p.error(text, SpecReason::Needs { needs: "cell" }));
        }
        (None, None) => None,
    };
    Ok(Link::Raw(link))
}

impl fmt::Display for Link {
    /// The canonical spec of the link; defaults are left out.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Ethernet(eth) => {
                write!(f, "ethernet:{}", eth.rate)?;
                if eth.mtu_bytes != ethernet::DEFAULT_MTU_BYTES {
                    write!(f, ":mtu={}", eth.mtu_bytes)?;
                }
                if eth.vlan {
                    write!(f, ":vlan")?;
                }
                Ok(())
            }
            Self::Atm(link) => fmt_atm(link, f),
            Self::Raw(link) => fmt_raw(link, f),
        }
    }
}

fn fmt_atm(link: &Atm, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match link.phy {
        Phy::Taxi100 => write!(f, "taxi:100")?,
        Phy::Taxi140 => write!(f, "taxi:140")?,
        Phy::Oc3c | Phy::Oc12c => write!(f, "atm:{}", link.phy.name())?,
    }
    if link.aal == Aal::Aal34 {
        write!(f, ":aal34")?;
    }
    match link.encapsulation {
        Encapsulation::LlcSnap => {}
        Encapsulation::VcMux => write!(f, ":vcmux")?,
        Encapsulation::Lane => write!(f, ":lane")?,
    }
    if link.mtu_bytes != default_atm_mtu(link.encapsulation) {
        write!(f, ":mtu={}", link.mtu_bytes)?;
    }
    Ok(())
}

fn fmt_raw(link: &Raw, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    write!(f, "raw:{}", link.rate)?;
    if link.overhead_bytes != 0 {
        write!(f, ":overhead={}", link.overhead_bytes)?;
    }
    if let Some(cells) = link.cells {
        write!(f, ":cell={}", cells.size_bytes)?;
        if cells.overhead_bytes != 0 {
            write!(f, ":cellover={}", cells.overhead_bytes)?;
        }
    }
    if link.mtu_bytes != raw::DEFAULT_MTU_BYTES {
        write!(f, ":mtu={}", link.mtu_bytes)?;
    }
    Ok(())
}

impl FromStr for Stack {
    type Err = Error;

    /// Parses a stack spec (grammar in the [module docs](self)).
    fn from_str(spec: &str) -> Result<Self> {
        let mut p = Parser::new(spec);
        let lower = spec.trim().to_ascii_lowercase();
        let (mut ip, mut udp, mut timestamps, mut extra) = (Ip::V4, None, false, 0);
        for f in split(&p, &lower, &[':', ',', '+', '/'])? {
            match (f.name, f.value) {
                ("ipv4" | "v4", None) | ("ipv6" | "v6", None) => {
                    p.claim(&f, "ip")?;
                    ip = if f.name.ends_with('6') { Ip::V6 } else { Ip::V4 };
                }
                ("tcp" | "udp", None) => {
                    p.claim(&f, "transport")?;
                    udp = Some((f.text, f.name == "udp"));
                }
                ("ts" | "timestamps", None) => {
                    p.claim(&f, "timestamps")?;
                    timestamps = true;
                }
                ("opts", Some(v)) => {
                    p.claim(&f, "opts")?;
                    extra = p.count(&f, v, crate::stack::TCP_MAX_OPTION_BYTES)?;
                }
                _ => return Err(p.unknown(&f, &["ipv4", "ipv6", "tcp", "udp", "ts"], &["opts"])),
            }
        }
        stack_from_parts(&p, ip, udp, timestamps, extra)
    }
}

fn stack_from_parts(
    p: &Parser,
    ip: Ip,
    udp: Option<(&str, bool)>,
    timestamps: bool,
    extra_option_bytes: u64,
) -> Result<Stack> {
    let Some((text, true)) = udp else {
        let stack = Stack { ip, transport: Transport::Tcp { timestamps, extra_option_bytes } };
        let expected = "at most 40 option bytes, timestamps included";
        stack.tcp_option_bytes().map_err(|_| p.error("opts", SpecReason::OutOfRange { expected }))?;
        return Ok(stack);
    };
    if timestamps || extra_option_bytes > 0 {
        return Err(p.error(text, SpecReason::Conflict));
    }
    Ok(Stack::udp(ip))
}

impl fmt::Display for Stack {
    /// The canonical spec of the stack, e.g. `ipv4:tcp:ts`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ip = match self.ip {
            Ip::V4 => "ipv4",
            Ip::V6 => "ipv6",
        };
        match self.transport {
            Transport::Udp => write!(f, "{ip}:udp"),
            Transport::Tcp { timestamps, extra_option_bytes } => {
                write!(f, "{ip}:tcp")?;
                if timestamps {
                    write!(f, ":ts")?;
                }
                if extra_option_bytes > 0 {
                    write!(f, ":opts={extra_option_bytes}")?;
                }
                Ok(())
            }
        }
    }
}
