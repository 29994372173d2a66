//! Writes a command's results to the archive as they complete (unless `--no-store`).

use anyhow::{Context, Result};
use results::{HostInfo, RunRecord, TestError, TestResult};
use store::{RunKind, RunStatus, Store};

use crate::config::Storage;
use crate::output::now_unix_ms;

/// The archive of one command, or nothing with `--no-store`.
#[derive(Debug)]
pub struct Recorder {
    store: Option<Store>,
    run: Option<i64>,
}

/// Opens the archive at `db` (a file or a `postgres://` URL), else the one `TCPLAB_DB` names,
/// else the default file (for reading or writing).
pub fn open_store(db: Option<&std::path::Path>) -> Result<Store> {
    if let Some(p) = db.map(std::path::Path::to_path_buf).or_else(store::env_path) {
        return Ok(Store::open(&p)?);
    }
    let path = store::default_path()
        .context("no XDG_DATA_HOME or HOME to put the archive in; use --db PATH or --no-store")?;
    Ok(Store::open_creating_dir(&path)?)
}

/// [`open_store`] for a command that only reads: an archive this process may not write to
/// (a read-only file or mount) is opened read-only instead of refused.
/// A SQLite file that does not exist is an error: reading never creates an archive.
pub fn open_store_read(db: Option<&std::path::Path>) -> Result<Store> {
    let path = db.map(std::path::Path::to_path_buf).or_else(store::env_path).or_else(store::default_path);
    if let Some(p) = path.as_ref().filter(|p| !p.to_str().is_some_and(store::db::is_postgres) && !p.exists())
    {
        anyhow::bail!(
            "no archive at {}: nothing has been stored there yet (tests store their results there unless run with --no-store)",
            p.display()
        );
    }
    let writable = open_store(db);
    match (writable, path) {
        (Ok(st), _) => Ok(st),
        (Err(e), Some(p)) if p.is_file() => Store::open_read_only(&p)
            .map_err(|ro| anyhow::anyhow!("{e:#}; read-only, it could not be read either: {ro}")),
        (Err(e), _) => Err(e),
    }
}

impl Recorder {
    /// The archive chosen by `s`; opening it now, so a bad `--db` fails before any test runs.
    pub fn open(s: &Storage) -> Result<Recorder> {
        let store = if s.disabled { None } else { Some(open_store(s.db.as_deref())?) };
        Ok(Recorder { store, run: None })
    }

    /// The run id, once begun.
    pub fn run_id(&self) -> Option<i64> {
        self.run
    }

    /// The open archive, if any.
    pub fn store(&mut self) -> Option<&mut Store> {
        self.store.as_mut()
    }

    /// Records the start of a run of `kind` against `server`.
    pub fn begin(&mut self, header: &RunRecord, kind: RunKind, server: &str) -> Result<()> {
        if let Some(st) = self.store.as_mut() {
            self.run = Some(st.begin_run_by(header, kind, server, &this_process())?);
        }
        Ok(())
    }

    /// Continues run `id` (a resumed sweep).
    pub fn resume(&mut self, id: i64) -> Result<()> {
        if let Some(st) = self.store.as_mut() {
            st.reopen_run(id, Some(&this_process()))?;
            self.run = Some(id);
        }
        Ok(())
    }

    /// Stores one finished test.
    pub fn test(&mut self, r: &TestResult) -> Result<()> {
        if let (Some(st), Some(id)) = (self.store.as_mut(), self.run) {
            st.add_test(id, r)?;
        }
        Ok(())
    }

    /// Stores a congestion-control comparison's figures.
    pub fn cc_study(&mut self, study: &results::CcStudy) -> Result<()> {
        if let (Some(st), Some(id)) = (self.store.as_mut(), self.run) {
            st.set_cc_study(id, study)?;
        }
        Ok(())
    }

    /// Stores the server's description once known.
    pub fn remote_host(&mut self, host: Option<&HostInfo>) -> Result<()> {
        if let (Some(st), Some(id), Some(h)) = (self.store.as_mut(), self.run, host) {
            st.set_remote_host(id, h)?;
        }
        Ok(())
    }

    /// Marks the run ended.
    pub fn finish(&mut self, status: RunStatus, error: Option<&TestError>) -> Result<()> {
        if let (Some(st), Some(id)) = (self.store.as_mut(), self.run) {
            st.finish_run(id, status, error, now_unix_ms())?;
        }
        Ok(())
    }
}

/// This process as the archive records a run's owner, so that `history` can tell a run in
/// progress from one whose process was killed.
pub fn this_process() -> store::Owner {
    let pid = std::process::id();
    store::Owner {
        pid,
        pid_start: netio::host::process_start(pid),
        boot_id: netio::host::boot_id(),
        hostname: netio::host::hostname(),
    }
}

/// The run status a list of results amounts to.
pub fn status_of(results: &[TestResult]) -> RunStatus {
    use results::Status;
    if results.iter().any(|r| r.status == Status::Failed) {
        RunStatus::Failed
    } else if results.iter().any(|r| r.status == Status::Interrupted) {
        RunStatus::Interrupted
    } else {
        RunStatus::Complete
    }
}
