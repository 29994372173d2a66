//! Issue 27: one settings schema. The socket-buffer settings (`sndbuf`, `rcvbuf`,
//! `remote_sndbuf`, `remote_rcvbuf`) are spelled only where they are declared: the spec's
//! fields with their `buffers`/`set_buffers` accessors, and the settings table. Every other
//! crate reaches them by key (`TestSpec::buffers(End)`, `Buffer::setting(End)`,
//! `setting::RCVBUF.flag`), so renaming one, or adding a fourth buffer, is a change in two
//! files. Walks every crate's sources and fails on a new spelling elsewhere.
//!
//! What counts: the identifier itself (`spec.rcvbuf`, `"rcvbuf"`) and the flag (`--rcvbuf`).
//! Not counted: measurements that carry the word in a longer name (`rcvbuf_actual`, the
//! kernel's `RcvbufErrors` as `udp_mib_rcvbuf_errors`, TCP_INFO's `sndbuf_limited_us`,
//! "sndbuf-limited"), comments, and test code (`tests/`, `*tests.rs`, a trailing
//! `#[cfg(test)] mod`).
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

use std::path::{Path, PathBuf};

const NAMES: &[&str] = &["sndbuf", "rcvbuf", "remote_sndbuf", "remote_rcvbuf"];

/// Where the buffer settings are declared.
const HOMES: &[(&str, &str)] = &[
    ("crates/results/src/spec.rs", "the spec's fields and the one accessor pair that reads and writes them"),
    ("crates/results/src/setting.rs", "the settings table: id, flag, label, parser, limit, wire name"),
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "tests" && name != "target" {
                sources(&path, out);
            }
        } else if name.ends_with(".rs") && !name.ends_with("tests.rs") {
            out.push(path);
        }
    }
}

/// The source before a trailing `#[cfg(test)] mod … {`.
fn without_tests(src: &str) -> &str {
    src.find("#[cfg(test)]\nmod ").map_or(src, |i| &src[..i])
}

/// Whether `line` (code, not a comment) spells a buffer setting as a whole word.
fn spells(line: &str) -> bool {
    let t = line.trim_start();
    if t.starts_with("//") {
        return false;
    }
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let bytes: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        if !word(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && word(bytes[i]) {
            i += 1;
        }
        let token: String = bytes[start..i].iter().collect();
        let hyphenated = bytes.get(i) == Some(&'-'); // "sndbuf-limited", "remote-rcvbuf"
        if NAMES.contains(&token.as_str()) && !hyphenated {
            return true;
        }
    }
    false
}

#[test]
fn buffer_settings_are_spelled_only_where_they_are_declared() {
    let root = workspace();
    let mut files = Vec::new();
    sources(&root.join("crates"), &mut files);
    assert!(files.len() > 100, "walked the workspace's sources: {}", files.len());
    let mut found = Vec::new();
    for path in files {
        let rel = path.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
        if HOMES.iter().any(|(home, _)| rel == *home) {
            continue;
        }
        let src = std::fs::read_to_string(&path).unwrap();
        for (n, line) in without_tests(&src).lines().enumerate() {
            if spells(line) {
                found.push(format!("{rel}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "a buffer setting spelled outside its declaration (reach it by key: TestSpec::buffers, \
         Buffer::setting, setting::RCVBUF.flag):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_rule_tells_settings_from_measurements() {
    for line in ["s.rcvbuf = Some(1);", "raise --remote-sndbuf", "id: \"sndbuf\",", "(a.sndbuf, 1)"] {
        assert!(spells(line), "{line}");
    }
    for line in [
        "rcvbuf_actual: u32,",
        "udp_mib_rcvbuf_errors",
        "t.sndbuf_limited_us",
        "\"sndbuf-lim\",",
        "/// the rcvbuf setting",
        "setting::RCVBUF.flag",
    ] {
        assert!(!spells(line), "{line}");
    }
}
