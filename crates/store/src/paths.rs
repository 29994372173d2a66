//! The archive's results per path, lean (no whole results loaded): for `tcplab archive
//! regressions` and the dashboard. A path is a third-party test's two ends (a mesh cell, by
//! inventory name when known), else the client host and the server it asked for.

use results::ThirdParty;

use crate::db::{args, DbError, Engine, Row, Sql};
use crate::{sql, Result, Store};

/// One stored test, with what a history of its path needs.
#[derive(Debug, Clone, PartialEq)]
pub struct PathResult {
    /// Run id.
    pub run: i64,
    /// Test id.
    pub test_id: i64,
    /// Start of the test, ms since the Unix epoch.
    pub started_unix_ms: u64,
    /// Test type id (`tcp-stream`).
    pub test: String,
    /// The test's label.
    pub label: String,
    /// `completed`, `failed` or `interrupted`.
    pub status: String,
    /// Headline metric id, when the test type has one.
    pub metric: Option<String>,
    /// Headline value; `None` when not measured.
    pub value: Option<f64>,
    /// The sending end: the third-party client end's name (or `host:port`), else the host
    /// the run was measured from.
    pub sender: String,
    /// The receiving end: the third-party server end's name (or `host:port`), else the
    /// server the run asked for.
    pub receiver: String,
    /// Why the test failed, when it did.
    pub error: Option<String>,
    /// Retransmits, RTT and latency percentiles: read by [`Store::path_detail`] only (the
    /// other readers leave them `None`).
    pub detail: Detail,
}

/// What a history plot shows besides the headline, from the stored result (its first
/// direction, or its request/response latency); `None` where the test did not measure it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Detail {
    /// Retransmitted segments.
    pub retransmits: Option<f64>,
    /// Mean sampled RTT, µs.
    pub rtt_mean_us: Option<f64>,
    /// Request/response latency median, µs.
    pub p50_us: Option<f64>,
    /// Request/response latency 99th percentile, µs.
    pub p99_us: Option<f64>,
}

/// The lean rows' columns (after `SELECT`) and table, per engine; only failed tests' results
/// are read (for their reason).
const COLUMNS_SQLITE: &str = "
t.run_id, t.id, t.started_unix_ms, t.test, t.label, t.status, t.headline_metric, t.headline_value,
COALESCE(t.sender, ''), COALESCE(t.receiver, ''),
CASE WHEN t.status <> 'completed' THEN json_extract(t.result, '$.error.message') END";

const COLUMNS_POSTGRES: &str = "
t.run_id, t.id, t.started_unix_ms, t.test, t.label, t.status, t.headline_metric, t.headline_value,
COALESCE(t.sender, ''), COALESCE(t.receiver, ''),
CASE WHEN t.status <> 'completed' THEN (t.result::json)->'error'->>'message' END";

/// [`Detail`]'s columns (schema 10), after the lean ones.
const DETAIL: &str = ", t.retransmits, t.rtt_mean_us, t.p50_us, t.p99_us";

/// Sets [`Detail`]'s columns from the stored result (its first direction, its request/response
/// latency), per engine.
fn detail_update(engine: Engine) -> &'static str {
    match engine {
        Engine::Sqlite => {
            "UPDATE tests SET
                 retransmits = CAST(json_extract(result, '$.summary.directions[0].retransmits') AS REAL),
                 rtt_mean_us = CAST(json_extract(result, '$.summary.directions[0].rtt_mean_us') AS REAL),
                 p50_us = CAST(json_extract(result, '$.summary.rr.latency.p50_us') AS REAL),
                 p99_us = CAST(json_extract(result, '$.summary.rr.latency.p99_us') AS REAL)"
        }
        Engine::Postgres => {
            "UPDATE tests SET
                 retransmits = ((result::json) #>> '{summary,directions,0,retransmits}')::float8,
                 rtt_mean_us = ((result::json) #>> '{summary,directions,0,rtt_mean_us}')::float8,
                 p50_us = ((result::json) #>> '{summary,rr,latency,p50_us}')::float8,
                 p99_us = ((result::json) #>> '{summary,rr,latency,p99_us}')::float8"
        }
    }
}

/// Fills [`Detail`]'s columns of the stored test `test_id` (inside the caller's transaction,
/// on every insert: [`crate::summary::record`]).
pub(crate) fn record_detail(tx: &mut dyn Sql, test_id: i64) -> Result<()> {
    let q = format!("{} WHERE id = ?1", detail_update(tx.engine()));
    tx.execute(&q, args![test_id]).map(|_| ()).map_err(sql("recording a test's details"))
}

/// Migration 10's data step: [`Detail`]'s columns of every stored test.
pub(crate) fn backfill_detail(tx: &mut dyn Sql) -> Result<()> {
    let q = detail_update(tx.engine());
    tx.execute(q, &[]).map(|_| ()).map_err(sql("recording the tests' details"))
}

/// The statement for the ends given (plain equalities, so the path index serves them).
fn statement(engine: Engine, sender: bool, receiver: bool, detail: bool) -> String {
    let cols = match engine {
        Engine::Sqlite => COLUMNS_SQLITE,
        Engine::Postgres => COLUMNS_POSTGRES,
    };
    let extra = if detail { DETAIL } else { "" };
    let mut q = format!(
        "SELECT {cols}{extra} FROM tests t WHERE t.started_unix_ms >= ?1 AND t.status <> 'interrupted'"
    );
    if sender {
        q.push_str(" AND t.sender = ?2");
    }
    if receiver {
        q.push_str(if sender { " AND t.receiver = ?3" } else { " AND t.receiver = ?2" });
    }
    q.push_str(" ORDER BY t.started_unix_ms, t.id");
    q
}

/// The ends of the path `r` measured: a third-party test's by inventory name (else
/// `host:port`), else the run's client host and the server it asked for.
pub(crate) fn ends(r: &results::TestResult, run_host: &str, run_server: &str) -> (String, String) {
    match &r.third_party {
        Some(tp) => {
            (tp.from_name.clone().unwrap_or(tp.from.clone()), tp.to_name.clone().unwrap_or(tp.to.clone()))
        }
        None => (run_host.to_string(), run_server.to_string()),
    }
}

/// Migration 8's data step: the ends of every stored test, then the index.
pub(crate) fn backfill(tx: &mut dyn Sql) -> Result<()> {
    let rows = tx
        .query("SELECT t.id, t.result, COALESCE(r.host, ''), r.server FROM tests t JOIN runs r ON r.id = t.run_id", &[])
        .map_err(sql("reading tests"))?;
    for row in rows {
        let read = || -> std::result::Result<_, DbError> {
            Ok((row.i64(0)?, row.text(1)?, row.text(2)?, row.text(3)?))
        };
        let (id, text, host, server) = read().map_err(sql("reading tests"))?;
        let third: Option<ThirdParty> = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| serde_json::from_value(v.get("third_party")?.clone()).ok());
        let (s, r) = match third {
            Some(tp) => (tp.from_name.unwrap_or(tp.from), tp.to_name.unwrap_or(tp.to)),
            None => (host, server),
        };
        tx.execute("UPDATE tests SET sender = ?1, receiver = ?2 WHERE id = ?3", args![s, r, id])
            .map_err(sql("recording paths"))?;
    }
    tx.batch("CREATE INDEX tests_path ON tests (sender, receiver, started_unix_ms); CREATE INDEX tests_started ON tests (started_unix_ms);")
        .map_err(sql("indexing paths"))
}

fn path_result(row: &Row) -> std::result::Result<PathResult, DbError> {
    let (sender, receiver) = (row.text(8)?, row.text(9)?);
    Ok(PathResult {
        run: row.i64(0)?,
        test_id: row.i64(1)?,
        started_unix_ms: row.i64(2)?.max(0) as u64,
        test: row.text(3)?,
        label: row.text(4)?,
        status: row.text(5)?,
        metric: row.opt_text(6)?,
        value: row.opt_f64(7)?,
        sender,
        receiver,
        error: row.opt_text(10)?,
        detail: Detail::default(),
    })
}

fn detailed(row: &Row) -> std::result::Result<PathResult, DbError> {
    let detail = Detail {
        retransmits: row.opt_f64(11)?,
        rtt_mean_us: row.opt_f64(12)?,
        p50_us: row.opt_f64(13)?,
        p99_us: row.opt_f64(14)?,
    };
    Ok(PathResult { detail, ..path_result(row)? })
}

impl Store {
    /// Every completed or failed test started at or after `since_unix_ms`, oldest first,
    /// with its path (interrupted tests are left out: they measured less than asked).
    pub fn path_results(&self, since_unix_ms: u64) -> Result<Vec<PathResult>> {
        self.path_history(since_unix_ms, None, None)
    }

    /// [`Store::path_results`] of the paths from `sender` (any when `None`) to `receiver` (any
    /// when `None`), by the index on the ends.
    pub fn path_history(
        &self,
        since_unix_ms: u64,
        sender: Option<&str>,
        receiver: Option<&str>,
    ) -> Result<Vec<PathResult>> {
        self.read_paths(since_unix_ms, sender, receiver, false)
    }

    /// [`Store::path_history`] with each result's [`Detail`] (from its lean columns, schema
    /// 10: no stored result is parsed).
    pub fn path_detail(
        &self,
        since_unix_ms: u64,
        sender: Option<&str>,
        receiver: Option<&str>,
    ) -> Result<Vec<PathResult>> {
        self.read_paths(since_unix_ms, sender, receiver, true)
    }

    fn read_paths(
        &self,
        since_unix_ms: u64,
        sender: Option<&str>,
        receiver: Option<&str>,
        detail: bool,
    ) -> Result<Vec<PathResult>> {
        let mut conn = self.conn();
        let q = statement(conn.engine(), sender.is_some(), receiver.is_some(), detail);
        let mut params = vec![crate::db::Value::from(since_unix_ms as i64)];
        params.extend([sender, receiver].into_iter().flatten().map(crate::db::Value::from));
        let rows = conn.query(&q, &params).map_err(sql("reading results per path"))?;
        let read = if detail { detailed } else { path_result };
        rows.iter().map(read).collect::<std::result::Result<_, _>>().map_err(sql("reading results per path"))
    }
}

/// A mesh plan's inventory, per engine.
fn inventory_of_plan(engine: Engine) -> &'static str {
    match engine {
        Engine::Sqlite => "json_extract(plan, '$.mesh.inventory')",
        Engine::Postgres => "(plan::json)->'mesh'->>'inventory'",
    }
}

/// Sets `sweeps.inventory` (schema 9) from the plan of sweep `run`, or of every sweep.
pub(crate) fn tag_inventory(tx: &mut dyn Sql, run: Option<i64>) -> Result<()> {
    let set = format!("UPDATE sweeps SET inventory = {}", inventory_of_plan(tx.engine()));
    match run {
        Some(id) => tx.execute(&format!("{set} WHERE run_id = ?1"), args![id]),
        None => tx.execute(&set, &[]),
    }
    .map(|_| ())
    .map_err(sql("recording a mesh's inventory"))
}

impl Store {
    /// The newest mesh run of each inventory: `(inventory, run id)`, by inventory.
    pub fn latest_meshes(&self) -> Result<Vec<(String, i64)>> {
        let q = "SELECT inventory, MAX(run_id) FROM sweeps WHERE inventory IS NOT NULL GROUP BY inventory ORDER BY inventory";
        let rows = self.conn().query(q, &[]).map_err(sql("finding meshes"))?;
        rows.iter()
            .map(|r| Ok((r.text(0)?, r.i64(1)?)))
            .collect::<std::result::Result<_, DbError>>()
            .map_err(sql("finding meshes"))
    }
}
