//! What the end-to-end tests share: the binary run with its archive in a temporary directory
//! (no test writes to the real home), and a real `tcplab server` on an ephemeral port,
//! optionally inside a network namespace, killed when dropped.
#![allow(dead_code, reason = "each test file uses the part it needs")]

pub mod chromium;
pub mod dashboard;
pub mod lab;
pub mod mesh_archive;
pub mod veth;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex, OnceLock};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_tcplab");

/// This test process's archive directory (`XDG_DATA_HOME` of every command it runs).
pub fn store_dir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("a temporary directory")).path()
}

/// `tcplab` (inside network namespace `netns` when given) with the test archive.
pub fn command_in(netns: Option<&str>) -> Command {
    command_of(BIN, netns)
}

/// The tcplab binary `bin` (inside network namespace `netns` when given) with the test archive.
pub fn command_of(bin: impl AsRef<std::ffi::OsStr>, netns: Option<&str>) -> Command {
    let mut cmd = match netns {
        Some(ns) => {
            let mut c = Command::new("ip");
            c.args(["netns".as_ref(), "exec".as_ref(), ns.as_ref(), bin.as_ref()]);
            c
        }
        None => Command::new(bin),
    };
    cmd.env("XDG_DATA_HOME", store_dir()).env_remove("TCPLAB_DB");
    cmd
}

/// `tcplab` with the test archive.
pub fn command() -> Command {
    command_in(None)
}

/// Another build of `tcplab` (a release binary, for benches) with the test archive.
pub fn command_with(bin: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut cmd = Command::new(bin);
    cmd.env("XDG_DATA_HOME", store_dir()).env_remove("TCPLAB_DB");
    cmd
}

/// Runs `tcplab ARGS` to the end.
pub fn tcplab(args: &[&str]) -> Output {
    command().args(args).output().expect("the tcplab binary runs")
}

/// Standard output as text.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// Standard error as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

/// Standard output parsed as one JSON document.
pub fn json_of(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}\nstderr: {}", stdout(out), stderr(out)))
}

/// A `tcplab server` on an ephemeral port, killed on drop.
pub struct ServerProc {
    child: Child,
    /// The port it listens on.
    pub port: u16,
    log: Arc<Mutex<String>>,
}

impl ServerProc {
    /// A server on 127.0.0.1 with `extra` flags.
    pub fn start(extra: &[&str]) -> ServerProc {
        ServerProc::start_in(None, "127.0.0.1", extra)
    }

    /// A server bound to `bind`, inside namespace `netns` when given.
    pub fn start_in(netns: Option<&str>, bind: &str, extra: &[&str]) -> ServerProc {
        let mut args = vec!["--bind", bind];
        args.extend_from_slice(extra);
        ServerProc::start_with(netns, &args)
    }

    /// A server on its default address (every address, IPv4 and IPv6) with `extra` flags.
    pub fn start_default(extra: &[&str]) -> ServerProc {
        ServerProc::start_with(None, extra)
    }

    fn start_with(netns: Option<&str>, extra: &[&str]) -> ServerProc {
        ServerProc::start_command(command_in(netns), extra)
    }

    /// The server of binary `bin` bound to `bind`, inside namespace `netns` when given.
    pub fn start_bin_in(bin: impl AsRef<std::ffi::OsStr>, netns: Option<&str>, bind: &str) -> ServerProc {
        ServerProc::start_command(command_of(bin, netns), &["--bind", bind])
    }

    fn start_command(mut cmd: Command, extra: &[&str]) -> ServerProc {
        let mut child = cmd
            .args(["server", "-p", "0"])
            .args(extra)
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("the server starts");
        let mut line = String::new();
        let mut stderr = BufReader::new(child.stderr.take().expect("piped stderr"));
        stderr.read_line(&mut line).expect("the server's first line");
        // Keep reading what the server logs, for tests to look at (and so it never writes
        // into a closed pipe).
        let log = Arc::new(Mutex::new(String::new()));
        let sink = log.clone();
        std::thread::spawn(move || {
            for l in stderr.lines().map_while(Result::ok) {
                if let Ok(mut log) = sink.lock() {
                    log.push_str(&l);
                    log.push('\n');
                }
            }
        });
        let port = line
            .split("listening on ")
            .nth(1)
            .and_then(|s| s.split_whitespace().next())
            .and_then(|addr| addr.rsplit(':').next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in the server's first line {line:?}"));
        ServerProc { child, port, log }
    }

    /// What the server wrote on stderr after its first line, so far.
    pub fn log(&self) -> String {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// The port as text, for command lines.
    pub fn port(&self) -> String {
        self.port.to_string()
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the server has exited by itself.
    pub fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Kills the server now (a server that vanishes mid-test).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for ServerProc {
    fn drop(&mut self) {
        self.kill();
    }
}
