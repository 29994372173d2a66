//! The systemd units in contrib/: every `ExecStart=` that runs tcplab (continuation lines
//! joined, `${STATE_DIRECTORY}` and /etc/tcplab moved into an empty temporary directory) is
//! accepted by tcplab's real command line, so that it stops at its first run-time step (a
//! missing key or inventory file) and not at a usage error; and the check itself rejects a
//! line with an option tcplab does not have.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

use std::path::Path;

/// The `ExecStart=` command lines of a unit file, continuation lines joined.
fn exec_starts(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        let part = match &mut current {
            Some(c) => c,
            None if line.starts_with("ExecStart=") => current.insert(String::new()),
            None => continue,
        };
        let body = line.strip_prefix("ExecStart=").unwrap_or(line);
        match body.strip_suffix('\\') {
            Some(more) => part.push_str(more),
            None => {
                part.push_str(body);
                out.extend(current.take());
            }
        }
    }
    out
}

/// Runs `line` (a `/usr/bin/tcplab …` command) with its paths moved under `dir`; its stderr,
/// or why it was a usage error.
fn run_unit_line(line: &str, dir: &Path) -> Result<String, String> {
    let d = dir.display().to_string();
    let line =
        line.replace("${STATE_DIRECTORY}", &format!("{d}/state")).replace("/etc/tcplab", &format!("{d}/etc"));
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(words[0], "/usr/bin/tcplab", "{line}");
    let out = support::command().args(&words[1..]).env_remove("TCPLAB_DB").output().unwrap();
    let err = support::stderr(&out);
    if err.contains("For more information, try '--help'") || err.contains("Usage: tcplab") {
        return Err(format!("{line}: {err}"));
    }
    assert!(!out.status.success(), "{line} ran with nothing to run against: {err}");
    Ok(err)
}

#[test]
fn every_contrib_unit_command_line_parses_against_the_real_cli() {
    let dir = tempfile::tempdir().unwrap();
    let contrib = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../contrib");
    let mut seen = Vec::new();
    for entry in std::fs::read_dir(&contrib).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "service") {
            continue;
        }
        for line in exec_starts(&std::fs::read_to_string(&path).unwrap()) {
            let err = run_unit_line(&line, dir.path()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            // The first run-time step: reading a key, key list or inventory under /etc/tcplab.
            assert!(err.contains(&format!("{}/etc/", dir.path().display())), "{}: {err}", path.display());
            seen.push(path.file_name().unwrap().to_string_lossy().to_string());
        }
    }
    seen.sort();
    for unit in
        ["tcplab-mesh-once.service", "tcplab-mesh.service", "tcplab-server.service", "tcplab-stream.service"]
    {
        assert!(seen.iter().any(|s| s == unit), "{unit} not checked: {seen:?}");
    }
    // The check can fail: an option tcplab does not have is a usage error.
    let bad =
        "[Service]\nExecStart=/usr/bin/tcplab mesh /etc/tcplab/fleet.toml --every 1h \\\n    --evry 2h\n";
    let lines = exec_starts(bad);
    assert_eq!(lines.len(), 1);
    assert!(run_unit_line(&lines[0], dir.path()).is_err());
}
