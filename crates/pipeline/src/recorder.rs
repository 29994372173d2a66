//! Writes a command's results to the archive as they complete (unless `--no-store`).

use anyhow::{Context, Result};
use results::{HostInfo, RunRecord, SweepPlan, SweepPoint, TestError, TestResult};
use store::{RunKind, RunStatus, Store};

use crate::config::Storage;
use crate::output::now_unix_ms;
use crate::spool::Spool;

/// The archive of one command, or nothing with `--no-store`. What it was given is kept, so
/// that when the archive fails to take a write (a full disk, a PostgreSQL outage) the whole run
/// moves to the local [`Spool`] under the same stable ids, to be delivered later.
#[derive(Debug)]
pub struct Recorder {
    /// Where writes go: the archive, or the spool's file once the run moved there.
    store: Option<Store>,
    /// The run's id in `store`.
    run: Option<i64>,
    /// The run's id in the archive, if it began there.
    archive_run: Option<i64>,
    spool: Option<Spool>,
    /// The archive, kept for reading once the run moved to the spool.
    archive: Option<Store>,
    /// Whether the run continues one begun by an earlier process (`--resume`).
    resumed: bool,
    kept: Kept,
    /// Why the run moved to the spool.
    diverted: Option<String>,
}

/// What the run wrote so far, to write again into the spool.
#[derive(Debug, Default)]
struct Kept {
    begun: Option<(RunRecord, RunKind, String, String)>,
    tests: Vec<(TestResult, String)>,
    remote: Option<HostInfo>,
    cc: Option<results::CcStudy>,
    /// A sweep's or mesh's plan, and its points with their tests' stable ids (and whether
    /// the point was measured again, replacing a stored one).
    sweep: Option<SweepPlan>,
    points: Vec<(SweepPoint, TestResult, String, bool)>,
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
        return Err(store::Error::Missing { path: p.clone() }.into());
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
    /// Results waiting in the spool of that archive are delivered first.
    pub fn open(s: &Storage) -> Result<Recorder> {
        let store = if s.disabled { None } else { Some(open_store(s.db.as_deref())?) };
        let spool = Spool::of(s).ok().flatten();
        if let (Some(sp), Some(_)) = (&spool, &store) {
            sp.flush_and_say();
        }
        Ok(Recorder {
            store,
            run: None,
            archive_run: None,
            spool,
            archive: None,
            resumed: false,
            kept: Kept::default(),
            diverted: None,
        })
    }

    /// The run id in the archive, once begun there.
    pub fn run_id(&self) -> Option<i64> {
        self.archive_run
    }

    /// The open archive, if any (none once the run moved to the spool).
    pub fn store(&mut self) -> Option<&mut Store> {
        self.store.as_mut().filter(|_| self.diverted.is_none())
    }

    /// What the archive holds of a resumed run that then moved to the spool: the points of
    /// its earlier sessions (`None` when the run did not move, was not resumed, or the archive
    /// cannot be read now).
    pub fn earlier_sessions(&self) -> Option<RunRecord> {
        let (Some(st), Some(id)) = (self.archive.as_ref().filter(|_| self.resumed), self.archive_run) else {
            return None;
        };
        st.load_run(id).ok()
    }

    /// Where the run waits and why, once the archive failed to take it.
    pub fn diverted(&self) -> Option<&str> {
        self.diverted.as_deref()
    }

    /// Records the start of a run of `kind` against `server`.
    pub fn begin(&mut self, header: &RunRecord, kind: RunKind, server: &str) -> Result<()> {
        if self.store.is_none() {
            return Ok(());
        }
        let uid = store::ids::new_uid()?;
        self.kept.begun = Some((header.clone(), kind, server.to_string(), uid.clone()));
        let st = self.store.as_mut().context("no archive")?;
        // Not moved to the spool: the archive failing before any test is a plain error.
        let id = st.begin_run_as(header, kind, server, &this_process(), &uid)?;
        (self.run, self.archive_run) = (Some(id), Some(id));
        Ok(())
    }

    /// Continues run `id` (a resumed sweep, mesh or study: a run of kind sweep). Its stable
    /// id, header and plan are kept, so that when the archive fails later the points of this
    /// session move to the spool under the run's own id: pushed, they join the part already
    /// archived (the archive takes what it lacks, by stable id).
    pub fn resume(&mut self, id: i64) -> Result<()> {
        let Some(st) = self.store.as_mut() else { return Ok(()) };
        let mut header = st.load_run(id)?;
        let (uid, server) = (st.run_uid(id)?, st.server_of(id)?);
        self.kept.sweep = header.sweep.take().map(|s| s.plan);
        header.tests.clear();
        // Not moved to the spool: the archive failing before any test is a plain error.
        st.reopen_run(id, Some(&this_process()))?;
        self.kept.begun = Some((header, RunKind::Sweep, server, uid));
        (self.run, self.archive_run, self.resumed) = (Some(id), Some(id), true);
        Ok(())
    }

    /// Stores one finished test.
    pub fn test(&mut self, r: &TestResult) -> Result<()> {
        let uid = store::ids::new_uid()?;
        self.kept.tests.push((r.clone(), uid.clone()));
        self.write(|st, id| st.add_test_as(id, r, &uid).map(|_| ()))
    }

    /// Stores the plan of a sweep or mesh (before its first point).
    pub fn sweep(&mut self, plan: &SweepPlan) -> Result<()> {
        self.kept.sweep = Some(plan.clone());
        self.write(|st, id| st.begin_sweep(id, plan))
    }

    /// Stores one finished point of a sweep or mesh, with its test.
    pub fn point(&mut self, point: &SweepPoint, r: &TestResult) -> Result<()> {
        let uid = store::ids::new_uid()?;
        self.kept.points.push((point.clone(), r.clone(), uid.clone(), false));
        self.write(|st, id| st.add_point_as(id, point, r, &uid))
    }

    /// Stores a point of a resumed run measured again: the new test becomes the point's, the
    /// one it had stays in the run ([`Store::add_point_again_as`]).
    pub fn point_again(&mut self, point: &SweepPoint, r: &TestResult) -> Result<()> {
        let uid = store::ids::new_uid()?;
        self.kept.points.push((point.clone(), r.clone(), uid.clone(), true));
        self.write(|st, id| st.add_point_again_as(id, point, r, &uid))
    }

    /// Stores a congestion-control comparison's figures.
    pub fn cc_study(&mut self, study: &results::CcStudy) -> Result<()> {
        self.kept.cc = Some(study.clone());
        self.write(|st, id| st.set_cc_study(id, study))
    }

    /// Stores the server's description once known.
    pub fn remote_host(&mut self, host: Option<&HostInfo>) -> Result<()> {
        let Some(h) = host else { return Ok(()) };
        self.kept.remote = Some(h.clone());
        self.write(|st, id| st.set_remote_host(id, h))
    }

    /// Marks the run ended.
    pub fn finish(&mut self, status: RunStatus, error: Option<&TestError>) -> Result<()> {
        let now = now_unix_ms();
        let write = |st: &mut Store, id| st.finish_run(id, status, error, now);
        let moved = self.diverted.is_some();
        self.write(write)?;
        if !moved && self.diverted.is_some() {
            // The run moved to the spool on this very write: end it there too.
            if let (Some(st), Some(id)) = (self.store.as_mut(), self.run) {
                write(st, id)?;
            }
        }
        Ok(())
    }

    /// Runs `op` on the run where it is kept; when the archive refuses it, moves the run to
    /// the spool (which replays everything kept, `op`'s data included).
    fn write(&mut self, op: impl Fn(&mut Store, i64) -> store::Result<()>) -> Result<()> {
        let (Some(st), Some(id)) = (self.store.as_mut(), self.run) else { return Ok(()) };
        match op(st, id) {
            Ok(()) => Ok(()),
            Err(e) if self.diverted.is_none() => self.divert(anyhow::Error::new(e)),
            Err(e) => Err(e.into()),
        }
    }

    /// Writes the whole run into the spool, under its stable ids, and writes there from now on.
    fn divert(&mut self, why: anyhow::Error) -> Result<()> {
        let Some(spool) = self.spool.clone().filter(|_| self.kept.begun.is_some()) else { return Err(why) };
        let (st, run) = self.replay(&spool).map_err(|e| {
            anyhow::anyhow!(
                "{why:#}; the spool {} could not take it either ({e:#}): the results are only in this output",
                spool.file.display()
            )
        })?;
        self.diverted = Some(format!(
            "the archive did not store this run ({why:#}); it waits in the spool {} and is delivered by the next run or `tcplab archive push`",
            spool.file.display()
        ));
        self.archive = self.store.replace(st);
        self.run = Some(run);
        Ok(())
    }

    /// Writes everything kept of the run into `spool`'s file; the file and the run's id there.
    fn replay(&self, spool: &Spool) -> Result<(Store, i64)> {
        let (header, kind, server, uid) = self.kept.begun.as_ref().context("no run begun")?;
        let mut st = Store::open_creating_dir(&spool.file)?;
        let (run, fresh) = match st.run_by_uid(uid) {
            // A resumed run whose earlier session waits in the spool still: continued there.
            Ok(run) => (run, false),
            Err(store::Error::NoUid(_)) => {
                (st.begin_run_as(header, *kind, server, &this_process(), uid)?, true)
            }
            Err(e) => return Err(e.into()),
        };
        for (t, u) in &self.kept.tests {
            st.add_test_as(run, t, u)?;
        }
        if let Some(h) = &self.kept.remote {
            st.set_remote_host(run, h)?;
        }
        if let Some(c) = &self.kept.cc {
            st.set_cc_study(run, c)?;
        }
        if let Some(plan) = self.kept.sweep.as_ref().filter(|_| fresh) {
            st.begin_sweep(run, plan)?;
        }
        for (p, r, u, again) in &self.kept.points {
            let added =
                if *again { st.add_point_again_as(run, p, r, u) } else { st.add_point_as(run, p, r, u) };
            match added {
                // Measured again because the spool could not be delivered before the resume
                // read the archive: the point the spool holds is kept.
                Err(store::Error::Duplicate { .. }) => {}
                other => other?,
            }
        }
        Ok((st, run))
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
