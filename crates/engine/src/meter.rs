//! Per-stream counters shared between a worker thread and the sampler, and the test's
//! timeline (start, end of the omitted period, deadline, watchdog).

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use results::{SocketReport, TestSpec, UdpCounts};
use stats::datagrams::Account;

use crate::stop::StopFlag;

/// Grace after the planned end before a stuck test is ended by force (security-notes R3).
pub const WATCHDOG_GRACE: Duration = Duration::from_secs(10);

/// Counters of one data stream (or flow). Written by its worker, read by the sampler.
#[derive(Debug, Default)]
pub struct StreamMeter {
    /// Bytes moved.
    pub bytes: AtomicU64,
    /// Read or write calls.
    pub calls: AtomicU64,
    /// Transactions completed.
    pub transactions: AtomicU64,
    end_ns: AtomicU64,
    done: AtomicBool,
    /// Kernel id of the worker thread, 0 until it has started.
    pub tid: AtomicU32,
    /// UDP flows: datagram counters, locked once per batch by the worker.
    pub udp: Mutex<UdpMeter>,
    /// A test type's own section of this end's measurement (name, value in that type's
    /// shape), left by the stream's worker at the end.
    pub section: Mutex<Option<(String, serde_json::Value)>>,
}

/// Datagram counters of one UDP flow.
#[derive(Debug, Default)]
pub struct UdpMeter {
    /// Sender-side counts (sent, send errors, request timeouts).
    pub sender: UdpCounts,
    /// Receiver-side account.
    pub account: Account,
    /// Receive-buffer drops the kernel reported for this socket.
    pub socket_drops: u64,
    /// The socket's options as applied (UDP sockets have no TCP_INFO probe).
    pub socket: Option<SocketReport>,
    /// Stream flows: what the path carried over the flow's measured window (set at its end).
    pub path: Option<results::udp::PathWindow>,
}

impl UdpMeter {
    /// Sender and receiver counts together, cumulative.
    pub fn counts(&self) -> UdpCounts {
        UdpCounts {
            sent: self.sender.sent,
            send_errors: self.sender.send_errors,
            enobufs: self.sender.enobufs,
            timeouts: self.sender.timeouts,
            socket_drops: Some(self.socket_drops),
            path: self.path.clone(),
            ..self.account.counts()
        }
    }
}

impl StreamMeter {
    /// Counts one call that moved `n` bytes.
    pub fn add(&self, n: usize) {
        self.bytes.fetch_add(n as u64, Relaxed);
        self.calls.fetch_add(1, Relaxed);
    }

    /// Marks the worker finished at `at`.
    pub fn finish(&self, timeline: &Timeline, at: Instant) {
        self.end_ns.store(at.saturating_duration_since(timeline.start).as_nanos() as u64, Relaxed);
        self.done.store(true, Relaxed);
    }

    /// When the worker finished, if it has.
    pub fn end(&self, timeline: &Timeline) -> Option<Instant> {
        self.done.load(Relaxed).then(|| timeline.start + Duration::from_nanos(self.end_ns.load(Relaxed)))
    }

    /// Counts `bytes` moved in one call (batched workers).
    pub fn add_bytes(&self, bytes: u64) {
        self.bytes.fetch_add(bytes, Relaxed);
        self.calls.fetch_add(1, Relaxed);
    }

    /// Runs `f` on the UDP counters (a poisoned lock still yields the counters).
    pub fn with_udp<T>(&self, f: impl FnOnce(&mut UdpMeter) -> T) -> T {
        let mut guard = self.udp.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut guard)
    }

    /// Leaves a test type's own section for the side's measurement.
    pub fn set_section(&self, name: &str, value: serde_json::Value) {
        *self.section.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some((name.into(), value));
    }

    /// The section a worker left, if any.
    pub fn take_section(&self) -> Option<(String, serde_json::Value)> {
        self.section.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take()
    }

    /// (bytes, calls, transactions) now.
    pub fn read(&self) -> Counts {
        Counts {
            bytes: self.bytes.load(Relaxed),
            calls: self.calls.load(Relaxed),
            transactions: self.transactions.load(Relaxed),
        }
    }
}

/// A reading of a [`StreamMeter`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Bytes.
    pub bytes: u64,
    /// Calls.
    pub calls: u64,
    /// Transactions.
    pub transactions: u64,
}

impl Counts {
    /// `self − earlier`, saturating.
    pub fn since(&self, earlier: &Counts) -> Counts {
        Counts {
            bytes: self.bytes.saturating_sub(earlier.bytes),
            calls: self.calls.saturating_sub(earlier.calls),
            transactions: self.transactions.saturating_sub(earlier.transactions),
        }
    }
}

/// The instants that bound a test at one end.
#[derive(Debug, Clone, Copy)]
pub struct Timeline {
    /// The start (Start sent or received).
    pub start: Instant,
    /// End of the omitted period: the measured window starts here.
    pub measure_from: Instant,
    /// When senders and requesters stop; `None` for byte-limited tests.
    pub deadline: Option<Instant>,
    /// When everything is stopped by force.
    pub watchdog: Instant,
}

impl Timeline {
    /// The timeline of `spec` starting at `start`; `max_ms` bounds byte-limited tests.
    pub fn new(spec: &TestSpec, start: Instant, max_ms: u64) -> Timeline {
        let ms = Duration::from_millis;
        let deadline = (spec.duration_ms > 0).then(|| start + ms(spec.duration_ms));
        let planned = deadline.unwrap_or(start + ms(max_ms));
        Timeline {
            start,
            measure_from: start + ms(spec.omit_ms),
            deadline,
            watchdog: planned + WATCHDOG_GRACE,
        }
    }

    /// How long a loop watching for the end of the test may sleep at `now`: long slices while
    /// the test body runs, short ones from shortly before the planned end (and throughout a
    /// byte-limited test), so the end is noticed at once without waking hundreds of times a
    /// second all along, which disturbs latency tests on small hosts.
    pub fn watch_slice(&self, now: Instant) -> Duration {
        const FAR: Duration = Duration::from_millis(100);
        const NEAR: Duration = Duration::from_millis(5);
        match self.deadline {
            Some(d) if now + 2 * FAR < d => FAR,
            Some(_) => NEAR,
            None => 4 * NEAR,
        }
    }

    /// Whether the planned end has passed at `now`.
    pub fn past_deadline(&self, now: Instant) -> bool {
        self.deadline.is_some_and(|d| now >= d)
    }

    /// Seconds from the start to `at`.
    pub fn secs(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.start).as_secs_f64()
    }
}

/// A shared byte budget (`-n`/`-k`): writers claim chunks until it is spent.
#[derive(Debug, Clone)]
pub struct Budget(Arc<AtomicU64>);

impl Budget {
    /// A budget of `bytes`.
    pub fn new(bytes: u64) -> Budget {
        Budget(Arc::new(AtomicU64::new(bytes)))
    }

    /// Claims up to `want` bytes; 0 when spent.
    pub fn claim(&self, want: u64) -> u64 {
        let mut got = 0;
        let _ = self.0.fetch_update(Relaxed, Relaxed, |left| {
            got = left.min(want);
            Some(left - got)
        });
        got
    }

    /// Gives back bytes claimed but not written.
    pub fn refund(&self, n: u64) {
        self.0.fetch_add(n, Relaxed);
    }

    /// Whether nothing is left to claim (until a writer gives some back).
    pub fn is_spent(&self) -> bool {
        self.0.load(Relaxed) == 0
    }
}

/// What every worker gets.
#[derive(Debug, Clone)]
pub struct WorkerCtx {
    /// This stream's counters.
    pub meter: Arc<StreamMeter>,
    /// The test's instants.
    pub timeline: Timeline,
    /// Graceful stop: senders and requesters finish.
    pub stop: StopFlag,
    /// Hard stop: everything ends now (peer vanished).
    pub abort: StopFlag,
    /// Byte budget for senders.
    pub budget: Option<Budget>,
    /// Spin on non-blocking calls instead of sleeping in them (rr `--busy-poll`).
    pub busy_poll: bool,
}

impl WorkerCtx {
    /// Whether a sender or requester should stop before its next call.
    pub fn should_stop_sending(&self, now: Instant) -> bool {
        self.stop.is_set()
            || self.abort.is_set()
            || self.timeline.past_deadline(now)
            || now >= self.timeline.watchdog
    }

    /// Whether a reader blocked on a timeout should give up.
    pub fn should_abandon(&self, now: Instant) -> bool {
        self.abort.is_set() || now >= self.timeline.watchdog
    }

    /// Counts a failed UDP send of `datagrams` datagrams (a GSO message carries several; a
    /// wait is not a failure). After an error other than a full queue on this host (ENOBUFS)
    /// — no one listening (ECONNREFUSED), a firewall (EPERM) — the sender pauses a
    /// millisecond rather than spin.
    pub fn count_udp_send_error(&self, e: &std::io::Error, datagrams: usize) {
        if netio::udp::is_wait(e) {
            return;
        }
        let enobufs = netio::udp::is_enobufs(e);
        let n = datagrams.max(1) as u64;
        self.meter.with_udp(|u| {
            u.sender.send_errors += n;
            u.sender.enobufs += if enobufs { n } else { 0 };
        });
        if !enobufs {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// Records a UDP receiver's drop count at its end: the socket's counter, else what the
    /// batches' control messages said.
    pub fn record_udp_drops(&self, sock: &std::net::UdpSocket, batch: &netio::udp::RecvBatch) {
        let drops = netio::udp::socket_drops(sock).ok().or(batch.drops().map(u64::from));
        self.meter.with_udp(|u| u.socket_drops = drops.unwrap_or(u.socket_drops));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_is_claimed_exactly() {
        let b = Budget::new(300);
        assert_eq!(b.claim(128), 128);
        assert_eq!(b.claim(128), 128);
        assert_eq!(b.claim(128), 44);
        assert_eq!(b.claim(128), 0);
        b.refund(10);
        assert_eq!(b.claim(128), 10);
    }

    #[test]
    fn counts_subtract_saturating() {
        let a = Counts { bytes: 10, calls: 2, transactions: 1 };
        let b = Counts { bytes: 25, calls: 3, transactions: 1 };
        assert_eq!(b.since(&a), Counts { bytes: 15, calls: 1, transactions: 0 });
        assert_eq!(a.since(&b), Counts::default());
    }
}
