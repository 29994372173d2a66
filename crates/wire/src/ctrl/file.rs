//! A file transfer's figures at the reporting end, sent inside `results` for `file` tests
//! (absent for every other test type, so other tests' bytes are unchanged).

use serde::{Deserialize, Serialize};

/// What one end of a file transfer did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileReport {
    /// `write`, `sendfile`, `splice`, `zerocopy` (sender) or `read`, `skip-copy` (receiver).
    pub mode: String,
    /// `null`, `page-cache`, `direct`, `fsync` (receiver); absent at a sender.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sink: Option<String>,
    /// File bytes moved through the socket.
    pub bytes: u64,
    /// Seconds preparing the source before the start.
    pub prepare_s: f64,
    /// Seconds in socket calls.
    pub net_s: f64,
    /// Seconds reading the source or writing the sink.
    pub disk_s: f64,
    /// Seconds in the final sync (part of `disk_s`).
    pub sync_s: f64,
    /// Seconds hashing during the test.
    pub hash_s: f64,
    /// SHA-256 of the bytes sent or received, 64 lowercase hex digits; null if not seen.
    pub sha256: Option<String>,
    /// `MSG_ZEROCOPY` counts (sender in `zerocopy` mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zerocopy: Option<ZeroCopyReport>,
}

/// `MSG_ZEROCOPY` sends and their completions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZeroCopyReport {
    /// Send calls that took data.
    pub sends: u64,
    /// Sends whose completion arrived.
    pub completed: u64,
    /// Completed sends the kernel copied after all.
    pub copied: u64,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code: a failed unwrap is a failed test")]
    use super::*;

    const SENDER: &str = r#"{"mode":"zerocopy","bytes":11534336,"prepare_s":0.02,"net_s":0.5,"disk_s":0.0,"sync_s":0.0,"hash_s":0.0,"sha256":null,"zerocopy":{"sends":88,"completed":88,"copied":88}}"#;

    #[test]
    fn parses_and_emits_the_fixture() {
        let r: FileReport = serde_json::from_str(SENDER).unwrap();
        assert_eq!(r.zerocopy, Some(ZeroCopyReport { sends: 88, completed: 88, copied: 88 }));
        assert_eq!(r.sink, None);
        assert_eq!(serde_json::to_string(&r).unwrap(), SENDER);
    }

    #[test]
    fn unknown_fields_are_refused() {
        let bad = SENDER.replace("\"net_s\"", "\"network_s\"");
        assert!(serde_json::from_str::<FileReport>(&bad).is_err());
    }
}
