//! What the path carried while one UDP stream flow ran: the interface's packet counters and the
//! namespace's UDP counters ([`netio::path_counters`]), read at the start of the flow's measured
//! window and at its end, each beside the flow's datagram count at that moment, so that the
//! summary can set datagrams against the skbs the interface counted (docs/udp.md).
//!
//! The start reading is taken when the flow is set up — before `ready`, so before the peer can
//! send anything — and taken again at the end of the omitted period when there is one. The end
//! reading follows the sender's last datagram (the end markers come after it) or the receiver's
//! drain.

use std::net::UdpSocket;
use std::time::Instant;

use netio::path_counters::{self, PathSnapshot};
use results::udp::{PathReading, PathWindow};
use results::Role;

use crate::meter::Timeline;

/// A flow's reading of the path so far.
#[derive(Debug)]
pub struct PathProbe {
    interface: String,
    at: Instant,
    datagrams: u64,
    snapshot: PathSnapshot,
    /// The start reading lies inside the measured window.
    open: bool,
}

impl PathProbe {
    /// Finds the interface a connected socket's route uses and reads it now; `None` (logged)
    /// when the interface or its counters cannot be found.
    pub fn at_setup(sock: &UdpSocket) -> Option<PathProbe> {
        let found = sock
            .local_addr()
            .and_then(|local| Ok((local, sock.peer_addr()?)))
            .and_then(|(local, peer)| path_counters::interface_of(local, peer))
            .and_then(|name| Ok((path_counters::snapshot(&name)?, name)));
        match found {
            Ok((snapshot, interface)) => {
                Some(PathProbe { interface, at: Instant::now(), datagrams: 0, snapshot, open: false })
            }
            Err(e) => {
                tracing::debug!("no interface counters for this UDP flow: {e}");
                None
            }
        }
    }

    /// Opens the measured window: keeps the setup reading when nothing is omitted, else reads
    /// again once `now` has reached the end of the omitted period. Cheap once open.
    pub fn open_window(&mut self, timeline: &Timeline, now: Instant, datagrams: impl FnOnce() -> u64) {
        if self.open {
            return;
        }
        if timeline.measure_from <= timeline.start {
            self.open = true;
        } else if now >= timeline.measure_from {
            if let Ok(s) = path_counters::snapshot(&self.interface) {
                (self.at, self.datagrams, self.snapshot, self.open) = (Instant::now(), datagrams(), s, true);
            }
        }
    }

    /// The window from the start reading to now, as seen by a flow with `role` that has
    /// counted `datagrams` by now; `None` if the window never opened or the counters vanished.
    pub fn close(self, timeline: &Timeline, role: Role, datagrams: u64) -> Option<PathWindow> {
        if !self.open {
            return None;
        }
        let end = path_counters::snapshot(&self.interface).ok()?;
        let at = Instant::now();
        Some(PathWindow {
            start: reading(timeline, self.at, self.datagrams, &self.snapshot, role),
            end: reading(timeline, at, datagrams, &end, role),
            interface: self.interface,
        })
    }
}

/// The counters that face `role`'s way: transmit at a sender, receive at a receiver.
fn reading(timeline: &Timeline, at: Instant, datagrams: u64, s: &PathSnapshot, role: Role) -> PathReading {
    let at_s = if at >= timeline.start {
        at.duration_since(timeline.start).as_secs_f64()
    } else {
        -timeline.start.duration_since(at).as_secs_f64()
    };
    let udp = s.udp.unwrap_or_default();
    let sender = role == Role::Send;
    PathReading {
        at_s,
        datagrams,
        if_skbs: if sender { s.interface.tx_packets } else { s.interface.rx_packets },
        if_bytes: if sender { s.interface.tx_bytes } else { s.interface.rx_bytes },
        udp_mib_skbs: if sender { udp.out_datagrams } else { udp.in_datagrams },
        udp_mib_receive_buffer_errors: if sender { 0 } else { udp.receive_buffer_errors },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netio::path_counters::{IfCounters, UdpMib};
    use std::time::Duration;

    #[test]
    fn a_sender_reads_transmit_counters_and_a_receiver_receive_counters() {
        let start = Instant::now();
        let spec = results::TestSpec::new(results::TestKind::UdpStream);
        let timeline = Timeline::new(&spec, start, 1000);
        let s = PathSnapshot {
            interface: IfCounters { rx_packets: 1, rx_bytes: 2, tx_packets: 3, tx_bytes: 4 },
            udp: Some(UdpMib { in_datagrams: 5, out_datagrams: 6, in_errors: 7, receive_buffer_errors: 8 }),
        };
        let tx = reading(&timeline, start + Duration::from_millis(1500), 9, &s, Role::Send);
        assert_eq!(
            (tx.if_skbs, tx.if_bytes, tx.udp_mib_skbs, tx.udp_mib_receive_buffer_errors),
            (3, 4, 6, 0)
        );
        assert!((tx.at_s - 1.5).abs() < 1e-9 && tx.datagrams == 9);
        let before = start.checked_sub(Duration::from_millis(20)).unwrap_or(start);
        let rx = reading(&timeline, before, 0, &s, Role::Recv);
        assert_eq!(
            (rx.if_skbs, rx.if_bytes, rx.udp_mib_skbs, rx.udp_mib_receive_buffer_errors),
            (1, 2, 5, 8)
        );
        assert!(rx.at_s <= 0.0, "a setup reading lies before the start: {}", rx.at_s);
    }
}
