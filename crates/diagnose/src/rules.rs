//! One rule per cause of a TCP stream's limit. Each looks at [`Facts`] only and returns a
//! [`Finding`] with a weight (0–1) when its thresholds are met; [`crate::verdict`] ranks them.
//! A rule never reads an unmeasured figure as 0: what it needs and was not measured, it does
//! not claim. The thresholds are the constants below, documented in docs/diagnosis.md.

pub use results::diagnosis::WINDOW_ROOM;
use results::{setting, Buffer, Cause, Finding, ReferenceKind};

use crate::facts::{BufferFact, Facts, SideCpu};
use model::human::{micros, rate, size};

/// A rule: facts in, a finding out when it applies.
pub type Rule = fn(&Facts) -> Option<Finding>;

/// Every rule, in the order ties are broken.
pub const ALL: [Rule; 15] = [
    crate::pacing::paced,
    link,
    application,
    receiver_cpu,
    sender_cpu,
    other_load,
    receive_window,
    send_buffer,
    crate::stall::stop_and_go,
    crate::loss::queue_overflow,
    crate::loss::random_loss,
    crate::loss::congestion,
    crate::pacing::emulator_late,
    traced_sender,
    crate::saturated::saturated_core,
];

/// Receive-window-limited share of busy time from which the window counts as a limit.
pub const RWND_LIMITED_FRAC: f64 = 0.2;
/// Window-limited share (receive window or send buffer) from which the write size does not
/// set the rate: a sender waiting for the window is not waiting for its writes.
pub const WINDOW_BOUND_FRAC: f64 = 0.5;
/// Share of traced ACK samples at the announced window that names the receive window.
pub const TRACE_WINDOW_SHARE: f64 = 0.5;
/// Send-buffer-limited share of busy time from which the buffer counts as a limit.
pub const SNDBUF_LIMITED_FRAC: f64 = 0.2;
/// Mean write (or read) below which the application is the primary suspect.
pub const SMALL_CALL_BYTES: f64 = 1024.0;
/// Mean write (or read) below which the application contributes.
pub const SHORT_CALL_BYTES: f64 = 4096.0;
/// Buffers of fewer segments than this, with Nagle on, risk stop-and-go (theory.md §7).
pub const STOP_AND_GO_SEGMENTS: f64 = 3.0;
/// Process time plus quota-throttled time, % of one core per data thread, that counts as a
/// saturated end.
pub const CPU_SATURATED_PCT: f64 = 85.0;
/// Quota-throttled share of the window from which an end counts as CPU-limited: it wanted
/// more CPU than its cgroup allows.
pub const THROTTLED_PCT: f64 = 20.0;
/// Busiest CPU of a host (not shared with the peer), busy + stolen, that counts as saturated
/// (the threshold of the "CPU saturated" warning too).
pub const BUSIEST_CPU_PCT: f64 = results::cpu::SATURATED_CPU_PCT;
/// Host utilisation from which its CPUs count as full (no spare CPU for a waiting thread).
pub const HOST_FULL_PCT: f64 = 90.0;
/// CPU used by other work (not tcplab, not softirq), in cores, that counts as competing load.
pub const OTHER_LOAD_CORES: f64 = 0.5;

/// Share of the link's theoretical goodput from which the link is the limit.
pub const NEAR_LINK_FRAC: f64 = 0.9;
/// Share above which the result cannot have crossed that link (measurement noise allowed).
pub const ABOVE_LINK_FRAC: f64 = 1.05;

/// Within a few % of the link's theoretical limit: the link is the limit. Over an emulated
/// path whose only drops were its full queue, the resent share counts too: the link was
/// full, part of it carrying segments twice (said as what the sender *offered*: a link
/// carries at most 100 %). Far above the limit, the link is not the path measured:
/// [`crate::annotate`] warns and takes the reference away.
pub fn link(f: &Facts) -> Option<Finding> {
    let r = f.reference.as_ref().filter(|r| r.kind == ReferenceKind::Link)?;
    let frac = f.of_reference().filter(|&x| x <= ABOVE_LINK_FRAC)?;
    let offered = link_offered(f)?;
    let share = match frac <= 1.0 {
        true => format!("is {} of", pct(frac)),
        false => "is at (within measurement noise)".to_string(),
    };
    let resent = match (offered > frac, f.loss_rate()) {
        (true, Some(p)) => format!(
            "; {} of segments were sent twice after the emulator's full queue dropped {}: the sender offered {} of the link's goodput",
            pct(p),
            f.path_drops.map_or(0, |d| d.queue_overflow),
            pct(offered)
        ),
        _ => String::new(),
    };
    Some(Finding {
        cause: Cause::Link,
        weight: 0.97,
        evidence: format!(
            "{} {share} the theoretical {} ({}){resent}",
            rate(f.goodput_bps),
            rate(r.limit_bps),
            r.description
        ),
        advice: "the link is the limit: only a faster link, a larger MTU or fewer header bytes go faster"
            .into(),
        bound_bps: Some(r.limit_bps.max(f.goodput_bps)),
    })
}

/// The share of the link's goodput the sender offered, when it is [`NEAR_LINK_FRAC`] or more:
/// the goodput's share, plus the resent share when the path's only drops were its full queue
/// (the link was full).
fn link_offered(f: &Facts) -> Option<f64> {
    let frac = f.of_reference()?;
    let overflow_only = f.path_drops.is_some_and(|d| d.random == 0 && d.queue_overflow > 0);
    let offered = match (overflow_only, f.loss_rate()) {
        (true, Some(p)) if p < 1.0 => frac / (1.0 - p),
        _ => frac,
    };
    (offered >= NEAR_LINK_FRAC).then_some(offered)
}

/// Whether most of the sender's busy time waited for a window the user fixed (the
/// receiver's or its own send buffer): then the calls' size did not set the rate. An
/// autotuned window that closes is the symptom of slow reads, not a limit of its own.
fn window_bound(f: &Facts) -> bool {
    let fixed = |share: Option<f64>, b: BufferFact| {
        b.requested.filter(|_| window_room(f, b.granted).is_none()).and(share).unwrap_or(0.0)
    };
    fixed(f.rwnd_limited_frac, f.buffer(Buffer::Receive))
        + fixed(f.sndbuf_limited_frac, f.buffer(Buffer::Send))
        >= WINDOW_BOUND_FRAC
}

/// How many times the measured rate a window of `window` bytes allows over the RTT, when that
/// is [`WINDOW_ROOM`] or more and the window holds [`STOP_AND_GO_SEGMENTS`] segments or more
/// (a smaller one stalls far below what its size allows: [`few_segments`]).
fn window_room(f: &Facts, window: Option<u64>) -> Option<f64> {
    let (rtt, w) = (f.rtt_us.filter(|&r| r > 0.0)?, window.filter(|&w| w > 0)? as f64);
    let segments = f.mss_bytes.filter(|&m| m > 0).map_or(f64::INFINITY, |m| w / m as f64);
    let room = w * 8.0 / (rtt / 1e6) / f.goodput_bps;
    (f.goodput_bps > 0.0 && segments >= STOP_AND_GO_SEGMENTS && room >= WINDOW_ROOM).then_some(room)
}

/// The evidence that a fixed buffer held the sender back without its size setting the rate:
/// `room` from [`window_room`], `why` what kept it closed (or full).
fn room_text(room: Option<f64>, why: &str) -> String {
    room.map_or_else(String::new, |r| {
        format!("; that is {r:.0}× the rate measured, so its size did not hold the sender: {why}")
    })
}

/// Small writes (or reads) asked for by the application: a syscall, and with -N a segment,
/// per call's few bytes (the evidence gives the bytes per call measured). Calls made small
/// by a small socket buffer are the buffer's doing, not this; a sender that waited for its
/// window most of the time was held by the window, not by its writes.
pub fn application(f: &Facts) -> Option<Finding> {
    let calls: Vec<(&str, &str, f64)> = [
        ("writes", "-l", f.send_len, f.avg_write_bytes),
        ("reads", "--recv-len", f.recv_len, f.avg_read_bytes),
    ]
    .into_iter()
    .filter(|(_, _, asked, _)| *asked > 0 && f64::from(*asked) < SHORT_CALL_BYTES)
    .map(|(side, flag, asked, avg)| (side, flag, avg.unwrap_or(f64::from(asked))))
    .collect();
    if calls.is_empty() {
        return None;
    }
    let smallest = calls.iter().map(|c| c.2).fold(f64::INFINITY, f64::min);
    let weight = match (window_bound(f), smallest < SMALL_CALL_BYTES) {
        (true, _) => 0.4,
        (false, true) => 0.95,
        (false, false) => 0.6,
    };
    let nagle = if f.nodelay && calls.iter().any(|c| c.0 == "writes") {
        " with TCP_NODELAY: each write leaves as its own small segment"
    } else {
        ""
    };
    let what: Vec<String> = calls
        .iter()
        .map(|(side, _, b)| format!("{side} of {b:.0} B ({:.0} per MB)", 1e6 / b.max(1.0)))
        .collect();
    let flags: Vec<String> = calls.iter().map(|(_, flag, _)| format!("{flag} 64K")).collect();
    Some(Finding {
        cause: Cause::Application,
        weight,
        evidence: format!("{} on average: a syscall per {}{nagle}", what.join(", "), size(smallest)),
        advice: format!(
            "use larger calls ({} or more){}",
            flags.join(", "),
            if nagle.is_empty() { "" } else { "; or drop -N so Nagle coalesces small writes" }
        ),
        bound_bps: None,
    })
}

/// The receiving end's CPU: saturated or held back by a quota.
pub fn receiver_cpu(f: &Facts) -> Option<Finding> {
    let advice = "the receiver cannot read faster on this CPU: raise or remove its CPU quota, use larger reads (--recv-len), or spread the load with -P";
    cpu(f, f.receiver_cpu.as_ref(), Cause::ReceiverCpu, "receiver", advice)
}

/// The sending end's CPU.
pub fn sender_cpu(f: &Facts) -> Option<Finding> {
    let advice = "the sender cannot write faster on this CPU: use larger writes (-l), spread the load with -P, or a faster host";
    cpu(f, f.sender_cpu.as_ref(), Cause::SenderCpu, "sender", advice)
}

fn cpu(f: &Facts, c: Option<&SideCpu>, cause: Cause, who: &str, advice: &str) -> Option<Finding> {
    let c = c?;
    // The busiest data thread's own CPU time is the direct measure; without it, the process
    // time spread over its data threads.
    // Stolen time is CPU the thread could not have had either: busy + stolen near a whole
    // core is a saturated end.
    let per_thread = c.thread_busy_pct.unwrap_or(c.process_pct / f64::from(c.threads.max(1)));
    let demand = per_thread + c.throttled_pct / f64::from(c.threads.max(1)) + c.steal_pct;
    let busiest = !f.same_host && c.busiest_pct + c.steal_pct >= BUSIEST_CPU_PCT;
    if demand < CPU_SATURATED_PCT && !busiest && c.throttled_pct < THROTTLED_PCT {
        return None;
    }
    let mut quota = if c.throttled_pct >= 1.0 {
        // Throttled time is summed over the CPUs the cgroup ran on: it can pass the window.
        format!(" + throttled by its cgroup CPU quota {:.0}% of the time", c.throttled_pct.min(100.0))
    } else {
        String::new()
    };
    if c.steal_pct >= 1.0 {
        quota.push_str(&format!(" + {:.0}% of CPU time stolen by the hypervisor", c.steal_pct));
    }
    Some(Finding {
        cause,
        weight: 0.9,
        evidence: format!(
            "{who} tcplab {:.0}% of a core{quota} ({} data thread{}{}{}); busiest cpu{} {:.0}%",
            c.process_pct,
            c.threads,
            if c.threads == 1 { "" } else { "s" },
            if c.shared { " in one process for both ends" } else { "" },
            c.thread_busy_pct.map(|b| format!(", the busiest at {b:.0}% of a core")).unwrap_or_default(),
            c.busiest_cpu,
            c.busiest_pct
        ),
        advice: advice.into(),
        bound_bps: None,
    })
}

/// Other work kept an end's host CPUs full while tcplab's data threads were not saturated:
/// they waited for a CPU (a shared or noisy machine).
pub fn other_load(f: &Facts) -> Option<Finding> {
    // A result at its link's limit did not wait for a CPU: its threads had nothing more to do.
    // Nor did a sender waiting for its window: it had nothing to send.
    if link(f).is_some() || crate::pacing::paced(f).is_some() || window_bound(f) {
        return None;
    }
    // On one host with a peer that measured no CPU (a stock iperf3), its work cannot be told
    // from anyone else's.
    if f.same_host && (f.sender_cpu.is_none() || f.receiver_cpu.is_none()) {
        return None;
    }
    let ends = [("sender", f.sender_cpu.as_ref()), ("receiver", f.receiver_cpu.as_ref())];
    let (who, c, other) = ends
        .into_iter()
        .filter_map(|(who, c)| c.map(|c| (who, c, other_cores(f, c))))
        .filter(|(_, c, other)| c.util_pct >= HOST_FULL_PCT && *other >= OTHER_LOAD_CORES)
        .filter(|(_, c, _)| c.thread_busy_pct.is_some_and(|b| b < CPU_SATURATED_PCT))
        .max_by(|a, b| a.2.total_cmp(&b.2))?;
    Some(Finding {
        cause: Cause::OtherLoad,
        // Inferred from a full host and an unsaturated thread, not measured as waiting: below
        // the mechanisms a configuration fixes (window, buffer, loss, quota).
        weight: 0.75,
        evidence: format!(
            "{who}'s host {:.0}% busy, {other:.1} cores of it other work; tcplab's busiest data thread ran only {:.0}% of the time",
            c.util_pct,
            c.thread_busy_pct.unwrap_or(0.0)
        ),
        advice: "the test competed for CPU with other processes: rerun on a quiet host, or pin tcplab to a CPU of its own with -A".into(),
        bound_bps: None,
    })
}

/// CPU cores used on an end's host by work other than tcplab (both ends' processes when they
/// share the host) and softirq.
fn other_cores(f: &Facts, c: &SideCpu) -> f64 {
    let own = match (f.same_host, c.shared) {
        (true, false) => {
            let process = |c: Option<&SideCpu>| c.map_or(0.0, |c| c.process_pct);
            process(f.sender_cpu.as_ref()) + process(f.receiver_cpu.as_ref())
        }
        _ => c.process_pct,
    };
    (c.cores_busy - own / 100.0 - c.softirq_cores).max(0.0)
}

/// The receiver's advertised window: TCP_INFO rwnd-limited time, the granted receive buffer
/// against the BDP, or the trace's ACK samples at the window.
pub fn receive_window(f: &Facts) -> Option<Finding> {
    // A clamped window is the window the user fixed, whatever the buffer under it.
    let (buf, flag, what) = match f.window_clamp {
        Some(c) => (
            BufferFact { granted: Some(c), requested: Some(c) },
            setting::WINDOW_CLAMP.flag,
            "window clamped to".to_string(),
        ),
        None => (
            f.buffer(Buffer::Receive),
            f.buffer_setting(Buffer::Receive).flag,
            format!("{} granted", Buffer::Receive.name()),
        ),
    };
    let limited = f.rwnd_limited_frac.filter(|&x| x >= RWND_LIMITED_FRAC);
    let short_of_bdp =
        bdp_bytes(f).filter(|&bdp| buf.requested.is_some() && buf.granted.is_some_and(|r| (r as f64) < bdp));
    let traced = traced_window(f);
    if limited.is_none() && short_of_bdp.is_none() && traced.is_none() {
        return None;
    }
    // A window the user fixed comes before the CPU it makes busy; an autotuned one that closes
    // is more often the symptom of a slow receiver, and so is a fixed one far larger than the
    // rate needed.
    let room = buf.requested.and_then(|_| window_room(f, buf.granted));
    let weight = match (limited, buf.requested, room) {
        (Some(x), Some(_), None) if x >= 0.9 => 0.96,
        (Some(_), Some(_), None) => 0.92,
        (Some(x), _, _) => 0.5 + 0.35 * x,
        (None, _, _) => traced.as_ref().map_or(0.4, |(share, _)| 0.5 + 0.35 * share),
    };
    let (bound_text, bound_bps) = window_bound_text(f, buf.granted);
    let granted = buf.granted.map_or_else(|| "–".to_string(), |b| size(b as f64));
    let asked = match f.window_clamp {
        Some(_) => " (TCP_WINDOW_CLAMP)".to_string(),
        None => asked(buf.requested),
    };
    Some(Finding {
        cause: Cause::ReceiveWindow,
        weight,
        evidence: format!(
            "receive-window limited {} of busy time; receiver {what} {granted}{asked}{}",
            f.rwnd_limited_frac.map_or_else(|| "–".to_string(), pct),
            if buf.requested.is_some() { bound_text } else { " (autotuned; its size at the start)".into() }
        ) + &room_text(room, "the window closed because the receiver read slower than the data came")
            + &few_segments(f, buf)
            + &traced.map(|(_, lines)| format!("; trace: {lines}")).unwrap_or_default(),
        advice: match (buf.requested, room) {
            (Some(asked), None) => buffer_advice(f, flag, asked),
            (Some(_), Some(_)) => {
                "the receiver did not read fast enough to keep its window open: check its CPU and read size".into()
            }
            (None, _) => format!(
                "the receiver did not read fast enough to keep its (autotuned) window open: check its CPU and read size, or set {flag} to a large value"
            ),
        },
        bound_bps: bound_bps.filter(|_| buf.requested.is_some()),
    })
}

/// The trace's word on the window (`--trace`): the share of ACK samples at the announced
/// window and its evidence lines (window, stop-and-go), when the share is at least
/// [`TRACE_WINDOW_SHARE`].
fn traced_window(f: &Facts) -> Option<(f64, String)> {
    let flow = f.segment_flow.as_ref()?;
    let share = flow.window_limited_share.filter(|s| *s >= TRACE_WINDOW_SHARE)?;
    let lines: Vec<&str> = flow
        .evidence
        .iter()
        .map(String::as_str)
        .filter(|e| ["window-limited", "stop-and-go", "wire:"].iter().any(|p| e.starts_with(p)))
        .collect();
    Some((share, lines.join("; ")))
}

/// The sender's socket buffer.
pub fn send_buffer(f: &Facts) -> Option<Finding> {
    let limited = f.sndbuf_limited_frac.filter(|&x| x >= SNDBUF_LIMITED_FRAC)?;
    let (buf, flag) = (f.buffer(Buffer::Send), f.buffer_setting(Buffer::Send).flag);
    let (bound_text, bound_bps) = window_bound_text(f, buf.granted);
    let granted = buf.granted.map_or_else(|| "–".to_string(), |b| size(b as f64));
    let room = buf.requested.and_then(|_| window_room(f, buf.granted));
    Some(Finding {
        cause: Cause::SendBuffer,
        // A buffer the user fixed comes before the CPU or load around it, as a fixed receive
        // window does; an autotuned one that fills, or a fixed one far larger than the rate
        // needed, is more often a symptom.
        weight: match (buf.requested, room) {
            (Some(_), None) if limited >= 0.9 => 0.96,
            (Some(_), None) => 0.92,
            _ => 0.5 + 0.3 * limited,
        },
        evidence: format!(
            "send-buffer limited {} of busy time; sender {} granted {granted}{}{}",
            pct(limited),
            Buffer::Send.name(),
            asked(buf.requested),
            if buf.requested.is_some() { bound_text } else { " (autotuned; its size at the start)".into() }
        ) + &room_text(
            room,
            "the buffer stayed full because its data was acknowledged slower than it was written",
        ),
        advice: match room {
            Some(_) => {
                "the data sent was acknowledged slowly: check the receiver's CPU and reads, and the path"
                    .into()
            }
            None => buffer_advice(f, flag, buf.requested.or(buf.granted).unwrap_or(0)),
        },
        bound_bps: bound_bps.filter(|_| buf.requested.is_some()),
    })
}

/// Share of the traced sending time with room in both the announced window and cwnd from
/// which the trace names the sender (it did not fill what TCP allowed).
pub const TRACE_UNLIMITED_SHARE: f64 = 0.6;
/// Least sending time the wire trace must cover for [`traced_sender`], ms.
pub const TRACE_MIN_MS: f64 = 100.0;

/// `--trace`: the wire shows the window and cwnd with room most of the time, so neither TCP
/// limit held the sender: it did not produce segments faster (its CPU in the kernel's send
/// path, or the application). Weighed below the CPU and load rules, which measure the cause.
pub fn traced_sender(f: &Facts) -> Option<Finding> {
    let flow = f.segment_flow.as_ref()?;
    let w = flow.wire.as_ref().filter(|w| w.traced_ms >= TRACE_MIN_MS)?;
    if w.unlimited_time < TRACE_UNLIMITED_SHARE {
        return None;
    }
    let busiest = f
        .sender_cpu
        .as_ref()
        .map(|c| format!("; sender's busiest cpu{} {:.0}%", c.busiest_cpu, c.busiest_pct));
    Some(Finding {
        cause: Cause::SenderCpu,
        weight: 0.45 + 0.2 * w.unlimited_time,
        evidence: format!("{}{}", traced_room(f)?, busiest.unwrap_or_default()),
        advice: "the sending end produced segments no faster: its CPU (kernel send path included) or the application's writes; try larger writes (-l), -P 2, or pin the ends apart (-A 0,1)".into(),
        bound_bps: None,
    })
}

/// `--trace`'s evidence that TCP's windows had room (window and cwnd not full) most of the
/// sending time, when the wire trace covers enough of it.
pub(crate) fn traced_room(f: &Facts) -> Option<String> {
    let w = f.segment_flow.as_ref()?.wire.as_ref().filter(|w| w.traced_ms >= TRACE_MIN_MS)?;
    if w.unlimited_time < TRACE_UNLIMITED_SHARE {
        return None;
    }
    Some(format!(
        "trace: window and cwnd had room {} of {:.0} ms of sending (window-limited {}, cwnd-limited {}): the sender did not fill what TCP allowed",
        pct(w.unlimited_time),
        w.traced_ms,
        pct(w.window_limited_time),
        pct(w.cwnd_limited_time),
    ))
}

/// The primary finding when no rule applies: a sentence of what was checked. A CPU of the
/// host that was saturated is said so (the "CPU saturated" warning names it too): on one host
/// it is shared by both ends and the network work, so it was not found to be one end's limit.
pub fn nothing_found(f: &Facts) -> Finding {
    let busy = [f.sender_cpu.as_ref(), f.receiver_cpu.as_ref()]
        .into_iter()
        .flatten()
        .filter(|c| c.busiest_pct + c.steal_pct >= BUSIEST_CPU_PCT)
        .max_by(|a, b| (a.busiest_pct + a.steal_pct).total_cmp(&(b.busiest_pct + b.steal_pct)));
    let cpu = match busy {
        Some(c) => format!(
            "cpu{} was {:.0}% busy{} but no tcplab thread was saturated (that CPU is shared by both ends and the kernel's network work)",
            c.busiest_cpu,
            c.busiest_pct,
            if c.steal_pct >= 1.0 { format!(" + {:.0}% stolen", c.steal_pct) } else { String::new() }
        ),
        None if f.sender_cpu.is_none() && f.receiver_cpu.is_none() => "neither end's CPU was measured".into(),
        None => "no end's CPU was saturated".into(),
    };
    let known = |v: Option<f64>| v.map_or_else(|| "unmeasured".to_string(), pct);
    let reference = match &f.reference {
        Some(r) => {
            format!("it ran at {} of {}", f.of_reference().map_or_else(|| "–".into(), pct), r.description)
        }
        None => "no link was given to compare it with".into(),
    };
    Finding {
        cause: Cause::Unknown,
        weight: 0.0,
        evidence: format!(
            "No limit was found: the receive window held the sender {} of its busy time and the send buffer {}, {}, there was no loss to speak of, and {reference}.",
            known(f.rwnd_limited_frac),
            known(f.sndbuf_limited_frac),
            cpu
        ),
        advice: match busy {
            Some(_) => {
                "pin the ends to separate CPUs (-A 0,1) to see whether that CPU is the limit; run longer (-t)"
                    .into()
            }
            None => "run longer (-t), or with --link to compare with the link's limit".into(),
        },
        bound_bps: None,
    }
}

/// `93%`.
pub(crate) fn pct(frac: f64) -> String {
    format!("{:.0}%", frac * 100.0)
}

fn asked(requested: Option<u64>) -> String {
    requested.map(|r| format!(" (asked {})", size(r as f64))).unwrap_or_default()
}

/// `; 16 KiB ÷ RTT 702 µs allows 187 Mbit/s` and that rate, for a granted `window`: only when
/// the RTT was sampled and the rate it allows is not below the measured goodput (then the
/// window, as granted, bounded nothing the evidence could show).
fn window_bound_text(f: &Facts, window: Option<u64>) -> (String, Option<f64>) {
    let (Some(rtt), Some(window)) = (f.rtt_us.filter(|&r| r > 0.0), window.filter(|&w| w > 0)) else {
        return (String::new(), None);
    };
    let allows = window as f64 * 8.0 / (rtt / 1e6);
    if allows < crate::verdict::BOUND_SLACK * f.goodput_bps {
        return (String::new(), None);
    }
    (format!("; {} ÷ RTT {} allows {}", size(window as f64), micros(rtt), rate(allows)), Some(allows))
}

/// A fixed window of under [`STOP_AND_GO_SEGMENTS`] segments, said as the mechanism: the
/// receiver opens it a segment at a time (and closes it rather than offer a silly window), so
/// the sender stalls on window updates far below what the window's size allows over the RTT.
fn few_segments(f: &Facts, window: BufferFact) -> String {
    let (Some(w), Some(mss)) = (window.granted, f.mss_bytes.filter(|&m| m > 0)) else { return String::new() };
    let segments = w as f64 / mss as f64;
    if window.requested.is_none() || segments >= STOP_AND_GO_SEGMENTS {
        return String::new();
    }
    let w = size(w as f64);
    if segments < 1.0 {
        format!(
            "; {w} holds less than one segment of {mss} B: the sender keeps each full segment back \
             until a window update or its persist timer"
        )
    } else if segments < 2.0 {
        format!(
            "; {w} holds {segments:.1} segments of {mss} B, one whole: the sender sends one, then waits \
             for its acknowledgement (which the receiver may delay)"
        )
    } else {
        format!(
            "; {w} holds {segments:.1} segments of {mss} B: the window opens a segment at a time and the \
             sender stalls on its updates"
        )
    }
}

/// The BDP at the reference rate and the measured RTT, bytes.
fn bdp_bytes(f: &Facts) -> Option<f64> {
    let r = f.reference.as_ref()?;
    let rtt = f.rtt_us.filter(|&r| r > 0.0)?;
    (r.limit_bps > 0.0).then(|| r.limit_bps * rtt / 1e6 / 8.0)
}

/// `n` segments of the connection's MSS, bytes (0 when the MSS is unknown).
fn segments_of(f: &Facts, n: f64) -> f64 {
    f.mss_bytes.map_or(0.0, |m| m as f64 * n)
}

fn buffer_advice(f: &Facts, flag: &str, now: u64) -> String {
    match (bdp_bytes(f), &f.reference, f.rtt_us) {
        (Some(bdp), Some(r), Some(rtt)) => format!(
            "raise {flag} to ≥ {}: BDP at {} × RTT {}, and at least {STOP_AND_GO_SEGMENTS:.0} segments",
            size(bdp.max(now as f64 * 2.0).max(segments_of(f, STOP_AND_GO_SEGMENTS)).ceil()),
            rate(r.limit_bps),
            micros(rtt)
        ),
        _ => format!("raise {flag} above {} (or leave it unset so Linux autotunes it)", size(now as f64)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{BufferFact, PathDrops};
    use results::Reference;

    fn base() -> Facts {
        Facts {
            direction: "client→server".into(),
            client_sends: true,
            goodput_bps: 5e9,
            rtt_us: Some(50.0),
            rwnd_limited_frac: Some(0.0),
            sndbuf_limited_frac: Some(0.0),
            receive_buffer: BufferFact { granted: Some(131_072), requested: None },
            send_buffer: BufferFact { granted: Some(16_384), requested: None },
            mss_bytes: Some(1448),
            send_len: 131_072,
            recv_len: 131_072,
            avg_write_bytes: Some(131_072.0),
            avg_read_bytes: Some(131_072.0),
            retransmits: Some(0),
            segments_out: Some(1_000_000),
            ..Facts::default()
        }
    }

    fn cpu(process_pct: f64) -> SideCpu {
        SideCpu { process_pct, threads: 1, busiest_pct: process_pct, ..SideCpu::default() }
    }

    fn link_ref(limit_bps: f64) -> Option<Reference> {
        Some(Reference { kind: ReferenceKind::Link, description: "ethernet:1g".into(), limit_bps })
    }

    #[test]
    fn a_quiet_result_has_no_finding() {
        let f = base();
        assert!(ALL.iter().all(|rule| rule(&f).is_none()));
        assert_eq!(nothing_found(&f).cause, Cause::Unknown);
    }

    #[test]
    fn link_applies_within_ten_percent() {
        let mut f = base();
        f.goodput_bps = 930e6;
        f.reference = link_ref(941.48e6);
        assert_eq!(link(&f).map(|x| x.cause), Some(Cause::Link));
        f.goodput_bps = 800e6;
        assert!(link(&f).is_none());
        f.reference = Some(Reference {
            kind: ReferenceKind::LoopbackBaseline,
            description: String::new(),
            limit_bps: 810e6,
        });
        assert!(link(&f).is_none(), "a loopback baseline is not a link");
    }

    #[test]
    fn small_writes_blame_the_application() {
        let mut f = base();
        (f.send_len, f.avg_write_bytes) = (100, Some(100.0));
        f.nodelay = true;
        let x = application(&f);
        assert_eq!(x.as_ref().map(|x| x.weight), Some(0.95));
        assert!(x.is_some_and(
            |x| x.evidence.contains("writes of 100 B (10000 per MB)") && x.advice.contains("-N")
        ));
        (f.send_len, f.avg_write_bytes) = (2048, Some(2048.0));
        assert_eq!(application(&f).map(|x| x.weight), Some(0.6));
        // The words follow the bytes: 1024-byte writes are not "a few bytes".
        (f.send_len, f.avg_write_bytes) = (1024, Some(1024.0));
        let x = application(&f).map(|x| x.evidence).unwrap_or_default();
        assert!(!x.contains("few bytes") && x.contains("a syscall per 1.00 KiB"), "{x}");
        (f.send_len, f.avg_write_bytes) = (65_536, Some(65_536.0));
        (f.recv_len, f.avg_read_bytes) = (512, Some(512.0));
        assert!(application(&f).is_some_and(|x| x.advice.contains("--recv-len") && !x.advice.contains("-l ")));
        // Reads made small by a 4 KB receive buffer are not the application's choice.
        (f.recv_len, f.avg_read_bytes) = (131_072, Some(2000.0));
        assert!(application(&f).is_none());
    }

    #[test]
    fn cpu_counts_process_time_and_quota_throttling() {
        let mut f = base();
        f.same_host = true;
        f.receiver_cpu =
            Some(SideCpu { process_pct: 20.0, throttled_pct: 78.0, threads: 1, ..SideCpu::default() });
        assert!(receiver_cpu(&f).is_some_and(|x| x.evidence.contains("quota 78%")));
        f.receiver_cpu =
            Some(SideCpu { process_pct: 10.0, throttled_pct: 25.0, threads: 1, ..SideCpu::default() });
        assert!(receiver_cpu(&f).is_some(), "a throttled end wanted more CPU");
        f.receiver_cpu = Some(cpu(40.0));
        assert!(receiver_cpu(&f).is_none());
        f.sender_cpu = Some(SideCpu { process_pct: 150.0, threads: 2, ..SideCpu::default() });
        assert!(sender_cpu(&f).is_none(), "75% per thread is not saturated");
        f.sender_cpu = Some(cpu(99.0));
        assert_eq!(sender_cpu(&f).map(|x| x.cause), Some(Cause::SenderCpu));
    }

    #[test]
    fn a_saturated_data_thread_is_cpu_bound_even_in_a_shared_process() {
        let mut f = base();
        f.same_host = true;
        // tcp run's embedded server: one process, 160% over two data threads = 80% each on
        // average, but the sending thread itself was on a CPU 99% of its life.
        let shared = SideCpu { process_pct: 160.0, threads: 2, shared: true, ..SideCpu::default() };
        f.sender_cpu = Some(shared.clone());
        assert!(sender_cpu(&f).is_none(), "the average alone is below saturation");
        f.sender_cpu = Some(SideCpu { thread_busy_pct: Some(99.0), ..shared.clone() });
        let x = sender_cpu(&f);
        assert!(x.as_ref().is_some_and(|x| x.evidence.contains("busiest at 99%")), "{x:?}");
        f.receiver_cpu = Some(SideCpu { thread_busy_pct: Some(60.0), ..shared });
        assert!(receiver_cpu(&f).is_none());
        // An autotuned window that closes 21% of the time is the symptom, not the cause.
        f.rwnd_limited_frac = Some(0.21);
        assert_eq!(crate::diagnose(&f).primary.cause, Cause::SenderCpu);
    }

    #[test]
    fn other_load_is_told_from_tcplabs_own_cpu() {
        let mut f = base();
        f.same_host = true;
        f.rwnd_limited_frac = Some(0.3);
        let side = |process_pct: f64, busy: f64| SideCpu {
            process_pct,
            threads: 1,
            thread_busy_pct: Some(busy),
            cores_busy: 2.0,
            util_pct: 100.0,
            softirq_cores: 0.1,
            ..SideCpu::default()
        };
        // Two CPUs full; tcplab's two processes used 0.85 cores: 1.05 cores were someone else's.
        (f.sender_cpu, f.receiver_cpu) = (Some(side(42.0, 42.0)), Some(side(43.0, 43.0)));
        let d = crate::diagnose(&f);
        assert_eq!(d.primary.cause, Cause::OtherLoad, "{d:?}");
        assert!(d.primary.evidence.contains("cores of it other work"), "{}", d.primary.evidence);
        // The same load made by tcplab itself is not "other".
        (f.sender_cpu, f.receiver_cpu) = (Some(side(99.0, 99.0)), Some(side(91.0, 60.0)));
        assert!(other_load(&f).is_none());
        assert_eq!(crate::diagnose(&f).primary.cause, Cause::SenderCpu);
        // At the link's limit the threads were idle, not waiting (e.g. --path on a busy host).
        (f.sender_cpu, f.receiver_cpu) = (Some(side(2.0, 2.0)), Some(side(3.0, 3.0)));
        assert!(other_load(&f).is_some());
        (f.goodput_bps, f.reference) = (48e6, link_ref(48.3e6));
        assert!(other_load(&f).is_none());
        // A host with spare CPU is not competing.
        let mut idle = side(42.0, 42.0);
        idle.util_pct = 70.0;
        (f.sender_cpu, f.receiver_cpu) = (Some(idle.clone()), Some(idle));
        assert!(other_load(&f).is_none());
    }

    #[test]
    fn stolen_time_counts_as_cpu_the_end_could_not_have() {
        // loopback: the client thread ran 81% of the time and the hypervisor stole 27%.
        let mut f = base();
        f.same_host = true;
        let stolen = SideCpu {
            process_pct: 81.0,
            thread_busy_pct: Some(81.0),
            threads: 1,
            steal_pct: 27.0,
            ..SideCpu::default()
        };
        f.sender_cpu = Some(stolen.clone());
        let x = sender_cpu(&f);
        assert!(x.as_ref().is_some_and(|x| x.evidence.contains("27% of CPU time stolen")), "{x:?}");
        assert_eq!(crate::diagnose(&f).primary.cause, Cause::SenderCpu);
        f.sender_cpu = Some(SideCpu { steal_pct: 0.0, ..stolen });
        assert!(sender_cpu(&f).is_none(), "81% alone is not saturated");
        // Hosts apart: a CPU 75% busy with 25% stolen is full.
        let mut f = base();
        f.receiver_cpu = Some(SideCpu {
            process_pct: 30.0,
            busiest_pct: 75.0,
            steal_pct: 25.0,
            threads: 1,
            ..SideCpu::default()
        });
        assert!(receiver_cpu(&f).is_some());
    }

    #[test]
    fn nothing_found_never_denies_a_saturated_cpu() {
        let mut f = base();
        f.same_host = true;
        f.sender_cpu = Some(SideCpu {
            process_pct: 60.0,
            thread_busy_pct: Some(60.0),
            busiest_pct: 100.0,
            threads: 1,
            ..SideCpu::default()
        });
        let d = crate::diagnose(&f);
        assert_eq!(d.primary.cause, Cause::Unknown);
        assert!(!d.primary.evidence.contains("no end's CPU was saturated"), "{}", d.primary.evidence);
        assert!(
            d.primary.evidence.contains("cpu0 was 100% busy but no tcplab thread was saturated"),
            "{}",
            d.primary.evidence
        );
        f.sender_cpu = Some(cpu(40.0));
        assert!(nothing_found(&f).evidence.contains("no end's CPU was saturated"));
    }

    #[test]
    fn busiest_cpu_counts_only_on_separate_hosts() {
        let mut f = base();
        f.receiver_cpu =
            Some(SideCpu { process_pct: 30.0, busiest_pct: 99.0, threads: 1, ..SideCpu::default() });
        assert!(receiver_cpu(&f).is_some());
        f.same_host = true;
        assert!(receiver_cpu(&f).is_none());
    }

    #[test]
    fn a_trace_at_the_window_names_the_receive_window_with_its_evidence() {
        let mut f = base();
        assert_eq!(receive_window(&f), None, "nothing says window without the trace");
        let line = "window-limited: outstanding = announced window (within one segment, 1448 B) in 93% of 2345 ACK samples";
        f.segment_flow = Some(results::segment_flow::FlowDirection {
            window_limited_share: Some(0.93),
            evidence: vec!["segments: 10 data segments".into(), line.into()],
            ..Default::default()
        });
        let x = receive_window(&f);
        assert!(x.as_ref().is_some_and(|x| x.evidence.ends_with(&format!("; trace: {line}"))), "{x:?}");
        assert!((x.map_or(0.0, |x| x.weight) - (0.5 + 0.35 * 0.93)).abs() < 1e-9);
        f.segment_flow = f
            .segment_flow
            .map(|d| results::segment_flow::FlowDirection { window_limited_share: Some(0.3), ..d });
        assert_eq!(receive_window(&f), None, "a trace mostly below the window says nothing");
    }

    #[test]
    fn a_window_of_under_three_segments_says_it_stalls() {
        let mut f = base();
        (f.goodput_bps, f.rtt_us, f.mss_bytes, f.nodelay) = (331e3, Some(797.0), Some(9128), true);
        (f.rwnd_limited_frac, f.receive_buffer.requested, f.receive_buffer.granted) =
            (Some(1.0), Some(8192), Some(16_384));
        f.reference = link_ref(134e6);
        let x = receive_window(&f).unwrap_or_else(|| unreachable!());
        assert!(x.evidence.contains("1.8 segments of 9128 B, one whole"), "{}", x.evidence);
        assert!(x.advice.contains("≥ 26.7 KiB"), "three segments of 9128 B: {}", x.advice);
        // Said as what the sender does with the window: under one segment, or two and more.
        for (granted, says) in
            [(8192, "less than one segment"), (20_000, "2.2 segments of 9128 B: the window opens")]
        {
            f.receive_buffer.granted = Some(granted);
            let x = receive_window(&f).unwrap_or_else(|| unreachable!());
            assert!(x.evidence.contains(says), "{granted}: {}", x.evidence);
        }
        f.receive_buffer.granted = Some(16_384);
        f.mss_bytes = Some(1448);
        let x = receive_window(&f).unwrap_or_else(|| unreachable!());
        assert!(!x.evidence.contains("segments of"), "11 segments is no stall: {}", x.evidence);
    }

    #[test]
    fn receive_window_from_tcp_info_or_bdp() {
        let mut f = base();
        f.rwnd_limited_frac = Some(0.9);
        let x = receive_window(&f);
        assert!(x.as_ref().is_some_and(|x| x.advice.contains("did not read fast enough")));
        assert!((x.map_or(0.0, |x| x.weight) - 0.815).abs() < 1e-9);
        (f.receive_buffer.requested, f.receive_buffer.granted) = (Some(4096), Some(8192));
        let x = receive_window(&f);
        assert!(x.as_ref().is_some_and(|x| x.advice.contains("--remote-rcvbuf")));
        assert_eq!(x.map(|x| x.weight), Some(0.96), "a fixed window ranks above CPU");
        // 1 Gbit/s × 170 ms: rcvbuf of 64 KB is far below the BDP of 21.25 MB.
        f.rwnd_limited_frac = Some(0.0);
        f.client_sends = false;
        f.rtt_us = Some(170_000.0);
        f.receive_buffer.requested = Some(65_536);
        f.reference = link_ref(1e9);
        let x = receive_window(&f);
        assert!(x.as_ref().is_some_and(|x| x.advice.contains("raise --rcvbuf to ≥ 20.3 MiB")), "{x:?}");
        f.receive_buffer.requested = None;
        assert!(receive_window(&f).is_none());
    }

    /// Seed 000's small writes as first run: 64K buffers over OC-3c, a receiver reading 4 B a
    /// call, the window closed most of the time at 26 Mbit/s though it allowed 390 Mbit/s over
    /// the RTT (1 Gbit/s here). The window is the symptom of the slow reads, not the limit.
    #[test]
    fn a_fixed_window_far_above_the_rate_is_a_symptom_not_the_limit() {
        let mut f = base();
        (f.goodput_bps, f.rtt_us, f.rwnd_limited_frac, f.mss_bytes) =
            (26e6, Some(1000.0), Some(0.95), Some(9128));
        (f.receive_buffer.requested, f.receive_buffer.granted) = (Some(65_536), Some(131_072));
        (f.send_len, f.recv_len, f.avg_write_bytes, f.avg_read_bytes) = (4, 4, Some(4.0), Some(4.0));
        f.reference = link_ref(134e6);
        let x = receive_window(&f).unwrap_or_else(|| unreachable!());
        assert!((x.weight - (0.5 + 0.35 * 0.95)).abs() < 1e-9, "{}", x.weight);
        assert!(x.evidence.contains("allows 1.05 Gbit/s; that is 40× the rate measured"), "{}", x.evidence);
        assert!(x.advice.contains("did not read fast enough"), "{}", x.advice);
        assert!(x.bound_bps.is_some(), "the bound stays: it is one, far above");
        assert_eq!(application(&f).map(|x| x.weight), Some(0.95), "the writes, not the window, set the pace");
        assert_eq!(crate::diagnose(&f).primary.cause, Cause::Application);
        // At a third of what the window allows, the window holds the flow.
        f.goodput_bps = 350e6;
        assert_eq!(receive_window(&f).map(|x| x.weight), Some(0.96));
        // So does one of under three segments, whatever its size allows (it stalls).
        (f.goodput_bps, f.mss_bytes) = (26e6, Some(65_000));
        assert_eq!(receive_window(&f).map(|x| x.weight), Some(0.96));
        // A send buffer likewise.
        (f.rwnd_limited_frac, f.sndbuf_limited_frac, f.mss_bytes) = (Some(0.0), Some(0.95), Some(9128));
        (f.send_buffer.requested, f.send_buffer.granted) = (Some(65_536), Some(131_072));
        let x = send_buffer(&f).unwrap_or_else(|| unreachable!());
        assert!((x.weight - (0.5 + 0.3 * 0.95)).abs() < 1e-9 && x.evidence.contains("40×"), "{x:?}");
        assert!(x.advice.contains("acknowledged slowly"), "{}", x.advice);
    }

    /// Seed 002's OC-3c case with the paper's 8 KB window: clamped to 8192 with an autotuned
    /// buffer of 128 KiB under it. The window named is the clamp, ranked as a window the user
    /// fixed, not the buffer "autotuned" (which read as a symptom and lost to the write size).
    #[test]
    fn a_clamped_window_is_named_as_the_window_the_user_fixed() {
        let mut f = base();
        (f.goodput_bps, f.rtt_us, f.rwnd_limited_frac, f.mss_bytes) =
            (107e6, Some(600.0), Some(0.81), Some(8192));
        f.reference = link_ref(134.3e6);
        f.window_clamp = Some(8192);
        let x = receive_window(&f).unwrap_or_else(|| unreachable!());
        assert_eq!(x.weight, 0.92);
        assert!(x.evidence.contains("receiver window clamped to 8.00 KiB (TCP_WINDOW_CLAMP); 8.00 KiB ÷ RTT 600 µs allows 109 Mbit/s"), "{}", x.evidence);
        assert!(!x.evidence.contains("autotuned"), "{}", x.evidence);
        assert!(x.advice.contains("--window-clamp"), "{}", x.advice);
        assert!(x.bound_bps.is_some_and(|b| (b - 109.2e6).abs() < 0.1e6), "{:?}", x.bound_bps);
        f.window_clamp = None;
        assert!(receive_window(&f).is_some_and(|x| x.weight < 0.9 && x.evidence.contains("autotuned")));
    }

    #[test]
    fn send_buffer_names_the_senders_flag() {
        let mut f = base();
        f.sndbuf_limited_frac = Some(0.5);
        assert!(
            send_buffer(&f).is_some_and(|x| x.advice.contains("--sndbuf") && (x.weight - 0.65).abs() < 1e-9)
        );
        f.send_buffer.requested = Some(65_536);
        assert_eq!(send_buffer(&f).map(|x| x.weight), Some(0.92), "a fixed buffer ranks above CPU and load");
        f.send_buffer.requested = None;
        f.client_sends = false;
        assert!(send_buffer(&f).is_some_and(|x| x.advice.contains("--remote-sndbuf")));
        f.sndbuf_limited_frac = Some(0.1);
        assert!(send_buffer(&f).is_none());
    }

    #[test]
    fn a_trace_with_room_in_window_and_cwnd_names_the_sender() {
        let mut f = base();
        assert!(traced_sender(&f).is_none(), "no trace, no finding");
        let wire = results::segment_flow::WireFindings {
            traced_ms: 2000.0,
            unlimited_time: 0.8,
            window_limited_time: 0.05,
            cwnd_limited_time: 0.15,
            ..Default::default()
        };
        f.segment_flow =
            Some(results::segment_flow::FlowDirection { wire: Some(wire.clone()), ..Default::default() });
        let x = traced_sender(&f);
        assert!(
            x.as_ref()
                .is_some_and(|x| x.cause == Cause::SenderCpu && x.evidence.contains("room 80% of 2000 ms")),
            "{x:?}"
        );
        let held =
            results::segment_flow::WireFindings { unlimited_time: 0.3, window_limited_time: 0.7, ..wire };
        f.segment_flow =
            Some(results::segment_flow::FlowDirection { wire: Some(held), ..Default::default() });
        assert!(traced_sender(&f).is_none());
    }

    /// A sender spinning on a window that opens a segment at a time is busy because of the
    /// buffer; the buffer is the cause (seen in CI: "sender CPU" named for `-R --rcvbuf 4K`).
    #[test]
    fn a_fixed_tiny_buffer_comes_before_the_cpu_it_keeps_busy() {
        let mut f = base();
        f.goodput_bps = 0.9e6;
        (f.receive_buffer.requested, f.receive_buffer.granted) = (Some(4096), Some(8192));
        f.sender_cpu = Some(cpu(100.0));
        let (tiny, busy) = (crate::stall::stop_and_go(&f), sender_cpu(&f));
        assert!(busy.is_some(), "the sender's core was saturated");
        assert!(tiny.zip(busy).is_some_and(|(t, b)| t.weight > b.weight));
    }

    #[test]
    fn loss_counts_off_loopback_only() {
        use crate::loss::congestion;
        let mut f = base();
        f.retransmits = Some(2_000);
        f.rtt_us = Some(170_000.0);
        f.goodput_bps = 1.5e6;
        let x = congestion(&f);
        assert!(x.as_ref().is_some_and(|x| x.weight == 0.7 && x.evidence.contains("Mathis")), "{x:?}");
        (f.retransmits, f.goodput_bps) = (Some(200), 3e6);
        assert_eq!(congestion(&f).map(|x| x.weight), Some(0.45));
        f.goodput_bps = 30e6;
        assert!(congestion(&f).is_none(), "a bound 5× below the rate: not the loss");
        f.goodput_bps = 0.5e6;
        assert!(congestion(&f).is_none(), "a bound 12× above the rate: the loss did not hold it back");
        f.goodput_bps = 3e6;
        f.same_host = true;
        assert!(congestion(&f).is_none());
    }

    #[test]
    fn loss_at_a_full_bottleneck_queue_is_the_links_doing_at_the_links_rate() {
        // stream --path gige at 97% of the link, bbr, drops all at the emulator's full queue.
        let mut f = base();
        (f.goodput_bps, f.reference) = (913e6, link_ref(941.48e6));
        (f.retransmits, f.rtt_us) = (Some(2_000), Some(400.0));
        f.congestion_control = "bbr".into();
        f.path_drops = Some(PathDrops { queue_overflow: 1_990, random: 0 });
        let d = crate::diagnose(&f);
        assert_eq!(d.primary.cause, Cause::Link, "{d:?}");
        assert!(d.contributing.iter().all(|x| x.cause != Cause::QueueOverflow), "{d:?}");
        // Below the link's rate the overflowing queue is the limit, said as such.
        f.goodput_bps = 500e6;
        let d = crate::diagnose(&f);
        assert_eq!(d.primary.cause, Cause::QueueOverflow, "{d:?}");
        assert!(d.primary.evidence.contains("full queue dropped 1990 packets (0 at random)"), "{d:?}");
        assert!(!d.primary.advice.contains("-C bbr"), "{d:?}");
    }

    #[test]
    fn a_link_full_of_retransmits_is_still_the_link_said_as_offered() {
        // 87% of the link delivered, 9% of segments resent after queue overflow: the link was full.
        let mut f = base();
        (f.goodput_bps, f.reference) = (1.68e9, link_ref(1.93e9));
        (f.retransmits, f.segments_out, f.rtt_us) = (Some(42_926), Some(479_680), Some(2_000.0));
        f.path_drops = Some(PathDrops { queue_overflow: 43_021, random: 0 });
        let d = crate::diagnose(&f);
        assert_eq!(d.primary.cause, Cause::Link, "{d:?}");
        assert!(d.primary.evidence.contains("the sender offered 96%"), "{}", d.primary.evidence);
        // Offered beyond the link: never "carried" more than 100 %.
        f.goodput_bps = 1.9e9;
        let d = crate::diagnose(&f);
        assert!(
            d.primary.evidence.contains("offered 108%") && !d.primary.evidence.contains("carried"),
            "{d:?}"
        );
        // Random drops are not the link being full.
        f.goodput_bps = 1.68e9;
        f.path_drops = Some(PathDrops { queue_overflow: 0, random: 43_021 });
        assert!(link(&f).is_none());
    }

    #[test]
    fn a_window_bound_is_computed_from_what_was_granted() {
        // study atm-loss: 8 KiB asked, 16 KiB granted, RTT 702 µs, 113.7 Mbit/s measured.
        let mut f = base();
        (f.goodput_bps, f.rtt_us) = (113.7e6, Some(702.0));
        (f.receive_buffer.requested, f.receive_buffer.granted) = (Some(8192), Some(16_384));
        f.rwnd_limited_frac = Some(0.6);
        let x = receive_window(&f).unwrap_or_else(|| unreachable!());
        assert!(x.evidence.contains("16.0 KiB ÷ RTT 702 µs allows 187 Mbit/s"), "{}", x.evidence);
        assert!(x.bound_bps.is_some_and(|b| b >= 113.7e6));
        // A granted window that allows less than was measured prints no bound at all.
        f.receive_buffer.granted = Some(8192);
        let x = receive_window(&f).unwrap_or_else(|| unreachable!());
        assert!(!x.evidence.contains("allows") && x.bound_bps.is_none(), "{}", x.evidence);
    }

    #[test]
    fn tiny_reads_that_close_an_autotuned_window_are_the_application() {
        // stream -l 100 -N on loopback: the receiver's 100-byte reads close its window.
        let mut f = base();
        (f.send_len, f.avg_write_bytes, f.nodelay) = (100, Some(100.0), true);
        (f.recv_len, f.avg_read_bytes, f.rwnd_limited_frac) = (100, Some(100.0), Some(0.84));
        assert_eq!(crate::diagnose(&f).primary.cause, Cause::Application);
    }

    #[test]
    fn a_window_limited_sender_is_not_blamed_on_its_writes() {
        // stream --path atm-oc3-clip -l 1K -N -w 8K: rwnd-limited 99.6 %.
        let mut f = base();
        (f.send_len, f.avg_write_bytes, f.nodelay) = (1024, Some(1000.0), true);
        (f.receive_buffer.requested, f.receive_buffer.granted, f.rwnd_limited_frac) =
            (Some(8192), Some(16_384), Some(0.996));
        assert_eq!(crate::diagnose(&f).primary.cause, Cause::ReceiveWindow);
    }

    #[test]
    fn unknown_figures_are_never_read_as_zero() {
        // A stock iperf3 sender: no TCP_INFO, no call counts.
        let f = Facts {
            direction: "server→client".into(),
            goodput_bps: 9e9,
            send_len: 131_072,
            recv_len: 131_072,
            ..Facts::default()
        };
        let d = crate::diagnose(&f);
        assert_eq!(d.primary.cause, Cause::Unknown);
        let e = &d.primary.evidence;
        assert!(e.contains("unmeasured") && !e.contains("0 B") && !e.contains(" 0%"), "{e}");
        assert!(e.starts_with("No limit was found") && e.ends_with('.'), "{e}");
    }

    #[test]
    fn far_above_the_link_the_link_rule_steps_aside() {
        let mut f = base();
        (f.goodput_bps, f.reference) = (12.1e9, link_ref(941.48e6));
        assert!(link(&f).is_none(), "1288% of a link is not that link's limit");
        f.goodput_bps = 960e6;
        assert!(link(&f).is_some(), "102%: measurement noise");
    }

    #[test]
    fn ranking_puts_causes_before_their_symptoms() {
        // A throttled receiver closes the window: CPU first, window second.
        let mut f = base();
        f.same_host = true;
        f.rwnd_limited_frac = Some(0.95);
        f.receiver_cpu =
            Some(SideCpu { process_pct: 10.0, throttled_pct: 85.0, threads: 1, ..SideCpu::default() });
        let d = crate::diagnose(&f);
        assert_eq!(d.primary.cause, Cause::ReceiverCpu);
        assert_eq!(d.contributing.first().map(|x| x.cause), Some(Cause::ReceiveWindow));
        // Tiny writes saturate the sender: the application first.
        let mut f = base();
        (f.send_len, f.avg_write_bytes) = (100, Some(100.0));
        f.sender_cpu = Some(cpu(99.0));
        let d = crate::diagnose(&f);
        assert_eq!(d.primary.cause, Cause::Application);
        assert_eq!(d.contributing.first().map(|x| x.cause), Some(Cause::SenderCpu));
    }
}
