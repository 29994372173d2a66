//! `tcplab server --daemon --pidfile FILE`: re-executes itself detached (a session of its own,
//! stdin and stdout on /dev/null, stderr appended to --logfile), waits until the child has
//! bound and written its pid, and exits. The pidfile: refused when it names a live process,
//! written after bind, removed on exit.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::args::ServerArgs;

/// How long the parent waits for the detached server to listen.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// Starts the server in the background; returns once it listens (its pid in the pidfile).
pub fn start(a: &ServerArgs) -> Result<ExitCode> {
    let Some(pidfile) = &a.ops.pidfile else { bail!("--daemon needs --pidfile FILE") };
    Pidfile::check(pidfile)?;
    let exe = std::env::current_exe().context("finding the tcplab binary")?;
    let args: Vec<_> = std::env::args_os().skip(1).filter(|a| a != "--daemon").collect();
    let stderr = match &a.ops.logfile {
        Some(log) => Stdio::from(append(log)?),
        None => Stdio::null(),
    };
    let mut cmd = Command::new(exe);
    cmd.args(args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(stderr);
    // Relative paths keep their meaning: the child runs in the same directory.
    let mut child =
        netio::process::spawn_detached(&mut cmd).context("starting the server in the background")?;
    let deadline = Instant::now() + START_TIMEOUT;
    while Instant::now() < deadline {
        if Pidfile::read(pidfile) == Some(child.id()) {
            eprintln!("tcplab server running in the background, pid {}", child.id());
            return Ok(ExitCode::SUCCESS);
        }
        if let Some(status) = child.try_wait().context("watching the server")? {
            let log = a.ops.logfile.as_ref().map(|l| format!("; see {}", l.display())).unwrap_or_default();
            bail!("the server exited at start ({status}){log}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    bail!("the server did not write {} within {} s", pidfile.display(), START_TIMEOUT.as_secs())
}

/// Opens `path` for appending (created with mode 0640).
pub fn append(path: &Path) -> Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o640)
        .open(path)
        .with_context(|| format!("opening the log file {}", path.display()))
}

/// This process's pidfile: written once the server listens, removed when dropped.
#[derive(Debug)]
pub struct Pidfile {
    path: PathBuf,
}

impl Pidfile {
    /// Refuses a pidfile that names a live process (a stale one is overwritten later).
    pub fn check(path: &Path) -> Result<()> {
        if let Some(pid) = Pidfile::read(path) {
            if pid != std::process::id() && netio::process::alive(pid) {
                bail!(
                    "{} names process {pid}, which is running: is a server already running?",
                    path.display()
                );
            }
        }
        Ok(())
    }

    /// Writes this process's id (atomically: a temporary file renamed over `path`).
    pub fn write(path: &Path) -> Result<Pidfile> {
        Pidfile::check(path)?;
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, format!("{}\n", std::process::id()))
            .and_then(|()| std::fs::rename(&tmp, path))
            .with_context(|| format!("writing the pidfile {}", path.display()))?;
        Ok(Pidfile { path: path.to_path_buf() })
    }

    /// The pid a pidfile names, if it names one.
    pub fn read(path: &Path) -> Option<u32> {
        std::fs::read_to_string(path).ok()?.trim().parse().ok()
    }
}

impl Drop for Pidfile {
    fn drop(&mut self) {
        if Pidfile::read(&self.path) == Some(std::process::id()) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
