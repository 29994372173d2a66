//! A mesh round read lean (`Store::mesh_round`) on SQLite and on a real PostgreSQL server:
//! every finished point as the whole run says it (mean, iterations, target met, the test's
//! status and failure), cells not run yet absent; and the grid token, which changes with a new
//! point and with the round's end, and only then.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

#[path = "support/fixtures.rs"]
mod fixtures;
#[path = "support/pg_cluster.rs"]
mod pg_cluster;

use std::path::Path;

use fixtures::{point, record, result};
use results::{
    MeshCell, MeshHost, MeshPlan, MeshRole, ParamSetting, ParamValue, Status, SweepPlan, TestError,
};
use store::round::RoundPoint;
use store::{RunKind, RunStatus, Store};

fn plan() -> SweepPlan {
    let host = |name: &str, role| MeshHost {
        name: name.into(),
        address: "198.18.0.1".into(),
        port: 9180,
        labels: Default::default(),
        role,
        machine: None,
    };
    let hosts = vec![host("a", MeshRole::Both), host("b", MeshRole::Both), host("c", MeshRole::Receiver)];
    let cells = [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
        .map(|(sender, receiver)| MeshCell { sender, receiver })
        .to_vec();
    SweepPlan {
        base: results::TestSpec::new(results::TestKind::TcpStream),
        axes: Vec::new(),
        confidence: None,
        metric: "goodput_bps".into(),
        mesh: Some(MeshPlan { inventory: "fleet.toml".into(), hosts, cells }),
    }
}

/// Points 0–4 of the six (5 not run): 2 failed, 3 with three iterations below its target.
fn add_point(st: &mut Store, run: i64, k: u32) {
    let mut p = point(k, 1e9 + f64::from(k));
    let cell = plan().mesh.unwrap().cells[k as usize];
    p.params = ["sender", "receiver"]
        .iter()
        .zip([cell.sender, cell.receiver])
        .map(|(n, i)| ParamSetting {
            name: n.to_string(),
            value: ParamValue::Text(["a", "b", "c"][i as usize].into()),
        })
        .collect();
    let mut r = result(p.headline.mean);
    if k == 2 {
        r.status = Status::Failed;
        r.error = Some(TestError { code: "connect".into(), message: "connecting to b: refused".into() });
    }
    if k == 3 {
        p.headline.values = vec![1.0, 2.0, 3.0];
        p.met = false;
    }
    st.add_point(run, &p, &r).unwrap();
}

fn check(st: &mut Store, what: &str) {
    let run = st.begin_run(&record("a"), RunKind::Sweep, "mesh").unwrap();
    st.begin_sweep(run, &plan()).unwrap();
    let empty = st.mesh_round(run).unwrap().unwrap();
    assert_eq!((empty.points.len(), empty.status.as_str()), (0, "running"), "{what}");
    assert_eq!(
        (Some(empty.mesh), empty.base, empty.metric.as_str()),
        (plan().mesh, plan().base, "goodput_bps")
    );
    let mut tokens = vec![st.grid_token().unwrap()];
    for k in 0..5 {
        add_point(st, run, k);
        tokens.push(st.grid_token().unwrap());
    }
    assert_eq!(st.grid_token().unwrap(), tokens[5], "{what}: nothing new, the same token");
    let round = st.mesh_round(run).unwrap().unwrap();
    let whole = st.load_run(run).unwrap();
    let want: Vec<RoundPoint> = whole
        .sweep
        .unwrap()
        .points
        .iter()
        .map(|p| {
            let t = &whole.tests[p.test_index as usize];
            let failed = (t.status != Status::Completed).then_some(t.error.clone()).flatten();
            RoundPoint {
                point: p.index,
                mean: p.headline.mean,
                iterations: p.headline.values.len() as u32,
                met: p.met,
                status: Some(serde_json::to_value(t.status).unwrap().as_str().unwrap().to_string()),
                code: failed.as_ref().map(|e| e.code.clone()),
                reason: failed.map(|e| e.message),
            }
        })
        .collect();
    assert_eq!(round.points, want, "{what}");
    assert_eq!(round.points[2].reason.as_deref(), Some("connecting to b: refused"), "{what}");
    assert_eq!((round.points[3].iterations, round.points[3].met), (3, false), "{what}");
    st.finish_run(run, RunStatus::Complete, None, 5000).unwrap();
    tokens.push(st.grid_token().unwrap());
    tokens.dedup();
    assert_eq!(tokens.len(), 7, "{what}: each point and the round's end change the token: {tokens:?}");
    assert_eq!(st.mesh_round(run).unwrap().unwrap().status, "complete", "{what}");
    let plain = st.begin_run(&record("a"), RunKind::Test, "s:1").unwrap();
    assert_eq!(st.mesh_round(plain).unwrap(), None, "{what}: not a mesh");
    assert!(matches!(st.mesh_round(plain + 1), Err(store::Error::NotFound(_))), "{what}");
}

#[test]
fn sqlite_reads_a_mesh_round_lean() {
    let dir = tempfile::tempdir().unwrap();
    check(&mut Store::open(&dir.path().join("a.db")).unwrap(), "sqlite");
}

#[test]
fn postgres_reads_a_mesh_round_lean() {
    let Some(c) = pg_cluster::shared() else { return };
    check(&mut Store::open(Path::new(&c.new_db("round"))).unwrap(), "postgres");
}
