//! A `tcplab server` child process inside a namespace (and optionally a CPU quota), for
//! tests whose server side must be a process of its own.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};

use anyhow::{bail, Context, Result};
use emu::pump::cgroup::CpuQuota;
use netio::NetNs;

/// The running child and the port it listens on.
#[derive(Debug)]
pub struct ServerChild {
    child: Child,
    /// The control port it bound.
    pub port: u16,
}

impl ServerChild {
    /// Starts `tcplab server` on `bind` (port 0: any) in `ns`, inside `quota` if given, and
    /// waits for its `listening on ADDR` line; with `mptcp` it listens for MPTCP (`--mptcp`).
    pub fn spawn(ns: &NetNs, bind: SocketAddr, quota: Option<&CpuQuota>, mptcp: bool) -> Result<ServerChild> {
        let exe = std::env::current_exe().context("finding the tcplab executable")?;
        let mut cmd = Command::new(exe);
        cmd.args(["server", "--bind", &bind.ip().to_string(), "--port", &bind.port().to_string()])
            .args(["--max-concurrent", "4"])
            .args(mptcp.then_some("--mptcp"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let procs = quota.map(CpuQuota::procs_file);
        let mut child = ns
            .spawn(&mut cmd, netio::netns::SIGKILL, procs.as_deref())
            .context("starting the server process")?;
        let Some(stderr) = child.stderr.take() else { bail!("server process has no stderr") };
        let mut lines = BufReader::new(stderr).lines();
        let port = loop {
            let Some(Ok(line)) = lines.next() else {
                let _ = child.kill();
                bail!("the server process exited before listening");
            };
            if let Some(port) = listening_port(&line) {
                break port;
            }
        };
        // Keep draining its stderr so it never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        Ok(ServerChild { child, port })
    }

    /// Stops the child (SIGTERM, then waits).
    pub fn stop(mut self) {
        let _ = netio::netns::signal(self.child.id(), netio::netns::SIGTERM);
        let _ = self.child.wait();
    }
}

/// The port in `tcplab server listening on 198.18.0.2:40000 (...)`.
fn listening_port(line: &str) -> Option<u16> {
    let rest = line.split("listening on ").nth(1)?;
    let addr = rest.split_whitespace().next()?;
    addr.parse::<SocketAddr>().ok().map(|a| a.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_port() {
        assert_eq!(
            listening_port("tcplab server listening on 198.18.0.2:40000 (Ctrl-C to stop)"),
            Some(40000)
        );
        assert_eq!(listening_port("something else"), None);
    }
}
