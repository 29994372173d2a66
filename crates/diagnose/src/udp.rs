//! What limited a UDP stream, or lost its datagrams (seed 002): the receiver's socket
//! overflowing (overrun), the link or its queue, the path's random loss, the sender's kernel
//! refusing sends, datagrams fragmented by a smaller path MTU, the sender's own pacing, or
//! the sender's CPU. Each from the counters that show it; an unreported counter (a stock
//! iperf3 peer reports no socket drops) is never read as 0.

use model::human::{rate, size};
use results::setting;
use results::{Cause, Finding, Reference, ReferenceKind, Role, TestResult, UdpSummary};

use crate::facts::{busiest_thread, path_drops, side_cpu, streams, PathDrops, SideCpu};
use crate::rules::{pct, CPU_SATURATED_PCT, NEAR_LINK_FRAC, THROTTLED_PCT};
use crate::Path;

/// Lost share of sent datagrams from which loss is worth explaining.
pub const LOSS_FRAC: f64 = 1e-3;
/// Lost share up to which a sender that reached its target was limited by its pacing (the
/// datagrams in flight when the test ended count as lost).
pub const PACED_LOSS_FRAC: f64 = 0.01;
/// Share of the lost datagrams a counter must account for to name its cause.
pub const ACCOUNTS_FRAC: f64 = 0.5;
/// Failed sends, as a share of attempts, from which the sender's errors are the limit.
pub const SEND_ERROR_FRAC: f64 = 0.01;
/// IPv4 + UDP header bytes in front of a datagram's payload.
const IP_UDP_HEADER: u32 = 28;

/// The measured facts of one UDP direction.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UdpFacts {
    /// The direction's summary.
    pub d: UdpSummary,
    /// What the result is compared with (`--link`, or the emulated path's link).
    pub reference: Option<Reference>,
    /// The emulator's drops that way, when the test crossed an emulated path.
    pub path_drops: Option<PathDrops>,
    /// The emulated path's MTU, when there was one.
    pub path_mtu: Option<u32>,
    /// The sender's CPU, when measured.
    pub sender_cpu: Option<SideCpu>,
    /// The receiver's CPU, when measured.
    pub receiver_cpu: Option<SideCpu>,
}

impl UdpFacts {
    /// Facts of UDP direction `index` of `result`.
    pub fn of(result: &TestResult, index: usize, path: Option<&Path>) -> Option<UdpFacts> {
        let d = result.summary.udp.get(index)?.clone();
        let client_sends = d.direction.starts_with("client");
        let remote = result.remote.as_ref();
        let (sender, receiver) =
            if client_sends { (Some(&result.local), remote) } else { (remote, Some(&result.local)) };
        let cpu = |side: Option<&results::SideMeasurement>, role| {
            let s = streams(side, role);
            let threads = u32::try_from(s.len().max(1)).unwrap_or(u32::MAX);
            side.and_then(|m| m.cpu.as_ref()).map(|c| side_cpu(c, threads, false, busiest_thread(&s)))
        };
        Some(UdpFacts {
            reference: result.reference.clone().filter(|r| r.kind == ReferenceKind::Link),
            path_drops: result.emu.as_ref().map(|e| path_drops(e, client_sends)),
            path_mtu: path.and_then(|p| p.mtu),
            sender_cpu: cpu(sender, Role::Send),
            receiver_cpu: cpu(receiver, Role::Recv),
            d,
        })
    }

    fn lost_frac(&self) -> f64 {
        if self.d.sent == 0 {
            0.0
        } else {
            self.d.lost as f64 / self.d.sent as f64
        }
    }
}

/// Every UDP rule.
pub const ALL: [fn(&UdpFacts) -> Option<Finding>; 7] =
    [overrun, link, random_loss, send_errors, fragmentation, paced, sender_cpu];

/// `n` drops against `lost` datagrams: a share while below, never a share above 100 % (a
/// counter that also saw other packets can exceed the datagrams lost).
fn of_lost(n: u64, lost: u64) -> String {
    if n >= lost {
        format!("as many as the {lost} datagrams lost")
    } else {
        format!("{} of the {lost} datagrams lost", pct(n as f64 / lost.max(1) as f64))
    }
}

/// The receiver's kernel dropped datagrams at its full socket buffer.
pub fn overrun(f: &UdpFacts) -> Option<Finding> {
    let drops = f.d.socket_drops.filter(|&n| n > 0)?;
    if f.lost_frac() < LOSS_FRAC || (drops as f64) < ACCOUNTS_FRAC * f.d.lost as f64 {
        return None;
    }
    let slow = f.receiver_cpu.as_ref().map(slow_reader).unwrap_or_default();
    Some(Finding {
        cause: Cause::ReceiverOverrun,
        weight: 0.93,
        evidence: format!(
            "the receiver's kernel dropped {drops} datagrams at its full socket buffer ({}: {} of {} sent){slow}",
            of_lost(drops, f.d.lost),
            pct(f.lost_frac()),
            f.d.sent
        ),
        advice: format!(
            "the receiver read slower than datagrams arrived: a larger receive buffer ({} / {}) absorbs bursts; a faster reader or a lower -b removes the overrun",
            setting::REMOTE_RCVBUF.flag,
            setting::RCVBUF.flag
        ),
        bound_bps: None,
    })
}

/// `; the receiver was throttled by its CPU quota 80% of the time`, for a reader that was slow.
fn slow_reader(c: &SideCpu) -> String {
    if c.throttled_pct >= THROTTLED_PCT {
        format!(
            "; the receiver was throttled by its cgroup CPU quota {:.0}% of the time",
            c.throttled_pct.min(100.0)
        )
    } else if c.thread_busy_pct.is_some_and(|b| b >= CPU_SATURATED_PCT) {
        format!("; the receiving thread was busy {:.0}% of the time", c.thread_busy_pct.unwrap_or(0.0))
    } else {
        String::new()
    }
}

/// The link: the receiver got (near) the link's goodput, or the sender offered more than the
/// link carries and the emulator's full queue dropped the rest.
pub fn link(f: &UdpFacts) -> Option<Finding> {
    let r = f.reference.as_ref().filter(|r| r.limit_bps > 0.0)?;
    let received = f.d.receiver_bps / r.limit_bps;
    let offered = f.d.sender_bps / r.limit_bps;
    let queue = f.path_drops.map_or(0, |d| d.queue_overflow);
    let queue_explains = queue > 0 && queue as f64 >= ACCOUNTS_FRAC * f.d.lost as f64;
    if received < NEAR_LINK_FRAC && !(queue_explains && offered >= 1.0) {
        return None;
    }
    let drops =
        if queue > 0 { format!("; the emulator's full queue dropped {queue}") } else { String::new() };
    Some(Finding {
        cause: Cause::Link,
        weight: 0.9,
        evidence: format!(
            "offered {} ({} of the link's goodput {}), received {} ({}){drops}",
            rate(f.d.sender_bps),
            pct(offered),
            rate(r.limit_bps),
            rate(f.d.receiver_bps),
            pct(received.min(1.0))
        ),
        advice: "the link carries no more: pace the sender at or below the link (-b) to stop the queue from dropping".into(),
        bound_bps: Some(r.limit_bps.max(f.d.receiver_bps)),
    })
}

/// The emulated path's loss model dropped most of what was lost.
pub fn random_loss(f: &UdpFacts) -> Option<Finding> {
    let d = f.path_drops?;
    if f.lost_frac() < LOSS_FRAC || (d.random as f64) < ACCOUNTS_FRAC * f.d.lost as f64 {
        return None;
    }
    Some(Finding {
        cause: Cause::RandomLoss,
        weight: 0.88,
        evidence: format!(
            "the path's loss model dropped {} packets in the data's direction, the test's control segments included ({}: {} of {} sent)",
            d.random,
            of_lost(d.random, f.d.lost),
            pct(f.lost_frac()),
            f.d.sent
        ),
        advice:
            "the loss is the path's own: UDP does not resend; the application must tolerate or recover it"
                .into(),
        bound_bps: None,
    })
}

/// The sender's kernel refused sends (ENOBUFS: its socket buffer or the device queue full).
pub fn send_errors(f: &UdpFacts) -> Option<Finding> {
    let attempts = f.d.sent + f.d.send_errors;
    if fragmentation(f).is_some() {
        // The kernel refused datagrams larger than the MTU: fragmentation names why.
        return None;
    }
    if f.d.send_errors == 0 || (f.d.send_errors as f64) < SEND_ERROR_FRAC * attempts as f64 {
        return None;
    }
    let target = match f.d.target_bps {
        0 => "unpaced".to_string(),
        t => format!("the target {}", rate(t as f64)),
    };
    Some(Finding {
        cause: Cause::SendErrors,
        weight: 0.92,
        evidence: format!(
            "the sender's kernel refused {} of {attempts} datagram sends ({} with ENOBUFS: its device queue or socket buffer full); {} got through ({target})",
            f.d.send_errors,
            f.d.enobufs,
            rate(f.d.sender_bps)
        ),
        advice: format!(
            "the sender outran its own socket buffer or device queue: pace it (-b) or give it a larger {}",
            setting::SNDBUF.flag
        ),
        bound_bps: None,
    })
}

/// Datagrams larger than the emulated path's MTU: each leaves as IP fragments, and losing any
/// fragment loses the datagram.
pub fn fragmentation(f: &UdpFacts) -> Option<Finding> {
    let mtu = f.path_mtu.filter(|&m| m > IP_UDP_HEADER)?;
    let datagram = f.d.datagram_len + IP_UDP_HEADER;
    if datagram <= mtu {
        return None;
    }
    let fragments = (f.d.datagram_len + 8).div_ceil(mtu - 20 - (mtu - 20) % 8);
    let fate = match (f.d.sent, f.d.send_errors) {
        (0, errors) => format!("the sender's kernel refused all {errors} sends"),
        (sent, 0) => format!("{} of {sent} sent were lost", pct(f.lost_frac())),
        (sent, errors) => {
            format!(
                "the sender's kernel refused {errors} sends; {} of {sent} sent were lost",
                pct(f.lost_frac())
            )
        }
    };
    // Fragments that all arrived cost headers and CPU, but did not set the result.
    let harmed = f.d.send_errors > 0 || f.lost_frac() >= LOSS_FRAC;
    Some(Finding {
        cause: Cause::Fragmentation,
        weight: if harmed { 0.96 } else { 0.7 },
        evidence: format!(
            "datagrams of {} (+ {IP_UDP_HEADER} B of headers) over an MTU of {mtu} B need {fragments} IP fragments each: {fate}",
            size(f64::from(f.d.datagram_len)),
        ),
        advice: format!("send datagrams of at most {} B (-l) so each fits one packet", mtu - IP_UDP_HEADER),
        bound_bps: None,
    })
}

/// The sender paced itself (`-b`) and the path carried what it sent.
pub fn paced(f: &UdpFacts) -> Option<Finding> {
    let target = f.d.target_bps as f64;
    if target <= 0.0
        || f.d.sender_bps < crate::pacing::PACED_FRAC * target
        || f.lost_frac() >= PACED_LOSS_FRAC
    {
        return None;
    }
    let below = f.reference.as_ref().map(|r| format!(", {} of the link", pct(target / r.limit_bps)));
    Some(Finding {
        cause: Cause::Pacing,
        // The receiver got nearly all the sender paced: the pacing set the rate, and a little
        // loss (overrun included) contributes.
        weight: 0.97,
        evidence: format!(
            "the sender paced itself at -b {}{}: it sent {}, the receiver got {} ({} lost)",
            rate(target),
            below.unwrap_or_default(),
            rate(f.d.sender_bps),
            rate(f.d.receiver_bps),
            pct(f.lost_frac())
        ),
        advice: "the application's rate target is the limit: raise -b to find where loss starts".into(),
        bound_bps: Some(target.max(f.d.receiver_bps)),
    })
}

/// An unpaced sender whose thread was saturated: it could not send faster.
pub fn sender_cpu(f: &UdpFacts) -> Option<Finding> {
    let c = f.sender_cpu.as_ref()?;
    let busy = c.thread_busy_pct?;
    // An unpaced sender, or a paced one that fell short of its target.
    let reached = f.d.target_bps != 0 && f.d.sender_bps >= crate::pacing::PACED_FRAC * f.d.target_bps as f64;
    if reached {
        return None;
    }
    if busy < CPU_SATURATED_PCT && c.throttled_pct < THROTTLED_PCT {
        return None;
    }
    Some(Finding {
        cause: Cause::SenderCpu,
        weight: 0.8,
        evidence: format!(
            "the sending thread was busy {busy:.0}% of the time{}: it sent {} datagrams/s",
            if c.throttled_pct >= 1.0 {
                format!(", throttled {:.0}%", c.throttled_pct.min(100.0))
            } else {
                String::new()
            },
            f.d.sender_datagrams_per_s.round()
        ),
        advice: "the sender cannot send faster on this CPU: larger datagrams (-l) or more flows (-P)".into(),
        bound_bps: None,
    })
}

/// The finding when no UDP rule applies, as a sentence.
pub fn nothing_found(f: &UdpFacts) -> Finding {
    let drops = f.d.socket_drops.map_or_else(|| "were not reported".to_string(), |n| format!("were {n}"));
    Finding {
        cause: Cause::Unknown,
        weight: 0.0,
        evidence: format!(
            "No limit was found: the sender sent {} ({}), {} of {} datagrams were lost, the receiver's socket drops {drops}, and no send failed.",
            rate(f.d.sender_bps),
            match f.d.target_bps {
                0 => "unpaced".to_string(),
                t => format!("target {}", rate(t as f64)),
            },
            f.d.lost,
            f.d.sent
        ),
        advice: "give --link (or --path) so the result can be compared with the link's limit".into(),
        bound_bps: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> UdpFacts {
        UdpFacts {
            d: UdpSummary {
                direction: "client→server".into(),
                datagram_len: 1400,
                target_bps: 100_000_000,
                sender_bps: 100e6,
                receiver_bps: 99.9e6,
                sent: 100_000,
                received: 99_950,
                lost: 50,
                socket_drops: Some(0),
                ..UdpSummary::default()
            },
            ..UdpFacts::default()
        }
    }

    fn best(f: &UdpFacts) -> Option<Cause> {
        ALL.iter().filter_map(|r| r(f)).max_by(|a, b| a.weight.total_cmp(&b.weight)).map(|x| x.cause)
    }

    #[test]
    fn each_counter_names_its_cause() {
        let mut f = base();
        assert_eq!(best(&f), Some(Cause::Pacing), "0.1% lost at the target is the pacing");
        f.d.lost = 5_000;
        f.d.socket_drops = Some(4_900);
        assert_eq!(best(&f), Some(Cause::ReceiverOverrun));
        f.d.socket_drops = None;
        assert_eq!(best(&f), None, "unreported drops are not overrun");
        f.path_drops = Some(PathDrops { queue_overflow: 0, random: 4_990 });
        assert_eq!(best(&f), Some(Cause::RandomLoss));
        f.d.send_errors = 40_000;
        f.d.enobufs = 40_000;
        assert_eq!(best(&f), Some(Cause::SendErrors));
    }

    #[test]
    fn an_offered_load_over_the_link_is_the_link_said_as_offered() {
        let mut f = base();
        f.reference =
            Some(Reference { kind: ReferenceKind::Link, description: "10m".into(), limit_bps: 9.6e6 });
        f.d.lost = 90_000;
        f.path_drops = Some(PathDrops { queue_overflow: 89_000, random: 0 });
        f.d.receiver_bps = 9.55e6;
        let x = link(&f);
        assert!(
            x.as_ref().is_some_and(|x| x.evidence.contains("offered") && x.evidence.contains("(99%)")),
            "{x:?}"
        );
    }

    #[test]
    fn drops_above_the_datagrams_lost_are_never_a_share_of_them() {
        let mut f = base();
        f.d.lost = 107;
        f.d.sent = 5358;
        f.path_drops = Some(PathDrops { queue_overflow: 0, random: 109 });
        let x = random_loss(&f).expect("random loss");
        assert!(
            x.evidence.contains("as many as the 107 datagrams lost") && !x.evidence.contains("of the 107"),
            "{}",
            x.evidence
        );
        f.path_drops = Some(PathDrops { queue_overflow: 0, random: 90 });
        let x = random_loss(&f).expect("random loss");
        assert!(x.evidence.contains("84% of the 107 datagrams lost"), "{}", x.evidence);
    }

    #[test]
    fn datagrams_over_the_mtu_are_fragmented() {
        let mut f = base();
        f.path_mtu = Some(1500);
        f.d.datagram_len = 8192;
        let x = fragmentation(&f);
        assert!(x.as_ref().is_some_and(|x| x.evidence.contains("6 IP fragments")), "{x:?}");
        (f.d.sent, f.d.send_errors, f.d.sender_bps, f.d.receiver_bps) = (0, 5_000, 0.0, 0.0);
        assert_eq!(best(&f), Some(Cause::Fragmentation), "refused for their size, not the sender's errors");
        f.d.datagram_len = 1472;
        assert!(fragmentation(&f).is_none());
    }
}
