//! Installing like a Rust CLI: the README's install commands run as written, the completion
//! scripts load in their shells and complete subcommands and options, the manual pages render.
//! A shell or `man` that is not installed is said and skipped (CI installs them: .ci/packages).
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

use std::path::Path;
use std::process::{Command, Output};

use support::{stderr, stdout, tcplab, BIN};

fn have(program: &str) -> bool {
    let found = Command::new("sh").args(["-c", &format!("command -v {program}")]).output().unwrap();
    if !found.status.success() {
        eprintln!("skipped the {program} part: {program} is not installed");
    }
    found.status.success()
}

fn ok(out: &Output, what: &str) -> String {
    assert!(out.status.success(), "{what}: {}\n{}", stdout(out), stderr(out));
    stdout(out)
}

/// Completion candidates bash's completion function offers for `words` (the last one is being typed).
fn bash_complete(script: &Path, words: &[&str]) -> Vec<String> {
    let words_q: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let (cur, prev) = (words[words.len() - 1], words[words.len() - 2]);
    let program = format!(
        "source '{}'; COMP_WORDS=({}); COMP_CWORD={}; _tcplab tcplab '{cur}' '{prev}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        words_q.join(" "),
        words.len() - 1
    );
    let out = Command::new("bash").args(["-c", &program]).output().unwrap();
    ok(&out, "bash completion").lines().map(str::to_string).collect()
}

#[test]
fn bash_completion_parses_and_completes_commands_and_options() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("tcplab.bash");
    std::fs::write(&script, tcplab(&["completions", "bash"]).stdout).unwrap();
    let check = Command::new("bash").arg("-n").arg(&script).output().unwrap();
    ok(&check, "bash -n");
    assert_eq!(bash_complete(&script, &["tcplab", "str"]), ["stream"]);
    let options = bash_complete(&script, &["tcplab", "stream", "--pa"]);
    assert!(options.contains(&"--path".to_string()), "{options:?}");
    let shells = bash_complete(&script, &["tcplab", "completions", "f"]);
    assert_eq!(shells, ["fish"]);
}

#[test]
fn zsh_and_fish_completions_load() {
    let dir = tempfile::tempdir().unwrap();
    if have("zsh") {
        let script = dir.path().join("_tcplab");
        std::fs::write(&script, ok(&tcplab(&["completions", "zsh"]), "completions zsh")).unwrap();
        ok(&Command::new("zsh").arg("-n").arg(&script).output().unwrap(), "zsh -n");
        assert!(std::fs::read_to_string(&script).unwrap().starts_with("#compdef tcplab"));
    }
    if have("fish") {
        let script = dir.path().join("tcplab.fish");
        std::fs::write(&script, ok(&tcplab(&["completions", "fish"]), "completions fish")).unwrap();
        let program = format!("source '{}'; complete -C 'tcplab str'", script.display());
        let out = ok(&Command::new("fish").args(["-c", &program]).output().unwrap(), "fish");
        assert!(out.starts_with("stream\t"), "{out}");
    }
    let out = tcplab(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2), "an unknown shell is a usage error");
}

#[test]
fn man_pages_list_every_command_and_render() {
    let page = ok(&tcplab(&["man"]), "tcplab man");
    assert!(page.contains(".TH tcplab 1"), "{page}");
    for name in ["run", "server", "stream", "rr", "udp", "emu", "report", "completions", "man"] {
        assert!(page.contains(&format!("tcplab\\-{name}(1)")), "{name} missing from tcplab(1)");
    }
    let stream = ok(&tcplab(&["man", "stream"]), "tcplab man stream");
    assert!(stream.contains(".TH tcplab-stream 1") && stream.contains("\\-\\-path"), "{stream}");
    let out = tcplab(&["man", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).starts_with("error: no command `nope`"), "{}", stderr(&out));
    if have("man") {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("tcplab-stream.1");
        std::fs::write(&file, &stream).unwrap();
        let out =
            Command::new("man").arg("-l").arg(&file).env("MANWIDTH", "80").env("MANPAGER", "cat").output();
        let text = ok(&out.unwrap(), "man -l");
        assert!(text.contains("SYNOPSIS") && text.contains("--path <SPEC>"), "{text}");
    }
}

/// The README's install block, run line by line as written (all but `cargo install`, which
/// the test stands in for with the binary under test) in an empty home directory.
#[test]
fn the_readme_install_commands_work_as_written() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md")).unwrap();
    let start = readme.find("## Install").expect("README has an Install section");
    let block = readme[start..].split("```sh\n").nth(1).unwrap().split("```").next().unwrap();
    assert!(block.contains("cargo install --path crates/cli"), "{block}");
    let home = tempfile::tempdir().unwrap();
    let bin = home.path().join(".cargo/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(BIN, bin.join("tcplab")).unwrap();
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display());
    for line in block.lines().filter(|l| !l.trim().is_empty() && !l.starts_with("cargo install")) {
        let command = line.split(" #").next().unwrap();
        let out =
            Command::new("sh").args(["-ec", command]).env("HOME", home.path()).env("PATH", &path).output();
        ok(&out.unwrap(), line);
    }
    let share = home.path().join(".local/share");
    assert!(share.join("bash-completion/completions/tcplab").is_file());
    assert!(share.join("man/man1/tcplab.1").is_file() && share.join("man/man1/tcplab-stream.1").is_file());
    assert!(home.path().join(".config/fish/completions/tcplab.fish").is_file());
    assert!(home.path().join(".zfunc/_tcplab").is_file());
}
