//! Mesh archives for the dashboard's tests and bench: hourly rounds of a full mesh of `n`
//! hosts written through the store API as `tcplab mesh` writes them (a sweep whose plan carries
//! the mesh, one point and test per cell), with a deterministic ±2 % spread.
#![allow(dead_code, clippy::unwrap_used, reason = "test support")]

use results::{
    Axis, DirectionSummary, Estimate, Headline, HostInfo, MeshCell, MeshHost, MeshPlan, MeshRole, Metric,
    ParamSetting, ParamValue, RunRecord, Status, SweepPlan, SweepPoint, TestError, TestKind, TestResult,
    TestSpec,
};
use store::{RunKind, RunStatus, Store};

/// An hour, ms.
pub const HOUR_MS: u64 = 3_600_000;

/// Host `i`'s name: a, b, c … for small meshes, h0, h1 … beyond 26.
pub fn name(i: u32, n: u32) -> String {
    if n <= 26 {
        char::from(b'a' + i as u8).to_string()
    } else {
        format!("h{i}")
    }
}

fn address(i: u32) -> String {
    format!("198.18.{}.{}", i / 250, i % 250 + 1)
}

/// The plan of a full mesh of `n` hosts, baselines included.
pub fn plan(n: u32) -> SweepPlan {
    let hosts: Vec<MeshHost> = (0..n)
        .map(|i| MeshHost {
            name: name(i, n),
            address: address(i),
            port: 9180,
            labels: Default::default(),
            role: MeshRole::Both,
            machine: None,
        })
        .collect();
    let cells: Vec<MeshCell> =
        (0..n).flat_map(|s| (0..n).map(move |r| MeshCell { sender: s, receiver: r })).collect();
    let values = cells
        .iter()
        .map(|c| ParamValue::Text(format!("{}>{}", name(c.sender, n), name(c.receiver, n))))
        .collect();
    SweepPlan {
        base: TestSpec::new(TestKind::TcpStream),
        axes: vec![Axis { name: "cell".into(), tied: Vec::new(), values, text: "mesh".into() }],
        confidence: None,
        metric: "goodput_bps".into(),
        mesh: Some(MeshPlan { inventory: "fleet.toml".into(), hosts, cells }),
    }
}

/// ±2 % around 940 Mbit/s (a loop-back cell: 20 Gbit/s).
fn goodput(c: MeshCell, cell: usize, round: u64) -> f64 {
    let x = (round * 7919 + cell as u64 * 104_729) % 1000;
    let base = if c.is_baseline() { 2e10 } else { 9.4e8 };
    base * (1.0 + (x as f64 - 500.0) / 25_000.0)
}

/// A cell's direction with a deterministic retransmit count (0–9) and mean RTT (200–299 µs).
fn direction(round: u64, cell: usize) -> DirectionSummary {
    let x = (round * 31 + cell as u64 * 17) % 100;
    DirectionSummary {
        direction: "client→server".into(),
        streams: 1,
        retransmits: Some(x % 10),
        rtt_mean_us: Some(200 + x as u32),
        ..DirectionSummary::default()
    }
}

/// The run record of one scheduled `tcplab mesh fleet.toml` round started at `at`.
pub fn mesh_run(at: u64) -> RunRecord {
    let local = HostInfo { hostname: "scheduler".into(), ..HostInfo::default() };
    let command_line = vec!["tcplab".into(), "mesh".into(), "fleet.toml".into()];
    RunRecord { command_line, ..RunRecord::new("0.1.0", at, local) }
}

/// One round of a mesh of `n` hosts at `at`; `last` plants a 25 % slower host 0 → host 2
/// and a failed host 2 → host 1.
pub fn round(st: &mut Store, n: u32, at: u64, round: u64, last: bool) -> i64 {
    let plan = plan(n);
    let run = mesh_run(at);
    let id = st.begin_run(&run, RunKind::Sweep, "mesh fleet.toml").unwrap();
    st.begin_sweep(id, &plan).unwrap();
    let mesh = plan.mesh.as_ref().unwrap();
    for (i, c) in mesh.cells.iter().enumerate() {
        let (s, r) = (name(c.sender, n), name(c.receiver, n));
        let mut t = TestResult::new(
            "tcp-stream",
            plan.base.clone(),
            format!("{}:9180", address(c.receiver)),
            at + i as u64,
        );
        t.third_party = Some(results::ThirdParty {
            from: format!("{}:9180", address(c.sender)),
            to: format!("{}:9180", address(c.receiver)),
            from_name: Some(s.clone()),
            to_name: Some(r.clone()),
        });
        let mut v = goodput(*c, i, round);
        if last && (c.sender, c.receiver) == (2, 1) {
            t.status = Status::Failed;
            t.error = Some(TestError {
                code: "connect".into(),
                message: "connecting to 198.18.0.2:9180: connection refused".into(),
            });
            v = 0.0;
        } else {
            if last && (c.sender, c.receiver) == (0, 2) {
                v *= 0.75;
            }
            t.summary.headline = Some(Headline::measured(Metric::Goodput, v));
            t.summary.directions = vec![direction(round, i)];
        }
        let params = vec![
            ParamSetting { name: "sender".into(), value: ParamValue::Text(s) },
            ParamSetting { name: "receiver".into(), value: ParamValue::Text(r) },
        ];
        let headline =
            Estimate { metric: "goodput_bps".into(), mean: v, values: vec![v], ..Estimate::default() };
        let p = SweepPoint {
            index: i as u32,
            coords: vec![i as u32],
            params,
            test_index: i as u32,
            headline,
            met: true,
        };
        st.add_point(id, &p, &t).unwrap();
    }
    st.finish_run(id, RunStatus::Complete, None, at + 60_000).unwrap();
    id
}
