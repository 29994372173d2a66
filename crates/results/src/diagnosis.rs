//! What limited a result: the reference it is compared with and the diagnosis of each
//! direction (the rules that produce it live in the `diagnose` crate).

use serde::{Deserialize, Serialize};

/// Where the "theoretical" figure next to a throughput comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReferenceKind {
    /// The model's maximum goodput of a link given with `--link`.
    Link,
    /// The stream measured on this host's loopback in the same run (`tcplab run` without HOST).
    LoopbackBaseline,
}

/// The throughput a result is compared with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    /// Where it comes from.
    pub kind: ReferenceKind,
    /// What it is, for people, e.g. `atm:oc3c · ipv4:tcp:ts` or `loopback stream forward`.
    pub description: String,
    /// The reference goodput, bit/s.
    pub limit_bps: f64,
}

/// A limiting cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cause {
    /// The receiver's advertised window (receive buffer, or a receiver that reads slowly).
    ReceiveWindow,
    /// The sender's socket buffer.
    SendBuffer,
    /// The application: writes or reads too small for the rate.
    Application,
    /// Nagle and delayed ACKs waiting on each other: buffers of only a few segments.
    StopAndGo,
    /// Loss and the congestion window.
    Congestion,
    /// A CPU of the sender.
    SenderCpu,
    /// A CPU of the receiver.
    ReceiverCpu,
    /// The link's capacity: the result is close to the theoretical limit.
    Link,
    /// Other work on a host kept its CPUs busy, so tcplab's threads waited for a CPU.
    OtherLoad,
    /// None of the rules found a limit.
    Unknown,
    /// The sender's own pacing (`-b`): it sent no faster than asked.
    Pacing,
    /// Loss at the bottleneck's full drop-tail queue, below the link's rate: the sender
    /// overran the queue (a loss-based control then cut its window).
    QueueOverflow,
    /// Random loss on the path (not at a queue): TCP's window follows the loss rate.
    RandomLoss,
    /// The link emulator released packets late: its timing, not the modelled link.
    Emulator,
    /// UDP: the receiver's socket buffer overflowed (its kernel dropped the datagrams).
    ReceiverOverrun,
    /// UDP: the sender's kernel refused sends (ENOBUFS or other errors).
    SendErrors,
    /// UDP: datagrams larger than the path MTU, sent as IP fragments.
    Fragmentation,
    /// Request/response: the path's round trip.
    PathRtt,
    /// Request/response: waking the sleeping threads at each end for every transaction.
    WakeUp,
    /// Request/response: a saturated CPU at one end.
    HostCpu,
}

impl Cause {
    /// A short human name.
    pub fn label(self) -> &'static str {
        match self {
            Self::ReceiveWindow => "receive window",
            Self::SendBuffer => "send buffer",
            Self::Application => "application",
            Self::StopAndGo => "Nagle/delayed-ACK stop-and-go",
            Self::Congestion => "congestion/loss",
            Self::SenderCpu => "sender CPU",
            Self::ReceiverCpu => "receiver CPU",
            Self::Link => "link capacity",
            Self::OtherLoad => "other load on the host's CPUs",
            Self::Unknown => "no cause identified",
            Self::Pacing => "the sender's pacing (-b)",
            Self::QueueOverflow => "loss at the bottleneck queue",
            Self::RandomLoss => "random loss on the path",
            Self::Emulator => "the link emulator's timing",
            Self::ReceiverOverrun => "receiver overrun",
            Self::SendErrors => "the sender's send errors",
            Self::Fragmentation => "IP fragmentation",
            Self::PathRtt => "the path's round trip",
            Self::WakeUp => "thread wake-ups per transaction",
            Self::HostCpu => "a saturated CPU",
        }
    }
}

/// A fixed window that allows this many times the measured rate over the RTT did not hold
/// the sender by its size, even when TCP_INFO found it closed: it closed because the receiver
/// read slower than the data came. A window that does hold a flow gives it 0.4–0.75 of what
/// the granted buffer allows (Linux announces part of the buffer it grants). The diagnosis
/// weighs such a window as a symptom, and a study's explanation says it so.
pub const WINDOW_ROOM: f64 = 3.0;

/// One cause with the numbers that show it and what to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// The cause.
    pub cause: Cause,
    /// How strongly the numbers point at it, 0–1 (the highest is the primary cause).
    pub weight: f64,
    /// What was measured, with numbers.
    pub evidence: String,
    /// What to do about it.
    pub advice: String,
    /// The rate this cause allows, bit/s, when the evidence computes one (from what was
    /// granted, never what was asked); never below the measured rate (see `diagnose`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound_bps: Option<f64>,
}

/// What limited one direction of a stream test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diagnosis {
    /// `client→server` or `server→client`.
    pub direction: String,
    /// The main limit.
    pub primary: Finding,
    /// Further limits, strongest first.
    pub contributing: Vec<Finding>,
    /// The evidence does not decide between the primary cause and the first contributing
    /// one (their weights are within a few %): said as "between X and Y".
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub split: bool,
}

impl Diagnosis {
    /// The causes this diagnosis names as the limit: the primary, and the first contributing
    /// cause too when the evidence is split.
    pub fn named(&self) -> Vec<Cause> {
        let mut v = vec![self.primary.cause];
        if self.split {
            v.extend(self.contributing.first().map(|f| f.cause));
        }
        v
    }

    /// The verdict in words: `limited by the link's capacity`, `between X and Y (the evidence
    /// does not decide)`, or `no limit identified`.
    pub fn verdict(&self) -> String {
        match (self.primary.cause, self.split, self.contributing.first()) {
            (Cause::Unknown, _, _) => "no limit identified".into(),
            (p, true, Some(second)) => {
                format!("between {} and {} (the evidence does not decide)", p.label(), second.cause.label())
            }
            (p, _, _) => format!("limited by {}", p.label()),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{TestKind, TestResult, TestSpec};

    #[test]
    fn results_written_before_the_diagnosis_still_parse() {
        let r = TestResult {
            summary: crate::Summary { directions: vec![Default::default()], ..Default::default() },
            ..TestResult::new("stream", TestSpec::new(TestKind::TcpStream), "h:1", 0)
        };
        let mut v = serde_json::to_value(&r).unwrap_or_default();
        let test = v.as_object_mut().map(|o| {
            o.remove("reference");
            o.remove("diagnosis");
        });
        assert!(test.is_some());
        if let Some(d) = v.pointer_mut("/summary/directions/0").and_then(|d| d.as_object_mut()) {
            d.remove("of_reference");
        }
        let old: Result<TestResult, _> = serde_json::from_value(v);
        assert_eq!(old.ok(), Some(r));
        let cpu: Result<crate::ProcessCpu, _> =
            serde_json::from_str(r#"{"user_s":1.0,"system_s":0.5,"pct_of_core":15.0}"#);
        assert_eq!(cpu.ok().map(|c| c.throttled_s), Some(0.0));
    }
}
