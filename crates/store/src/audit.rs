//! Which client hosts have written results lately (`tcplab archive audit`): every host the
//! archive knows (`runs.host`), with its runs and tests since a time and its last test ever.

use crate::db::{args, DbError, Row, Sql};
use crate::{sql, Result, Store};

/// One client host's results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostActivity {
    /// Host name as recorded with its runs.
    pub host: String,
    /// Start of its newest test, if it ever stored one.
    pub last_unix_ms: Option<u64>,
    /// Runs it started in the period.
    pub runs: u64,
    /// Tests it stored in the period.
    pub tests: u64,
}

const ACTIVITY: &str = "
SELECT r.host,
       MAX(t.started_unix_ms),
       COUNT(DISTINCT CASE WHEN r.started_unix_ms >= ?1 THEN r.id END),
       COUNT(CASE WHEN t.started_unix_ms >= ?1 THEN 1 END)
FROM runs r LEFT JOIN tests t ON t.run_id = r.id
WHERE r.host IS NOT NULL AND r.host <> ''
GROUP BY r.host
ORDER BY r.host";

fn activity_of(row: &Row) -> std::result::Result<HostActivity, DbError> {
    Ok(HostActivity {
        host: row.text(0)?,
        last_unix_ms: row.opt_i64(1)?.map(|t| t.max(0) as u64),
        runs: row.i64(2)?.max(0) as u64,
        tests: row.i64(3)?.max(0) as u64,
    })
}

impl Store {
    /// Every host the archive has runs of, by name, with what it stored since `since_unix_ms`.
    pub fn host_activity(&self, since_unix_ms: u64) -> Result<Vec<HostActivity>> {
        let rows = self.conn().query(ACTIVITY, args![since_unix_ms as i64]).map_err(sql("auditing hosts"))?;
        rows.iter().map(activity_of).collect::<std::result::Result<_, _>>().map_err(sql("auditing hosts"))
    }
}
