//! CPU quotas for an endpoint's processes, to emulate slow end systems: a cgroup per side
//! with a CFS bandwidth limit — cgroup v2 (`cpu.max`) or v1 (`cpu.cfs_quota_us`), whichever
//! the machine mounts. The cgroup is removed when the handle is dropped (after its
//! processes have exited).

use std::fs;
use std::path::{Path, PathBuf};

use super::Error;

/// CFS period used for quotas.
const PERIOD_US: u64 = 100_000;

/// A cgroup limiting its processes to a share of one CPU.
#[derive(Debug)]
pub struct CpuQuota {
    dir: PathBuf,
    v2: bool,
}

/// Where the CPU controller lives: (directory, is it cgroup v2).
fn root() -> Option<(PathBuf, bool)> {
    let unified = Path::new("/sys/fs/cgroup");
    if unified.join("cgroup.controllers").exists() {
        return Some((unified.to_path_buf(), true));
    }
    let v1 = unified.join("cpu");
    v1.join("cpu.cfs_quota_us").exists().then_some((v1, false))
}

impl CpuQuota {
    /// A cgroup `name` limited to `percent` of one CPU (1–100 × number of CPUs).
    pub fn create(name: &str, percent: u32) -> Result<CpuQuota, Error> {
        let (root, v2) = root().ok_or_else(|| Error::Cgroup {
            step: "finding the CPU controller".into(),
            source: std::io::Error::other("neither cgroup v2 nor a v1 cpu hierarchy is mounted"),
        })?;
        let fail = |step: &str| {
            let step = step.to_string();
            move |source| Error::Cgroup { step, source }
        };
        if v2 {
            // Make the cpu controller available to children of the root (idempotent).
            fs::write(root.join("cgroup.subtree_control"), "+cpu")
                .map_err(fail("enabling the cpu controller"))?;
        }
        let dir = root.join(name);
        fs::create_dir(&dir).map_err(fail("creating the cgroup"))?;
        let quota = CpuQuota { dir, v2 };
        let quota_us = PERIOD_US * u64::from(percent) / 100;
        if quota.v2 {
            fs::write(quota.dir.join("cpu.max"), format!("{quota_us} {PERIOD_US}"))
                .map_err(fail("setting cpu.max"))?;
        } else {
            fs::write(quota.dir.join("cpu.cfs_period_us"), PERIOD_US.to_string())
                .map_err(fail("setting the period"))?;
            fs::write(quota.dir.join("cpu.cfs_quota_us"), quota_us.to_string())
                .map_err(fail("setting the quota"))?;
        }
        Ok(quota)
    }

    /// Removes empty cgroups left by killed runs: `PREFIX<pid>-…` whose process is gone.
    pub fn remove_stale(prefix: &str) {
        let Some((root, _)) = root() else { return };
        let Ok(entries) = fs::read_dir(&root) else { return };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(pid) = name.strip_prefix(prefix).and_then(|rest| rest.split('-').next()) else {
                continue;
            };
            let alive = Path::new("/proc").join(pid).exists();
            if pid.parse::<u32>().is_ok() && !alive {
                let _ = fs::remove_dir(entry.path());
            }
        }
    }

    /// Moves process `pid` (and so its future children) into the cgroup.
    pub fn add(&self, pid: u32) -> Result<(), Error> {
        fs::write(self.dir.join("cgroup.procs"), pid.to_string())
            .map_err(|source| Error::Cgroup { step: format!("moving process {pid}"), source })
    }

    /// The cgroup's `cgroup.procs` file, for [`netio::NetNs::spawn`].
    pub fn procs_file(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    /// The cgroup's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// True for cgroup v2.
    pub fn is_v2(&self) -> bool {
        self.v2
    }
}

impl Drop for CpuQuota {
    fn drop(&mut self) {
        // Fails while processes remain; killed children may take a moment to be reaped.
        for _ in 0..50 {
            if fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// Puts the calling thread back where it was when dropped (see [`CpuQuota::enter_thread`]).
#[derive(Debug)]
pub struct ThreadGuard {
    tid: String,
    previous: PathBuf,
}

impl Drop for ThreadGuard {
    fn drop(&mut self) {
        let _ = fs::write(self.previous.join("tasks"), &self.tid);
    }
}

impl CpuQuota {
    /// Moves only the calling thread into the quota until the guard is dropped; threads it
    /// starts meanwhile inherit the quota. cgroup v1 only (v2 places whole processes);
    /// `what` names what the quota is for, in the error.
    pub fn enter_thread(&self, what: &str) -> Result<ThreadGuard, Error> {
        let fail = |step: &str| {
            let step = step.to_string();
            move |source| Error::Cgroup { step, source }
        };
        if self.v2 {
            return Err(Error::Cgroup {
                step: format!("limiting {what}"),
                source: std::io::Error::other(
                    "cgroup v2 limits whole processes, and this runs as threads of tcplab (`tcplab emu` runs each side's commands as processes)",
                ),
            });
        }
        let link = fs::read_link("/proc/thread-self").map_err(fail("finding the thread id"))?;
        let tid = link.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let current =
            fs::read_to_string("/proc/thread-self/cgroup").map_err(fail("reading the thread's cgroup"))?;
        let rel = current
            .lines()
            .filter_map(|l| l.split_once(':').and_then(|(_, rest)| rest.split_once(':')))
            .find(|(controllers, _)| controllers.split(',').any(|c| c == "cpu"))
            .map(|(_, path)| path.trim_start_matches('/').to_string())
            .unwrap_or_default();
        let root = self.dir.parent().map(Path::to_path_buf).unwrap_or_default();
        fs::write(self.dir.join("tasks"), &tid).map_err(fail("moving the thread"))?;
        Ok(ThreadGuard { tid, previous: root.join(rel) })
    }
}
