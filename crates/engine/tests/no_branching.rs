//! Issue 27: only the registry classifies test types. Walks every crate's sources and fails
//! when code outside `engine/src/registry*` branches on `TestKind`, `Shape` or the registry's
//! `Transport`, so a new type or transport cannot slip past a `match` that forgot it.
//!
//! The rule. A line is a *branch site* when it names a variant (`TestKind::File`,
//! `Shape::UdpBulk`, `Transport::Udp`, …) where it is tested rather than built:
//! - before the `=>` of a match arm (`Shape::TcpBulk => …`, `(TestKind::File, _) => …`);
//! - on a line comparing with `==` or `!=`;
//! - inside `matches!(…)`;
//! - in the pattern of an `if let`, `while let` or `let … else`.
//!
//! Naming a kind to build something (`TestSpec::new(TestKind::TcpStream)`,
//! `registry::of(TestKind::Udp…).about()`, the right side of another enum's arm) is not a
//! branch. Test code (`tests/`, `tests.rs`, `*_tests.rs`, a trailing `#[cfg(test)] mod`) is
//! not walked. `model` has an enum of its own named `Transport` (TCP or UDP headers), so
//! `Transport::` counts only in files that name `registry::Transport`.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where a branch is allowed, and why.
const EXCEPTIONS: &[(&str, &str)] = &[
    ("crates/engine/src/registry.rs", "the registry: the one place that classifies"),
    ("crates/engine/src/registry/", "the test types themselves"),
    ("crates/engine/src/iperf3/", "the iperf3 codec: iperf3's wire knows TCP and UDP streams only"),
    ("crates/engine/src/server/iperf3/", "the iperf3 codec, server side"),
    ("crates/report/src/iperf3_json/", "iperf3's JSON format has a TCP and a UDP layout"),
    ("crates/results/src/spec.rs", "TestKind's own id table (the enum naming itself)"),
];

/// Branch sites still to convert, per file (lines): none (21 when this test came, issue 27). The test fails when a file has more (a
/// new branch) and when it has fewer (lower the number: the list must say what is left).
const LEFT: &[(&str, usize)] = &[];

const VARIANTS: &[&str] = &[
    "TestKind::TcpStream",
    "TestKind::TcpRr",
    "TestKind::TcpCrr",
    "TestKind::UdpStream",
    "TestKind::UdpRr",
    "TestKind::File",
    "TestKind::SegmentCost",
    "Shape::TcpBulk",
    "Shape::UdpBulk",
    "Shape::Transactions",
    "Transport::TcpConnections",
    "Transport::TcpPerTransaction",
    "Transport::Udp",
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
        } else if name.ends_with(".rs") && name != "tests.rs" && !name.ends_with("_tests.rs") {
            out.push(path);
        }
    }
}

/// The part of `line` a branch could be in: the pattern side of an
/// arm, the pattern of a `let`, or all of it for comparisons and `matches!`.
fn tested_part(line: &str) -> Option<&str> {
    if line.contains("==") || line.contains("!=") || line.contains("matches!(") {
        return Some(line);
    }
    if let Some(arm) = line.find("=>") {
        return Some(&line[..arm]);
    }
    let trimmed = line.trim_start();
    let is_let = trimmed.starts_with("if let ")
        || trimmed.starts_with("while let ")
        || trimmed.contains("} else if let ")
        || (trimmed.starts_with("let ") && line.contains(" else {"));
    if is_let {
        return line.find(" = ").map(|eq| &line[..eq]);
    }
    None
}

fn names_variant(part: &str, registry_transport: bool) -> bool {
    VARIANTS.iter().any(|v| {
        let found = part.match_indices(v).any(|(at, _)| {
            let next = part[at + v.len()..].chars().next();
            !next.is_some_and(|c| c.is_alphanumeric() || c == '_')
        });
        found && (registry_transport || !v.starts_with("Transport::"))
    })
}

/// The branch sites of one file: (line number, line).
fn branch_sites(text: &str) -> Vec<(usize, String)> {
    let registry_transport = text.contains("registry::Transport");
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let next = lines.get(i + 1).map_or("", |l| l.trim_start());
        if line.trim_start().starts_with("#[cfg(test)]") && next.starts_with("mod ") {
            break;
        }
        if line.trim_start().starts_with("//") {
            continue;
        }
        if tested_part(line).is_some_and(|part| names_variant(part, registry_transport)) {
            out.push((i + 1, line.trim().to_string()));
        }
    }
    out
}

#[test]
fn the_rule_tells_a_branch_from_a_constructor() {
    let sites = |s: &str| branch_sites(s).len();
    assert_eq!(sites("match k { TestKind::File => 1, _ => 2 }"), 1);
    assert_eq!(sites("if s.shape == Some(Shape::TcpBulk) {"), 1);
    assert_eq!(sites("let Some(x) = y.filter(|_| s == Some(Shape::Transactions)) else { return };"), 1);
    assert_eq!(sites("if matches!(t, TestKind::UdpRr) {"), 1);
    assert_eq!(sites("    if let Some(Shape::UdpBulk) = s.shape {"), 1);
    assert_eq!(sites("let spec = TestSpec::new(TestKind::TcpStream);"), 0);
    assert_eq!(sites("Cmd::Stream(a) => link(&a.link, TestKind::TcpStream),"), 0);
    assert_eq!(sites("Transport::Udp => None,"), 0, "model's own Transport");
    assert_eq!(sites("use engine::registry::Transport;\nTransport::Udp => None,"), 1);
    assert_eq!(sites("#[cfg(test)]\nmod tests {\n TestKind::File => 1,\n}"), 0);
}

#[test]
fn only_the_registry_branches_on_test_kind_shape_or_transport() {
    let root = workspace();
    let mut files = Vec::new();
    sources(&root.join("crates"), &mut files);
    let mut found: BTreeMap<String, Vec<(usize, String)>> = BTreeMap::new();
    for path in files {
        let rel = path.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
        if !rel.contains("/src/") || EXCEPTIONS.iter().any(|(p, _)| rel.starts_with(p)) {
            continue;
        }
        let sites = branch_sites(&std::fs::read_to_string(&path).unwrap());
        if !sites.is_empty() {
            found.insert(rel, sites);
        }
    }
    let mut problems = Vec::new();
    for (file, sites) in &found {
        let left = LEFT.iter().find(|(f, _)| f == file).map_or(0, |(_, n)| *n);
        if sites.len() != left {
            let lines: Vec<String> = sites.iter().map(|(n, l)| format!("  {file}:{n}: {l}")).collect();
            problems.push(format!(
                "{file}: {} branch site(s), {left} listed\n{}",
                sites.len(),
                lines.join("\n")
            ));
        }
    }
    for (file, n) in LEFT.iter().filter(|(f, _)| !found.contains_key(*f)) {
        problems.push(format!("{file}: 0 branch sites, {n} listed (lower LEFT)"));
    }
    let total: usize = found.values().map(Vec::len).sum();
    eprintln!("branch sites outside the registry and the exceptions: {total}");
    assert!(problems.is_empty(), "ask the registry instead of branching:\n{}", problems.join("\n"));
}
