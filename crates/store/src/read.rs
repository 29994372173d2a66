//! Reads: run lists for `history`, whole runs for `show`/`export`/`compare`/reports, sweeps.

use crate::db::{args, DbError, Row, Sql};
use crate::{sql, Error, Result, Store};
use results::headline::METRICS;
use results::{
    Estimate, Headline, Metric, Owner, ParamSetting, RunRecord, RunSummary, Sweep, SweepPlan, SweepPoint,
    TestResult,
};

/// Which runs `list_runs` returns (all fields optional; newest first).
#[derive(Debug, Clone, Default)]
pub struct RunFilter {
    /// Only this kind (`test`, `suite`, `sweep`).
    pub kind: Option<String>,
    /// Only runs with a test of this type (`tcp-stream`, …).
    pub test: Option<String>,
    /// Only runs whose server contains this text.
    pub server: Option<String>,
    /// Only runs with this status as stored (`running`, `complete`, `interrupted`, `failed`,
    /// `abandoned`).
    pub status: Option<String>,
    /// Only runs started at or after this time.
    pub since_unix_ms: Option<u64>,
    /// At most this many (0 = no limit).
    pub limit: u32,
}

/// A sweep's count is of its points: a point measured again keeps its superseded test.
const LIST: &str = "
SELECT r.id, r.kind, r.status, r.started_unix_ms, r.server, r.command_line,
       CASE WHEN EXISTS (SELECT 1 FROM sweeps s WHERE s.run_id = r.id)
            THEN (SELECT COUNT(*) FROM sweep_points p WHERE p.run_id = r.id)
            ELSE (SELECT COUNT(*) FROM tests t WHERE t.run_id = r.id) END,
       (SELECT points_total FROM sweeps s WHERE s.run_id = r.id),
       (SELECT label FROM tests t WHERE t.run_id = r.id ORDER BY seq LIMIT 1),
       r.owner_pid, r.owner_pid_start, r.owner_boot_id, r.owner_host
FROM runs r
WHERE (CAST(?1 AS TEXT) IS NULL OR r.kind = ?1)
  AND (CAST(?2 AS TEXT) IS NULL OR EXISTS (SELECT 1 FROM tests t WHERE t.run_id = r.id AND t.test = ?2))
  AND (CAST(?3 AS TEXT) IS NULL OR instr(r.server, ?3) > 0)
  AND (CAST(?4 AS TEXT) IS NULL OR r.status = ?4)
  AND r.started_unix_ms >= ?5
ORDER BY r.id DESC
LIMIT ?6";

/// The best headline of each run from `first` to `last`: `(run, metric id, highest value)`.
const BEST: &str = "
SELECT run_id, headline_metric, MAX(headline_value) FROM tests
WHERE run_id BETWEEN ?1 AND ?2 AND headline_value IS NOT NULL AND headline_metric IS NOT NULL
GROUP BY run_id, headline_metric";

fn summary_of(row: &Row) -> std::result::Result<RunSummary, DbError> {
    let cmd = row.text(5)?;
    Ok(RunSummary {
        id: row.i64(0)?,
        kind: row.text(1)?,
        status: row.text(2)?,
        started_unix_ms: row.i64(3)?.max(0) as u64,
        server: row.text(4)?,
        command_line: serde_json::from_str(&cmd).unwrap_or_default(),
        tests: row.i64(6)?.max(0) as u32,
        points_total: row.opt_i64(7)?.map(|n| n.max(0) as u32),
        first_label: row.opt_text(8)?,
        best: None,
        owner: owner_of(row, 9)?,
    })
}

/// The owner columns starting at `first` (pid, pid start, boot id, host); `None` when the
/// run was stored without them.
pub(crate) fn owner_of(row: &Row, first: usize) -> std::result::Result<Option<Owner>, DbError> {
    let Some(pid) = row.opt_i64(first)? else { return Ok(None) };
    Ok(Some(Owner {
        pid: u32::try_from(pid).unwrap_or(0),
        pid_start: row.opt_i64(first + 1)?.map(|t| t.max(0) as u64),
        boot_id: row.opt_text(first + 2)?.unwrap_or_default(),
        hostname: row.opt_text(first + 3)?.unwrap_or_default(),
    }))
}

/// The best headline of `found` (metric, value) pairs, by the order of `results::METRICS`.
fn best_of(found: &[(Metric, f64)]) -> Option<Headline> {
    METRICS
        .into_iter()
        .find_map(|m| found.iter().find(|(f, _)| *f == m).map(|(_, v)| Headline::measured(m, *v)))
}

fn parse<T: serde::de::DeserializeOwned>(what: &'static str, run: i64, text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|reason| Error::Json { what, run, reason })
}

impl Store {
    /// Runs matching `f`, newest first.
    pub fn list_runs(&self, f: &RunFilter) -> Result<Vec<RunSummary>> {
        let limit = if f.limit == 0 { i64::MAX } else { i64::from(f.limit) };
        let since = f.since_unix_ms.unwrap_or(0) as i64;
        let rows = self
            .conn()
            .query(
                LIST,
                args![
                    f.kind.as_deref(),
                    f.test.as_deref(),
                    f.server.as_deref(),
                    f.status.as_deref(),
                    since,
                    limit
                ],
            )
            .map_err(sql("listing runs"))?;
        let mut runs = rows
            .iter()
            .map(summary_of)
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(sql("listing runs"))?;
        self.fill_best(&mut runs)?;
        Ok(runs)
    }

    /// Each run's best headline (one query for the whole list).
    fn fill_best(&self, runs: &mut [RunSummary]) -> Result<()> {
        let (Some(lo), Some(hi)) = (runs.iter().map(|r| r.id).min(), runs.iter().map(|r| r.id).max()) else {
            return Ok(());
        };
        let rows = self.conn().query(BEST, args![lo, hi]).map_err(sql("listing runs"))?;
        let mut found: std::collections::HashMap<i64, Vec<(Metric, f64)>> = Default::default();
        for row in rows {
            let (run, metric, value) = (row.i64(0), row.text(1), row.opt_f64(2));
            let (run, metric, value) = (
                run.map_err(sql("listing runs"))?,
                metric.map_err(sql("listing runs"))?,
                value.map_err(sql("listing runs"))?,
            );
            if let (Some(m), Some(v)) = (Metric::from_id(&metric), value) {
                found.entry(run).or_default().push((m, v));
            }
        }
        for r in runs {
            r.best = found.get(&r.id).and_then(|f| best_of(f));
        }
        Ok(())
    }

    /// The id of the newest run, if any.
    pub fn last_run(&self) -> Result<Option<i64>> {
        self.conn()
            .query_row("SELECT MAX(id) FROM runs", &[])
            .and_then(|r| r.opt_i64(0))
            .map_err(sql("finding the last run"))
    }

    /// The id in this archive of the run with stable id `uid`.
    pub fn run_by_uid(&self, uid: &str) -> Result<i64> {
        self.conn()
            .query_opt("SELECT id FROM runs WHERE uid = ?1", args![uid])
            .and_then(|r| r.map(|r| r.i64(0)).transpose())
            .map_err(sql("finding a run"))?
            .ok_or_else(|| Error::NoUid(uid.to_string()))
    }

    /// The stable id of run `id`.
    pub fn run_uid(&self, id: i64) -> Result<String> {
        self.conn()
            .query_opt("SELECT uid FROM runs WHERE id = ?1", args![id])
            .and_then(|r| r.map(|r| r.text(0)).transpose())
            .map_err(sql("reading a run"))?
            .ok_or(Error::NotFound(id))
    }

    /// Run `id` in full: hosts, command line, every test in order, and its sweep if it is one.
    pub fn load_run(&self, id: i64) -> Result<RunRecord> {
        let mut run = self.load_header(id)?;
        let (tests, ids) = self.load_tests(id)?;
        run.tests = tests;
        run.sweep = self.load_sweep_with(id, &ids)?;
        run.cc = self.load_cc_study(id)?;
        Ok(run)
    }

    /// Sweep `id`: plan and finished points.
    pub fn load_sweep(&self, id: i64) -> Result<Sweep> {
        self.load_header(id)?;
        let (_, ids) = self.load_tests(id)?;
        self.load_sweep_with(id, &ids)?.ok_or(Error::NotASweep(id))
    }

    /// Indices of the finished points of sweep `id`, ascending.
    pub fn finished_points(&self, id: i64) -> Result<Vec<u32>> {
        let rows = self
            .conn()
            .query("SELECT point FROM sweep_points WHERE run_id = ?1 ORDER BY point", args![id])
            .map_err(sql("reading points"))?;
        rows.iter()
            .map(|r| r.i64(0).map(|p| p.max(0) as u32))
            .collect::<std::result::Result<_, _>>()
            .map_err(sql("reading points"))
    }

    /// Run `id`'s status as stored (`running`, `complete`, `interrupted`, `failed`,
    /// `abandoned`) and the process that wrote it (whether a `running` run is abandoned is for
    /// the caller to judge: [`crate::owner::abandoned`]).
    pub fn run_state(&self, id: i64) -> Result<(String, Option<Owner>)> {
        let row = self
            .conn()
            .query_opt(
                "SELECT status, owner_pid, owner_pid_start, owner_boot_id, owner_host FROM runs WHERE id = ?1",
                args![id],
            )
            .map_err(sql("reading a run"))?
            .ok_or(Error::NotFound(id))?;
        let status = row.text(0).map_err(sql("reading a run"))?;
        Ok((status, owner_of(&row, 1).map_err(sql("reading a run"))?))
    }

    /// The `host:port` a run was asked to test.
    pub fn server_of(&self, id: i64) -> Result<String> {
        self.conn()
            .query_opt("SELECT server FROM runs WHERE id = ?1", args![id])
            .and_then(|r| r.map(|r| r.text(0)).transpose())
            .map_err(sql("reading a run"))?
            .ok_or(Error::NotFound(id))
    }

    fn load_header(&self, id: i64) -> Result<RunRecord> {
        let row = self
            .conn()
            .query_opt(
                "SELECT started_unix_ms, tool_version, command_line, local_host, remote_host, error FROM runs WHERE id = ?1",
                args![id],
            )
            .map_err(sql("reading a run"))?
            .ok_or(Error::NotFound(id))?;
        let read = || -> std::result::Result<_, DbError> {
            Ok((row.i64(0)?, row.text(1)?, row.text(2)?, row.text(3)?, row.opt_text(4)?, row.opt_text(5)?))
        };
        let (started, tool_version, cmd, local, remote, error) = read().map_err(sql("reading a run"))?;
        Ok(RunRecord {
            tool_version,
            command_line: parse("command line", id, &cmd)?,
            started_unix_ms: started.max(0) as u64,
            local_host: parse("local host", id, &local)?,
            remote_host: remote.map(|t| parse("remote host", id, &t)).transpose()?,
            tests: Vec::new(),
            error: error.map(|t| parse("error", id, &t)).transpose()?,
            id: Some(id),
            sweep: None,
            cc: None,
        })
    }

    /// Tests in order, and their row ids (same order).
    fn load_tests(&self, id: i64) -> Result<(Vec<TestResult>, Vec<i64>)> {
        let rows = self
            .conn()
            .query("SELECT id, result FROM tests WHERE run_id = ?1 ORDER BY seq", args![id])
            .map_err(sql("reading tests"))?;
        let (mut tests, mut ids) = (Vec::new(), Vec::new());
        for row in rows {
            let (test_id, text) =
                (row.i64(0).map_err(sql("reading tests"))?, row.text(1).map_err(sql("reading tests"))?);
            tests.push(parse("result", id, &text)?);
            ids.push(test_id);
        }
        Ok((tests, ids))
    }

    fn load_sweep_with(&self, id: i64, test_ids: &[i64]) -> Result<Option<Sweep>> {
        let row = self
            .conn()
            .query_opt("SELECT plan, points_total FROM sweeps WHERE run_id = ?1", args![id])
            .map_err(sql("reading a sweep"))?;
        let Some(row) = row else { return Ok(None) };
        let (plan_text, total) =
            (row.text(0).map_err(sql("reading a sweep"))?, row.i64(1).map_err(sql("reading a sweep"))?);
        let plan: SweepPlan = parse("sweep plan", id, &plan_text)?;
        let rows = self
            .conn()
            .query("SELECT point, test_id, params, headline, met FROM sweep_points WHERE run_id = ?1 ORDER BY point", args![id])
            .map_err(sql("reading points"))?;
        let positions: std::collections::HashMap<i64, u32> =
            test_ids.iter().enumerate().map(|(i, t)| (*t, i as u32)).collect();
        let mut points = Vec::new();
        for row in rows {
            let read = || -> std::result::Result<_, DbError> {
                Ok((row.i64(0)?.max(0) as u32, row.i64(1)?, row.text(2)?, row.text(3)?, row.i64(4)? != 0))
            };
            let (index, test_id, params_text, headline_text, met) = read().map_err(sql("reading points"))?;
            let params: Vec<ParamSetting> = parse("point parameters", id, &params_text)?;
            let headline: Estimate = parse("point estimate", id, &headline_text)?;
            let test_index = positions.get(&test_id).copied().unwrap_or(0);
            let coords = coords_of(&plan, index);
            points.push(SweepPoint { index, coords, params, test_index, headline, met });
        }
        let complete = points.len() as i64 >= total;
        Ok(Some(Sweep { plan, points, complete }))
    }
}

/// Row-major coordinates of point `index` in `plan`'s grid (last axis fastest).
pub fn coords_of(plan: &SweepPlan, index: u32) -> Vec<u32> {
    let mut rest = index as usize;
    let mut coords = vec![0u32; plan.axes.len()];
    for (c, axis) in coords.iter_mut().zip(&plan.axes).rev() {
        let n = axis.values.len().max(1);
        *c = (rest % n) as u32;
        rest /= n;
    }
    coords
}
