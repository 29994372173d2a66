//! Measurement-quality problems, stored with the result and shown with advice.

use serde::{Deserialize, Serialize};

/// What kind of doubt a result carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WarningKind {
    /// The tool itself used most of a core: the number may be the tool's limit.
    ToolCpuSaturated,
    /// A CPU was saturated during the test.
    CpuSaturated,
    /// Client and server ran on the same host: CPU figures count both ends.
    SameHost,
    /// The host is a virtual machine: hypervisor work is invisible.
    Virtualized,
    /// The test was stopped before its end.
    Interrupted,
    /// Too little was measured to mean much.
    TooFewSamples,
    /// Retransmits seen on a path where they are reordering, not loss.
    SpuriousRetransmits,
    /// The kernel granted other socket buffer sizes than asked.
    BufferClamped,
    /// Request/response on one host without pinning: the scheduler chose whether the two ends
    /// shared a core, and latency depends on it.
    Unpinned,
    /// Both ends busy-polled on the same CPU: each spins through the other's time slice.
    SharedCoreSpin,
    /// Repeat-until-confident stopped at the iteration limit before reaching the width asked.
    ConfidenceNotMet,
    /// UDP: the receiver's socket buffer overflowed (the receiver could not keep up).
    ReceiverOverrun,
    /// UDP: sends failed on the sending host (ENOBUFS and the like).
    SendErrors,
    /// UDP: the sender did not reach the target rate.
    RateNotReached,
}

/// A typed warning plus the numbers and advice for a person.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Warning {
    /// Kind.
    pub kind: WarningKind,
    /// What was seen, with numbers.
    pub message: String,
    /// What to do about it.
    pub advice: String,
}
