//! The RTT probe of `compare-cc`: the seed's ping beside each stream, as TCP handshakes.
//!
//! A probe opens a TCP connection to the server's control port and times `connect()`: the
//! SYN crosses the path in the data's direction, the SYN-ACK comes back with the ACKs, so
//! the time is one round trip through the same queues the stream fills, answered by the
//! server's kernel (no server thread has to wake up for it). The connection is closed at
//! once; the server's acceptor drops it when no hello arrives. Any tcplab server answers it,
//! with no protocol change and without taking one of its test slots, which `--concurrent`
//! needs for the flows themselves. ICMP would need a raw socket and measures another
//! protocol's treatment; `udp-rr` runs back to back rather than at an interval and keeps a
//! histogram rather than timed samples.
//!
//! A probe not answered within [`TIMEOUT`] counts as lost: past it the kernel has
//! retransmitted the SYN (initial RTO 1 s, RFC 6298), and the time would measure that wait
//! rather than the path.

use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use results::cc::ProbeSample;

/// The method's id, as stored.
pub const METHOD: &str = "tcp-connect";
/// A probe unanswered after this long is lost.
pub const TIMEOUT: Duration = Duration::from_secs(1);

/// A prober of one server.
#[derive(Debug, Clone)]
pub struct Probe {
    /// The server's control address.
    pub addr: SocketAddr,
    /// Time between probes.
    pub interval: Duration,
}

impl Probe {
    /// One probe: the handshake's time, `None` when unanswered (or refused) in time.
    pub fn once(&self) -> Option<Duration> {
        let t = Instant::now();
        let conn = TcpStream::connect_timeout(&self.addr, TIMEOUT).ok()?;
        let rtt = t.elapsed();
        drop(conn);
        Some(rtt)
    }

    /// `n` probes on the idle path, one interval apart: their median, µs.
    pub fn idle_us(&self, n: u32) -> Option<f64> {
        let mut rtts = Vec::new();
        for i in 0..n {
            if i > 0 {
                std::thread::sleep(self.interval);
            }
            rtts.extend(self.once().map(|d| d.as_secs_f64() * 1e6));
        }
        stats::series::nearest_rank(&rtts, 50.0)
    }

    /// Probes every interval from now until `done` is set; sample times are seconds since
    /// now. A probe that takes longer than the interval delays the next to the next tick.
    pub fn beside(&self, done: &AtomicBool) -> Vec<ProbeSample> {
        let origin = Instant::now();
        let mut samples = Vec::new();
        let mut tick = 0u32;
        while !done.load(Ordering::Relaxed) {
            let sent = Instant::now();
            let rtt = self.once();
            samples.push(ProbeSample {
                at_s: sent.saturating_duration_since(origin).as_secs_f64(),
                rtt_us: rtt.map(|d| d.as_secs_f64() * 1e6),
            });
            let elapsed = origin.elapsed();
            tick = tick.saturating_add(1).max(ticks_in(elapsed, self.interval));
            let next = origin + self.interval.saturating_mul(tick);
            sleep_until(next, done);
        }
        samples
    }
}

/// Whole intervals in `elapsed`, rounded up.
fn ticks_in(elapsed: Duration, interval: Duration) -> u32 {
    let i = interval.as_nanos().max(1);
    elapsed.as_nanos().div_ceil(i).min(u128::from(u32::MAX)) as u32
}

/// Sleeps until `at`, in slices short enough to notice `done`.
fn sleep_until(at: Instant, done: &AtomicBool) {
    const SLICE: Duration = Duration::from_millis(20);
    loop {
        let now = Instant::now();
        if now >= at || done.load(Ordering::Relaxed) {
            return;
        }
        std::thread::sleep((at - now).min(SLICE));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn ticks_round_up() {
        let ms = Duration::from_millis;
        assert_eq!(ticks_in(ms(0), ms(100)), 0);
        assert_eq!(ticks_in(ms(1), ms(100)), 1);
        assert_eq!(ticks_in(ms(250), ms(100)), 3);
    }

    #[test]
    fn probes_a_listener_and_loses_a_closed_port() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let probe = Probe { addr: l.local_addr().unwrap(), interval: Duration::from_millis(1) };
        assert!(probe.once().is_some());
        assert!(probe.idle_us(3).is_some_and(|us| us > 0.0));
        drop(l);
        assert!(probe.once().is_none());
    }
}
