//! `tcplab server --daemon --pidfile FILE`: re-executes itself detached (a session of its own,
//! stdin and stdout on /dev/null, stderr appended to --logfile), waits until the child has
//! bound and written its pid, and exits. The pidfile: locked while a server runs (a start is
//! refused while another holds the lock), written after bind, removed on exit.

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

/// This process's pidfile: written once the server listens, locked (`flock`, exclusive) for
/// as long as it runs, removed when dropped. The lock, not the pid it names, says whether a
/// server holds it: a stale file naming an unrelated live process does not block a start.
#[derive(Debug)]
pub struct Pidfile {
    path: PathBuf,
    /// Open, so locked, until dropped.
    _lock: std::fs::File,
}

impl Pidfile {
    /// Refuses a pidfile a running server holds (locked); a stale one is taken over later.
    pub fn check(path: &Path) -> Result<()> {
        Pidfile::lock(path).map(drop)
    }

    /// Locks `path` (created if missing) and writes this process's id into it.
    pub fn write(path: &Path) -> Result<Pidfile> {
        let mut file = Pidfile::lock(path)?;
        let written = file.set_len(0).and_then(|()| {
            use std::io::Write;
            file.write_all(format!("{}\n", std::process::id()).as_bytes())
        });
        written.with_context(|| format!("writing the pidfile {}", path.display()))?;
        Ok(Pidfile { path: path.to_path_buf(), _lock: file })
    }

    /// The file, open and exclusively locked; an error naming the holder when a server has it.
    /// A file removed by its exiting holder between our open and our lock is opened again.
    fn lock(path: &Path) -> Result<std::fs::File> {
        use std::os::unix::fs::MetadataExt;
        for _ in 0..3 {
            let file = Pidfile::lock_once(path)?;
            let same = |f: &std::fs::File| {
                let (a, b) = (f.metadata().ok()?, std::fs::metadata(path).ok()?);
                Some((a.dev(), a.ino()) == (b.dev(), b.ino()))
            };
            if same(&file) == Some(true) {
                return Ok(file);
            }
        }
        bail!("the pidfile {} keeps being replaced", path.display())
    }

    fn lock_once(path: &Path) -> Result<std::fs::File> {
        use std::os::unix::fs::OpenOptionsExt;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o644)
            .open(path)
            .with_context(|| format!("opening the pidfile {}", path.display()))?;
        match netio::process::try_lock_exclusive(&file) {
            Ok(true) => Ok(file),
            Ok(false) => {
                let holder = Pidfile::read(path).map(|p| format!(" (process {p})")).unwrap_or_default();
                bail!("{} is held by a running server{holder}: is a server already running?", path.display())
            }
            Err(e) => Err(e).with_context(|| format!("locking the pidfile {}", path.display())),
        }
    }

    /// The pid a pidfile names, if it names one.
    pub fn read(path: &Path) -> Option<u32> {
        std::fs::read_to_string(path).ok()?.trim().parse().ok()
    }
}

impl Drop for Pidfile {
    fn drop(&mut self) {
        // Still locked (until `_lock` closes): no other server can have taken the path over.
        let _ = std::fs::remove_file(&self.path);
    }
}
