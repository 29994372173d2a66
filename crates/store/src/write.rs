//! Writes: one `BEGIN IMMEDIATE` transaction per test or sweep point, committed as soon as it
//! is measured.

use results::{Owner, RunRecord, SweepPlan, SweepPoint, TestError, TestResult};

use crate::db::{args, DbError, Sql};
use crate::{ids, schema, sql, Error, Result, Store};

/// What made a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunKind {
    /// One test command (`stream`, `rr`, `crr`, …).
    Test,
    /// The standard suite (`tcplab run`).
    Suite,
    /// A sweep.
    Sweep,
    /// A congestion-control comparison (`compare-cc`).
    CompareCc,
    /// A test `tcplab server --iperf3` served to a stock iperf3 client.
    Iperf3Client,
}

impl RunKind {
    /// Stored id.
    pub fn id(self) -> &'static str {
        match self {
            RunKind::Test => "test",
            RunKind::Suite => "suite",
            RunKind::Sweep => "sweep",
            RunKind::CompareCc => "compare-cc",
            RunKind::Iperf3Client => "iperf3-client",
        }
    }
}

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStatus {
    /// Being written (or killed while it was: a sweep in this state can be resumed).
    Running,
    /// Finished.
    Complete,
    /// Stopped by the user.
    Interrupted,
    /// Ended by an error.
    Failed,
    /// Left `running` by a process that is gone (see [`crate::owner`]).
    Abandoned,
}

impl RunStatus {
    /// Stored id.
    pub fn id(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Complete => "complete",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
            RunStatus::Abandoned => "abandoned",
        }
    }
}

fn json<T: serde::Serialize>(what: &'static str, run: i64, v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|reason| Error::Json { what, run, reason })
}

impl Store {
    /// Records a new run (its tests come later) and returns its id. `server` is the
    /// `host:port` asked for. The run has no owner: see [`Store::begin_run_by`].
    pub fn begin_run(&mut self, run: &RunRecord, kind: RunKind, server: &str) -> Result<i64> {
        self.insert_run(run, kind, server, None, None)
    }

    /// [`Store::begin_run`] for a run written by process `owner`.
    pub fn begin_run_by(
        &mut self,
        run: &RunRecord,
        kind: RunKind,
        server: &str,
        owner: &Owner,
    ) -> Result<i64> {
        self.insert_run(run, kind, server, Some(owner), None)
    }

    /// [`Store::begin_run_by`] under a stable id given by the caller (a run moved to the
    /// spool keeps the id it has in the archive, so that pushing it later completes that run).
    pub fn begin_run_as(
        &mut self,
        run: &RunRecord,
        kind: RunKind,
        server: &str,
        owner: &Owner,
        uid: &str,
    ) -> Result<i64> {
        self.insert_run(run, kind, server, Some(owner), Some(uid))
    }

    fn insert_run(
        &mut self,
        run: &RunRecord,
        kind: RunKind,
        server: &str,
        owner: Option<&Owner>,
        uid: Option<&str>,
    ) -> Result<i64> {
        self.check_before_writing()?;
        let cmd = json("command line", 0, &run.command_line)?;
        let local = json("local host", 0, &run.local_host)?;
        let remote = run.remote_host.as_ref().map(|h| json("remote host", 0, h)).transpose()?;
        let (pid, start, boot, host) = owner_columns(owner);
        let client = Some(run.local_host.hostname.as_str()).filter(|h| !h.is_empty()).or(host);
        let uid = match uid {
            Some(u) => u.to_string(),
            None => ids::new_uid()?,
        };
        let mut tx = self.immediate()?;
        let id = tx
            .query_row(
                "INSERT INTO runs (kind, status, started_unix_ms, tool_version, command_line, server, local_host,
                     remote_host, owner_pid, owner_pid_start, owner_boot_id, owner_host, uid, host)
                 VALUES (?1, 'running', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) RETURNING id",
                args![
                    kind.id(),
                    run.started_unix_ms as i64,
                    &run.tool_version,
                    cmd,
                    server,
                    local,
                    remote,
                    pid,
                    start,
                    boot,
                    host,
                    uid,
                    client
                ],
            )
            .and_then(|r| r.i64(0))
            .map_err(sql("recording a run"))?;
        tx.commit("recording a run")?;
        Ok(id)
    }

    /// Appends a test to run `run` (at the next sequence number) and returns the test's id.
    pub fn add_test(&mut self, run: i64, result: &TestResult) -> Result<i64> {
        self.add_test_as(run, result, &ids::new_uid()?)
    }

    /// [`Store::add_test`] under the stable id `uid` (chosen before writing, so the same test
    /// written to the archive and to the spool is one test when pushed).
    pub fn add_test_as(&mut self, run: i64, result: &TestResult, uid: &str) -> Result<i64> {
        let mut tx = self.immediate()?;
        let seq = tx
            .query_row("SELECT COALESCE(MAX(seq) + 1, 0) FROM tests WHERE run_id = ?1", args![run])
            .and_then(|r| r.i64(0))
            .map_err(sql("numbering a test"))?;
        let id = insert_test(&mut *tx, run, seq, result, uid)?;
        tx.commit("writing a test")?;
        Ok(id)
    }

    /// Records the plan of sweep `run`.
    pub fn begin_sweep(&mut self, run: i64, plan: &SweepPlan) -> Result<()> {
        let text = json("sweep plan", run, plan)?;
        let mut tx = self.immediate()?;
        tx.execute(
            "INSERT INTO sweeps (run_id, plan, points_total) VALUES (?1, ?2, ?3)",
            args![run, text, plan.len() as i64],
        )
        .map_err(sql("recording a sweep"))?;
        crate::paths::tag_inventory(&mut *tx, Some(run))?;
        tx.commit("recording a sweep")
    }

    /// Writes a finished sweep point and its result in one transaction. A point already
    /// stored is refused with [`Error::Duplicate`] and nothing is written.
    /// (`point.test_index` is ignored: the test is stored at sequence `point.index`.)
    pub fn add_point(&mut self, run: i64, point: &SweepPoint, result: &TestResult) -> Result<()> {
        self.add_point_as(run, point, result, &ids::new_uid()?)
    }

    /// [`Store::add_point`] with the point's test under the stable id `uid` (the same point
    /// written to the archive and to the spool is one test when pushed).
    pub fn add_point_as(
        &mut self,
        run: i64,
        point: &SweepPoint,
        result: &TestResult,
        uid: &str,
    ) -> Result<()> {
        self.put_point(run, point, result, uid, false)
    }

    /// Writes sweep point `point` measured again (a study's `--remeasure-stolen`): the new
    /// test, under the stable id `uid`, becomes the point's, and the test it measured before
    /// stays in the run, superseded (so nothing measured is lost). A point not stored yet is
    /// written as [`Store::add_point_as`] writes it. One transaction.
    pub fn add_point_again_as(
        &mut self,
        run: i64,
        point: &SweepPoint,
        result: &TestResult,
        uid: &str,
    ) -> Result<()> {
        self.put_point(run, point, result, uid, true)
    }

    /// Writes a point and its test in one transaction. A point already stored is refused with
    /// [`Error::Duplicate`], or, `again`, given the new test, which goes after the plan's
    /// places ([`free_seq`]); a first test takes the point's index as its place.
    fn put_point(
        &mut self,
        run: i64,
        point: &SweepPoint,
        result: &TestResult,
        uid: &str,
        again: bool,
    ) -> Result<()> {
        let params_text = json("point parameters", run, &point.params)?;
        let headline = json("point estimate", run, &point.headline)?;
        let mut tx = self.immediate()?;
        let exists = tx
            .query_opt("SELECT 1 FROM sweep_points WHERE run_id = ?1 AND point = ?2", args![run, point.index])
            .map_err(sql("checking a point"))?
            .is_some();
        if exists && !again {
            return Err(Error::Duplicate { run, point: point.index });
        }
        let seq = match exists {
            true => free_seq(&mut *tx, run).map_err(sql("numbering a test"))?,
            false => i64::from(point.index),
        };
        let test_id = insert_test(&mut *tx, run, seq, result, uid)?;
        let (write, what) = match exists {
            true => (
                "UPDATE sweep_points SET test_id = ?3, params = ?4, headline = ?5, met = ?6 WHERE run_id = ?1 AND point = ?2",
                "writing a point again",
            ),
            false => (
                "INSERT INTO sweep_points (run_id, point, test_id, params, headline, met) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                "writing a point",
            ),
        };
        tx.execute(write, args![run, point.index, test_id, params_text, headline, point.met])
            .map_err(sql(what))?;
        tx.commit(what)
    }

    /// Records the server's host facts once they are known.
    pub fn set_remote_host(&mut self, run: i64, host: &results::HostInfo) -> Result<()> {
        let text = json("remote host", run, host)?;
        let mut tx = self.immediate()?;
        tx.execute("UPDATE runs SET remote_host = ?1 WHERE id = ?2", args![text, run])
            .map_err(sql("recording the server host"))?;
        tx.commit("recording the server host")
    }

    /// Marks run `run` ended at `now_unix_ms` with `status` (and an error, if any).
    pub fn finish_run(
        &mut self,
        run: i64,
        status: RunStatus,
        error: Option<&TestError>,
        now_unix_ms: u64,
    ) -> Result<()> {
        let err = error.map(|e| json("error", run, e)).transpose()?;
        let mut tx = self.immediate()?;
        tx.execute(
            "UPDATE runs SET status = ?1, error = ?2, finished_unix_ms = ?3 WHERE id = ?4",
            args![status.id(), err, now_unix_ms as i64, run],
        )
        .map_err(sql("finishing a run"))?;
        tx.commit("finishing a run")
    }

    /// Marks a sweep as running again (resume), now written by `owner` when given.
    pub fn reopen_run(&mut self, run: i64, owner: Option<&Owner>) -> Result<()> {
        self.check_before_writing()?;
        let (pid, start, boot, host) = owner_columns(owner);
        let mut tx = self.immediate()?;
        let n = tx
            .execute(
                "UPDATE runs SET status = 'running', finished_unix_ms = NULL, error = NULL,
                     owner_pid = ?2, owner_pid_start = ?3, owner_boot_id = ?4, owner_host = ?5
                 WHERE id = ?1",
                args![run, pid, start, boot, host],
            )
            .map_err(sql("reopening a run"))?;
        if n == 0 {
            return Err(Error::NotFound(run));
        }
        tx.commit("reopening a run")
    }
}

/// The `runs.owner_*` column values of `owner` (all NULL without one).
fn owner_columns(owner: Option<&Owner>) -> (Option<i64>, Option<i64>, Option<&str>, Option<&str>) {
    match owner {
        Some(o) => (
            Some(i64::from(o.pid)),
            o.pid_start.map(|t| t as i64),
            Some(o.boot_id.as_str()),
            Some(o.hostname.as_str()),
        ),
        None => (None, None, None, None),
    }
}

/// The first place (`seq`) in run `run` after every test and every point of its plan (points
/// take their index): a test that is not a point's first measurement goes there, so that it
/// never takes the place of a point still to come.
pub(crate) fn free_seq(tx: &mut dyn Sql, run: i64) -> std::result::Result<i64, DbError> {
    let after =
        tx.query_row("SELECT COALESCE(MAX(seq), -1) + 1 FROM tests WHERE run_id = ?1", args![run])?.i64(0)?;
    let plan = tx.query_opt("SELECT points_total FROM sweeps WHERE run_id = ?1", args![run])?;
    let total = plan.map(|r| r.i64(0)).transpose()?.unwrap_or(0);
    Ok(after.max(total))
}

fn insert_test(tx: &mut dyn Sql, run: i64, seq: i64, r: &TestResult, uid: &str) -> Result<i64> {
    let spec = json("spec", run, &r.spec)?;
    let text = json("result", run, r)?;
    let status =
        serde_json::to_value(r.status).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default();
    let metric = r.summary.headline.map(|h| h.metric.id());
    let value = r.summary.headline_value();
    let (goodput, rate) = metric.map(|m| crate::legacy::split(m, value)).unwrap_or_default();
    let ends = tx
        .query_row("SELECT COALESCE(host, ''), server FROM runs WHERE id = ?1", args![run])
        .and_then(|row| Ok((row.text(0)?, row.text(1)?)))
        .map_err(sql("reading a run"))?;
    let (sender, receiver) = crate::paths::ends(r, &ends.0, &ends.1);
    let id = tx
        .query_row(
            "INSERT INTO tests (run_id, seq, label, test, status, started_unix_ms, goodput_bps, trans_per_s, spec,
                 result, headline_metric, headline_value, uid, sender, receiver)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) RETURNING id",
            args![
                run,
                seq,
                &r.label,
                r.spec.test.id(),
                status,
                r.started_unix_ms as i64,
                goodput,
                rate,
                spec,
                text,
                metric,
                value,
                uid,
                sender,
                receiver
            ],
        )
        .and_then(|r| r.i64(0))
        .map_err(sql("writing a test"))?;
    schema::insert_rows(tx, id, r)?;
    crate::summary::record(tx, id)?;
    Ok(id)
}
