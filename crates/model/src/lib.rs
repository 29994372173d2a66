//! Theoretical limits of links and protocol stacks. Pure: no I/O, no clock.
//!
//! * [`link`]: a [`Link`] (Ethernet, ATM, raw rate model) frames IP packets, each overhead
//!   byte itemised ([`overhead`]); [`spec`] parses links and stacks from CLI strings.
//! * [`stack`]: IP version and transport; how a message becomes packets.
//! * [`goodput`]: maximum goodput and the goodput-versus-message-size curve.
//! * [`window`], [`loss`], [`cubic`]: window/RTT, bandwidth-delay product, Mathis, Padhye,
//!   TFRC and CUBIC bounds.
//!
//! ```
//! use model::{goodput, Link, Stack};
//!
//! let link: Link = "atm:oc3c".parse()?;
//! let stack: Stack = "tcp".parse()?;
//! let max = goodput::max_goodput(&link, &stack)?;
//! assert!((max.goodput_bps / 1e6 - 134.51).abs() < 0.005);
//! # Ok::<(), model::Error>(())
//! ```
#![forbid(unsafe_code)]

pub mod atm;
pub mod cubic;
pub mod error;
pub mod ethernet;
pub mod goodput;
pub mod human;
pub mod link;
pub mod loss;
pub mod overhead;
pub mod raw;
pub mod spec;
pub mod stack;
pub mod units;
pub mod window;

pub use error::{Error, Result, SpecReason};
pub use link::{Frame, Link};
pub use overhead::{Overhead, OverheadItem};
pub use stack::{Ip, Stack, Transport};
pub use units::BitRate;
