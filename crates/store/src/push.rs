//! Copying results between archives (`tcplab archive push`): every run and test of one
//! archive that another lacks, found by stable id ([`crate::ids`]), in batches, each batch one
//! transaction on the target. A run already there gets its final status, error and server
//! facts if they changed (it was pushed while running); its tests, sweep points and figures
//! that are missing are added, and a sweep point measured again takes its newer test. Rows
//! are copied column for column (a test whose place in its run is taken there goes last), so
//! the target holds the same JSON text as the source. Safe to repeat and to interrupt: a batch
//! is stored whole or not at all, and what is stored is skipped next time. Safe to run at
//! once from several hosts: a run's tests are added by one pusher at a time.

use std::collections::{HashMap, HashSet};

use crate::db::{args, Conn, DbError, Row, Sql, Value};
use crate::{sql, Result, Store, Tx};

/// What a push did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PushCounts {
    /// Runs the target did not have.
    pub runs_new: u64,
    /// Runs the target had with an older status (pushed while running).
    pub runs_updated: u64,
    /// Tests copied.
    pub tests_pushed: u64,
    /// Tests the target had already.
    pub tests_present: u64,
    /// Transactions committed on the target.
    pub batches: u64,
}

/// The columns of `runs` a push copies (all but the archive's own `id`).
const RUN_COLS: &str =
    "kind, status, started_unix_ms, finished_unix_ms, tool_version, command_line, server, \
     local_host, remote_host, error, owner_pid, owner_pid_start, owner_boot_id, owner_host, uid, host";
/// Columns that change after a run is first written.
const RUN_LATE: [(&str, usize); 4] =
    [("status", 1), ("finished_unix_ms", 3), ("remote_host", 8), ("error", 9)];
/// The columns of `tests` a push copies (after `run_id`); `uid` last.
const TEST_COLS: &str = "seq, label, test, status, started_unix_ms, goodput_bps, trans_per_s, spec, result, \
     headline_metric, headline_value, sender, receiver, uid";
const SAMPLE_COLS: &str = "side, seq, start_s, end_s, omitted, bytes, transactions";
const WARNING_COLS: &str = "kind, message, advice";
/// Sample or warning rows per INSERT: one round trip for a test's samples, far below either
/// engine's limit on parameters.
const ROWS_PER_INSERT: usize = 100;

/// `?from, ?from+1, …` for `n` values.
fn slots(from: usize, n: usize) -> String {
    (from..from + n).map(|i| format!("?{i}")).collect::<Vec<_>>().join(", ")
}

fn count(cols: &str) -> usize {
    cols.split(',').count()
}

impl Store {
    /// Copies to `to` every run and test it lacks, at most about `batch` tests per
    /// transaction, calling `progress` after each commit. Runs go in ascending id order, so a
    /// new target numbers them as this archive does.
    pub fn push_to(
        &self,
        to: &mut Store,
        batch: usize,
        progress: &mut dyn FnMut(&PushCounts),
    ) -> Result<PushCounts> {
        to.check_before_writing()?;
        let ids = self.conn().query("SELECT id FROM runs ORDER BY id", &[]).map_err(sql("listing runs"))?;
        let mut counts = PushCounts::default();
        let mut tx = to.immediate()?;
        let mut in_batch = 0usize;
        for row in ids {
            let id = row.i64(0).map_err(sql("listing runs"))?;
            in_batch += self.push_run(id, &mut tx, &mut counts)?;
            if in_batch >= batch.max(1) {
                tx.commit("pushing a batch")?;
                counts.batches += 1;
                progress(&counts);
                tx = to.immediate()?;
                in_batch = 0;
            }
        }
        tx.commit("pushing a batch")?;
        if in_batch > 0 {
            counts.batches += 1;
            progress(&counts);
        }
        Ok(counts)
    }

    /// Copies run `id` (what `to` lacks of it); the number of tests copied.
    fn push_run(&self, id: i64, to: &mut Tx, counts: &mut PushCounts) -> Result<usize> {
        let run = self
            .conn()
            .query_row(&format!("SELECT {RUN_COLS} FROM runs WHERE id = ?1"), args![id])
            .map_err(sql("reading a run"))?;
        let target = upsert_run(to, &run, counts).map_err(sql("pushing a run"))?;
        self.push_extras(id, target, to)?;
        let tests = self.push_tests(id, target, to, counts)?;
        self.push_points(id, target, to, &tests)?;
        Ok(tests.pushed)
    }

    /// The run's sweep plan and congestion-control figures, if any and missing.
    fn push_extras(&self, id: i64, target: i64, to: &mut Tx) -> Result<()> {
        let sweep = self
            .conn()
            .query_opt("SELECT plan, points_total FROM sweeps WHERE run_id = ?1", args![id])
            .map_err(sql("reading a sweep"))?;
        if let Some(s) = sweep {
            let v = &s.0;
            to.execute(
                "INSERT INTO sweeps (run_id, plan, points_total) VALUES (?1, ?2, ?3) ON CONFLICT (run_id) DO NOTHING",
                &[Value::Int(target), v[0].clone(), v[1].clone()],
            )
            .map_err(sql("pushing a sweep"))?;
            crate::paths::tag_inventory(&mut **to, Some(target))?;
        }
        let cc = self
            .conn()
            .query_opt("SELECT study FROM cc_studies WHERE run_id = ?1", args![id])
            .map_err(sql("reading a cc study"))?;
        if let Some(c) = cc {
            to.execute(
                "INSERT INTO cc_studies (run_id, study) VALUES (?1, ?2)
                 ON CONFLICT (run_id) DO UPDATE SET study = excluded.study",
                &[Value::Int(target), c.0[0].clone()],
            )
            .map_err(sql("pushing a cc study"))?;
        }
        Ok(())
    }

    /// The run's tests the target lacks, with their samples and warnings.
    fn push_tests(&self, id: i64, target: i64, to: &mut Tx, counts: &mut PushCounts) -> Result<TestMap> {
        let there = to
            .query("SELECT uid, id, seq FROM tests WHERE run_id = ?1", args![target])
            .map_err(sql("pushing tests"))?;
        let mut map = TestMap { by_uid: HashMap::new(), source: HashMap::new(), pushed: 0 };
        let mut taken = HashSet::new();
        for r in &there {
            map.by_uid
                .insert(r.text(0).map_err(sql("pushing tests"))?, r.i64(1).map_err(sql("pushing tests"))?);
            taken.insert(r.i64(2).map_err(sql("pushing tests"))?);
        }
        let rows = self
            .conn()
            .query(&format!("SELECT id, {TEST_COLS} FROM tests WHERE run_id = ?1 ORDER BY seq"), args![id])
            .map_err(sql("reading tests"))?;
        let n = count(TEST_COLS);
        for row in rows {
            let (src_id, uid) =
                (row.i64(0).map_err(sql("reading tests"))?, row.text(n).map_err(sql("reading tests"))?);
            if let Some(t) = map.by_uid.get(&uid) {
                map.source.insert(src_id, *t);
                counts.tests_present += 1;
                continue;
            }
            let test = insert_test_row(to, target, &row.0[1..], &mut taken).map_err(sql("pushing a test"))?;
            match test {
                Some(t) => {
                    self.push_rows(src_id, t, to)?;
                    crate::summary::record(&mut **to, t)?;
                    counts.tests_pushed += 1;
                    map.pushed += 1;
                    map.source.insert(src_id, t);
                }
                None => counts.tests_present += 1,
            }
        }
        Ok(map)
    }

    /// Samples and warnings of source test `src` as rows of target test `dst`.
    fn push_rows(&self, src: i64, dst: i64, to: &mut Tx) -> Result<()> {
        for (table, cols) in [("samples", SAMPLE_COLS), ("warnings", WARNING_COLS)] {
            let rows = self
                .conn()
                .query(&format!("SELECT {cols} FROM {table} WHERE test_id = ?1"), args![src])
                .map_err(sql("reading samples"))?;
            let width = count(cols) + 1;
            for chunk in rows.chunks(ROWS_PER_INSERT) {
                let tuples: Vec<String> =
                    (0..chunk.len()).map(|i| format!("({})", slots(i * width + 1, width))).collect();
                let insert = format!("INSERT INTO {table} (test_id, {cols}) VALUES {}", tuples.join(", "));
                let values: Vec<Value> = chunk
                    .iter()
                    .flat_map(|row| std::iter::once(Value::Int(dst)).chain(row.0.iter().cloned()))
                    .collect();
                to.execute(&insert, &values).map_err(sql("pushing samples"))?;
            }
        }
        Ok(())
    }

    /// The run's sweep points the target lacks (their tests are there by now). A point the
    /// target has with an older test takes this one's: a point holds its newest measurement
    /// (a case measured again, [`Store::add_point_again_as`], or twice by two sessions).
    fn push_points(&self, id: i64, target: i64, to: &mut Tx, tests: &TestMap) -> Result<()> {
        let rows = self
            .conn()
            .query(
                "SELECT point, test_id, params, headline, met FROM sweep_points WHERE run_id = ?1",
                args![id],
            )
            .map_err(sql("reading points"))?;
        for row in rows {
            let src_test = row.i64(1).map_err(sql("reading points"))?;
            let Some(test) = tests.source.get(&src_test) else { continue };
            let v = &row.0;
            to.execute(
                "INSERT INTO sweep_points (run_id, point, test_id, params, headline, met) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (run_id, point) DO UPDATE SET test_id = excluded.test_id, params = excluded.params,
                     headline = excluded.headline, met = excluded.met
                 WHERE (SELECT started_unix_ms FROM tests WHERE id = excluded.test_id)
                     > (SELECT started_unix_ms FROM tests WHERE id = sweep_points.test_id)",
                &[Value::Int(target), v[0].clone(), Value::Int(*test), v[2].clone(), v[3].clone(), v[4].clone()],
            )
            .map_err(sql("pushing points"))?;
        }
        Ok(())
    }
}

/// A run's tests in the target: by stable id, by source row id, and how many were copied.
struct TestMap {
    by_uid: HashMap<String, i64>,
    source: HashMap<i64, i64>,
    pushed: usize,
}

/// The target's id of run `run` (source columns [`RUN_COLS`]), inserting it or bringing its
/// late columns up to date. The run's row stays held until the batch commits (PostgreSQL:
/// inserted, or read `FOR UPDATE`; SQLite's `BEGIN IMMEDIATE` holds the whole file), so a
/// second pusher of the same run (another archive with other tests of it) reads the places
/// this one gives its tests only once they are committed, and never gives one twice.
fn upsert_run(to: &mut Conn, run: &Row, counts: &mut PushCounts) -> std::result::Result<i64, DbError> {
    let uid = run.text(14)?;
    let insert = format!(
        "INSERT INTO runs ({RUN_COLS}) VALUES ({}) ON CONFLICT (uid) DO NOTHING RETURNING id",
        slots(1, count(RUN_COLS))
    );
    if let Some(new) = to.query_opt(&insert, &run.0)? {
        counts.runs_new += 1;
        return new.i64(0);
    }
    let late: Vec<&str> = RUN_LATE.iter().map(|(c, _)| *c).collect();
    let hold = if to.engine() == crate::db::Engine::Postgres { " FOR UPDATE" } else { "" };
    let there =
        to.query_row(&format!("SELECT id, {} FROM runs WHERE uid = ?1{hold}", late.join(", ")), args![&uid])?;
    let id = there.i64(0)?;
    let changed = RUN_LATE.iter().enumerate().any(|(i, (_, src))| there.0.get(i + 1) != run.0.get(*src));
    if changed {
        let set: Vec<String> = late.iter().enumerate().map(|(i, c)| format!("{c} = ?{}", i + 2)).collect();
        let mut values = vec![Value::Int(id)];
        values.extend(RUN_LATE.iter().map(|(_, src)| run.0.get(*src).cloned().unwrap_or(Value::Null)));
        to.execute(&format!("UPDATE runs SET {} WHERE id = ?1", set.join(", ")), &values)?;
        counts.runs_updated += 1;
    }
    Ok(id)
}

/// Inserts a test row (source columns [`TEST_COLS`]) into run `run`; its new id, or `None`
/// when a test with its stable id is there already (another pusher got there first). A test
/// whose place (`seq`) the target's run has given another test goes to the first free place
/// ([`crate::write::free_seq`]): a point measured again in another archive (a spool) than
/// the one that has its first test. `taken`: the places the target's run has given, kept up
/// to date.
fn insert_test_row(
    to: &mut Conn,
    run: i64,
    cols: &[Value],
    taken: &mut HashSet<i64>,
) -> std::result::Result<Option<i64>, DbError> {
    let insert = format!(
        "INSERT INTO tests (run_id, {TEST_COLS}) VALUES (?1, {}) ON CONFLICT (uid) DO NOTHING RETURNING id",
        slots(2, count(TEST_COLS))
    );
    let mut values = vec![Value::Int(run)];
    values.extend_from_slice(cols);
    let mut seq = match values.get(1) {
        Some(Value::Int(seq)) => Some(*seq),
        _ => None,
    };
    if seq.is_some_and(|s| taken.contains(&s)) {
        let free = crate::write::free_seq(&mut *to, run)?;
        if let Some(v) = values.get_mut(1) {
            *v = Value::Int(free);
        }
        seq = Some(free);
    }
    let id = to.query_opt(&insert, &values)?.map(|r| r.i64(0)).transpose()?;
    if id.is_some() {
        taken.extend(seq);
    }
    Ok(id)
}
