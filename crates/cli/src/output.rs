//! The output format the flags choose, and the pipeline's stdout writer for the commands
//! that do not run tests.

use report::Format;

use crate::args::OutputArgs;

pub use pipeline::output::{emit, emit_all, now_unix_ms};

/// The format chosen by the flags.
pub fn format_of(o: &OutputArgs) -> Format {
    if o.iperf3_json {
        Format::Iperf3Json
    } else if o.json {
        Format::Json
    } else if o.json_stream {
        Format::JsonStream
    } else {
        Format::Text
    }
}

/// One JSON document with `--json`, else text (the commands that show one result at their
/// end: `compare`, `archive audit`).
pub fn json_or_text(json: bool) -> Format {
    if json {
        Format::Json
    } else {
        Format::Text
    }
}

/// The format a command that fails promises on stdout: its output flags', or JSON for
/// `compare --json`; `None`: it promises nothing there.
pub fn failure_format(command: &crate::args::Command) -> Option<Format> {
    match command {
        crate::args::Command::Compare(a) => Some(json_or_text(a.json)),
        other => other.output().map(format_of),
    }
}

/// Whether diagnostics on stderr may be coloured: only on a terminal, and not when NO_COLOR
/// is set to anything (no-color.org), so logs redirected to a file or a pipe stay plain text.
pub fn colour_on_stderr() -> bool {
    use std::io::IsTerminal;
    wants_colour(std::io::stderr().is_terminal(), std::env::var_os("NO_COLOR").as_deref())
}

/// The rule behind [`colour_on_stderr`]: a terminal, and NO_COLOR unset or empty.
fn wants_colour(terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    terminal && no_color.is_none_or(|v| v.is_empty())
}

/// The whole chain of `e` on one line, each cause once: a cause whose text its context already
/// ends with is left out (`opening X: not a database: not a database`). An archive that cannot
/// be opened or written gets the ways around it (`--no-store` only when the command has it).
pub fn error_message(e: &anyhow::Error, no_store: bool) -> String {
    let mut message = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if message.ends_with(&text) {
            continue;
        }
        if !message.is_empty() {
            message.push_str(": ");
        }
        message.push_str(&text);
    }
    if e.chain().any(|c| c.downcast_ref::<store::Error>().is_some_and(store::Error::is_unusable_archive)) {
        message.push_str(if no_store {
            " (run with --no-store, or --db PATH for another archive)"
        } else {
            " (--db PATH opens another archive)"
        });
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error that says its cause in its own text and also gives it as its source.
    #[derive(Debug)]
    struct Outer(std::io::Error);

    impl std::fmt::Display for Outer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "opening x.db: {}", self.0)
        }
    }

    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn colour_needs_a_terminal_and_no_no_color() {
        use std::ffi::OsStr;
        assert!(wants_colour(true, None));
        assert!(wants_colour(true, Some(OsStr::new(""))), "an empty NO_COLOR is unset (no-color.org)");
        assert!(!wants_colour(true, Some(OsStr::new("1"))));
        assert!(!wants_colour(false, None), "a file or a pipe");
    }

    #[test]
    fn each_cause_is_said_once() {
        let e =
            anyhow::Error::new(Outer(std::io::Error::other("file is not a database"))).context("starting");
        assert_eq!(error_message(&e, true), "starting: opening x.db: file is not a database");
        let e = anyhow::anyhow!("timed out").context("connecting");
        assert_eq!(error_message(&e, true), "connecting: timed out");
    }

    #[test]
    fn an_archive_that_cannot_be_opened_gets_a_hint() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.db");
        std::fs::write(&path, "not sqlite at all, just some text long enough to be read").unwrap();
        let e = anyhow::Error::new(store::Store::open(&path).unwrap_err());
        let m = error_message(&e, true);
        assert!(
            m.ends_with("file is not a database (run with --no-store, or --db PATH for another archive)"),
            "{m}"
        );
        assert_eq!(m.matches("not a database").count(), 1, "{m}");
        let m = error_message(&e, false);
        assert!(m.ends_with("not a database (--db PATH opens another archive)"), "a reading command: {m}");
    }
}
