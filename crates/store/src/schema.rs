//! Schema versions. `PRAGMA user_version` holds the number of migrations applied; opening an
//! older file applies the missing ones in order, each in one transaction. Never edit a
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

use rusqlite::{params, Connection, Transaction};

use crate::{sql, Error, Result};

/// One migration: SQL, then an optional data step.
type Step = fn(&Transaction) -> Result<()>;

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

/// The migrations, in order: `MIGRATIONS[i]` takes version `i` to `i + 1`.
pub const MIGRATIONS: &[(&str, Option<Step>)] = &[
    (V1, None),
    (V2, None),
    (V3, Some(backfill_rows)),
    (V4, Some(crate::legacy::backfill_headlines)),
    (V5, None),
    (V6, None),
];

/// The newest schema version.
pub fn latest() -> i64 {
    MIGRATIONS.len() as i64
}

/// The file's schema version.
pub fn version(conn: &Connection) -> Result<i64> {
    conn.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(sql("reading user_version"))
}

/// Applies the missing migrations.
pub fn migrate(conn: &mut Connection) -> Result<()> {
    migrate_to(conn, latest())
}

/// Applies migrations up to `target` (tests use this to build every older version). Each
/// step reads the version inside its own `BEGIN IMMEDIATE` transaction, so two processes
/// opening a new file at once never apply a migration twice.
pub fn migrate_to(conn: &mut Connection, target: i64) -> Result<()> {
    loop {
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sql("starting a migration"))?;
        let found = version(&tx)?;
        if found > latest() {
            return Err(Error::NewerSchema { found, known: latest() });
        }
        let Some((ddl, step)) = MIGRATIONS.get(found as usize).filter(|_| found < target) else {
            return Ok(());
        };
        tx.execute_batch(ddl).map_err(sql("applying a migration"))?;
        if let Some(step) = step {
            step(&tx)?;
        }
        tx.pragma_update(None, "user_version", found + 1).map_err(sql("setting user_version"))?;
        tx.commit().map_err(sql("committing a migration"))?;
    }
}

/// Migration 3's data step: sample and warning rows for every stored test.
fn backfill_rows(tx: &Transaction) -> Result<()> {
    let mut stmt = tx.prepare("SELECT id, run_id, result FROM tests").map_err(sql("reading tests"))?;
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, String>(2)?)))
        .map_err(sql("reading tests"))?;
    for row in rows {
        let (id, run, json) = row.map_err(sql("reading tests"))?;
        let result: results::TestResult =
            serde_json::from_str(&json).map_err(|reason| Error::Json { what: "result", run, reason })?;
        insert_rows(tx, id, &result)?;
    }
    Ok(())
}

/// The `samples` and `warnings` rows of one test (schema 3 and later).
pub(crate) fn insert_rows(tx: &Transaction, test_id: i64, r: &results::TestResult) -> Result<()> {
    let sides = std::iter::once(("client", &r.local)).chain(r.remote.as_ref().map(|m| ("server", m)));
    for (side, m) in sides {
        for (seq, iv) in m.intervals.iter().enumerate() {
            tx.execute(
                "INSERT INTO samples (test_id, side, seq, start_s, end_s, omitted, bytes, transactions)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
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
            params![test_id, kind, w.message, w.advice],
        )
        .map_err(sql("writing warnings"))?;
    }
    Ok(())
}
