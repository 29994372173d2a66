//! A file transfer's own block in the text summary: verification, where the time went at
//! each end (network apart from disk and hashing), and what the kernel did with zero-copy
//! sends. Shown whenever a result carries a file summary, whatever its test type.

use std::fmt::Write;

use results::{FileSide, FileSummary, Verification};

use crate::units::{bytes, micros, rate};

/// The file block of a test summary.
pub fn block(o: &mut String, f: &FileSummary) {
    let _ = writeln!(o, "  file {} · {}", bytes(f.size), verification(&f.verification));
    if let Some(s) = &f.sender {
        side_line(o, "sender", s);
    }
    if let Some(r) = &f.receiver {
        side_line(o, "receiver", r);
    }
    if let (Some(z), Some(frac)) = (f.sender.as_ref().and_then(|s| s.zerocopy), f.zero_copied_frac) {
        let _ = writeln!(
            o,
            "    MSG_ZEROCOPY: {} sends, {} completed, {} copied by the kernel → {:.0}% truly zero-copy",
            z.sends,
            z.completed,
            z.copied,
            frac * 100.0
        );
    }
    for n in &f.notes {
        let _ = writeln!(o, "    note: {n}");
    }
}

fn verification(v: &Verification) -> String {
    match v {
        Verification::Match { sha256 } => format!("SHA-256 verified ({}…)", &sha256[..sha256.len().min(16)]),
        Verification::Mismatch { sent, received } => {
            format!("SHA-256 MISMATCH: sent {sent}, received {received}")
        }
        Verification::NotChecked { why } => format!("not verified: {why}"),
    }
}

fn side_line(o: &mut String, what: &str, s: &FileSide) {
    let mode = match &s.sink {
        Some(sink) => format!("{} → {sink}", s.mode),
        None => s.mode.clone(),
    };
    let net_rate = (s.net_s > 0.0).then(|| rate(s.bytes as f64 * 8.0 / s.net_s));
    let mut line = format!(
        "    {what:<9}{mode:<18} network {}{}",
        micros(s.net_s * 1e6),
        net_rate.map(|r| format!(" ({r} in socket calls)")).unwrap_or_default()
    );
    let _ = write!(line, " · disk {}", micros(s.disk_s * 1e6));
    if s.sync_s > 0.0 {
        let _ = write!(line, " (sync {})", micros(s.sync_s * 1e6));
    }
    if s.hash_s > 0.0 {
        let _ = write!(line, " · hash {}", micros(s.hash_s * 1e6));
    }
    if s.prepare_s > 0.0 {
        let _ = write!(line, " · prepared before the start in {}", micros(s.prepare_s * 1e6));
    }
    let _ = writeln!(o, "{line}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::ZeroCopyCounts;

    fn summary(verification: Verification) -> FileSummary {
        let sender = FileSide {
            mode: "zerocopy".into(),
            bytes: 11 << 20,
            net_s: 0.1,
            prepare_s: 0.02,
            zerocopy: Some(ZeroCopyCounts { sends: 88, completed: 88, copied: 22 }),
            ..FileSide::default()
        };
        let receiver = FileSide {
            mode: "read".into(),
            sink: Some("fsync".into()),
            bytes: 11 << 20,
            net_s: 0.12,
            disk_s: 0.05,
            sync_s: 0.04,
            hash_s: 0.03,
            ..FileSide::default()
        };
        FileSummary {
            size: 11 << 20,
            verification,
            sender: Some(sender),
            receiver: Some(receiver),
            zero_copied_frac: Some(0.75),
            notes: vec!["a note".into()],
        }
    }

    #[test]
    fn the_block_shows_both_ends_times_the_verification_and_zero_copy() {
        let mut o = String::new();
        block(&mut o, &summary(Verification::Match { sha256: "0123456789abcdef0123".into() }));
        assert!(o.contains("file 11.0 MiB · SHA-256 verified (0123456789abcdef…)"), "{o}");
        assert!(o.contains("receiver read → fsync"), "{o}");
        assert!(o.contains("(sync 40.0 ms)"), "{o}");
        assert!(o.contains("88 sends, 88 completed, 22 copied by the kernel → 75% truly zero-copy"), "{o}");
        assert!(o.contains("note: a note"), "{o}");
    }

    #[test]
    fn a_mismatch_is_spelled_out() {
        let mut o = String::new();
        block(&mut o, &summary(Verification::Mismatch { sent: "aa".into(), received: "bb".into() }));
        assert!(o.contains("SHA-256 MISMATCH: sent aa, received bb"), "{o}");
    }
}
