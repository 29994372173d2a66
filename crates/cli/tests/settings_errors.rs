//! Every setting's error, from the real binary, names only flags of the command that was run
//! (never another command's flag, such as `-n/--bytes` for `file`) and never a spec field id
//! (`duration_ms`, `send_len`): each test command gets a bad value for each of its settings.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

use std::collections::BTreeSet;

use support::{stderr, stdout, tcplab};

/// The test commands, each a test type of the registry.
const COMMANDS: [&str; 7] = ["stream", "rr", "crr", "udp", "udp-rr", "file", "segment-cost"];

/// A value each setting's flag refuses (out of its range, or inconsistent), by flag.
const BAD: &[(&str, &str)] = &[
    ("-l", "32M"),
    ("--recv-len", "32M"),
    ("-r", "32M"),
    ("-w", "1G"),
    ("--sndbuf", "1G"),
    ("--rcvbuf", "1G"),
    ("--remote-sndbuf", "1G"),
    ("--remote-rcvbuf", "1G"),
    ("-M", "10"),
    ("-P", "0"),
    ("--burst", "0"),
    ("-t", "2h"),
    ("-O", "20m"),
    ("-n", "0"),
    ("--size", "0"),
    ("-A", "99999"),
    ("-C", "no-such-cc"),
    ("--window-clamp", "100"),
    ("--recv-delay", "2s"),
];

/// The flags `command --help` lists as options (`-l`, `--len`, …).
fn flags_of(command: &str) -> BTreeSet<String> {
    let out = tcplab(&[command, "--help"]);
    assert!(out.status.success(), "{command} --help");
    let mut flags = BTreeSet::new();
    for line in stdout(&out).lines().map(str::trim_start).filter(|l| l.starts_with('-')) {
        for word in line.split_whitespace().take_while(|w| w.starts_with('-')) {
            flags.insert(word.trim_end_matches(',').to_string());
        }
    }
    flags
}

/// The words of `text` that are flags: `-l`, `--len` (not `-1`).
fn flags_named(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || "/,:;()'\"=".contains(c))
        .filter(|w| {
            let name = w.trim_start_matches('-');
            w.starts_with('-') && name.len() < w.len() && name.starts_with(|c: char| c.is_ascii_alphabetic())
        })
        .map(str::to_string)
        .collect()
}

/// Lower-case words joined by `_` (a spec field id such as `duration_ms`).
fn field_ids(text: &str) -> Vec<&str> {
    text.split(|c: char| !(c.is_ascii_lowercase() || c == '_'))
        .filter(|w| w.contains('_') && !w.starts_with('_') && !w.ends_with('_'))
        .collect()
}

#[test]
fn every_settings_error_names_a_flag_of_its_own_command() {
    let mut wrong = Vec::new();
    let mut tried = 0;
    for command in COMMANDS {
        let has = flags_of(command);
        for (flag, value) in BAD.iter().filter(|(f, _)| has.contains(*f)) {
            tried += 1;
            let out = tcplab(&[command, "127.0.0.1", flag, value]);
            let err = stderr(&out);
            let line = err.lines().next().unwrap_or_default();
            let named = flags_named(line);
            let case = format!("{command} {flag} {value}: {line}");
            if out.status.success() || !line.starts_with("error: ") || err.contains("panicked") {
                wrong.push(format!("{case} (not one clear error)"));
            } else if named.is_empty() || named.iter().any(|f| !has.contains(f)) {
                wrong.push(format!("{case} (names {named:?})"));
            } else if !field_ids(line).is_empty() {
                wrong.push(format!("{case} (internal names {:?})", field_ids(line)));
            }
        }
    }
    assert!(tried >= 70, "only {tried} cases: did the help format change?");
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn file_names_its_size_flag_and_its_own_time_limit() {
    let out = tcplab(&["file", "127.0.0.1", "--size", "0"]);
    assert_eq!(stderr(&out).lines().next(), Some("error: --size: byte limit must be at least 1"));
    let out = tcplab(&["file", "127.0.0.1", "-t", "90m"]);
    assert_eq!(stderr(&out).lines().next(), Some("error: -t/--time must be at most 3600 s"));
}
