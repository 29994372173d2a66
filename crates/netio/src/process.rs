//! Process control: spawning a child in a session of its own (detached from the terminal, for
//! `tcplab server --daemon`), asking whether a process id is alive, locking a pidfile, and
//! signalling a process group (`tcplab emu` passing a signal on to its command).

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};

/// Spawns `cmd` as the leader of a new session (`setsid` between fork and exec), so it has no
/// controlling terminal and outlives the shell that started it.
pub fn spawn_detached(cmd: &mut Command) -> io::Result<Child> {
    // SAFETY: the closure runs between fork and exec and calls only setsid, which is
    // async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        })
    };
    cmd.spawn()
}

/// Whether a process with id `pid` exists (signal 0: permission errors count as alive).
pub fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill with signal 0 sends nothing; it only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Takes an exclusive `flock` on `file` without waiting: `Ok(false)` when another open file
/// holds it. The lock lasts until the file is closed (or its process dies, even by SIGKILL).
pub fn try_lock_exclusive(file: &std::fs::File) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a descriptor the borrowed File keeps open; no memory is passed.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(true);
    }
    let err = io::Error::last_os_error();
    if err.kind() == io::ErrorKind::WouldBlock {
        Ok(false)
    } else {
        Err(err)
    }
}

/// Sends `signal` to every process of the process group `pgid` (`kill(-pgid, signal)`).
pub fn signal_group(pgid: u32, signal: libc::c_int) -> io::Result<()> {
    let pgid = libc::pid_t::try_from(pgid).map_err(|_| io::Error::other("process group out of range"))?;
    if pgid <= 1 {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a process group of a child"));
    }
    // SAFETY: kill takes a process group (negated) and a signal number by value.
    if unsafe { libc::kill(-pgid, signal) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Whether this process is in the foreground process group of the terminal on standard input
/// (a shell started it interactively): keystrokes' signals then reach its whole group, and a
/// child it puts in a group of its own could not read the terminal.
pub fn in_terminal_foreground() -> bool {
    // SAFETY: tcgetpgrp and getpgrp take no pointers; tcgetpgrp fails (-1) on a non-terminal.
    let (terminal, own) = unsafe { (libc::tcgetpgrp(libc::STDIN_FILENO), libc::getpgrp()) };
    terminal > 0 && terminal == own
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_reaped_child_is_not() {
        assert!(alive(std::process::id()));
        let mut child = Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!alive(pid));
        assert!(!alive(0));
    }
}
