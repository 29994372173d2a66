//! Colour only on a terminal, and never with NO_COLOR: a server whose log goes to a file or a
//! pipe writes no escape sequences, nor on a terminal (a pty from `script`): its log is one
//! escaped line per event.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

use std::io::{BufRead, BufReader, Read};
use std::process::Stdio;
use std::time::{Duration, Instant};

use support::{command, tcplab, ServerProc, BIN};

const ESC: char = '\u{1b}';

/// Runs one short test against the server on `port`.
fn one_test(port: &str) {
    let out = tcplab(&["rr", "127.0.0.1", "-p", port, "-t", "0.3", "--no-store"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Waits (bounded) until `read()` mentions the client's address.
fn wait_for_client_line(read: impl Fn() -> String) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !read().contains("127.0.0.1") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    read()
}

#[test]
fn a_server_logging_into_a_pipe_or_a_file_writes_no_escape_sequences() {
    let srv = ServerProc::start(&[]);
    one_test(&srv.port());
    let log = wait_for_client_line(|| srv.log());
    assert!(log.contains("127.0.0.1"), "no line about the test: {log}");
    assert!(!log.contains(ESC), "escape sequences in a piped log: {log:?}");

    // `tcplab server 2> server.log`
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("server.log");
    let file = std::fs::File::create(&path).unwrap();
    let mut server = command()
        .args(["server", "-p", "0", "--bind", "127.0.0.1"])
        .stdout(Stdio::null())
        .stderr(file)
        .spawn()
        .unwrap();
    let read = || std::fs::read_to_string(&path).unwrap_or_default();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !read().contains("listening on") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let first = read();
    let port =
        first.split("127.0.0.1:").nth(1).and_then(|s| s.split_whitespace().next()).unwrap().to_string();
    one_test(&port);
    let log = wait_for_client_line(|| {
        read().split_once('\n').map(|(_, rest)| rest.to_string()).unwrap_or_default()
    });
    let _ = server.kill();
    let _ = server.wait();
    assert!(log.contains("127.0.0.1"), "no line about the test: {log}");
    assert!(!log.contains(ESC), "escape sequences in a log file: {log:?}");
}

/// The server's terminal output (through a pty), with `no_color` as NO_COLOR when given.
fn server_on_a_terminal(no_color: Option<&str>) -> String {
    let inner = format!("{BIN} server -1 -p 0 --bind 127.0.0.1");
    let mut script = std::process::Command::new("script");
    script
        .args(["-qfec", &inner, "/dev/null"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    script.env_remove("NO_COLOR");
    if let Some(v) = no_color {
        script.env("NO_COLOR", v);
    }
    let mut child = script.spawn().unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    let port = first.split("127.0.0.1:").nth(1).and_then(|s| s.split_whitespace().next()).unwrap();
    one_test(port);
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the one-off server did not exit");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut rest = String::new();
    reader.read_to_string(&mut rest).unwrap();
    rest
}

#[test]
fn a_servers_log_on_a_terminal_is_plain_text() {
    // The server's log is one escaped line per event whatever peers send (issue 28): no
    // colour codes even on a terminal, which the log's own escaping would mangle. Other
    // commands colour stderr on a terminal unless NO_COLOR is set (`output::wants_colour`).
    let on_terminal = server_on_a_terminal(None);
    assert!(on_terminal.contains("127.0.0.1") && !on_terminal.contains(ESC), "{on_terminal:?}");
}
