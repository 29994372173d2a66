//! A file transfer's own figures (the `file` test): where the time went (disk apart from
//! network), whether the file arrived intact, and what the kernel did with zero-copy sends.

use serde::{Deserialize, Serialize};

/// What one end of a file transfer did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileSide {
    /// How the data went through the socket: `write`, `sendfile`, `splice`, `zerocopy`
    /// (sender) or `read`, `skip-copy` (receiver).
    pub mode: String,
    /// Where received data went: `null`, `page-cache`, `direct`, `fsync` (receiver only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sink: Option<String>,
    /// File bytes moved through the socket.
    pub bytes: u64,
    /// Before the start, not in the test's time: writing the generated source and hashing
    /// the source (sender).
    pub prepare_s: f64,
    /// Time in socket calls (for sendfile and splice this includes the kernel reading the
    /// file's pages).
    pub net_s: f64,
    /// Time reading the source (sender, `write` mode) or writing the sink, the final sync
    /// included (receiver).
    pub disk_s: f64,
    /// The final `fdatasync` (receiver, `fsync` sink; part of `disk_s`).
    pub sync_s: f64,
    /// Time hashing during the test (receiver).
    pub hash_s: f64,
    /// SHA-256 of the file as sent (sender) or as it arrived (receiver), lowercase hex;
    /// `None` where the data was never seen (`skip-copy`).
    pub sha256: Option<String>,
    /// `MSG_ZEROCOPY` sends and their completions (sender, `zerocopy` mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zerocopy: Option<ZeroCopyCounts>,
}

/// `MSG_ZEROCOPY` sends and what their completions said.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZeroCopyCounts {
    /// Send calls that took data.
    pub sends: u64,
    /// Sends whose completion arrived.
    pub completed: u64,
    /// Completed sends the kernel reported as copied after all (`SO_EE_CODE_ZEROCOPY_COPIED`).
    pub copied: u64,
}

impl ZeroCopyCounts {
    /// Completed sends that really went without a copy, 0–1; `None` before any completed.
    pub fn zero_copied_frac(&self) -> Option<f64> {
        (self.completed > 0)
            .then(|| self.completed.saturating_sub(self.copied) as f64 / self.completed as f64)
    }
}

/// Whether the file arrived as it was sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "outcome")]
pub enum Verification {
    /// Both ends hashed the same bytes.
    Match {
        /// The SHA-256, hex.
        sha256: String,
    },
    /// The bytes that arrived differ from the bytes sent: the transfer failed.
    Mismatch {
        /// The sender's SHA-256.
        sent: String,
        /// The receiver's SHA-256.
        received: String,
    },
    /// Not checked, and why (a receiver that drops the data, a missing report).
    NotChecked {
        /// Why.
        why: String,
    },
}

/// A file transfer summed up from both ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileSummary {
    /// File size, bytes.
    pub size: u64,
    /// Whether it arrived intact.
    pub verification: Verification,
    /// The sending end.
    pub sender: Option<FileSide>,
    /// The receiving end.
    pub receiver: Option<FileSide>,
    /// Zero-copy sends that went without a copy, 0–1 (`zerocopy` mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zero_copied_frac: Option<f64>,
    /// What a reader should know about these figures (e.g. that loopback always copies).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_copied_fraction_counts_completed_sends_only() {
        assert_eq!(ZeroCopyCounts::default().zero_copied_frac(), None);
        let c = ZeroCopyCounts { sends: 10, completed: 8, copied: 2 };
        assert_eq!(c.zero_copied_frac(), Some(0.75));
    }

    #[test]
    fn verification_is_tagged_by_outcome() {
        let v = Verification::Mismatch { sent: "a".into(), received: "b".into() };
        let json = serde_json::to_string(&v).unwrap_or_default();
        assert_eq!(json, r#"{"outcome":"mismatch","sent":"a","received":"b"}"#);
    }
}
