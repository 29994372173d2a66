//! One direction of the pump: read packets from one TUN device, run them through the
//! [`Link`] model, write them to the other device when they are due.
//!
//! Each direction runs on its own thread: it sleeps in `ppoll` on its input device with a
//! timeout that ends at the link's next release time, so one wake-up handles both new
//! packets and due departures. Packets are stamped with their computed release time; the
//! difference to the actual write time (lateness) is measured, not hidden.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use netio::Tun;

use super::buffers::Buffers;
use super::capture::Captures;
use super::early_wake::EarlyWake;
use super::shared::{Shared, Stats};
use super::Role;
use crate::link::{Fate, Link};
use crate::spec::Direction;
use crate::time::Time;

/// Largest packet read from a TUN device (a 64 KB GSO super-packet plus its header).
const READ_BUFFER_BYTES: usize = 65_536 + netio::tun::VNET_HDR_BYTES;
/// Packets read per wake-up before due departures are written.
const READ_BATCH: usize = 64;
/// SCHED_FIFO priority of the pump threads (low among real-time priorities).
const REALTIME_PRIORITY: i32 = 10;
/// Longest sleep, so a stop request is seen promptly.
const MAX_SLEEP: Duration = Duration::from_millis(20);

/// The pump's clock: nanoseconds since the emulator started, plus the wall-clock epoch for
/// capture timestamps.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    start: Instant,
    unix_start_ns: u64,
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new()
    }
}

impl Clock {
    /// A clock starting now.
    pub fn new() -> Self {
        let unix = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        Clock { start: Instant::now(), unix_start_ns: u64::try_from(unix.as_nanos()).unwrap_or(0) }
    }

    /// Now, on the link model's time axis.
    pub fn now(&self) -> Time {
        Time::from_nanos(u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX))
    }

    /// `t` as nanoseconds since 1970.
    pub fn unix_nanos(&self, t: Time) -> u64 {
        self.unix_start_ns.saturating_add(t.as_nanos())
    }
}

/// Everything one direction's thread needs.
#[derive(Debug)]
pub struct Forwarder {
    /// Which direction this is.
    pub direction: Direction,
    /// The link model.
    pub link: Link<Vec<u8>>,
    /// Where packets come from.
    pub input: Arc<Tun>,
    /// Where they go.
    pub output: Arc<Tun>,
    /// Stop flag and published counters.
    pub shared: Arc<Shared>,
    /// Optional capture files.
    pub captures: Option<Arc<Captures>>,
    /// The common clock.
    pub clock: Clock,
    /// Run under SCHED_FIFO.
    pub realtime: bool,
}

impl Forwarder {
    /// Runs until the stop flag is set or a device fails.
    pub fn run(mut self) {
        let _ = netio::tun::set_timer_slack(Duration::from_nanos(1));
        if self.realtime {
            if let Err(e) = netio::tun::set_realtime(REALTIME_PRIORITY) {
                tracing::warn!("pump thread stays at normal priority: {e}");
            }
        }
        let mut buffers = Buffers::new(READ_BUFFER_BYTES);
        let mut stats = Stats::default();
        let mut early = EarlyWake::default();
        let mut mark = Instant::now();
        while !self.shared.stop.load(Ordering::Relaxed) {
            let read = self.read_batch(&mut buffers, &mut stats);
            self.write_due(&mut buffers, &mut stats);
            stats.counters = *self.link.counters();
            self.shared.publish(self.direction, &stats);
            if read == READ_BATCH {
                continue;
            }
            match self.wait(&mut early) {
                Ok(spun) => {
                    let now = Instant::now();
                    early.account(now.saturating_duration_since(mark), spun);
                    mark = now;
                }
                Err(e) => {
                    self.shared.fail(format!("waiting on {}: {e}", self.input.name()));
                    return;
                }
            }
        }
    }

    /// Waits for input or the next release; returns how long it spun. A release is slept to
    /// shortly before (the learned wake-up margin, [`EarlyWake`]) and spun to, while spinning
    /// stays within its budget; over budget, or with nothing due, the thread just sleeps.
    fn wait(&self, early: &mut EarlyWake) -> std::io::Result<Duration> {
        let due_in = self.link.next_event_time().map(|due| due.saturating_since(self.clock.now()));
        let sleep = due_in.unwrap_or(MAX_SLEEP).min(MAX_SLEEP);
        let spin = early.may_spin() && due_in.is_some_and(|d| d <= MAX_SLEEP + early.margin());
        let asked = if spin { early.sleep_for(due_in.unwrap_or(sleep)) } else { sleep };
        let slept_from = Instant::now();
        if !asked.is_zero() {
            if self.input.wait_readable(Some(asked))? {
                return Ok(Duration::ZERO);
            }
            early.observe(asked, slept_from.elapsed());
        }
        if !spin {
            return Ok(Duration::ZERO);
        }
        let (due, spin_from) = (slept_from + due_in.unwrap_or(sleep), Instant::now());
        while Instant::now() < due {
            if self.input.wait_readable(Some(Duration::ZERO))? {
                break;
            }
            std::hint::spin_loop();
        }
        Ok(spin_from.elapsed())
    }

    /// Reads up to [`READ_BATCH`] packets and offers them to the link; returns how many.
    fn read_batch(&mut self, buffers: &mut Buffers, stats: &mut Stats) -> usize {
        let header = self.header_bytes();
        let mut buf = buffers.take();
        for done in 0..READ_BATCH {
            let n = match self.input.recv(&mut buf) {
                Ok(Some(n)) if n > header => n,
                Ok(Some(_)) => continue,
                Ok(None) => return self.keep(buffers, buf, done),
                Err(e) => {
                    stats.read_errors += 1;
                    tracing::debug!("reading {}: {e}", self.input.name());
                    return self.keep(buffers, buf, done);
                }
            };
            let now = self.clock.now();
            let packet = buffers.packet(std::mem::take(&mut buf), n);
            buf = buffers.take();
            let len = u32::try_from(n - header).unwrap_or(u32::MAX);
            if let Some(c) = &self.captures {
                c.record(
                    Role::source(self.direction),
                    self.clock.unix_nanos(now),
                    packet.get(header..).unwrap_or_default(),
                );
            }
            self.offer(now, packet, len, header);
        }
        self.keep(buffers, buf, READ_BATCH)
    }

    /// Puts the unused read buffer back and passes `done` through.
    fn keep(&self, buffers: &mut Buffers, buf: Vec<u8>, done: usize) -> usize {
        buffers.give(buf);
        done
    }

    /// Hands one packet read at `now` to the link. A super-packet is charged per segment;
    /// where the link draws per packet (loss, cell loss, duplication) it is first split into
    /// real segments so that each gets its own draw.
    fn offer(&mut self, now: Time, packet: Vec<u8>, len: u32, header: usize) {
        let segments = if header > 0 { crate::gso::segments(&packet) } else { None };
        match segments {
            Some(segs) if self.link.config().needs_single_packets() => {
                for segment in crate::gso::split(&packet, &segs) {
                    let len = u32::try_from(segment.len().saturating_sub(header)).unwrap_or(u32::MAX);
                    let _ = self.link.enqueue(now, segment, len);
                }
            }
            Some(segs) => {
                self.link.enqueue_segments(now, packet, &segs.lens, |p, k| crate::gso::truncate(p, &segs, k));
            }
            None => {
                // A drop is counted by the link; the buffer is freed here.
                let _ = self.link.enqueue(now, packet, len);
            }
        }
    }

    /// Writes every packet that is due now.
    fn write_due(&mut self, buffers: &mut Buffers, stats: &mut Stats) {
        let header = self.header_bytes();
        let mut now = self.clock.now();
        while let Some(departure) = self.link.poll_departure(now) {
            let Fate::Delivered { copies } = departure.fate else { continue };
            stats.note_lateness(now.saturating_since(departure.release));
            for _ in 0..copies {
                if let Some(c) = &self.captures {
                    let ip = departure.payload.get(header..).unwrap_or_default();
                    c.record(Role::sink(self.direction), self.clock.unix_nanos(now), ip);
                }
                if self.output.send(&departure.payload).is_err() {
                    stats.write_errors += 1;
                }
            }
            buffers.give(departure.payload);
            now = self.clock.now();
        }
    }

    fn header_bytes(&self) -> usize {
        if self.input.has_vnet_hdr() {
            netio::tun::VNET_HDR_BYTES
        } else {
            0
        }
    }
}
