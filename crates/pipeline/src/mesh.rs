//! A mesh (`tcplab mesh`): one test type between every ordered pair of an inventory's hosts,
//! each a third-party test (the sender's server runs the client end against the receiver's),
//! plus each host's loop-back baseline (a third-party test from the host to itself).
//!
//! Scheduling: no machine takes part in two tests at once; cells whose machines are disjoint
//! run in parallel, in rounds. Before the first round each host's server is asked which
//! machine it runs on (the id after its hello, [`engine::machine`]): inventory hosts that
//! are one machine (several servers on one host, or one host under two names) would
//! otherwise measure at once on the same CPUs, so their cells run one at a time. A host that
//! does not say is taken as a machine of its own. The cells are ordered as a round-robin tournament (the circle method:
//! n − 1 perfect matchings of n hosts, each played both ways) after one round of all
//! baselines, and each round takes, in that order, every cell whose hosts are still free; a
//! full mesh of n hosts (n even) thus takes 2(n − 1) rounds of pairs plus one of baselines.
//!
//! Stored as one sweep run whose plan carries the [`MeshPlan`]; each cell is a point, written
//! with its test in one transaction as it finishes, so `--resume ID` runs only the cells not
//! yet stored, as `sweep --resume` does. A failed cell (a host down, a server refusing) is
//! stored as failed with its reason; only an interruption leaves cells for a resume.

use engine::auth::ClientKey;
use std::collections::BTreeSet;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Result};
use engine::third_party::Ends;
use engine::StopFlag;
use report::ndjson::Point;
use results::{
    Axis, ConfidenceTarget, HostInfo, MeshCell, MeshHost, MeshPlan, ParamSetting, ParamValue, RunRecord,
    Status, SweepPlan, SweepPoint, TestError, TestResult, TestSpec, ThirdParty,
};

use crate::config::{Config, Storage};
use crate::progress::Progress;
use crate::run::{Ending, Run};

pub use crate::points::Job;
use crate::points::{End, Kind};

/// The cells of a mesh of `hosts`, in schedule order: every host's baseline first (when
/// `baseline`), then the ordered pairs of a sender and a receiver, tournament order.
pub fn cells(hosts: &[MeshHost], baseline: bool) -> Vec<MeshCell> {
    let mut out = Vec::new();
    if baseline {
        out.extend((0..hosts.len() as u32).map(|i| MeshCell { sender: i, receiver: i }));
    }
    for round in tournament(hosts.len()) {
        for flip in [false, true] {
            for &(a, b) in &round {
                let (s, r) = if flip { (b, a) } else { (a, b) };
                if hosts[s as usize].role.sends() && hosts[r as usize].role.receives() {
                    out.push(MeshCell { sender: s, receiver: r });
                }
            }
        }
    }
    out
}

/// The circle method: `n` players (one more, a bye, when odd) in `n − 1` rounds in which
/// everyone plays once; every unordered pair meets exactly once.
fn tournament(n: usize) -> Vec<Vec<(u32, u32)>> {
    let m = n + n % 2;
    let mut ring: Vec<u32> = (0..m as u32).collect();
    let mut rounds = Vec::new();
    for _ in 1..m {
        let round = (0..m / 2)
            .map(|i| (ring[i], ring[m - 1 - i]))
            .filter(|&(a, b)| (a as usize) < n && (b as usize) < n)
            .map(|(a, b)| (a.min(b), a.max(b)))
            .collect();
        rounds.push(round);
        ring[1..].rotate_right(1);
    }
    rounds
}

/// Packs the cells `todo` (indices into `plan.cells`, in order) into rounds in which no
/// machine appears twice ([`MeshPlan::machines`]): each round takes, in order, every cell
/// whose machines are still free.
pub fn rounds(plan: &MeshPlan, todo: &[u32]) -> Vec<Vec<u32>> {
    let machine = plan.machines();
    let of = |host: u32| machine.get(host as usize).copied().unwrap_or(host);
    let mut left: Vec<u32> = todo.to_vec();
    let mut out = Vec::new();
    while !left.is_empty() {
        let mut busy = BTreeSet::new();
        let mut round = Vec::new();
        left.retain(|&i| {
            let Some(c) = plan.cells.get(i as usize) else { return false };
            let (s, r) = (of(c.sender), of(c.receiver));
            if busy.contains(&s) || busy.contains(&r) {
                return true;
            }
            busy.extend([s, r]);
            round.push(i);
            false
        });
        out.push(round);
    }
    out
}

/// The plan of a mesh of `hosts` running `base`: one axis, `cell`, whose values name the
/// cells (`a>b`), so that the grid has one point per cell.
pub fn plan(base: TestSpec, hosts: Vec<MeshHost>, inventory: String, baseline: bool) -> SweepPlan {
    let cells = cells(&hosts, baseline);
    let metric = engine::registry::of(base.test).headline().id().to_string();
    let mesh = MeshPlan { inventory, hosts, cells };
    let values = mesh
        .cells
        .iter()
        .map(|c| ParamValue::Text(format!("{}>{}", mesh.name(c.sender), mesh.name(c.receiver))))
        .collect();
    let axis = Axis { name: "cell".into(), tied: Vec::new(), values, text: "mesh".into() };
    SweepPlan { base, axes: vec![axis], confidence: None, metric, mesh: Some(mesh) }
}

/// A stored mesh, for `--resume`.
pub fn stored(storage: &Storage, id: i64) -> Result<Job> {
    Ok(crate::points::stored(storage, id, Kind::Mesh)?.0)
}

/// Runs (or resumes) `job`; `cfg.target` is [`crate::Target::Mesh`].
pub fn run(cfg: &Config, job: &Job, stop: &StopFlag) -> Result<ExitCode> {
    let key = match &cfg.target {
        crate::Target::Mesh { key, .. } => key.as_ref(),
        _ => None,
    };
    let mut job = job.clone();
    let Some(mesh) = job.plan.mesh.as_mut() else { bail!("not a mesh plan") };
    identify(&mut mesh.hosts, key);
    let mesh = mesh.clone();
    let mut run = crate::points::open(cfg, &job, Duration::ZERO)?;
    for names in mesh.shared_machines() {
        run.live.note(&report::mesh::shared_machine_note(&names));
    }
    let mut ran = Vec::new();
    let end = run_rounds(&mut run, (&job, key), &mesh, stop, &mut ran);
    run.end(|run| ending(run, &job, end, ran))
}

/// Asks every host's server, at once and with one nonce, which machine it runs on
/// ([`engine::machine`]); a host that does not answer keeps `None` (its cells then fail or
/// run with their own reasons).
fn identify(hosts: &mut [MeshHost], key: Option<&ClientKey>) {
    let Ok(nonce) = netio::random_bytes::<32>() else { return };
    let ids: Vec<Option<String>> = std::thread::scope(|scope| {
        let asks: Vec<_> = hosts
            .iter()
            .map(|h| {
                let opts = ends(h, h, key).from;
                scope.spawn(move || engine::machine::machine_id(&opts, &nonce).ok().flatten())
            })
            .collect();
        asks.into_iter().map(|a| a.join().ok().flatten().map(|id| hex(&id))).collect()
    });
    for (h, id) in hosts.iter_mut().zip(ids) {
        h.machine = id;
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn run_rounds(
    run: &mut Run,
    (job, key): (&Job, Option<&ClientKey>),
    mesh: &MeshPlan,
    stop: &StopFlag,
    ran: &mut Vec<(SweepPoint, TestResult)>,
) -> End {
    let todo: Vec<u32> = (0..mesh.cells.len() as u32).filter(|i| !job.done.contains(i)).collect();
    let bar = Progress::new(job.plan.len() as u64, job.done.len() as u64, run.live.printer().for_people());
    let mut end = End::Complete;
    for round in rounds(mesh, &todo) {
        if stop.is_set() {
            end = End::Interrupted;
            break;
        }
        let names: Vec<String> = round.iter().map(|&i| cell_name(mesh, i)).collect();
        bar.message(names.join(", "));
        let measured = measure_round((&job.plan, key), mesh, &round, stop);
        for (index, m) in round.iter().zip(measured) {
            match keep(run, job, mesh, *index, m) {
                Some(done) => ran.push(done),
                None => end = End::Interrupted,
            }
            bar.inc();
        }
        if !matches!(end, End::Complete) {
            break;
        }
    }
    bar.finish();
    end
}

fn cell_name(mesh: &MeshPlan, index: u32) -> String {
    let c = mesh.cells[index as usize];
    format!("{}→{}", mesh.name(c.sender), mesh.name(c.receiver))
}

/// Runs the cells of one round at once, one thread each.
fn measure_round(
    (plan, key): (&SweepPlan, Option<&ClientKey>),
    mesh: &MeshPlan,
    round: &[u32],
    stop: &StopFlag,
) -> Vec<(TestResult, Option<HostInfo>)> {
    let confidence = plan.confidence.as_ref();
    std::thread::scope(|scope| {
        let handles: Vec<_> = round
            .iter()
            .map(|&i| {
                scope.spawn(move || {
                    measure_cell((&plan.base, key), mesh, mesh.cells[i as usize], confidence, stop)
                })
            })
            .collect();
        handles
            .into_iter()
            .zip(round)
            .map(|(h, &i)| h.join().unwrap_or_else(|_| (panicked(&plan.base, mesh, i), None)))
            .collect()
    })
}

fn measure_cell(
    (spec, key): (&TestSpec, Option<&ClientKey>),
    mesh: &MeshPlan,
    cell: MeshCell,
    confidence: Option<&ConfidenceTarget>,
    stop: &StopFlag,
) -> (TestResult, Option<HostInfo>) {
    let (s, r) = (&mesh.hosts[cell.sender as usize], &mesh.hosts[cell.receiver as usize]);
    let (mut result, host) = crate::repeat::third_party(&ends(s, r, key), spec, confidence, stop);
    result.third_party = Some(named(s, r));
    (result, host)
}

/// The ends of a test from inventory host `s` (its server runs the client end) to `r`.
pub fn ends(s: &MeshHost, r: &MeshHost, key: Option<&ClientKey>) -> Ends {
    Ends {
        from: engine::ClientOptions {
            host: s.address.clone(),
            port: s.port,
            bind: None,
            family: None,
            timeout: crate::HANDSHAKE_TIMEOUT,
            busy_wait: Duration::from_secs(3),
            key: key.cloned(),
        },
        to_host: r.address.clone(),
        to_port: r.port,
    }
}

/// A third-party test's ends with the inventory's names, as stored.
pub fn named(s: &MeshHost, r: &MeshHost) -> ThirdParty {
    ThirdParty {
        from: s.endpoint(),
        to: r.endpoint(),
        from_name: Some(s.name.clone()),
        to_name: Some(r.name.clone()),
    }
}

fn panicked(spec: &TestSpec, mesh: &MeshPlan, index: u32) -> TestResult {
    TestResult {
        status: Status::Failed,
        error: Some(TestError {
            code: "internal".into(),
            message: format!("{}: the test thread panicked", cell_name(mesh, index)),
        }),
        ..TestResult::new(engine::registry::label(spec), spec.clone(), String::new(), 0)
    }
}

/// Diagnoses, shows and stores one measured cell. `None`: it was interrupted (not stored,
/// left for a resume).
fn keep(
    run: &mut Run,
    job: &Job,
    mesh: &MeshPlan,
    index: u32,
    measured: (TestResult, Option<HostInfo>),
) -> Option<(SweepPoint, TestResult)> {
    if measured.0.status == Status::Interrupted {
        return None;
    }
    let c = mesh.cells[index as usize];
    let params = vec![
        ParamSetting { name: "sender".into(), value: ParamValue::Text(mesh.name(c.sender).into()) },
        ParamSetting { name: "receiver".into(), value: ParamValue::Text(mesh.name(c.receiver).into()) },
    ];
    run.live.point = Some(Point { index, of: job.plan.len(), params: params.clone() });
    let r = run.settle_measured(&job.plan.base, measured);
    let point = crate::sweep::point_of(&job.plan, index, params, &r);
    // As a sweep's point: to the archive, else the spool, and always to the output.
    let stored = run.rec.point(&point, &r);
    run.note(stored);
    Some((point, r))
}

fn ending(run: &mut Run, job: &Job, end: End, ran: Vec<(SweepPoint, TestResult)>) -> Ending {
    let (status, error, hint) = crate::points::status(end, run, Kind::Mesh);
    let shown = crate::points::shown(run, &job.plan, ran, None);
    let error = error.or_else(|| failed_cells(&shown));
    Ending { status, error, text: report::mesh::text(&shown), hint, run: shown }
}

/// The failed cells in one error; they are stored and shown as failed with their reasons.
fn failed_cells(run: &RunRecord) -> Option<TestError> {
    let m = report::mesh::Matrix::of(run)?;
    let failed = m.failures();
    let first = failed.first()?;
    let more = if failed.len() > 1 { format!(" and {} more", failed.len() - 1) } else { String::new() };
    let total = run.sweep.as_ref().map_or(0, |s| s.points.len());
    Some(TestError {
        code: "cells-failed".into(),
        message: format!("{} of {total} cells failed: {first}{more}", failed.len()),
    })
}

#[cfg(test)]
mod tests {
    use results::MeshRole;

    use super::*;

    fn hosts(roles: &[MeshRole]) -> Vec<MeshHost> {
        roles
            .iter()
            .enumerate()
            .map(|(i, &role)| MeshHost {
                name: format!("h{i}"),
                address: format!("198.18.0.{}", i + 1),
                port: 9180,
                labels: Default::default(),
                role,
                machine: None,
            })
            .collect()
    }

    #[test]
    fn a_full_mesh_of_four_runs_in_seven_rounds_with_no_host_twice() {
        let p =
            plan(TestSpec::new(results::TestKind::TcpStream), hosts(&[MeshRole::Both; 4]), "i".into(), true);
        let mesh = p.mesh.as_ref().unwrap();
        assert_eq!((mesh.cells.len(), p.len()), (16, 16));
        let all: Vec<u32> = (0..16).collect();
        let rounds = rounds(mesh, &all);
        assert_eq!(rounds.len(), 7);
        assert_eq!(rounds[0].len(), 4, "the baselines share a round");
        let mut seen = BTreeSet::new();
        for round in &rounds {
            let mut busy = BTreeSet::new();
            for &i in round {
                let c = mesh.cells[i as usize];
                assert!(busy.insert(c.sender) && (c.is_baseline() || busy.insert(c.receiver)));
                assert!(seen.insert((c.sender, c.receiver)));
            }
        }
        assert_eq!(seen.len(), 16);
    }

    #[test]
    fn roles_and_odd_sizes_keep_only_sender_to_receiver_pairs() {
        let h = hosts(&[MeshRole::Sender, MeshRole::Receiver, MeshRole::Both]);
        let c = cells(&h, false);
        let pairs: BTreeSet<(u32, u32)> = c.iter().map(|c| (c.sender, c.receiver)).collect();
        assert_eq!(pairs, BTreeSet::from([(0, 1), (0, 2), (2, 1)]));
        assert_eq!(cells(&hosts(&[MeshRole::Both; 5]), true).len(), 25);
        let mesh = MeshPlan { inventory: String::new(), hosts: h, cells: c };
        let r = rounds(&mesh, &[0, 1, 2]);
        assert_eq!(r.iter().map(Vec::len).sum::<usize>(), 3);
    }

    #[test]
    fn hosts_that_are_one_machine_never_share_a_round() {
        let mut h = hosts(&[MeshRole::Both; 4]);
        // h0, h1 and h2 are one machine; h3 is another.
        for x in &mut h[..3] {
            x.machine = Some("aa".into());
        }
        h[3].machine = Some("bb".into());
        let p = plan(TestSpec::new(results::TestKind::TcpStream), h, "i".into(), true);
        let mesh = p.mesh.as_ref().unwrap();
        let machine = |i: u32| if i < 3 { 0 } else { 3 };
        let all: Vec<u32> = (0..16).collect();
        let rounds = rounds(mesh, &all);
        for round in &rounds {
            let used: Vec<u32> = round
                .iter()
                .flat_map(|&i| {
                    let c = mesh.cells[i as usize];
                    let (s, r) = (machine(c.sender), machine(c.receiver));
                    if s == r {
                        vec![s]
                    } else {
                        vec![s, r]
                    }
                })
                .collect();
            let distinct: BTreeSet<u32> = used.iter().copied().collect();
            assert_eq!(distinct.len(), used.len(), "a machine twice in {round:?}");
        }
        assert_eq!(rounds.iter().map(Vec::len).sum::<usize>(), 16);
        // 15 cells touch the shared machine, one at a time; h3's baseline joins the first.
        assert_eq!(rounds.len(), 15);
        assert_eq!(mesh.shared_machines(), vec![vec!["h0", "h1", "h2"]]);
    }
}
