//! Method B of `segment-cost`: a private tracefs instance per worker thread, with the
//! events of its side filtered to the thread where the kernel allows, read as the test goes
//! and paired per size by `trace::cost`.

use netio::tracefs::Instance;
use results::segment_cost::{Dist, MethodRow};
use trace::cost::{self, Clock, CostEvent, Paired};

/// Transmits shorter than this are not data segments (pure ACKs are 52–100 bytes).
pub const MIN_DATA_PACKET: u32 = 100;

/// A worker's tracepoint probe.
#[derive(Debug)]
pub struct Probe {
    inst: Instance,
    clock: Clock,
    carry: Vec<u8>,
    events: Vec<CostEvent>,
    acc: Paired,
    lost_before: u64,
}

/// Which side's events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Send calls of the thread → transmits from the thread.
    Send,
    /// Data packets entering the stack → copies by the thread.
    Receive,
}

impl Probe {
    /// Starts tracing `side` for thread `tid`; the error is one line on why not.
    pub fn start(side: Side, tid: u32) -> Result<Probe, String> {
        let tag = match side {
            Side::Send => format!("send{tid}"),
            Side::Receive => format!("recv{tid}"),
        };
        let why = |e: netio::tracefs::Error| format!("tracepoints: {e}");
        let inst = Instance::create("tcplab-segcost", &tag).map_err(why)?;
        let clock = match netio::timestamping::tsc_ns_per_tick() {
            Some(ns_per_tick) if inst.set("trace_clock", "x86-tsc").is_ok() => Clock::Ticks { ns_per_tick },
            _ => {
                inst.set("trace_clock", "mono").map_err(why)?;
                Clock::Seconds
            }
        };
        let _ = inst.set("buffer_size_kb", "4096");
        let me = format!("common_pid == {tid}");
        match side {
            Side::Send => {
                let calls = netio::timestamping::SEND_SYSCALLS.map(|n| format!("id == {n}")).join(" || ");
                inst.enable("raw_syscalls/sys_enter", &format!("{me} && ({calls})")).map_err(why)?;
                inst.enable("net/net_dev_start_xmit", &format!("{me} && len >= {MIN_DATA_PACKET}"))
                    .map_err(why)?;
            }
            Side::Receive => {
                inst.enable("net/netif_receive_skb", &format!("len >= {MIN_DATA_PACKET}")).map_err(why)?;
                inst.enable("skb/skb_copy_datagram_iovec", &me).map_err(why)?;
            }
        }
        let mut inst = inst;
        inst.open_pipe().map_err(why)?;
        let lost_before = inst.lost();
        Ok(Probe { inst, clock, carry: Vec::new(), events: Vec::new(), acc: Paired::default(), lost_before })
    }

    /// Reads what the instance has now (bounded: at most 64 reads of 64 KiB).
    pub fn poll(&mut self) {
        let mut buf = vec![0u8; 64 * 1024];
        for _ in 0..64 {
            let n = match self.inst.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            self.carry.extend_from_slice(&buf[..n]);
        }
        let Some(end) = self.carry.iter().rposition(|b| *b == b'\n') else { return };
        let text = String::from_utf8_lossy(&self.carry[..end]).into_owned();
        self.carry.drain(..=end);
        let evs = cost::events(text.lines(), self.clock, &mut self.acc);
        self.events.extend(evs);
    }

    /// The figures of what was traced since the last call (one size), as `side` pairs them.
    pub fn take(&mut self, side: Side) -> MethodRow {
        self.poll();
        let mut acc = std::mem::take(&mut self.acc);
        let events = std::mem::take(&mut self.events);
        match side {
            Side::Send => cost::pair_send(&events, MIN_DATA_PACKET, &mut acc),
            Side::Receive => cost::pair_receive(&events, &mut acc),
        }
        let lost_now = self.inst.lost();
        acc.lost += lost_now.saturating_sub(self.lost_before);
        self.lost_before = lost_now;
        let calls = acc.intervals_ns.len();
        MethodRow {
            dist: Dist::of(&mut acc.intervals_ns),
            packets_per_call: (side == Side::Send && calls > 0).then(|| acc.packets as f64 / calls as f64),
            unpaired: acc.unpaired,
            lost: acc.lost + acc.malformed,
        }
    }
}
