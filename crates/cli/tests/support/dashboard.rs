//! `tcplab dashboard` started for a test, and ended (killed) when dropped.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};

use super::command;

/// A running dashboard and the address it said it serves on.
pub struct Dashboard {
    child: Child,
    /// `http://127.0.0.1:PORT/`, as its first stderr line gave it.
    pub url: String,
}

impl Dashboard {
    /// `tcplab dashboard --db DB EXTRA…`, once it said where it listens.
    pub fn start(db: &Path, extra: &[&str]) -> Dashboard {
        let mut child = command()
            .args(["dashboard", "--db"])
            .arg(db)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("starting the dashboard: {e}"));
        let mut line = String::new();
        let stderr = child.stderr.take().unwrap_or_else(|| panic!("no stderr"));
        BufReader::new(stderr).read_line(&mut line).unwrap_or_else(|e| panic!("reading its stderr: {e}"));
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no address in {line}"))
            .to_string();
        Dashboard { child, url }
    }

    /// The port of [`Dashboard::url`].
    pub fn port(&self) -> u16 {
        let authority = self.url.trim_start_matches("http://").split('/').next().unwrap_or_default();
        authority
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {}", self.url))
    }
}

impl Drop for Dashboard {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
