//! End to end: `tcplab keygen`, a keyed `tcplab server`, clients with and without the key,
//! the limits of key classes and anonymous clients, and the server run as a daemon with a
//! pidfile, a log file and SIGHUP re-reading its keys.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use support::{command, stderr, tcplab, ServerProc};

/// A new key file from `tcplab keygen` in `dir`.
fn keygen(dir: &Path, id: &str, class: Option<&str>) -> PathBuf {
    let path = dir.join(format!("{id}.key"));
    let mut args = vec!["keygen", "--id", id, "-o", path.to_str().unwrap()];
    if let Some(c) = class {
        args.extend(["--class", c]);
    }
    let out = tcplab(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    path
}

/// The `key …` line of a key file.
fn key_line(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap().lines().find(|l| l.starts_with("key ")).unwrap().to_string()
}

/// A keys file (mode 0600) holding `lines`.
fn keys_file(dir: &Path, name: &str, lines: &[String]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path
}

fn client(port: &str, test: &str, key: Option<&Path>, extra: &[&str]) -> Output {
    let mut args = vec![test, "127.0.0.1", "-p", port, "-i", "0", "--no-store"];
    if !extra.contains(&"-t") {
        args.extend(["-t", "0.3"]);
    }
    if let Some(k) = key {
        args.extend(["--key-file", k.to_str().unwrap()]);
    }
    args.extend_from_slice(extra);
    tcplab(&args)
}

/// The one `error:` line of a failed client.
fn error_line(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(2), "{}", stderr(out));
    let errors: Vec<String> =
        stderr(out).lines().filter(|l| l.starts_with("error:")).map(String::from).collect();
    assert_eq!(errors.len(), 1, "{}", stderr(out));
    errors[0].clone()
}

#[test]
fn the_right_key_runs_stream_and_udp_and_others_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let alice = keygen(dir.path(), "alice", None);
    let mallory = keygen(dir.path(), "mallory", None);
    let keys = keys_file(dir.path(), "keys", &[key_line(&alice)]);
    let srv = ServerProc::start(&["--keys", keys.to_str().unwrap()]);
    let port = srv.port();
    for (test, extra) in [("stream", vec![]), ("udp", vec!["-b", "10M"])] {
        let out = client(&port, test, Some(&alice), &extra);
        assert!(out.status.success(), "{test}: {}", stderr(&out));
    }
    let wrong = error_line(&client(&port, "stream", Some(&mallory), &[]));
    assert!(wrong.contains("authentication failed") && wrong.contains("'mallory'"), "{wrong}");
    let none = error_line(&client(&port, "stream", None, &[]));
    assert!(none.contains("authentication required"), "{none}");
    // The same key from the environment.
    let line = key_line(&alice);
    let words: Vec<&str> = line.split_whitespace().collect();
    let env = command()
        .env("TCPLAB_KEY", format!("alice:{}", words[2]))
        .args(["stream", "127.0.0.1", "-p", &port, "-t", "0.3", "-i", "0", "--no-store"])
        .output()
        .unwrap();
    assert!(env.status.success(), "{}", stderr(&env));
    let log = wait_for(|| srv.log(), "refused - key=mallory");
    assert!(log.contains("finished tcp-stream key=alice"), "{log}");
    assert!(log.contains("refused - key=anonymous") && log.contains("authentication required"), "{log}");
    assert!(!log.contains(words[2]), "a secret in the log");
}

#[test]
fn a_key_against_a_server_without_keys_is_told_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let alice = keygen(dir.path(), "alice", None);
    let srv = ServerProc::start(&[]);
    let e = error_line(&client(&srv.port(), "stream", Some(&alice), &[]));
    assert!(e.contains("does not use keys") && e.contains("--key-file"), "{e}");
}

#[test]
fn limits_of_a_key_class_and_of_anonymous_clients_name_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let lab = keygen(dir.path(), "lab1", Some("lab"));
    let class = "class lab max-duration=1 max-streams=2 max-rate=10M tests-per-minute=2".to_string();
    let keys = keys_file(dir.path(), "keys", &[class, key_line(&lab)]);
    let srv = ServerProc::start(&["--keys", keys.to_str().unwrap()]);
    let port = srv.port();
    let refusals = [
        ("stream", vec!["-t", "5"], "max-duration 1 s"),
        ("stream", vec!["-P", "4"], "max-streams 2"),
        ("udp", vec!["-b", "50M"], "max-rate 10.0 Mbit/s"),
        ("udp", vec!["-b", "0"], "max-rate 10.0 Mbit/s"),
    ];
    for (test, extra, want) in &refusals {
        let e = error_line(&client(&port, test, Some(&lab), extra));
        assert!(e.contains(want) && e.contains("key class 'lab'"), "{extra:?}: {e}");
    }
    for _ in 0..2 {
        let ok = client(&port, "stream", Some(&lab), &[]);
        assert!(ok.status.success(), "{}", stderr(&ok));
    }
    let e = error_line(&client(&port, "stream", Some(&lab), &[]));
    assert!(e.contains("tests-per-minute 2"), "{e}");
    // Anonymous clients of a server without keys: the --anon-* flags.
    let anon =
        ServerProc::start(&["--anon-max-duration", "1", "--anon-max-streams", "1", "--anon-max-rate", "1M"]);
    for (test, extra, want) in [
        ("stream", vec!["-t", "2"], "max-duration 1 s"),
        ("stream", vec!["-P", "2"], "max-streams 1"),
        ("udp", vec!["-b", "2M"], "max-rate 1.00 Mbit/s"),
    ] {
        let e = error_line(&client(&anon.port(), test, None, &extra));
        assert!(e.contains(want) && e.contains("anonymous clients"), "{extra:?}: {e}");
    }
}

/// Polls `read` until its text contains `want` (at most 10 s); returns the last text.
fn wait_for(read: impl Fn() -> String, want: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = read();
        if text.contains(want) || Instant::now() > deadline {
            return text;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn signal(sig: &str, pid: &str) {
    assert!(Command::new("kill").args([sig, pid]).status().unwrap().success());
}

#[test]
fn a_daemon_writes_its_pidfile_and_log_and_sighup_reloads_the_keys() {
    let dir = tempfile::tempdir().unwrap();
    let (alice, bob) = (keygen(dir.path(), "alice", None), keygen(dir.path(), "bob", None));
    let keys = keys_file(dir.path(), "keys", &[key_line(&alice)]);
    let (pidfile, logfile) = (dir.path().join("server.pid"), dir.path().join("server.log"));
    let daemon = |extra: &[&str]| {
        let mut args = vec!["server", "-B", "127.0.0.1", "-p", "0", "--daemon"];
        args.extend(["--keys", keys.to_str().unwrap(), "--pidfile", pidfile.to_str().unwrap()]);
        args.extend(["--logfile", logfile.to_str().unwrap()]);
        args.extend_from_slice(extra);
        tcplab(&args)
    };
    let started = daemon(&[]);
    assert!(started.status.success(), "{}", stderr(&started));
    let pid = std::fs::read_to_string(&pidfile).unwrap().trim().to_string();
    let log = || std::fs::read_to_string(&logfile).unwrap_or_default();
    let text = wait_for(log, "listening on");
    let port = text.split("listening on ").nth(1).unwrap().split([' ', ')']).next().unwrap();
    let port = port.rsplit(':').next().unwrap().to_string();
    // A second daemon with the same pidfile is refused while the first runs.
    let again = daemon(&[]);
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("is a server already running"), "{}", stderr(&again));
    assert!(client(&port, "stream", Some(&alice), &[]).status.success());
    // The server frees the test's slot just after the client has its results: wait for that,
    // so bob is refused for his key, not because the slot is still taken.
    wait_for(log, "finished tcp-stream key=alice");
    assert!(!client(&port, "stream", Some(&bob), &[]).status.success(), "bob is not in the keys yet");
    // SIGHUP with bob added: bob gets in.
    std::fs::write(&keys, format!("{}\n{}\n", key_line(&alice), key_line(&bob))).unwrap();
    signal("-HUP", &pid);
    wait_for(log, "re-read");
    let out = client(&port, "stream", Some(&bob), &[]);
    assert!(out.status.success(), "after SIGHUP: {}", stderr(&out));
    wait_for(log, "finished tcp-stream key=bob");
    // A broken file keeps the old keys and logs one error line.
    std::fs::write(&keys, "key bob not-a-secret\n").unwrap();
    signal("-HUP", &pid);
    let text = wait_for(log, "keeping the old keys");
    assert_eq!(text.lines().filter(|l| l.contains("keeping the old keys")).count(), 1, "{text}");
    assert!(text.contains("line 1"), "the error names the line: {text}");
    assert!(client(&port, "stream", Some(&bob), &[]).status.success(), "bob kept");
    let text = log();
    assert!(text.contains("finished tcp-stream key=bob"), "{text}");
    assert!(text.contains("refused - key=bob"), "{text}");
    // SIGTERM: the server exits and removes its pidfile.
    signal("-TERM", &pid);
    let deadline = Instant::now() + Duration::from_secs(5);
    while pidfile.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!pidfile.exists(), "the pidfile outlived the server");
}

/// Third-party tests between keyed servers (issue 28): the asking client's key is for A, and
/// A reaches B (and itself, for its loop-back baseline) with a key of its own
/// (`--third-party-key`); the client's key is never forwarded.
#[test]
fn third_party_tests_run_between_keyed_servers() {
    let dir = tempfile::tempdir().unwrap();
    let alice = keygen(dir.path(), "alice", None);
    let mesh = keygen(dir.path(), "mesh-a", None);
    let a_keys = keys_file(dir.path(), "a.keys", &[key_line(&alice), key_line(&mesh)]);
    let b_keys = keys_file(dir.path(), "b.keys", &[key_line(&mesh)]);
    let b = ServerProc::start(&["--keys", b_keys.to_str().unwrap()]);
    let a = ServerProc::start(&[
        "--keys",
        a_keys.to_str().unwrap(),
        "--allow-third-party",
        "--third-party-key",
        mesh.to_str().unwrap(),
    ]);
    let from_a = format!("127.0.0.1:{}", a.port());
    for (to, what) in [(b.port(), "A to keyed B"), (a.port(), "A's loop-back baseline")] {
        let out = client(&to, "stream", Some(&alice), &["--from", &from_a, "-t", "0.5"]);
        assert!(out.status.success(), "{what}: {}\nA: {}\nB: {}", stderr(&out), a.log(), b.log());
    }
    assert!(b.log().contains("key=mesh-a"), "B saw A's own key: {}", b.log());
    // A without a key of its own reaches B anonymously, and B refuses it.
    let bare = ServerProc::start(&["--keys", a_keys.to_str().unwrap(), "--allow-third-party"]);
    let out = client(&b.port(), "stream", Some(&alice), &["--from", &format!("127.0.0.1:{}", bare.port())]);
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("authentication required"), "{}", stderr(&out));
}

/// A mesh of keyed servers (issue 28: every cell failed): the client's key opens each host,
/// and each host reaches the others and itself with its own third-party key, which they list.
#[test]
fn a_mesh_of_keyed_servers_measures_every_cell() {
    let dir = tempfile::tempdir().unwrap();
    let alice = keygen(dir.path(), "alice", None);
    let own: Vec<PathBuf> = ["mesh-a", "mesh-b"].iter().map(|id| keygen(dir.path(), id, None)).collect();
    let lines: Vec<String> = std::iter::once(&alice).chain(&own).map(|k| key_line(k)).collect();
    let keys = keys_file(dir.path(), "mesh.keys", &lines);
    let servers: Vec<ServerProc> = own
        .iter()
        .map(|k| {
            let (keys, k) = (keys.to_str().unwrap(), k.to_str().unwrap());
            ServerProc::start(&["--keys", keys, "--allow-third-party", "--third-party-key", k])
        })
        .collect();
    let inv = dir.path().join("hosts.toml");
    let text: String = ["a", "b"]
        .iter()
        .zip(&servers)
        .map(|(name, s)| format!("[[host]]\nname = \"{name}\"\naddress = \"127.0.0.1:{}\"\n", s.port()))
        .collect();
    std::fs::write(&inv, text).unwrap();
    let out = command()
        .args(["mesh", inv.to_str().unwrap(), "-t", "0.5", "-i", "0", "--no-store", "--json", "--key-file"])
        .arg(&alice)
        .output()
        .unwrap();
    let logs = || servers.iter().map(ServerProc::log).collect::<Vec<_>>().join("\n");
    assert!(out.status.success(), "{}\n{}", stderr(&out), logs());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tests = doc["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 4, "a → a, a → b, b → a, b → b: {doc}");
    assert!(tests.iter().all(|t| t["status"] == "completed"), "{doc}");
    for id in ["key=mesh-a", "key=mesh-b"] {
        assert!(logs().contains(id), "a host used its own key {id}: {}", logs());
    }
}

/// The pidfile is locked, not trusted for the pid it names (issue 28): a stale file naming an
/// unrelated live process (here pid 1) does not block a start; a running server's does.
#[test]
fn a_stale_pidfile_naming_a_live_process_does_not_block_a_start() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("server.pid");
    std::fs::write(&pidfile, "1\n").unwrap();
    let first = ServerProc::start(&["--pidfile", pidfile.to_str().unwrap()]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::read_to_string(&pidfile).unwrap_or_default().trim() != first.pid().to_string() {
        assert!(Instant::now() < deadline, "the server did not take over the stale pidfile");
        std::thread::sleep(Duration::from_millis(20));
    }
    let second =
        tcplab(&["server", "-p", "0", "--bind", "127.0.0.1", "--pidfile", pidfile.to_str().unwrap()]);
    assert_eq!(second.status.code(), Some(2), "{}", stderr(&second));
    let err = stderr(&second);
    assert!(err.contains("held by a running server") && err.contains(&first.pid().to_string()), "{err}");
}
