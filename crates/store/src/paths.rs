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
}

const SQLITE: &str = "
SELECT t.run_id, t.id, t.started_unix_ms, t.test, t.label, t.status, t.headline_metric, t.headline_value,
       json_extract(t.result, '$.third_party'), COALESCE(r.host, ''), r.server,
       json_extract(t.result, '$.error.message')
FROM tests t JOIN runs r ON r.id = t.run_id
WHERE t.started_unix_ms >= ?1 AND t.status <> 'interrupted'
ORDER BY t.started_unix_ms, t.id";

const POSTGRES: &str = "
SELECT t.run_id, t.id, t.started_unix_ms, t.test, t.label, t.status, t.headline_metric, t.headline_value,
       (t.result::json)->>'third_party', COALESCE(r.host, ''), r.server,
       (t.result::json)->'error'->>'message'
FROM tests t JOIN runs r ON r.id = t.run_id
WHERE t.started_unix_ms >= ?1 AND t.status <> 'interrupted'
ORDER BY t.started_unix_ms, t.id";

fn path_result(row: &Row) -> std::result::Result<PathResult, DbError> {
    let third: Option<ThirdParty> = row.opt_text(8)?.and_then(|t| serde_json::from_str(&t).ok());
    let (sender, receiver) = match third {
        Some(tp) => (tp.from_name.unwrap_or(tp.from), tp.to_name.unwrap_or(tp.to)),
        None => (row.text(9)?, row.text(10)?),
    };
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
        error: row.opt_text(11)?,
    })
}

impl Store {
    /// Every completed or failed test started at or after `since_unix_ms`, oldest first,
    /// with its path (interrupted tests are left out: they measured less than asked).
    pub fn path_results(&self, since_unix_ms: u64) -> Result<Vec<PathResult>> {
        let mut conn = self.conn();
        let q = match conn.engine() {
            Engine::Sqlite => SQLITE,
            Engine::Postgres => POSTGRES,
        };
        let rows = conn.query(q, args![since_unix_ms as i64]).map_err(sql("reading results per path"))?;
        rows.iter()
            .map(path_result)
            .collect::<std::result::Result<_, _>>()
            .map_err(sql("reading results per path"))
    }
}

const LATEST_MESHES_SQLITE: &str = "
SELECT json_extract(plan, '$.mesh.inventory'), MAX(run_id) FROM sweeps
WHERE json_extract(plan, '$.mesh.inventory') IS NOT NULL GROUP BY 1 ORDER BY 1";

const LATEST_MESHES_POSTGRES: &str = "
SELECT (plan::json)->'mesh'->>'inventory', MAX(run_id) FROM sweeps
WHERE (plan::json)->'mesh'->>'inventory' IS NOT NULL GROUP BY 1 ORDER BY 1";

impl Store {
    /// The newest mesh run of each inventory: `(inventory, run id)`, by inventory.
    pub fn latest_meshes(&self) -> Result<Vec<(String, i64)>> {
        let mut conn = self.conn();
        let q = match conn.engine() {
            Engine::Sqlite => LATEST_MESHES_SQLITE,
            Engine::Postgres => LATEST_MESHES_POSTGRES,
        };
        let rows = conn.query(q, &[]).map_err(sql("finding meshes"))?;
        rows.iter()
            .map(|r| Ok((r.text(0)?, r.i64(1)?)))
            .collect::<std::result::Result<_, DbError>>()
            .map_err(sql("finding meshes"))
    }
}
