//! Path specs: the text form of an emulated path, parsed into a [`PathConfig`].
//!
//! ```text
//! spec   := item ("," item)*
//! item   := PRESET                       (first item only)
//!         | [dir ":"] key "=" value
//!         | [dir ":"] "reorder"
//! dir    := "up" | "down"                 (no prefix: both directions)
//! ```
//!
//! Later items override earlier ones, so a preset can be followed by changes:
//! `transatlantic,loss=0.01%,down:loss=0`. Keys and units are case-insensitive. Sizes and rates
//! follow the tool's one convention (`model::units`): sizes in powers of 1024 (`64K` = `64KB` =
//! 65,536 bytes), rates in powers of 1000 (`1M` = `1mbit` = 1,000,000 bit/s).
//!
//! | key | value | meaning |
//! |---|---|---|
//! | `rate` | `100mbit`, `100M`, `149.76mbit`, `unlimited` (bit; k, M, G: powers of 1000) | serializer rate |
//! | `delay` | `20ms` (ns, us, ms, s, m, h, d) | one-way delay |
//! | `jitter` | `1ms` | delay drawn uniformly from delay ± jitter |
//! | `reorder` | flag, or `=on`/`off` | let jitter reorder packets |
//! | `loss` | `0.1%` or `0.001` | Bernoulli loss |
//! | `ge` | `P[/R[/1-H[/1-K]]]`, e.g. `0.1%/20%` | Gilbert-Elliott loss (netem `gemodel`) |
//! | `queue` | `100pkt`, `64K`, `21.25MB`, `unlimited` (pkt; B, K, M, G: powers of 1024) | drop-tail limit |
//! | `mtu` | `1500` | path MTU (whole path only) |
//! | `overhead` | `38` | bytes added to each packet on the wire |
//! | `atm` | `llc`, `vcmux`, `lane`, `none` | AAL5 cells with that encapsulation |
//! | `cell` | `48` | generic cell payload size (netem `CELLSIZE`) |
//! | `celloverhead` | `5` | bytes added to each generic cell |
//! | `cellloss` | `0.01%` | per-cell loss (needs `atm` or `cell`) |
//! | `discard` | `none`, `ppd` | partial packet discard after a lost cell |
//! | `dup` | `0.1%` | duplication probability |
//!
//! Without `queue`, a direction with a rate gets 1 BDP (rate × (up delay + down delay)),
//! but at least 64 MTU-sized packets' worth of bytes.

use crate::cell_loss::{CellLoss, Discard};
use crate::error::Error;
use crate::framing::{CellFormat, Encap, Framing};
use crate::link::{Link, LinkConfig};
use crate::loss::{GilbertElliott, LossModel};
use crate::presets;
use crate::queue::QueueLimit;
use crate::rng::derive_seed;
use crate::units::{self, Amount, BitRate, Probability};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::num::NonZeroU32;
use std::str::FromStr;
use std::time::Duration;

/// MTU when the spec names none.
pub const DEFAULT_MTU_BYTES: u32 = 1500;
/// Smallest default queue, in MTU-sized packets.
const MIN_DEFAULT_QUEUE_PACKETS: u64 = 64;

/// A direction of the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// From the client side to the server side.
    Up,
    /// From the server side to the client side.
    Down,
}

impl Direction {
    /// Both directions.
    pub const BOTH: [Direction; 2] = [Direction::Up, Direction::Down];

    /// The seed of this direction's link, derived from the path's seed.
    pub fn seed(self, path_seed: u64) -> u64 {
        derive_seed(path_seed, 0x100 + self as u64)
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::Up => "up",
            Direction::Down => "down",
        })
    }
}

/// A whole emulated path: one link configuration per direction.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PathConfig {
    /// MTU of the path (the pump sets it on both TUN devices; the links do not enforce it).
    pub mtu_bytes: u32,
    /// Client → server.
    pub up: LinkConfig,
    /// Server → client.
    pub down: LinkConfig,
}

impl PathConfig {
    /// Parses a path spec (see the module documentation).
    pub fn parse(spec: &str) -> Result<Self, Error> {
        parse(spec)
    }

    /// The configuration of one direction.
    pub fn link(&self, direction: Direction) -> &LinkConfig {
        match direction {
            Direction::Up => &self.up,
            Direction::Down => &self.down,
        }
    }

    /// A fresh link for `direction`, seeded from the path's `seed`.
    pub fn build_link<P>(&self, direction: Direction, seed: u64) -> Link<P> {
        Link::new(*self.link(direction), direction.seed(seed))
    }
}

impl FromStr for PathConfig {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        parse(s)
    }
}

/// One direction's settings as written, before defaults and consistency checks.
#[derive(Debug, Clone, Default)]
struct Draft {
    rate: Option<BitRate>,
    delay: Duration,
    jitter: Duration,
    reorder: bool,
    loss: LossModel,
    queue: Option<QueueLimit>,
    overhead: u32,
    atm: Option<Encap>,
    cell: Option<NonZeroU32>,
    cell_overhead: Option<u32>,
    cell_loss: Option<Probability>,
    discard: Discard,
    duplicate: Probability,
}

/// Everything parsed so far.
#[derive(Debug, Default)]
struct Parsed {
    mtu: Option<u32>,
    up: Draft,
    down: Draft,
}

/// Parses a path spec (see the module documentation).
pub fn parse(spec: &str) -> Result<PathConfig, Error> {
    if spec.trim().is_empty() {
        return Err(Error::Empty);
    }
    let mut parsed = Parsed::default();
    for (index, item) in spec.split(',').map(str::trim).enumerate() {
        if item.is_empty() {
            return Err(Error::EmptyItem { position: index + 1 });
        }
        if let Some(preset) = preset_item(item, index)? {
            for preset_item in preset.spec.split(',') {
                apply_item(&mut parsed, preset_item)?;
            }
        } else {
            apply_item(&mut parsed, item).map_err(|e| unknown_first_word(e, item, index))?;
        }
    }
    build(parsed)
}

/// The preset named by `item`, if it is a bare word naming one (only allowed first).
fn preset_item(item: &str, index: usize) -> Result<Option<&'static presets::Preset>, Error> {
    if item.contains(['=', ':']) || item.eq_ignore_ascii_case("reorder") {
        return Ok(None);
    }
    match (presets::find(item), index) {
        (Some(preset), 0) => Ok(Some(preset)),
        (Some(preset), _) => Err(Error::PresetNotFirst { name: preset.name.to_string() }),
        (None, _) => Ok(None),
    }
}

/// A first item that is neither a preset nor a key was most likely meant as a preset.
fn unknown_first_word(error: Error, item: &str, index: usize) -> Error {
    match error {
        Error::UnknownKey { .. } if index == 0 && !item.contains(['=', ':']) => {
            Error::UnknownPreset { name: item.to_string() }
        }
        other => other,
    }
}

/// Applies one `[dir:]key[=value]` item.
fn apply_item(parsed: &mut Parsed, item: &str) -> Result<(), Error> {
    let (direction, rest) = match item.split_once(':') {
        Some((prefix, rest)) if !prefix.contains('=') => (Some(direction(prefix)?), rest),
        _ => (None, item),
    };
    let (key, value) = match rest.split_once('=') {
        Some((k, v)) => (k.trim().to_ascii_lowercase(), Some(v.trim())),
        None => (rest.trim().to_ascii_lowercase(), None),
    };
    if key == "mtu" {
        if direction.is_some() {
            return Err(Error::NotPerDirection { key });
        }
        parsed.mtu = Some(parse_mtu(&key, required(&key, value)?)?);
        return Ok(());
    }
    match direction {
        Some(Direction::Up) => set_key(&mut parsed.up, &key, value),
        Some(Direction::Down) => set_key(&mut parsed.down, &key, value),
        None => {
            set_key(&mut parsed.up, &key, value)?;
            set_key(&mut parsed.down, &key, value)
        }
    }
}

fn direction(prefix: &str) -> Result<Direction, Error> {
    match prefix.trim().to_ascii_lowercase().as_str() {
        "up" => Ok(Direction::Up),
        "down" => Ok(Direction::Down),
        _ => Err(Error::UnknownDirection { prefix: prefix.to_string() }),
    }
}

fn required<'a>(key: &str, value: Option<&'a str>) -> Result<&'a str, Error> {
    value.ok_or_else(|| Error::MissingValue { key: key.to_string() })
}

/// Runs `parse` on the value of `key`, turning its complaint into [`Error::BadValue`].
fn value_of<T>(
    key: &str,
    value: Option<&str>,
    parse: impl FnOnce(&str) -> Result<T, String>,
) -> Result<T, Error> {
    let text = required(key, value)?;
    parse(text).map_err(|reason| Error::BadValue { key: key.to_string(), value: text.to_string(), reason })
}

/// Sets one key of one direction.
fn set_key(d: &mut Draft, key: &str, value: Option<&str>) -> Result<(), Error> {
    match key {
        "rate" => d.rate = value_of(key, value, parse_optional_rate)?,
        "delay" => d.delay = value_of(key, value, units::parse_duration)?,
        "jitter" => d.jitter = value_of(key, value, units::parse_duration)?,
        "reorder" => d.reorder = value.map_or(Ok(true), |_| value_of(key, value, parse_switch))?,
        "loss" => d.loss = value_of(key, value, parse_bernoulli)?,
        "ge" | "gemodel" => d.loss = value_of(key, value, parse_gilbert_elliott)?,
        "queue" | "limit" => d.queue = Some(value_of(key, value, parse_queue)?),
        "overhead" => d.overhead = value_of(key, value, parse_u32_bytes)?,
        "atm" => d.atm = value_of(key, value, parse_encap)?,
        "cell" | "cellsize" => d.cell = Some(value_of(key, value, parse_cell_size)?),
        "celloverhead" => d.cell_overhead = Some(value_of(key, value, parse_u32_bytes)?),
        "cellloss" => d.cell_loss = Some(value_of(key, value, units::parse_probability)?),
        "discard" => d.discard = value_of(key, value, parse_discard)?,
        "dup" | "duplicate" => d.duplicate = value_of(key, value, units::parse_probability)?,
        _ => return Err(Error::UnknownKey { key: key.to_string() }),
    }
    Ok(())
}

fn parse_optional_rate(text: &str) -> Result<Option<BitRate>, String> {
    match text.to_ascii_lowercase().as_str() {
        "unlimited" | "none" => Ok(None),
        _ => units::parse_rate(text).map(Some),
    }
}

fn parse_switch(text: &str) -> Result<bool, String> {
    match text.to_ascii_lowercase().as_str() {
        "on" | "yes" | "true" | "1" => Ok(true),
        "off" | "no" | "false" | "0" => Ok(false),
        _ => Err("expected on or off".into()),
    }
}

fn parse_bernoulli(text: &str) -> Result<LossModel, String> {
    let p = units::parse_probability(text)?;
    Ok(if p.is_zero() { LossModel::None } else { LossModel::Bernoulli { p } })
}

fn parse_gilbert_elliott(text: &str) -> Result<LossModel, String> {
    let parts: Vec<&str> = text.split('/').collect();
    if parts.len() > 4 {
        return Err("at most four parameters: p/r/1-h/1-k".into());
    }
    let mut probs = parts.iter().map(|s| units::parse_probability(s.trim()));
    let p = probs.next().ok_or("expected p/r/1-h/1-k")??;
    let rest: Vec<Probability> = probs.collect::<Result<_, _>>()?;
    let ge =
        GilbertElliott::with_defaults(p, rest.first().copied(), rest.get(1).copied(), rest.get(2).copied());
    Ok(LossModel::GilbertElliott(ge))
}

fn parse_queue(text: &str) -> Result<QueueLimit, String> {
    if text.eq_ignore_ascii_case("unlimited") || text.eq_ignore_ascii_case("none") {
        return Ok(QueueLimit::UNLIMITED);
    }
    Ok(match units::parse_amount(text)? {
        Amount::Packets(n) => QueueLimit::packets(n),
        Amount::Bytes(n) => QueueLimit::bytes(n),
    })
}

fn parse_u32_bytes(text: &str) -> Result<u32, String> {
    let n = units::parse_size(text)?;
    u32::try_from(n).map_err(|_| String::from("too large"))
}

fn parse_mtu(key: &str, text: &str) -> Result<u32, Error> {
    let check = |t: &str| match parse_u32_bytes(t)? {
        n @ 68..=65_535 => Ok(n),
        _ => Err(String::from("an MTU must be between 68 and 65535 bytes")),
    };
    value_of(key, Some(text), check)
}

fn parse_cell_size(text: &str) -> Result<NonZeroU32, String> {
    NonZeroU32::new(parse_u32_bytes(text)?).ok_or_else(|| "a cell must hold at least 1 byte".into())
}

fn parse_encap(text: &str) -> Result<Option<Encap>, String> {
    match text.to_ascii_lowercase().as_str() {
        "llc" | "llc-snap" | "clip" => Ok(Some(Encap::Llc)),
        "vcmux" | "vc-mux" | "null" => Ok(Some(Encap::VcMux)),
        "lane" => Ok(Some(Encap::Lane)),
        "none" | "off" => Ok(None),
        _ => Err("expected llc, vcmux, lane or none".into()),
    }
}

fn parse_discard(text: &str) -> Result<Discard, String> {
    match text.to_ascii_lowercase().as_str() {
        "none" | "off" => Ok(Discard::None),
        "ppd" | "partial" => Ok(Discard::Partial),
        _ => Err("expected none or ppd".into()),
    }
}

/// Applies defaults and checks each direction.
fn build(parsed: Parsed) -> Result<PathConfig, Error> {
    let mtu = parsed.mtu.unwrap_or(DEFAULT_MTU_BYTES);
    let rtt = parsed.up.delay.saturating_add(parsed.down.delay);
    Ok(PathConfig {
        mtu_bytes: mtu,
        up: finish(parsed.up, Direction::Up, rtt, mtu)?,
        down: finish(parsed.down, Direction::Down, rtt, mtu)?,
    })
}

/// Turns one direction's draft into a checked [`LinkConfig`].
fn finish(d: Draft, direction: Direction, rtt: Duration, mtu: u32) -> Result<LinkConfig, Error> {
    let conflict = |reason: &str| Error::Conflict { direction, reason: reason.to_string() };
    let cells = match (d.atm, d.cell) {
        (Some(_), Some(_)) => {
            return Err(conflict("`atm=` already implies 48-byte AAL5 cells; drop `cell=` or set `atm=none`"))
        }
        (Some(encap), None) if d.cell_overhead.is_none() => Some(CellFormat::Aal5 { encap }),
        (Some(_), None) => {
            return Err(conflict("`celloverhead=` does not apply to `atm=` (AAL5 cells are 53 bytes)"))
        }
        (None, Some(payload_bytes)) => {
            Some(CellFormat::Generic { payload_bytes, overhead_bytes: d.cell_overhead.unwrap_or(0) })
        }
        (None, None) if d.cell_overhead.is_some() => return Err(conflict("`celloverhead=` needs `cell=`")),
        (None, None) => None,
    };
    if d.cell_loss.is_some() && cells.is_none() {
        return Err(conflict("`cellloss=` needs cells: set `atm=` or `cell=`"));
    }
    Ok(LinkConfig {
        rate: d.rate,
        framing: Framing { overhead_bytes: d.overhead, cells },
        cell_loss: d.cell_loss.map(|probability| CellLoss { probability, discard: d.discard }),
        queue: d.queue.unwrap_or_else(|| default_queue(d.rate, rtt, mtu)),
        delay: d.delay,
        jitter: d.jitter,
        reorder: d.reorder,
        loss: d.loss,
        duplicate: d.duplicate,
    })
}

/// One bandwidth-delay product in bytes, at least 64 MTU-sized packets; unlimited without a rate.
fn default_queue(rate: Option<BitRate>, rtt: Duration, mtu: u32) -> QueueLimit {
    let Some(rate) = rate else {
        return QueueLimit::UNLIMITED;
    };
    let bdp = u128::from(rate.bits_per_sec()) * rtt.as_nanos() / 8 / 1_000_000_000;
    let floor = MIN_DEFAULT_QUEUE_PACKETS * u64::from(mtu);
    QueueLimit::bytes(u64::try_from(bdp).unwrap_or(u64::MAX).max(floor))
}
