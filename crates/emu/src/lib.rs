//! Link emulator: a sans-I/O link model per direction (time passed in, seeded RNG).
//!
//! Each direction of an emulated path is a [`Link`]: loss model → bounded drop-tail queue
//! → serializer (rate, per-packet overhead, optional ATM cell tax) → delay line (+ jitter)
//! → duplication (DESIGN.md §7). The model reads no clock, performs no I/O and spawns no
//! thread; the TUN pump ([`pump`], the crate's one I/O module, built on `netio`) feeds
//! packets and [`Time`] in and writes out what [`Link::poll_departure`] returns.
//!
//! Paths are described by specs such as `transatlantic,loss=0.01%` or
//! `rate=100mbit,delay=20ms,up:loss=1%` ([`spec`]) built on named [`presets`].
//!
//! A pump drives one [`Link`] per direction like this (here in virtual time):
//!
//! ```
//! use emu::{Direction, Fate, PathConfig, Time, Verdict};
//!
//! let path: PathConfig = "transatlantic,loss=0.01%".parse()?;
//! let mut up = path.build_link::<Vec<u8>>(Direction::Up, 42);
//! let packet = vec![0u8; 1500];
//! let len = packet.len() as u32;
//! if let Verdict::Dropped { cause, payload } = up.enqueue(Time::ZERO, packet, len) {
//!     // recycle `payload`, log `cause`
//! #   let _ = (cause, payload);
//! }
//! // Sleep until the next release, then write out everything that is due.
//! while let Some(wake) = up.next_event_time() {
//!     while let Some(departure) = up.poll_departure(wake) {
//!         if let Fate::Delivered { copies } = departure.fate {
//!             assert_eq!(copies, 1);
//!             // 85 ms of delay plus 12.304 µs on the wire at 1 Gbit/s.
//!             assert_eq!(departure.release.as_nanos(), 85_012_304);
//!         }
//!     }
//! }
//! # Ok::<(), emu::Error>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod cell_loss;
pub mod counters;
pub mod delay;
pub mod error;
pub mod framing;
pub mod gso;
pub mod link;
pub mod loss;
pub mod model_link;
pub mod presets;
pub mod pump;
pub mod queue;
pub mod rng;
pub mod serializer;
pub mod spec;
pub mod time;
pub mod units;

pub use cell_loss::{CellLoss, Discard};
pub use counters::{Counters, Drops, Tally};
pub use error::Error;
pub use framing::{CellFormat, Encap, Framing};
pub use link::{Departure, DropCause, Fate, Link, LinkConfig, Verdict};
pub use loss::{GilbertElliott, LossModel};
pub use presets::Preset;
pub use queue::QueueLimit;
pub use spec::{Direction, PathConfig};
pub use time::Time;
pub use units::{BitRate, Probability};
