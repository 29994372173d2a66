//! A file transfer's own figures: where the time went (disk apart from network), whether the
//! file arrived intact, and what the kernel did with zero-copy sends. They travel as the
//! `file` section of each end's measurement and of the summary (`results::Sections`, in this
//! module's shape, which only this module reads back and checks), and are shown through the
//! summary's generic figures.

use results::{Figure, FigureValue};
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
    /// `None` where the data was never seen (`skip-copy`) or not hashed (`verify` off).
    pub sha256: Option<String>,
    /// `MSG_ZEROCOPY` sends and their completions (sender, `zerocopy` mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zerocopy: Option<ZeroCopyCounts>,
    /// The source file was written to while it was sent (sender): its hash is of the file
    /// before that, so a mismatch says nothing about the transfer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub source_changed: bool,
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
    /// Not checked, and why (`--no-verify`, a receiver that drops the data, a missing report).
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

/// A section's value: this module's shape as JSON.
pub fn to_section<T: Serialize>(value: &T) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}

/// One end's section, checked: it may come from a peer. Names short, times non-negative and
/// finite, the hash 64 lowercase hex digits, copied within completed within sent.
pub fn side_from_section(value: &serde_json::Value) -> Result<FileSide, String> {
    let side: FileSide = serde_json::from_value(value.clone()).map_err(|e| format!("file section: {e}"))?;
    let name_ok = |v: &str| v.len() <= 16 && v.bytes().all(|b| b.is_ascii_lowercase() || b == b'-');
    if !name_ok(&side.mode) || side.sink.as_deref().is_some_and(|s| !name_ok(s)) {
        return Err(format!("file section: '{}' is not a mode name", side.mode));
    }
    let times = [side.prepare_s, side.net_s, side.disk_s, side.sync_s, side.hash_s];
    if times.iter().any(|t| !(t.is_finite() && *t >= 0.0)) {
        return Err("file section: a time is negative or not a number".into());
    }
    if let Some(h) = &side.sha256 {
        if h.len() != 64 || !h.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
            return Err("file section: sha256 is not 64 lowercase hex digits".into());
        }
    }
    if side.zerocopy.is_some_and(|z| z.completed > z.sends || z.copied > z.completed) {
        return Err("file section: more zero-copy completions than sends, or copies than completions".into());
    }
    Ok(side)
}

/// The summary's figures for people: size, verification, each end's times, zero-copy.
pub fn figures(f: &FileSummary) -> Vec<Figure> {
    let mut out = vec![
        Figure::new("file size", FigureValue::Bytes(f.size)),
        Figure::new("verification", FigureValue::Text(verification_text(&f.verification))),
    ];
    for (end, side) in [("sender", &f.sender), ("receiver", &f.receiver)] {
        if let Some(s) = side {
            side_figures(&mut out, end, s);
        }
    }
    if let (Some(z), Some(frac)) = (f.sender.as_ref().and_then(|s| s.zerocopy), f.zero_copied_frac) {
        out.push(Figure::new("MSG_ZEROCOPY sends", FigureValue::Count(z.sends)));
        out.push(Figure::new("MSG_ZEROCOPY completions", FigureValue::Count(z.completed)));
        out.push(Figure::new("completions the kernel copied after all", FigureValue::Count(z.copied)));
        out.push(Figure::new("truly zero-copy", FigureValue::Share(frac)));
    }
    out.extend(f.notes.iter().map(|n| Figure::new("note", FigureValue::Text(n.clone()))));
    out
}

fn side_figures(out: &mut Vec<Figure>, end: &str, s: &FileSide) {
    let mode = match &s.sink {
        Some(sink) => format!("{} → {sink}", s.mode),
        None => s.mode.clone(),
    };
    out.push(Figure::new(format!("{end} mode"), FigureValue::Text(mode)));
    out.push(Figure::new(format!("{end} time in socket calls"), FigureValue::Seconds(s.net_s)));
    if s.net_s > 0.0 {
        let rate = s.bytes as f64 * 8.0 / s.net_s;
        out.push(Figure::new(format!("{end} rate in socket calls"), FigureValue::BitRate(rate)));
    }
    out.push(Figure::new(format!("{end} disk time"), FigureValue::Seconds(s.disk_s)));
    let optional = [
        ("sync time (part of disk)", s.sync_s),
        ("hash time", s.hash_s),
        ("prepared before the start", s.prepare_s),
    ];
    for (what, v) in optional.into_iter().filter(|(_, v)| *v > 0.0) {
        out.push(Figure::new(format!("{end} {what}"), FigureValue::Seconds(v)));
    }
}

fn verification_text(v: &Verification) -> String {
    match v {
        Verification::Match { sha256 } => format!("SHA-256 verified ({}…)", &sha256[..sha256.len().min(16)]),
        Verification::Mismatch { sent, received } => {
            format!("SHA-256 MISMATCH: sent {sent}, received {received}")
        }
        Verification::NotChecked { why } => format!("not verified: {why}"),
    }
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
