//! A private tracefs instance per test (`instances/NAME` under the tracefs mount): made,
//! given a clock, a buffer and filtered events, read through its `trace_pipe` without
//! blocking, and removed again when dropped — on success, on error and on Ctrl-C (the run
//! stops the test, which drops the instance). Instances left by a process that died (killed,
//! or a second Ctrl-C that exits at once) are removed by the next [`Instance::create`].
//!
//! Needs root; tracefs is mounted at `/sys/kernel/tracing` if no mount is found.

use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Where tracefs is looked for, in order.
const MOUNTS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// Why tracing could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// tracefs is not mounted and could not be mounted.
    #[error("tracefs is not mounted at {} and mounting it failed: {source}", MOUNTS[0])]
    Mount {
        /// The mount error.
        source: std::io::Error,
    },
    /// The kernel has no such tracepoint.
    #[error("this kernel has no tracepoint {event}")]
    NoEvent {
        /// `system/event`.
        event: String,
    },
    /// A tracefs file could not be used.
    #[error("{what} {}: {source}", path.display())]
    File {
        /// What was being done.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

fn file_err(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.to_path_buf();
    move |source| Error::File { what, path, source }
}

/// The tracefs root, mounting it if needed.
pub fn root() -> Result<PathBuf, Error> {
    if let Some(found) = MOUNTS.iter().map(PathBuf::from).find(|p| p.join("instances").is_dir()) {
        return Ok(found);
    }
    mount(MOUNTS[0]).map_err(|source| Error::Mount { source })?;
    Ok(PathBuf::from(MOUNTS[0]))
}

fn mount(target: &str) -> std::io::Result<()> {
    let c = |s: &str| CString::new(s).map_err(std::io::Error::other);
    let (src, dst, fs) = (c("nodev")?, c(target)?, c("tracefs")?);
    // SAFETY: mount(2) with NUL-terminated strings that outlive the call and no data.
    let rc = unsafe { libc::mount(src.as_ptr(), dst.as_ptr(), fs.as_ptr(), 0, std::ptr::null()) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// A tracefs instance of this process. Dropping it turns it off and removes it.
#[derive(Debug)]
pub struct Instance {
    dir: PathBuf,
    pipe: Option<File>,
}

impl Instance {
    /// Makes `instances/<prefix>-<pid>-<tag>` (removing instances `<prefix>-<pid>-*` of
    /// processes that no longer exist first).
    pub fn create(prefix: &str, tag: &str) -> Result<Instance, Error> {
        let instances = root()?.join("instances");
        remove_stale(&instances, prefix);
        let dir = instances.join(format!("{prefix}-{}-{tag}", std::process::id()));
        if dir.is_dir() {
            let _ = std::fs::remove_dir(&dir);
        }
        std::fs::create_dir(&dir).map_err(file_err("creating the tracefs instance", &dir))?;
        Ok(Instance { dir, pipe: None })
    }

    /// The instance's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes `value` to the instance's file `name` (e.g. `trace_clock`, `buffer_size_kb`).
    pub fn set(&self, name: &str, value: &str) -> Result<(), Error> {
        let path = self.dir.join(name);
        std::fs::write(&path, value).map_err(file_err("writing", &path))
    }

    /// Enables `event` (`system/name`) with `filter` (tracefs filter syntax, e.g.
    /// `sport == 5201 || dport == 5201`).
    pub fn enable(&self, event: &str, filter: &str) -> Result<(), Error> {
        let dir = self.dir.join("events").join(event);
        if !dir.is_dir() {
            return Err(Error::NoEvent { event: event.into() });
        }
        let write = |name: &str, value: &str| {
            let path = dir.join(name);
            std::fs::write(&path, value).map_err(file_err("writing", &path))
        };
        write("filter", filter)?;
        write("enable", "1")
    }

    /// Opens `trace_pipe` for reading without blocking.
    pub fn open_pipe(&mut self) -> Result<(), Error> {
        let path = self.dir.join("trace_pipe");
        let f = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&path)
            .map_err(file_err("opening", &path))?;
        self.pipe = Some(f);
        Ok(())
    }

    /// Reads what the pipe has now into `buf`; 0 when it has nothing (or is not open).
    pub fn read(&mut self, buf: &mut [u8]) -> Result<usize, Error> {
        let Some(pipe) = self.pipe.as_mut() else { return Ok(0) };
        match pipe.read(buf) {
            Ok(n) => Ok(n),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => Ok(0),
            Err(source) => Err(Error::File { what: "reading", path: self.dir.join("trace_pipe"), source }),
        }
    }

    /// Stops recording (what is in the buffer can still be read).
    pub fn stop(&self) -> Result<(), Error> {
        self.set("tracing_on", "0")
    }

    /// Events the kernel could not keep, summed over the CPUs (`overrun` + `dropped events`
    /// of `per_cpu/cpuN/stats`).
    pub fn lost(&self) -> u64 {
        let Ok(cpus) = std::fs::read_dir(self.dir.join("per_cpu")) else { return 0 };
        cpus.flatten()
            .filter_map(|c| std::fs::read_to_string(c.path().join("stats")).ok())
            .map(|s| lost_in_stats(&s))
            .sum()
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.stop();
        let _ = std::fs::write(self.dir.join("events/enable"), "0");
        self.pipe = None;
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// ns to add to a `mono` trace-clock time to get ns since 1970 (CLOCK_REALTIME −
/// CLOCK_MONOTONIC, read back to back), so that events line up with capture timestamps.
pub fn mono_to_unix_ns() -> i64 {
    let read = |clock| {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_gettime(2) into a timespec that outlives the call.
        unsafe { libc::clock_gettime(clock, &mut ts) };
        ts.tv_sec * 1_000_000_000 + ts.tv_nsec
    };
    let mono = read(libc::CLOCK_MONOTONIC);
    let real = read(libc::CLOCK_REALTIME);
    real - mono
}

/// `overrun` + `dropped events` of one CPU's `stats` file.
fn lost_in_stats(stats: &str) -> u64 {
    stats
        .lines()
        .filter_map(|l| l.strip_prefix("overrun:").or_else(|| l.strip_prefix("dropped events:")))
        .filter_map(|v| v.trim().parse::<u64>().ok())
        .sum()
}

/// Removes `<prefix>-<pid>-*` instances whose process is gone.
fn remove_stale(instances: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(instances) else { return };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if owner_pid(&name, prefix).is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists()) {
            let _ = std::fs::write(e.path().join("tracing_on"), "0");
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

/// The pid in `<prefix>-<pid>-<tag>`.
fn owner_pid(name: &str, prefix: &str) -> Option<u32> {
    let rest = name.strip_prefix(prefix)?.strip_prefix('-')?;
    rest.split('-').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_and_names() {
        let stats =
            "entries: 576\noverrun: 3\ncommit overrun: 0\nbytes: 83912\ndropped events: 2\nread events: 0\n";
        assert_eq!(lost_in_stats(stats), 5);
        assert_eq!(owner_pid("tcplab-4242-1", "tcplab"), Some(4242));
        assert_eq!(owner_pid("tcplabx-4242-1", "tcplab"), None);
        assert_eq!(owner_pid("other-1-1", "tcplab"), None);
    }

    /// Root only: an instance with the probe enabled exists while held and is gone after.
    #[test]
    fn an_instance_is_removed_when_dropped() {
        // SAFETY: geteuid(2) has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: tracefs needs root");
            return;
        }
        let dir = {
            let mut i = match Instance::create("tcplab-unit", "drop") {
                Ok(i) => i,
                Err(e) => panic!("{e}"),
            };
            assert!(i.enable("tcp/tcp_probe", "sport == 1 || dport == 1").is_ok());
            assert!(matches!(i.enable("tcp/no_such_event", "0"), Err(Error::NoEvent { .. })));
            assert!(i.open_pipe().is_ok());
            let mut buf = [0u8; 256];
            assert_eq!(i.read(&mut buf).ok(), Some(0), "nothing on port 1");
            assert!(i.dir().is_dir());
            i.dir().to_path_buf()
        };
        assert!(!dir.exists());
    }
}
