//! A mesh round read lean, for the dashboard's grid: the mesh part of the plan and, per
//! finished point, only what a cell shows (its estimate's mean and count, whether it met its
//! target, its test's status and failure) — no stored result is parsed whole, so a round of
//! 10,000 cells reads in one query. And a cheap token of what the grid shows, for its live
//! poll to learn that nothing changed without building it.

use results::{MeshPlan, TestSpec};

use crate::db::{args, DbError, Engine, Row, Sql};
use crate::{sql, Error, Result, Store};

/// One finished point of a mesh round.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundPoint {
    /// The point's index: its cell is the plan's `mesh.cells[point]`.
    pub point: u32,
    /// The estimate's mean (the headline in the metric's unit).
    pub mean: f64,
    /// How many iterations the estimate has.
    pub iterations: u32,
    /// Whether its confidence target was met.
    pub met: bool,
    /// The test's status (`None`: the point's test is not stored).
    pub status: Option<String>,
    /// The failure's code, when the test did not complete.
    pub code: Option<String>,
    /// The failure's message, when the test did not complete.
    pub reason: Option<String>,
}

/// A mesh round: its plan's mesh, test and metric, start, status and finished points.
#[derive(Debug, Clone, PartialEq)]
pub struct Round {
    /// The mesh.
    pub mesh: MeshPlan,
    /// The plan's base test.
    pub base: TestSpec,
    /// The headline metric id.
    pub metric: String,
    /// The run's start, ms since the Unix epoch.
    pub started_unix_ms: u64,
    /// The run's status as stored.
    pub status: String,
    /// Finished points, by index.
    pub points: Vec<RoundPoint>,
}

/// The plan's parts a grid needs, per engine (the cell axis, as long as the mesh, is skipped).
fn plan_parts(engine: Engine) -> &'static str {
    match engine {
        Engine::Sqlite => {
            "SELECT json_extract(s.plan, '$.mesh'), json_extract(s.plan, '$.base'), json_extract(s.plan, '$.metric'),
                 r.started_unix_ms, r.status
             FROM runs r LEFT JOIN sweeps s ON s.run_id = r.id WHERE r.id = ?1"
        }
        Engine::Postgres => {
            "SELECT (s.plan::json)->>'mesh', (s.plan::json)->>'base', (s.plan::json)->>'metric',
                 r.started_unix_ms, r.status
             FROM runs r LEFT JOIN sweeps s ON s.run_id = r.id WHERE r.id = ?1"
        }
    }
}

/// The points with their tests' status and failure (only failed tests' results are read).
fn points_query(engine: Engine) -> &'static str {
    match engine {
        Engine::Sqlite => {
            "SELECT p.point, json_extract(p.headline, '$.mean'), json_array_length(p.headline, '$.values'), p.met,
                 t.status,
                 CASE WHEN t.status <> 'completed' THEN json_extract(t.result, '$.error.code') END,
                 CASE WHEN t.status <> 'completed' THEN json_extract(t.result, '$.error.message') END
             FROM sweep_points p LEFT JOIN tests t ON t.id = p.test_id WHERE p.run_id = ?1 ORDER BY p.point"
        }
        Engine::Postgres => {
            "SELECT p.point, ((p.headline::json)->>'mean')::float8, json_array_length((p.headline::json)->'values'),
                 p.met, t.status,
                 CASE WHEN t.status <> 'completed' THEN (t.result::json)->'error'->>'code' END,
                 CASE WHEN t.status <> 'completed' THEN (t.result::json)->'error'->>'message' END
             FROM sweep_points p LEFT JOIN tests t ON t.id = p.test_id WHERE p.run_id = ?1 ORDER BY p.point"
        }
    }
}

fn point_of(row: &Row) -> std::result::Result<RoundPoint, DbError> {
    Ok(RoundPoint {
        point: row.i64(0)?.max(0) as u32,
        mean: row.opt_f64(1)?.unwrap_or(0.0),
        iterations: row.opt_i64(2)?.unwrap_or(0).max(0) as u32,
        met: row.i64(3)? != 0,
        status: row.opt_text(4)?,
        code: row.opt_text(5)?,
        reason: row.opt_text(6)?,
    })
}

fn parse<T: serde::de::DeserializeOwned>(what: &'static str, run: i64, text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|reason| Error::Json { what, run, reason })
}

impl Store {
    /// Mesh round `id` read lean ([`Round`]); `None` when the run is not a mesh.
    pub fn mesh_round(&self, id: i64) -> Result<Option<Round>> {
        let mut conn = self.conn();
        let engine = conn.engine();
        let row = conn
            .query_opt(plan_parts(engine), args![id])
            .map_err(sql("reading a mesh round"))?
            .ok_or(Error::NotFound(id))?;
        let read = || -> std::result::Result<_, DbError> {
            Ok((row.opt_text(0)?, row.opt_text(1)?, row.opt_text(2)?, row.i64(3)?, row.text(4)?))
        };
        let (mesh, base, metric, started, status) = read().map_err(sql("reading a mesh round"))?;
        let Some(mesh) = mesh.filter(|m| m.as_str() != "null") else { return Ok(None) };
        let rows = conn.query(points_query(engine), args![id]).map_err(sql("reading a mesh round"))?;
        let points = rows
            .iter()
            .map(point_of)
            .collect::<std::result::Result<_, _>>()
            .map_err(sql("reading a mesh round"))?;
        Ok(Some(Round {
            mesh: parse("mesh plan", id, &mesh)?,
            base: parse("sweep plan", id, base.as_deref().unwrap_or_default())?,
            metric: metric.unwrap_or_default(),
            started_unix_ms: started.max(0) as u64,
            status,
            points,
        }))
    }

    /// A token that changes whenever what the grid shows may have: the newest test and run,
    /// and each inventory's newest round with its status. A few index lookups.
    pub fn grid_token(&self) -> Result<String> {
        let ids = self
            .conn()
            .query_row("SELECT (SELECT MAX(id) FROM tests), (SELECT MAX(id) FROM runs)", &[])
            .and_then(|r| Ok((r.opt_i64(0)?.unwrap_or(0), r.opt_i64(1)?.unwrap_or(0))))
            .map_err(sql("reading the newest ids"))?;
        let mut token = format!("{}-{}", ids.0, ids.1);
        for (_, run) in self.latest_meshes()? {
            let (status, _) = self.run_state(run)?;
            token.push_str(&format!("-{run}{status}"));
        }
        Ok(token)
    }
}
