//! End to end (issue 28 item 6): the reading commands read an archive this process may not
//! write to. As root, file modes do not stop writes, so the reader runs as `nobody`
//! (setpriv) against a root-owned archive with mode 0444 in a 0755 directory: `history` and
//! `show` list and show its run, and leave no file next to it. Needs root (skipped otherwise).
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

use support::{command, stderr, stdout, ServerProc, BIN};

fn root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}

/// `tcplab ARGS --db DB` as the unprivileged user `nobody`.
fn as_nobody(args: &[&str], db: &Path) -> Output {
    Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN])
        .args(args)
        .arg("--db")
        .arg(db)
        .env("XDG_DATA_HOME", "/nonexistent")
        .env_remove("TCPLAB_DB")
        .output()
        .unwrap()
}

#[test]
fn history_and_show_read_an_archive_they_may_not_write() {
    if !root() {
        eprintln!("skipped: needs root (to run the reader as another user)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let db = dir.path().join("ro.db");
    let srv = ServerProc::start(&[]);
    let run = command()
        .args(["rr", "127.0.0.1", "-p", &srv.port(), "-t", "0.5", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();

    let listed = as_nobody(&["history", "--json"], &db);
    assert!(listed.status.success(), "history on a read-only archive: {}", stderr(&listed));
    let runs: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(runs.as_array().map(Vec::len), Some(1), "{runs}");
    let shown = as_nobody(&["show", "last"], &db);
    assert!(shown.status.success(), "show on a read-only archive: {}", stderr(&shown));
    assert!(stdout(&shown).contains("trans/s"), "{}", stdout(&shown));

    let after: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(before, after, "reading left files behind");
    // Writing is still refused with one clear error.
    let pruned = as_nobody(&["history", "--prune-abandoned"], &db);
    assert!(!pruned.status.success());
    assert!(
        stderr(&pruned).starts_with("error: ") && stderr(&pruned).lines().count() == 1,
        "{}",
        stderr(&pruned)
    );
}

/// A reading command given an archive that does not exist says so in one line and exits 2,
/// and leaves no file behind: reading never creates an archive (it used to create an empty
/// one and report "0 of 0" with exit 0).
#[test]
fn reading_a_missing_archive_is_one_error_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("never-written.db");
    let db_arg = db.to_str().unwrap();
    for args in [&["archive", "regressions"][..], &["history"], &["compare", "1", "2"]] {
        let out = command().args(args).args(["--db", db_arg]).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        assert!(err.contains("no archive at") && err.contains("never-written.db"), "{args:?}: {err}");
        assert!(!db.exists(), "{args:?} created the archive it was to read");
    }
}
