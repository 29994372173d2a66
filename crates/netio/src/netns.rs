//! Network namespaces held by file descriptor.
//!
//! Namespaces made here are anonymous: they live as long as a [`NetNs`] handle, a device
//! fd created inside them or a process inside them exists, and vanish by themselves when
//! the last of those goes — a killed emulator leaves nothing to clean up. Processes are
//! started inside with [`NetNs::spawn`], which also ties their life to the spawning thread
//! (`PR_SET_PDEATHSIG`).

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// Signals to pass to [`NetNs::spawn`] and [`signal`].
pub use libc::{SIGINT, SIGKILL, SIGTERM};

/// A handle on a network namespace.
#[derive(Debug)]
pub struct NetNs {
    file: File,
}

/// Restores the thread's previous namespace when dropped (see [`NetNs::enter`]).
#[derive(Debug)]
#[must_use = "the thread goes back to its namespace when the guard is dropped"]
pub struct NsGuard {
    previous: NetNs,
}

impl Drop for NsGuard {
    fn drop(&mut self) {
        if let Err(e) = setns(&self.previous.file) {
            eprintln!("error: returning to the original network namespace: {e}");
        }
    }
}

impl NetNs {
    /// The calling thread's namespace.
    pub fn current() -> io::Result<NetNs> {
        Ok(NetNs { file: File::open("/proc/thread-self/ns/net")? })
    }

    /// Creates a fresh namespace on a short-lived thread and runs `setup` inside it there
    /// (e.g. to create a TUN device in it); returns the handle and `setup`'s value.
    pub fn create<T: Send>(setup: impl FnOnce() -> io::Result<T> + Send) -> io::Result<(NetNs, T)> {
        std::thread::scope(|s| {
            s.spawn(|| {
                // SAFETY: unshare takes flags only; CLONE_NEWNET affects the calling thread.
                if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
                    return Err(io::Error::last_os_error());
                }
                let ns = NetNs::current()?;
                Ok((ns, setup()?))
            })
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("namespace setup thread panicked")))
        })
    }

    /// Runs `f` on a thread inside this namespace (sockets it creates belong here).
    pub fn run<T: Send>(&self, f: impl FnOnce() -> T + Send) -> io::Result<T> {
        std::thread::scope(|s| {
            s.spawn(|| {
                setns(&self.file)?;
                Ok(f())
            })
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("thread in namespace panicked")))
        })
    }

    /// Moves the calling thread into this namespace until the guard is dropped; threads it
    /// starts meanwhile inherit the namespace.
    pub fn enter(&self) -> io::Result<NsGuard> {
        let previous = NetNs::current()?;
        setns(&self.file)?;
        Ok(NsGuard { previous })
    }

    /// Spawns `cmd` inside this namespace. The child gets `signal` when the calling thread
    /// exits (`PR_SET_PDEATHSIG`), so spawn from a thread that lives as long as the child
    /// should (e.g. the main thread). With `cgroup_procs` (a cgroup's `cgroup.procs` file) the
    /// child joins that cgroup before it runs the program.
    pub fn spawn(
        &self,
        cmd: &mut Command,
        signal: libc::c_int,
        cgroup_procs: Option<&Path>,
    ) -> io::Result<Child> {
        let fd = self.file.as_raw_fd();
        let parent = std::process::id();
        let procs = cgroup_procs
            .map(|p| CString::new(p.as_os_str().as_bytes()))
            .transpose()
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "cgroup path contains a NUL byte"))?;
        // SAFETY: the closure runs between fork and exec and calls only async-signal-safe
        // functions (setns, prctl, getppid, open, write, close) on data prepared before the
        // fork; `fd` and `procs` stay alive until spawn returns.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setns(fd, libc::CLONE_NEWNET) != 0 {
                    return Err(io::Error::last_os_error());
                }
                if libc::prctl(libc::PR_SET_PDEATHSIG, signal as libc::c_ulong, 0, 0, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
                if libc::getppid() as u32 != parent {
                    return Err(io::Error::other("parent exited"));
                }
                if let Some(path) = &procs {
                    join_cgroup(path)?;
                }
                Ok(())
            })
        };
        cmd.spawn()
    }
}

/// Moves the calling process into the cgroup whose `cgroup.procs` is `path` ("0" = self).
/// Async-signal-safe: runs between fork and exec.
fn join_cgroup(path: &CString) -> io::Result<()> {
    // SAFETY: `path` is a valid NUL-terminated string; the fd is closed before returning.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let written = libc::write(fd, b"0".as_ptr().cast(), 1);
        libc::close(fd);
        if written != 1 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

fn setns(file: &File) -> io::Result<()> {
    // SAFETY: setns takes a namespace fd that `file` keeps open, and a type check flag.
    if unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

impl NetNs {
    /// The processes inside this namespace, other than this one (a process that has exited
    /// but not been reaped is no longer inside any namespace, so it is not listed).
    pub fn pids(&self) -> io::Result<Vec<u32>> {
        use std::os::unix::fs::MetadataExt;
        let ns = self.file.metadata()?;
        let me = std::process::id();
        let mut pids = Vec::new();
        for entry in std::fs::read_dir("/proc")? {
            let Some(pid) = entry?.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
            if pid == me {
                continue;
            }
            // Processes come and go while we look; one that vanished is simply not inside.
            if let Ok(m) = std::fs::metadata(format!("/proc/{pid}/ns/net")) {
                if m.dev() == ns.dev() && m.ino() == ns.ino() {
                    pids.push(pid);
                }
            }
        }
        Ok(pids)
    }

    /// Ends every process inside this namespace: SIGTERM, up to `grace` for them to go, then
    /// SIGKILL (a server that forked, daemonized or ignores SIGTERM included). Returns how
    /// many got SIGTERM and how many needed SIGKILL.
    pub fn stop_processes(&self, grace: Duration) -> io::Result<Stopped> {
        let first = self.pids()?;
        for &pid in &first {
            let _ = signal(pid, libc::SIGTERM);
        }
        let mut left = self.wait_empty(grace)?;
        let killed = left.len();
        for &pid in &left {
            let _ = signal(pid, libc::SIGKILL);
        }
        if !left.is_empty() {
            left = self.wait_empty(Duration::from_secs(1))?;
        }
        if !left.is_empty() {
            return Err(io::Error::other(format!("processes {left:?} survived SIGKILL")));
        }
        Ok(Stopped { terminated: first.len(), killed })
    }

    /// Waits up to `limit` for the namespace to hold no process; returns those still inside.
    fn wait_empty(&self, limit: Duration) -> io::Result<Vec<u32>> {
        let deadline = Instant::now() + limit;
        loop {
            let left = self.pids()?;
            if left.is_empty() || Instant::now() >= deadline {
                return Ok(left);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// What [`NetNs::stop_processes`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stopped {
    /// Processes sent SIGTERM.
    pub terminated: usize,
    /// Of those, still running after the grace period and killed.
    pub killed: usize,
}

/// Makes this process the reaper of its orphaned descendants (`PR_SET_CHILD_SUBREAPER`): a
/// server command's children whose shell exited are reparented here instead of to PID 1, so
/// they can be reaped ([`reap_exited`]) rather than left as zombies of an init that may not
/// reap.
pub fn become_subreaper() -> io::Result<()> {
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes integer arguments only.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Reaps this process's exited children that nothing waits for: orphans inherited as a
/// subreaper. Only children whose `Child` handle has been waited for or dropped should exist
/// then, since this takes any exited child's status.
pub fn reap_exited() {
    loop {
        let mut status = 0;
        // SAFETY: waitpid with WNOHANG on any child; `status` is a valid out-pointer.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            return;
        }
    }
}

/// True if the process runs as root (namespaces and TUN need it).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no arguments and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Sends `signal` to the process `pid` (a child this process started).
pub fn signal(pid: u32, signal: libc::c_int) -> io::Result<()> {
    let pid = libc::pid_t::try_from(pid).map_err(|_| io::Error::other("pid out of range"))?;
    // SAFETY: kill takes a pid and a signal number by value.
    if unsafe { libc::kill(pid, signal) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_round_trip() {
        if !is_root() {
            eprintln!("skipped: namespaces need root");
            return;
        }
        let (ns, ()) = NetNs::create(|| Ok(())).unwrap();
        let inode = |f: &File| std::os::unix::fs::MetadataExt::ino(&f.metadata().unwrap());
        let outer = NetNs::current().unwrap();
        {
            let _guard = ns.enter().unwrap();
            assert_eq!(inode(&NetNs::current().unwrap().file), inode(&ns.file));
        }
        assert_eq!(inode(&NetNs::current().unwrap().file), inode(&outer.file));
        let inside = ns.run(|| NetNs::current().map(|n| inode(&n.file))).unwrap().unwrap();
        assert_eq!(inside, inode(&ns.file));
    }

    #[test]
    fn every_process_inside_is_stopped_even_one_that_ignores_sigterm() {
        if !is_root() {
            eprintln!("skipped: namespaces need root");
            return;
        }
        let (ns, ()) = NetNs::create(|| Ok(())).unwrap();
        // A shell whose background child outlives it and ignores SIGTERM, as a daemon might.
        let script = "trap '' TERM; sleep 300 & echo started; wait";
        let mut cmd = Command::new("/bin/sh");
        cmd.args(["-c", script]).stdout(std::process::Stdio::piped());
        let mut child = ns.spawn(&mut cmd, SIGKILL, None).unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut line)
            .unwrap();
        assert_eq!(ns.pids().unwrap().len(), 2, "the shell and its sleep");
        let stopped = ns.stop_processes(Duration::from_millis(100)).unwrap();
        assert_eq!(stopped, Stopped { terminated: 2, killed: 2 });
        assert!(ns.pids().unwrap().is_empty());
        let _ = child.wait();
    }
}
