//! A summary per path, kept as results are written, so that the dashboard's grid reads one row
//! per path and a few per day instead of every result in its window (schema 9):
//!
//! - `path_latest`: the newest completed or failed test of each path and test (`sender`,
//!   `receiver`, `test`, `label`), replaced only by a newer one (a result pushed late does not
//!   hide a newer one);
//! - `path_days`: per path, test and headline metric, per UTC day, the completed results'
//!   count, mean, sum of squared deviations (Welford's update, so no precision is lost to
//!   large sums), minimum and maximum.
//!
//! `record` runs in the transaction that inserts a test (by [`crate::Store`] and by
//! [`crate::push`]); [`rebuild`] fills both from the stored tests in set-based SQL (the
//! migration's back-fill, and after rows were written by plain SQL).

use crate::db::{args, DbError, Engine, Row, Sql};
use crate::{sql, Result, Store};

/// One UTC day, ms.
pub const DAY_MS: u64 = 86_400_000;

/// The path's key columns, from a `tests` row `t`.
const KEY: &str = "COALESCE(t.sender, ''), COALESCE(t.receiver, ''), t.test, t.label";

fn latest_upsert() -> String {
    format!(
        "INSERT INTO path_latest (sender, receiver, test, label, test_id, run_id, started_unix_ms, status, metric, value)
         SELECT {KEY}, t.id, t.run_id, t.started_unix_ms, t.status, t.headline_metric, t.headline_value
         FROM tests t WHERE t.id = ?1 AND t.status <> 'interrupted'
         ON CONFLICT (sender, receiver, test, label) DO UPDATE SET test_id = excluded.test_id,
             run_id = excluded.run_id, started_unix_ms = excluded.started_unix_ms,
             status = excluded.status, metric = excluded.metric, value = excluded.value
         WHERE excluded.started_unix_ms > path_latest.started_unix_ms
            OR (excluded.started_unix_ms = path_latest.started_unix_ms AND excluded.test_id > path_latest.test_id)"
    )
}

/// The day upsert: Welford's update of (n, mean, m2) with the one new value `x`, which the
/// inserted row carries as its `mean`: m2 += (x − mean)² · n / (n + 1).
fn day_upsert(engine: Engine) -> String {
    let (low, high) = match engine {
        Engine::Sqlite => ("min", "max"),
        Engine::Postgres => ("LEAST", "GREATEST"),
    };
    format!(
        "INSERT INTO path_days (sender, receiver, test, label, metric, day_unix_ms, n, mean, m2, low, high)
         SELECT {KEY}, t.headline_metric, t.started_unix_ms - (t.started_unix_ms % {DAY_MS}), 1,
             t.headline_value, 0.0, t.headline_value, t.headline_value
         FROM tests t WHERE t.id = ?1 AND t.status = 'completed' AND t.headline_metric IS NOT NULL
             AND t.headline_value IS NOT NULL
         ON CONFLICT (sender, receiver, test, label, metric, day_unix_ms) DO UPDATE SET
             n = path_days.n + 1,
             mean = path_days.mean + (excluded.mean - path_days.mean) / (path_days.n + 1),
             m2 = path_days.m2 + (excluded.mean - path_days.mean) * (excluded.mean - path_days.mean) * path_days.n / (path_days.n + 1),
             low = {low}(path_days.low, excluded.low), high = {high}(path_days.high, excluded.high)"
    )
}

/// Adds the stored test `test_id` to the summary (inside the caller's transaction), and fills
/// its detail columns ([`crate::paths`]): both writers of tests call this.
pub(crate) fn record(tx: &mut dyn Sql, test_id: i64) -> Result<()> {
    crate::paths::record_detail(tx, test_id)?;
    let engine = tx.engine();
    tx.execute(&latest_upsert(), args![test_id]).map_err(sql("updating the path summary"))?;
    tx.execute(&day_upsert(engine), args![test_id]).map_err(sql("updating the path summary"))?;
    Ok(())
}

/// Migration 9's data step: the summary and each stored mesh's inventory.
pub(crate) fn migrate(tx: &mut dyn Sql) -> Result<()> {
    rebuild(tx)?;
    crate::paths::tag_inventory(tx, None)
}

/// Empties and refills both summary tables from every stored test (set-based: window
/// functions, which SQLite ≥ 3.25 and PostgreSQL share).
pub fn rebuild(tx: &mut dyn Sql) -> Result<()> {
    let latest = "INSERT INTO path_latest (sender, receiver, test, label, test_id, run_id, started_unix_ms, status, metric, value)
         SELECT s, r, test, label, id, run_id, started_unix_ms, status, headline_metric, headline_value FROM (
             SELECT COALESCE(t.sender, '') AS s, COALESCE(t.receiver, '') AS r, t.*, ROW_NUMBER() OVER (
                 PARTITION BY COALESCE(t.sender, ''), COALESCE(t.receiver, ''), t.test, t.label
                 ORDER BY t.started_unix_ms DESC, t.id DESC) AS k
             FROM tests t WHERE t.status <> 'interrupted') x WHERE k = 1";
    let days = format!(
        "INSERT INTO path_days (sender, receiver, test, label, metric, day_unix_ms, n, mean, m2, low, high)
         SELECT s, r, test, label, metric, day, COUNT(*), AVG(v), SUM((v - m) * (v - m)), MIN(v), MAX(v) FROM (
             SELECT {KEY_AS}, t.headline_metric AS metric, t.headline_value AS v,
                 t.started_unix_ms - (t.started_unix_ms % {DAY_MS}) AS day,
                 AVG(t.headline_value) OVER (PARTITION BY {KEY}, t.headline_metric,
                     t.started_unix_ms - (t.started_unix_ms % {DAY_MS})) AS m
             FROM tests t WHERE t.status = 'completed' AND t.headline_metric IS NOT NULL
                 AND t.headline_value IS NOT NULL) x
         GROUP BY s, r, test, label, metric, day"
    );
    tx.batch("DELETE FROM path_latest; DELETE FROM path_days").map_err(sql("clearing the path summary"))?;
    tx.execute(latest, &[]).map_err(sql("summarising the latest result per path"))?;
    tx.execute(&days, &[]).map_err(sql("summarising results per path and day"))?;
    Ok(())
}

/// [`KEY`] with names for a derived table.
const KEY_AS: &str =
    "COALESCE(t.sender, '') AS s, COALESCE(t.receiver, '') AS r, t.test AS test, t.label AS label";

/// The newest completed or failed test of one path and test.
#[derive(Debug, Clone, PartialEq)]
pub struct Latest {
    /// Sending end.
    pub sender: String,
    /// Receiving end.
    pub receiver: String,
    /// Test type id.
    pub test: String,
    /// The test's label.
    pub label: String,
    /// Test id.
    pub test_id: i64,
    /// Run id.
    pub run: i64,
    /// Start, ms since the Unix epoch.
    pub started_unix_ms: u64,
    /// `completed` or `failed`.
    pub status: String,
    /// Headline metric id.
    pub metric: Option<String>,
    /// Headline value (`None`: not measured).
    pub value: Option<f64>,
}

/// One path's completed results of one UTC day, headline metric `metric`.
#[derive(Debug, Clone, PartialEq)]
pub struct Day {
    /// Sending end.
    pub sender: String,
    /// Receiving end.
    pub receiver: String,
    /// Test type id.
    pub test: String,
    /// The test's label.
    pub label: String,
    /// Headline metric id.
    pub metric: String,
    /// The day's start (UTC midnight), ms since the Unix epoch.
    pub day_unix_ms: u64,
    /// Count of results.
    pub n: u64,
    /// Their mean.
    pub mean: f64,
    /// Their sum of squared deviations from the mean.
    pub m2: f64,
    /// Smallest.
    pub low: f64,
    /// Largest.
    pub high: f64,
}

fn latest_row(row: &Row) -> std::result::Result<Latest, DbError> {
    Ok(Latest {
        sender: row.text(0)?,
        receiver: row.text(1)?,
        test: row.text(2)?,
        label: row.text(3)?,
        test_id: row.i64(4)?,
        run: row.i64(5)?,
        started_unix_ms: row.i64(6)?.max(0) as u64,
        status: row.text(7)?,
        metric: row.opt_text(8)?,
        value: row.opt_f64(9)?,
    })
}

fn day_row(row: &Row) -> std::result::Result<Day, DbError> {
    Ok(Day {
        sender: row.text(0)?,
        receiver: row.text(1)?,
        test: row.text(2)?,
        label: row.text(3)?,
        metric: row.text(4)?,
        day_unix_ms: row.i64(5)?.max(0) as u64,
        n: row.i64(6)?.max(0) as u64,
        mean: row.opt_f64(7)?.unwrap_or(0.0),
        m2: row.opt_f64(8)?.unwrap_or(0.0),
        low: row.opt_f64(9)?.unwrap_or(0.0),
        high: row.opt_f64(10)?.unwrap_or(0.0),
    })
}

impl Store {
    /// The newest result of every path and test (one row each, from the summary).
    pub fn latest_per_path(&self) -> Result<Vec<Latest>> {
        let rows = self
            .conn()
            .query(
                "SELECT sender, receiver, test, label, test_id, run_id, started_unix_ms, status, metric, value
                 FROM path_latest ORDER BY sender, receiver, test, label",
                &[],
            )
            .map_err(sql("reading the path summary"))?;
        rows.iter()
            .map(latest_row)
            .collect::<std::result::Result<_, _>>()
            .map_err(sql("reading the path summary"))
    }

    /// The per-day summaries of every path from the UTC day holding `since_unix_ms` on, or,
    /// with `sender` and `receiver`, of that path only; by path, then day.
    pub fn path_days(&self, since_unix_ms: u64, path: Option<(&str, &str)>) -> Result<Vec<Day>> {
        let mut q = "SELECT sender, receiver, test, label, metric, day_unix_ms, n, mean, m2, low, high
                     FROM path_days WHERE day_unix_ms >= ?1"
            .to_string();
        let mut params = vec![crate::db::Value::from((since_unix_ms - since_unix_ms % DAY_MS) as i64)];
        if let Some((s, r)) = path {
            q.push_str(" AND sender = ?2 AND receiver = ?3");
            params.extend([crate::db::Value::from(s), crate::db::Value::from(r)]);
        }
        q.push_str(" ORDER BY sender, receiver, test, label, metric, day_unix_ms");
        let rows = self.conn().query(&q, &params).map_err(sql("reading the path summary"))?;
        rows.iter()
            .map(day_row)
            .collect::<std::result::Result<_, _>>()
            .map_err(sql("reading the path summary"))
    }
}
