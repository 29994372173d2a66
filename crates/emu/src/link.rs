//! One direction of an emulated link: loss model → bounded queue → serializer → delay line
//! (+ jitter) → duplication, driven by time passed in.
//!
//! The schedule of a packet (transmission slot and release time) is computed when it is
//! admitted: the queue is FIFO and the serializer work-conserving, so nothing that happens
//! later can change it. A pump therefore only has to call [`Link::enqueue`] for each packet
//! it reads, sleep until [`Link::next_event_time`], and drain [`Link::poll_departure`].
//!
//! Time must not go backwards: an earlier `now` than one already seen is treated as the
//! latest one seen.

use crate::cell_loss::{CellFate, CellLoss, CellLosses};
use crate::counters::Counters;
use crate::delay::DelayLine;
use crate::framing::Framing;
use crate::loss::{Loss, LossModel};
use crate::queue::{Backlog, QueueLimit};
use crate::rng::{derive_seed, Rng};
use crate::serializer::{Serializer, Slot};
use crate::time::Time;
use crate::units::{BitRate, Probability};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Configuration of one link direction.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct LinkConfig {
    /// Link rate; `None` serializes in zero time (no queueing).
    pub rate: Option<BitRate>,
    /// Per-packet overhead and optional cell layer charged by the serializer.
    pub framing: Framing,
    /// Random cell loss; has no effect unless `framing` has a cell layer.
    pub cell_loss: Option<CellLoss>,
    /// Drop-tail queue limits.
    pub queue: QueueLimit,
    /// One-way propagation delay.
    pub delay: Duration,
    /// Jitter: each packet's delay is drawn uniformly from `delay ± jitter`.
    pub jitter: Duration,
    /// Allow jitter to reorder packets (otherwise order is always kept).
    pub reorder: bool,
    /// Random loss at the link's entry.
    pub loss: LossModel,
    /// Probability that a delivered packet is delivered twice.
    pub duplicate: Probability,
}

impl LinkConfig {
    /// True if an element draws per packet (random loss, cell loss, duplication), so
    /// super-packets must be split first: [`Link::enqueue_segments`] does not apply them.
    pub fn needs_single_packets(&self) -> bool {
        !matches!(self.loss, LossModel::None) || self.cell_loss.is_some() || !self.duplicate.is_zero()
    }
}

/// Why a packet was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DropCause {
    /// The random loss model.
    LossModel,
    /// The queue was full.
    QueueOverflow,
    /// At least one of the packet's cells was lost.
    CellLoss,
}

/// The answer to [`Link::enqueue`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict<P> {
    /// Admitted; it will come out of [`Link::poll_departure`].
    Queued,
    /// Dropped at the entry; the payload is handed back (e.g. to recycle its buffer).
    Dropped {
        /// Why.
        cause: DropCause,
        /// The packet's payload.
        payload: P,
    },
}

/// What happens to a packet at the far end of the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fate {
    /// Write it `copies` times (2 when the duplication stage fired).
    Delivered {
        /// Number of copies to write, 1 or 2.
        copies: u32,
    },
    /// It lost cells on the way: the receiver discards it (do not write it).
    CellLoss {
        /// Cells lost.
        lost_cells: u64,
    },
}

/// A packet leaving the link, with its timeline (the emulator is the segment-flow probe).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Departure<P> {
    /// The packet's payload as passed to [`Link::enqueue`].
    pub payload: P,
    /// Its length as passed to [`Link::enqueue`] (all segments' for a super-packet).
    pub len_bytes: u32,
    /// Packets it stands for: 1, or the segments a super-packet carries.
    pub packets: u32,
    /// When it was offered.
    pub arrival: Time,
    /// When its first bit went on the wire (`tx_start − arrival` is its queueing delay).
    pub tx_start: Time,
    /// When its last bit went on the wire.
    pub tx_end: Time,
    /// When it is due at the far end (compare with the actual write time for lateness).
    pub release: Time,
    /// Deliver or discard.
    pub fate: Fate,
}

/// A packet between admission and departure.
#[derive(Debug)]
struct InFlight<P> {
    payload: P,
    len_bytes: u32,
    packets: u32,
    arrival: Time,
    slot: Slot,
    fate: Fate,
}

/// Random sub-streams of a link's seed, one per element.
#[derive(Debug, Clone, Copy)]
enum Stream {
    Loss = 1,
    Cells = 2,
    Jitter = 3,
    Duplicate = 4,
}

/// One direction of an emulated link carrying payloads of type `P`.
#[derive(Debug)]
pub struct Link<P> {
    config: LinkConfig,
    loss: Loss,
    cell_loss: Option<CellLosses>,
    backlog: Backlog,
    serializer: Serializer,
    line: DelayLine<InFlight<P>>,
    duplicate_rng: Rng,
    counters: Counters,
    now: Time,
}

impl<P> Link<P> {
    /// A link in its initial state; the same `config`, `seed` and inputs always give the
    /// same outputs.
    pub fn new(config: LinkConfig, seed: u64) -> Self {
        let stream = |s: Stream| derive_seed(seed, s as u64);
        Link {
            loss: Loss::new(config.loss, stream(Stream::Loss)),
            cell_loss: config.cell_loss.map(|c| CellLosses::new(c, stream(Stream::Cells))),
            backlog: Backlog::new(config.queue),
            serializer: Serializer::new(config.rate),
            line: DelayLine::new(config.delay, config.jitter, config.reorder, stream(Stream::Jitter)),
            duplicate_rng: Rng::new(stream(Stream::Duplicate)),
            counters: Counters::default(),
            now: Time::ZERO,
            config,
        }
    }

    /// The configuration this link was built with.
    pub fn config(&self) -> &LinkConfig {
        &self.config
    }

    /// Counters so far.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Packets waiting in the queue (not yet on the wire) as of the latest `now` seen.
    pub fn queued_packets(&self) -> u64 {
        self.backlog.packets()
    }

    /// Bytes waiting in the queue as of the latest `now` seen.
    pub fn queued_bytes(&self) -> u64 {
        self.backlog.bytes()
    }

    /// Packets admitted and not yet returned by [`Link::poll_departure`].
    pub fn in_flight(&self) -> usize {
        self.line.len()
    }

    /// When the next packet is due out, so a pump can sleep until then.
    pub fn next_event_time(&self) -> Option<Time> {
        self.line.next_release()
    }

    fn observe(&mut self, now: Time) -> Time {
        self.now = self.now.max(now);
        self.backlog.drain(self.now);
        self.now
    }

    /// Offers a packet of `len_bytes` at `now`.
    pub fn enqueue(&mut self, now: Time, payload: P, len_bytes: u32) -> Verdict<P> {
        let now = self.observe(now);
        let len = u64::from(len_bytes);
        self.counters.offered.add(len);
        if self.loss.next_is_lost() {
            self.counters.drops.loss_model.add(len);
            return Verdict::Dropped { cause: DropCause::LossModel, payload };
        }
        if self.serializer.next_start(now) > now && !self.backlog.admits(len) {
            self.counters.drops.queue_overflow.add(len);
            return Verdict::Dropped { cause: DropCause::QueueOverflow, payload };
        }
        let (wire_bytes, fate) = self.wire_and_fate(len);
        let slot = self.serializer.transmit(now, wire_bytes);
        if slot.start > now {
            self.backlog.push(slot.start, len);
        }
        self.counters.wire_bytes += wire_bytes;
        let packet = InFlight { payload, len_bytes, packets: 1, arrival: now, slot, fate };
        self.line.push(slot.end, packet);
        Verdict::Queued
    }

    /// Offers a GSO super-packet standing for segments of `lens` bytes at `now`. Queue
    /// limits, framing, cell tax and serialization apply per segment; the longest prefix of
    /// segments the queue admits is kept (`trim(&mut payload, k)` must cut the payload to
    /// its first `k` segments) and the rest count as queue overflow. The kept segments
    /// leave together when the last of them is due. Random loss, cell loss and duplication
    /// are not applied: use this only when [`LinkConfig::needs_single_packets`] is false.
    /// Returns how many segments were admitted.
    pub fn enqueue_segments(
        &mut self,
        now: Time,
        mut payload: P,
        lens: &[u32],
        trim: impl FnOnce(&mut P, usize),
    ) -> usize {
        let now = self.observe(now);
        let mut first_start = None;
        let mut last: Option<Slot> = None;
        let mut admitted = 0;
        let mut refused = false;
        for &len in lens {
            let len = u64::from(len);
            self.counters.offered.add(len);
            refused = refused || (self.serializer.next_start(now) > now && !self.backlog.admits(len));
            if refused {
                self.counters.drops.queue_overflow.add(len);
                continue;
            }
            let wire_bytes = self.config.framing.wire_size(len).wire_bytes;
            let slot = self.serializer.transmit(now, wire_bytes);
            if slot.start > now {
                self.backlog.push(slot.start, len);
            }
            self.counters.wire_bytes += wire_bytes;
            first_start.get_or_insert(slot.start);
            last = Some(slot);
            admitted += 1;
        }
        let Some(last) = last else { return 0 };
        if admitted < lens.len() {
            trim(&mut payload, admitted);
        }
        let len_bytes = lens.iter().take(admitted).sum();
        let slot = Slot { start: first_start.unwrap_or(last.start), end: last.end };
        let packets = u32::try_from(admitted).unwrap_or(u32::MAX);
        let packet =
            InFlight { payload, len_bytes, packets, arrival: now, slot, fate: Fate::Delivered { copies: 1 } };
        self.line.push(slot.end, packet);
        admitted
    }

    /// Wire bytes charged for an admitted packet and its fate at the far end.
    fn wire_and_fate(&mut self, len: u64) -> (u64, Fate) {
        let size = self.config.framing.wire_size(len);
        let cells = match self.cell_loss.as_mut() {
            Some(losses) if size.cells > 0 => losses.draw(size.cells),
            _ => CellFate::Intact,
        };
        match cells {
            CellFate::Intact => {
                let dup = self.duplicate_rng.chance(self.config.duplicate.get());
                (size.wire_bytes, Fate::Delivered { copies: 1 + u32::from(dup) })
            }
            CellFate::Corrupt { lost_cells, charged_cells } => {
                self.counters.lost_cells += lost_cells;
                let wire = charged_cells.saturating_mul(size.cell_wire_bytes);
                (wire, Fate::CellLoss { lost_cells })
            }
        }
    }

    /// The next packet due by `now`, if any; call until `None` after each wake-up.
    pub fn poll_departure(&mut self, now: Time) -> Option<Departure<P>> {
        let now = self.observe(now);
        let (release, packet) = self.line.pop_due(now)?;
        let len = u64::from(packet.len_bytes);
        match packet.fate {
            Fate::Delivered { copies } => {
                self.counters.delivered.add_many(u64::from(packet.packets), len);
                for _ in 1..copies {
                    self.counters.duplicates.add(len);
                }
            }
            Fate::CellLoss { .. } => self.counters.drops.cell_loss.add(len),
        }
        Some(Departure {
            payload: packet.payload,
            len_bytes: packet.len_bytes,
            packets: packet.packets,
            arrival: packet.arrival,
            tx_start: packet.slot.start,
            tx_end: packet.slot.end,
            release,
            fate: packet.fate,
        })
    }
}
