//! A link of any kind, and one IP packet framed on it.

use serde::{Deserialize, Serialize};

use crate::atm::{self, Atm};
use crate::error::{Error, Result};
use crate::ethernet::Ethernet;
use crate::overhead::OverheadItem;
use crate::raw::{self, Raw};
use crate::units::{out_of_range, BitRate};

/// Smallest MTU accepted on any link (the IPv4 minimum).
pub const MIN_MTU_BYTES: u64 = 68;
/// Largest MTU accepted on any link (the largest IPv4 packet).
pub const MAX_MTU_BYTES: u64 = 65_535;

/// A link whose framing the model knows. Parse one from a spec string with
/// [`str::parse`] (grammar in [`crate::spec`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Link {
    /// Ethernet at any rate.
    Ethernet(Ethernet),
    /// ATM over SONET or TAXI.
    Atm(Atm),
    /// Rate plus per-packet and per-cell overhead.
    Raw(Raw),
}

/// One IP packet as it occupies the link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Frame {
    /// Length of the IP packet.
    pub ip_len_bytes: u64,
    /// Bytes of link time the packet takes at [`Link::payload_rate`].
    pub wire_bytes: u64,
    /// Cells, on a cell-based link.
    pub cells: Option<u64>,
    /// Link-layer overhead; `ip_len_bytes` + the items = `wire_bytes`.
    pub items: Vec<OverheadItem>,
}

impl Link {
    /// The nominal line rate, physical framing included.
    pub fn line_rate(&self) -> BitRate {
        match self {
            Self::Ethernet(eth) => eth.rate,
            Self::Atm(atm) => atm.phy.line_rate(),
            Self::Raw(raw) => raw.rate,
        }
    }

    /// The rate at which [`Frame::wire_bytes`] are sent (after SONET framing on ATM).
    pub fn payload_rate(&self) -> BitRate {
        match self {
            Self::Ethernet(eth) => eth.rate,
            Self::Atm(atm) => atm.phy.cell_rate(),
            Self::Raw(raw) => raw.rate,
        }
    }

    /// Largest IP packet.
    pub fn mtu_bytes(&self) -> u64 {
        match self {
            Self::Ethernet(eth) => eth.mtu_bytes,
            Self::Atm(atm) => atm.mtu_bytes,
            Self::Raw(raw) => raw.mtu_bytes,
        }
    }

    /// Checks every parameter (links built in code or deserialised may be out of range).
    pub fn validate(&self) -> Result<()> {
        if self.payload_rate().0 == 0 {
            return Err(out_of_range("rate_bps", 0, "a rate > 0 bit/s"));
        }
        let mtu = self.mtu_bytes();
        if !(MIN_MTU_BYTES..=MAX_MTU_BYTES).contains(&mtu) {
            return Err(out_of_range("mtu_bytes", mtu, "68 ..= 65535"));
        }
        match self {
            Self::Ethernet(_) => Ok(()),
            Self::Atm(atm) => validate_atm(atm),
            Self::Raw(raw) => validate_raw(raw),
        }
    }

    /// Frames one IP packet of `ip_len_bytes`.
    pub fn frame(&self, ip_len_bytes: u64) -> Result<Frame> {
        self.validate()?;
        let mtu_bytes = self.mtu_bytes();
        if ip_len_bytes > mtu_bytes {
            return Err(Error::PacketTooLarge { len_bytes: ip_len_bytes, mtu_bytes });
        }
        match self {
            Self::Ethernet(eth) => eth.frame(ip_len_bytes),
            Self::Atm(atm) => atm.frame(ip_len_bytes),
            Self::Raw(raw) => raw.frame(ip_len_bytes),
        }
    }
}

fn validate_atm(atm: &Atm) -> Result<()> {
    let sdu = atm.mtu_bytes + atm.encapsulation.header_bytes();
    if sdu > atm::MAX_SDU_BYTES {
        return Err(out_of_range(
            "mtu_bytes",
            atm.mtu_bytes,
            "MTU + encapsulation <= 65535 (largest AAL SDU)",
        ));
    }
    Ok(())
}

fn validate_raw(link: &Raw) -> Result<()> {
    if link.overhead_bytes.unsigned_abs() > raw::MAX_OVERHEAD_BYTES {
        return Err(out_of_range("overhead_bytes", link.overhead_bytes, "-65535 ..= 65535"));
    }
    let Some(cells) = link.cells else {
        return Ok(());
    };
    if !(1..=raw::MAX_OVERHEAD_BYTES).contains(&cells.size_bytes) {
        return Err(out_of_range("cell_bytes", cells.size_bytes, "1 ..= 65535"));
    }
    if cells.overhead_bytes > raw::MAX_OVERHEAD_BYTES {
        return Err(out_of_range("cell_overhead_bytes", cells.overhead_bytes, "0 ..= 65535"));
    }
    Ok(())
}
