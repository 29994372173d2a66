//! Reads: run lists for `history`, whole runs for `show`/`export`/`compare`/reports, sweeps.

use results::headline::METRICS;
use results::{
    Estimate, Headline, Metric, Owner, ParamSetting, RunRecord, RunSummary, Sweep, SweepPlan, SweepPoint,
    TestResult,
};
use rusqlite::{params, OptionalExtension, Row};

use crate::{sql, Error, Result, Store};

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

const LIST: &str = "
SELECT r.id, r.kind, r.status, r.started_unix_ms, r.server, r.command_line,
       (SELECT COUNT(*) FROM tests t WHERE t.run_id = r.id),
       (SELECT points_total FROM sweeps s WHERE s.run_id = r.id),
       (SELECT label FROM tests t WHERE t.run_id = r.id ORDER BY seq LIMIT 1),
       (SELECT group_concat(m || '=' || v) FROM
           (SELECT headline_metric AS m, MAX(headline_value) AS v FROM tests t
            WHERE t.run_id = r.id AND headline_value IS NOT NULL GROUP BY headline_metric)),
       r.owner_pid, r.owner_pid_start, r.owner_boot_id, r.owner_host
FROM runs r
WHERE (?1 IS NULL OR r.kind = ?1)
  AND (?2 IS NULL OR EXISTS (SELECT 1 FROM tests t WHERE t.run_id = r.id AND t.test = ?2))
  AND (?3 IS NULL OR instr(r.server, ?3) > 0)
  AND (?4 IS NULL OR r.status = ?4)
  AND r.started_unix_ms >= ?5
ORDER BY r.id DESC
LIMIT ?6";

fn summary_of(row: &Row) -> rusqlite::Result<RunSummary> {
    let cmd: String = row.get(5)?;
    Ok(RunSummary {
        id: row.get(0)?,
        kind: row.get(1)?,
        status: row.get(2)?,
        started_unix_ms: row.get::<_, i64>(3)?.max(0) as u64,
        server: row.get(4)?,
        command_line: serde_json::from_str(&cmd).unwrap_or_default(),
        tests: row.get::<_, i64>(6)?.max(0) as u32,
        points_total: row.get::<_, Option<i64>>(7)?.map(|n| n.max(0) as u32),
        first_label: row.get(8)?,
        best: best_of(row.get::<_, Option<String>>(9)?.as_deref().unwrap_or("")),
        owner: owner_of(row, 10)?,
    })
}

/// The owner columns starting at `first` (pid, pid start, boot id, host); `None` when the
/// run was stored without them.
pub(crate) fn owner_of(row: &Row, first: usize) -> rusqlite::Result<Option<Owner>> {
    let Some(pid) = row.get::<_, Option<i64>>(first)? else { return Ok(None) };
    Ok(Some(Owner {
        pid: u32::try_from(pid).unwrap_or(0),
        pid_start: row.get::<_, Option<i64>>(first + 1)?.map(|t| t.max(0) as u64),
        boot_id: row.get::<_, Option<String>>(first + 2)?.unwrap_or_default(),
        hostname: row.get::<_, Option<String>>(first + 3)?.unwrap_or_default(),
    }))
}

/// The best headline from `metric=value` pairs, by the order of `results::METRICS`.
fn best_of(pairs: &str) -> Option<Headline> {
    let found: Vec<(Metric, f64)> = pairs
        .split(',')
        .filter_map(|p| p.split_once('='))
        .filter_map(|(m, v)| Some((Metric::from_id(m)?, v.parse().ok()?)))
        .collect();
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
        let limit = if f.limit == 0 { -1 } else { i64::from(f.limit) };
        let since = f.since_unix_ms.unwrap_or(0) as i64;
        let mut stmt = self.conn.prepare(LIST).map_err(sql("listing runs"))?;
        let rows = stmt
            .query_map(params![f.kind, f.test, f.server, f.status, since, limit], summary_of)
            .map_err(sql("listing runs"))?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(sql("listing runs"))
    }

    /// The id of the newest run, if any.
    pub fn last_run(&self) -> Result<Option<i64>> {
        self.conn.query_row("SELECT MAX(id) FROM runs", [], |r| r.get(0)).map_err(sql("finding the last run"))
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
        let mut stmt = self
            .conn
            .prepare("SELECT point FROM sweep_points WHERE run_id = ?1 ORDER BY point")
            .map_err(sql("reading points"))?;
        let rows = stmt.query_map([id], |r| r.get::<_, u32>(0)).map_err(sql("reading points"))?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(sql("reading points"))
    }

    /// The `host:port` a run was asked to test.
    pub fn server_of(&self, id: i64) -> Result<String> {
        self.conn
            .query_row("SELECT server FROM runs WHERE id = ?1", [id], |r| r.get(0))
            .optional()
            .map_err(sql("reading a run"))?
            .ok_or(Error::NotFound(id))
    }

    fn load_header(&self, id: i64) -> Result<RunRecord> {
        let row = self
            .conn
            .query_row(
                "SELECT started_unix_ms, tool_version, command_line, local_host, remote_host, error FROM runs WHERE id = ?1",
                [id],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, Option<String>>(4)?,
                        r.get::<_, Option<String>>(5)?,
                    ))
                },
            )
            .optional()
            .map_err(sql("reading a run"))?
            .ok_or(Error::NotFound(id))?;
        let (started, tool_version, cmd, local, remote, error) = row;
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
        let mut stmt = self
            .conn
            .prepare("SELECT id, result FROM tests WHERE run_id = ?1 ORDER BY seq")
            .map_err(sql("reading tests"))?;
        let rows = stmt
            .query_map([id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
            .map_err(sql("reading tests"))?;
        let (mut tests, mut ids) = (Vec::new(), Vec::new());
        for row in rows {
            let (test_id, text) = row.map_err(sql("reading tests"))?;
            tests.push(parse("result", id, &text)?);
            ids.push(test_id);
        }
        Ok((tests, ids))
    }

    fn load_sweep_with(&self, id: i64, test_ids: &[i64]) -> Result<Option<Sweep>> {
        let row: Option<(String, i64)> = self
            .conn
            .query_row("SELECT plan, points_total FROM sweeps WHERE run_id = ?1", [id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()
            .map_err(sql("reading a sweep"))?;
        let Some((plan_text, total)) = row else { return Ok(None) };
        let plan: SweepPlan = parse("sweep plan", id, &plan_text)?;
        let mut stmt = self
            .conn
            .prepare("SELECT point, test_id, params, headline, met FROM sweep_points WHERE run_id = ?1 ORDER BY point")
            .map_err(sql("reading points"))?;
        let rows = stmt
            .query_map([id], |r| {
                Ok((
                    r.get::<_, u32>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, bool>(4)?,
                ))
            })
            .map_err(sql("reading points"))?;
        let mut points = Vec::new();
        for row in rows {
            let (index, test_id, params_text, headline_text, met) = row.map_err(sql("reading points"))?;
            let params: Vec<ParamSetting> = parse("point parameters", id, &params_text)?;
            let headline: Estimate = parse("point estimate", id, &headline_text)?;
            let test_index = test_ids.iter().position(|t| *t == test_id).unwrap_or(0) as u32;
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
