//! Schema versions, one list for both engines (their few differences: [`crate::db`]). The
//! number of migrations applied is kept in `PRAGMA user_version` (SQLite) or the one row of
//! `tcplab_schema` (PostgreSQL); opening an older archive applies the missing ones in order,
//! each in one transaction — on PostgreSQL under `pg_advisory_xact_lock`, so any number of
//! hosts opening a new database at once apply each migration exactly once. Never edit a
//! released migration: add a new one.
//!
//! 1. `runs` and `tests` (each test's full result as JSON, headline numbers as columns).
//! 2. `sweeps` (plan as JSON) and `sweep_points` (one row per finished point, unique per run).
//! 3. `samples` (per-interval bytes/transactions per side) and `warnings` as plain rows for
//!    SQL users, back-filled from the stored results; an index on run start time.
//! 4. Typed headlines: `tests.headline_metric` (`goodput_bps`, `trans_per_s`, `conn_per_s`)
//!    and `tests.headline_value` (NULL = not measured), back-filled for every stored test, UDP
//!    streams included (whose `goodput_bps` column was NULL before), and written into each
//!    stored result's summary.
//! 5. Run owners: `runs.owner_pid`, `owner_pid_start`, `owner_boot_id` and `owner_host`, the
//!    process that writes the run (NULL for runs stored before), so that a run left `running`
//!    by a killed process can be shown, and marked, `abandoned`.
//! 6. `cc_studies`: a congestion-control comparison's figures (`compare-cc`) as JSON, one row
//!    per run; its streams are ordinary rows of `tests`.
//! 7. Stable ids: `runs.uid` and `tests.uid` (unique, a random 128-bit id given when the row is
//!    first written and kept by every copy, [`crate::push`]), back-filled for stored rows;
//!    `runs.host`, the client host a run was measured from (back-filled from its owner or
//!    host facts), indexed with the start time for `archive audit`.
//! 8. Paths: `tests.sender` and `tests.receiver`, the ends of the path a test measured (a
//!    third-party test's ends by inventory name, else the run's client host and server),
//!    back-filled, indexed with the start time, for `archive regressions` and the dashboard.
//! 9. Path summary ([`crate::summary`]): `path_latest`, the newest result per path and test,
//!    and `path_days`, per path, test, metric and UTC day the completed results' count, mean,
//!    squared deviations, minimum and maximum; kept on every insert, back-filled; and
//!    `sweeps.inventory`, a mesh's inventory (indexed, back-filled), to find each newest round.
//! 10. Lean details ([`crate::paths`]): `tests.retransmits`, `rtt_mean_us`, `p50_us` and
//!     `p99_us`, what a history plot shows besides the headline, copied from the stored result
//!     on every insert and back-filled, so that a long history is read without parsing each
//!     result's JSON.

use rusqlite::Connection;

use crate::db::{args, begin, Engine, Sql};
use crate::{sql, Error, Result};

/// One migration: SQL, then an optional data step.
pub type Step = fn(&mut dyn Sql) -> Result<()>;

const V1: &str = "
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    started_unix_ms INTEGER NOT NULL,
    finished_unix_ms INTEGER,
    tool_version TEXT NOT NULL,
    command_line TEXT NOT NULL,
    server TEXT NOT NULL,
    local_host TEXT NOT NULL,
    remote_host TEXT,
    error TEXT
);
CREATE TABLE tests (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    seq INTEGER NOT NULL,
    label TEXT NOT NULL,
    test TEXT NOT NULL,
    status TEXT NOT NULL,
    started_unix_ms INTEGER NOT NULL,
    goodput_bps REAL,
    trans_per_s REAL,
    spec TEXT NOT NULL,
    result TEXT NOT NULL,
    UNIQUE (run_id, seq)
);";

const V2: &str = "
CREATE TABLE sweeps (
    run_id INTEGER PRIMARY KEY REFERENCES runs(id),
    plan TEXT NOT NULL,
    points_total INTEGER NOT NULL
);
CREATE TABLE sweep_points (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    point INTEGER NOT NULL,
    test_id INTEGER NOT NULL REFERENCES tests(id),
    params TEXT NOT NULL,
    headline TEXT NOT NULL,
    met INTEGER NOT NULL,
    PRIMARY KEY (run_id, point)
);";

const V3: &str = "
CREATE TABLE samples (
    test_id INTEGER NOT NULL REFERENCES tests(id),
    side TEXT NOT NULL,
    seq INTEGER NOT NULL,
    start_s REAL NOT NULL,
    end_s REAL NOT NULL,
    omitted INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    transactions INTEGER NOT NULL,
    PRIMARY KEY (test_id, side, seq)
);
CREATE TABLE warnings (
    test_id INTEGER NOT NULL REFERENCES tests(id),
    kind TEXT NOT NULL,
    message TEXT NOT NULL,
    advice TEXT NOT NULL
);
CREATE INDEX runs_started ON runs (started_unix_ms);";

const V4: &str = "
ALTER TABLE tests ADD COLUMN headline_metric TEXT;
ALTER TABLE tests ADD COLUMN headline_value REAL;";

const V5: &str = "
ALTER TABLE runs ADD COLUMN owner_pid INTEGER;
ALTER TABLE runs ADD COLUMN owner_pid_start INTEGER;
ALTER TABLE runs ADD COLUMN owner_boot_id TEXT;
ALTER TABLE runs ADD COLUMN owner_host TEXT;
CREATE INDEX runs_status ON runs (status);";

const V6: &str = "
CREATE TABLE cc_studies (
    run_id INTEGER PRIMARY KEY REFERENCES runs(id),
    study TEXT NOT NULL
);";

const V7: &str = "
ALTER TABLE runs ADD COLUMN uid TEXT;
ALTER TABLE runs ADD COLUMN host TEXT;
ALTER TABLE tests ADD COLUMN uid TEXT;";

const V8: &str = "
ALTER TABLE tests ADD COLUMN sender TEXT;
ALTER TABLE tests ADD COLUMN receiver TEXT;";

const V9: &str = "
CREATE TABLE path_latest (
    sender TEXT NOT NULL,
    receiver TEXT NOT NULL,
    test TEXT NOT NULL,
    label TEXT NOT NULL,
    test_id INTEGER NOT NULL,
    run_id INTEGER NOT NULL,
    started_unix_ms INTEGER NOT NULL,
    status TEXT NOT NULL,
    metric TEXT,
    value REAL,
    PRIMARY KEY (sender, receiver, test, label)
);
CREATE TABLE path_days (
    sender TEXT NOT NULL,
    receiver TEXT NOT NULL,
    test TEXT NOT NULL,
    label TEXT NOT NULL,
    metric TEXT NOT NULL,
    day_unix_ms INTEGER NOT NULL,
    n INTEGER NOT NULL,
    mean REAL NOT NULL,
    m2 REAL NOT NULL,
    low REAL NOT NULL,
    high REAL NOT NULL,
    PRIMARY KEY (sender, receiver, test, label, metric, day_unix_ms)
);
CREATE INDEX path_days_day ON path_days (day_unix_ms);
ALTER TABLE sweeps ADD COLUMN inventory TEXT;
CREATE INDEX sweeps_inventory ON sweeps (inventory, run_id);";

const V10: &str = "
ALTER TABLE tests ADD COLUMN retransmits REAL;
ALTER TABLE tests ADD COLUMN rtt_mean_us REAL;
ALTER TABLE tests ADD COLUMN p50_us REAL;
ALTER TABLE tests ADD COLUMN p99_us REAL;";

/// The migrations, in order: `MIGRATIONS[i]` takes version `i` to `i + 1`.
pub const MIGRATIONS: &[(&str, Option<Step>)] = &[
    (V1, None),
    (V2, None),
    (V3, Some(backfill_rows)),
    (V4, Some(crate::legacy::backfill_headlines)),
    (V5, None),
    (V6, None),
    (V7, Some(crate::ids::backfill)),
    (V8, Some(crate::paths::backfill)),
    (V9, Some(crate::summary::migrate)),
    (V10, Some(crate::paths::backfill_detail)),
];

/// The newest schema version.
pub fn latest() -> i64 {
    MIGRATIONS.len() as i64
}

/// The SQLite file's schema version.
pub fn version(conn: &Connection) -> Result<i64> {
    conn.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(sql("reading user_version"))
}

/// Applies the missing migrations to a SQLite file.
pub fn migrate(conn: &mut Connection) -> Result<()> {
    migrate_to(conn, latest())
}

/// Applies migrations up to `target` to a SQLite file (tests use this to build every older
/// version).
pub fn migrate_to(conn: &mut Connection, target: i64) -> Result<()> {
    migrate_any(conn, target)
}

/// Applies migrations up to `target`, either engine. Each step reads the version inside its
/// own transaction, after taking the write lock (SQLite's `BEGIN IMMEDIATE`, PostgreSQL's
/// advisory lock), so two processes opening a new archive at once never apply a migration
/// twice.
pub fn migrate_any(conn: &mut dyn Sql, target: i64) -> Result<()> {
    loop {
        conn.batch(begin(conn.engine())).map_err(sql("starting a migration"))?;
        match step_once(conn, target) {
            Ok(more) => {
                conn.batch("COMMIT").map_err(sql("committing a migration"))?;
                if !more {
                    return Ok(());
                }
            }
            Err(e) => {
                let _ = conn.batch("ROLLBACK");
                return Err(e);
            }
        }
    }
}

/// Inside a migration transaction: applies the next migration if one is due; whether it did.
fn step_once(conn: &mut dyn Sql, target: i64) -> Result<bool> {
    let found = locked_version(conn)?;
    if found > latest() {
        return Err(Error::NewerSchema { found, known: latest() });
    }
    let Some((ddl, step)) = MIGRATIONS.get(found as usize).filter(|_| found < target) else {
        return Ok(false);
    };
    conn.batch(ddl).map_err(sql("applying a migration"))?;
    if let Some(step) = step {
        step(conn)?;
    }
    set_version(conn, found + 1)?;
    Ok(true)
}

/// The key of the PostgreSQL advisory lock migrations take ("tcplab" in ASCII).
const MIGRATION_LOCK: i64 = 0x7463_706c_6162;

/// The schema version, read under the migration lock (PostgreSQL creates its version table
/// on first use).
fn locked_version(conn: &mut dyn Sql) -> Result<i64> {
    if conn.engine() == Engine::Postgres {
        conn.execute("SELECT pg_advisory_xact_lock(?1)", args![MIGRATION_LOCK])
            .map_err(sql("taking the migration lock"))?;
        conn.batch("CREATE TABLE IF NOT EXISTS tcplab_schema (version INTEGER NOT NULL)")
            .map_err(sql("creating tcplab_schema"))?;
    }
    version_any(conn)
}

/// The schema version, either engine (0 for a new archive).
pub fn version_any(conn: &mut dyn Sql) -> Result<i64> {
    let q = match conn.engine() {
        Engine::Sqlite => "PRAGMA user_version",
        Engine::Postgres => "SELECT COALESCE(MAX(version), 0) FROM tcplab_schema",
    };
    conn.query_row(q, &[]).and_then(|r| r.i64(0)).map_err(sql("reading the schema version"))
}

fn set_version(conn: &mut dyn Sql, v: i64) -> Result<()> {
    match conn.engine() {
        Engine::Sqlite => conn.batch(&format!("PRAGMA user_version = {v}")),
        Engine::Postgres => conn
            .execute("DELETE FROM tcplab_schema", &[])
            .and_then(|_| conn.execute("INSERT INTO tcplab_schema (version) VALUES (?1)", args![v]))
            .map(|_| ()),
    }
    .map_err(sql("setting the schema version"))
}

/// Migration 3's data step: sample and warning rows for every stored test.
fn backfill_rows(tx: &mut dyn Sql) -> Result<()> {
    let rows = tx.query("SELECT id, run_id, result FROM tests", &[]).map_err(sql("reading tests"))?;
    for row in rows {
        let (id, run, json) = (|| Ok::<_, crate::db::DbError>((row.i64(0)?, row.i64(1)?, row.text(2)?)))()
            .map_err(sql("reading tests"))?;
        let result: results::TestResult =
            serde_json::from_str(&json).map_err(|reason| Error::Json { what: "result", run, reason })?;
        insert_rows(tx, id, &result)?;
    }
    Ok(())
}

/// The `samples` and `warnings` rows of one test (schema 3 and later).
pub(crate) fn insert_rows(tx: &mut dyn Sql, test_id: i64, r: &results::TestResult) -> Result<()> {
    let sides = std::iter::once(("client", &r.local)).chain(r.remote.as_ref().map(|m| ("server", m)));
    for (side, m) in sides {
        for (seq, iv) in m.intervals.iter().enumerate() {
            tx.execute(
                "INSERT INTO samples (test_id, side, seq, start_s, end_s, omitted, bytes, transactions)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                args![
                    test_id,
                    side,
                    seq as i64,
                    iv.start_s,
                    iv.end_s,
                    iv.omitted,
                    iv.bytes() as i64,
                    iv.transactions() as i64
                ],
            )
            .map_err(sql("writing samples"))?;
        }
    }
    for w in &r.warnings {
        let kind =
            serde_json::to_value(w.kind).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default();
        tx.execute(
            "INSERT INTO warnings (test_id, kind, message, advice) VALUES (?1, ?2, ?3, ?4)",
            args![test_id, kind, &w.message, &w.advice],
        )
        .map_err(sql("writing warnings"))?;
    }
    Ok(())
}
