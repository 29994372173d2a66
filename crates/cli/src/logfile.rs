//! The server's log: stderr or `--logfile`, one line per event whatever a peer sent. Each
//! event reaches [`Line::write`] whole (the formatter writes it in one call); inside it,
//! line breaks and other control characters are escaped (`\n`, `\u{1b}`), so no text from a
//! peer that some log call forgot to quote can forge a line or a terminal sequence. The
//! file is reopened on SIGHUP ([`reopen`]): after logrotate renames it, the server writes
//! to a new file at the same path.

use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use anyhow::Result;
use tracing_subscriber::fmt::MakeWriter;

/// Where the log goes.
#[derive(Debug)]
enum Target {
    Stderr,
    File(File),
}

#[derive(Debug)]
struct Sink {
    target: Mutex<Target>,
    path: Option<PathBuf>,
}

/// The server's log writer (cheap to clone; every clone writes to the same place).
#[derive(Debug, Clone)]
pub struct Log(Arc<Sink>);

/// The log of this process, once installed, for [`reopen`].
static INSTALLED: OnceLock<Log> = OnceLock::new();

impl Log {
    /// Appends to `path` (created with mode 0640), or writes to stderr.
    pub fn open(path: Option<PathBuf>) -> Result<Log> {
        let target = match &path {
            Some(p) => Target::File(crate::cmd::daemon::append(p)?),
            None => Target::Stderr,
        };
        let log = Log(Arc::new(Sink { target: Mutex::new(target), path }));
        let _ = INSTALLED.set(log.clone());
        Ok(log)
    }

    fn reopen(&self) -> Result<()> {
        let Some(path) = &self.0.path else { return Ok(()) };
        let file = crate::cmd::daemon::append(path)?;
        *self.0.target.lock().unwrap_or_else(|p| p.into_inner()) = Target::File(file);
        Ok(())
    }
}

/// Reopens the log file at its path (SIGHUP); nothing when the log is stderr. On failure the
/// old file stays in use.
pub fn reopen() -> Result<bool> {
    match INSTALLED.get() {
        Some(log) if log.0.path.is_some() => log.reopen().map(|()| true),
        _ => Ok(false),
    }
}

/// One event being written.
pub struct Line<'a>(MutexGuard<'a, Target>);

impl Write for Line<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let text = escape_event(&String::from_utf8_lossy(buf));
        match &mut *self.0 {
            Target::Stderr => io::stderr().write_all(text.as_bytes()),
            Target::File(f) => f.write_all(text.as_bytes()),
        }?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut *self.0 {
            Target::Stderr => io::stderr().flush(),
            Target::File(f) => f.flush(),
        }
    }
}

impl<'a> MakeWriter<'a> for Log {
    type Writer = Line<'a>;

    fn make_writer(&'a self) -> Line<'a> {
        Line(self.0.target.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// One formatted event as one line: control characters escaped, but for the final line
/// break (and tabs).
fn escape_event(event: &str) -> String {
    let (body, end) = match event.strip_suffix('\n') {
        Some(body) => (body, "\n"),
        None => (event, ""),
    };
    let mut out = String::with_capacity(event.len());
    for c in body.chars() {
        match c {
            '\t' => out.push(c),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&c.escape_unicode().to_string()),
            c => out.push(c),
        }
    }
    out.push_str(end);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_stays_one_line_whatever_it_carries() {
        assert_eq!(escape_event("plain line\n"), "plain line\n");
        assert_eq!(escape_event("a\tb"), "a\tb");
        let forged = "accepted from iperf3 3.12\n2026-11-23T19:30:01Z INFO finished key=admin\r\x1b[2J\n";
        assert_eq!(
            escape_event(forged),
            "accepted from iperf3 3.12\\n2026-11-23T19:30:01Z INFO finished key=admin\\r\\u{1b}[2J\n"
        );
        assert_eq!(escape_event("\u{85}x\n").lines().count(), 1);
    }
}
