//! What the pages show, read from the archive (opened read-only per request): the grid of each
//! inventory's newest mesh round with every cell judged against its path's own history
//! (`stats::regression`), and the history of one cell or one host.

use std::collections::HashMap;

use report::mesh::{Entry, Matrix};
use results::regression::{Judgement, Verdict};
use serde::Serialize;
use stats::compare::Difference;
use stats::regression::{Moments, Observation, Rule, Series};
use store::{PathResult, Store};

/// How cells are judged and coloured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judging {
    /// History since this time, ms since the Unix epoch.
    pub since_unix_ms: u64,
    /// The regression rule (its threshold also sets the colours).
    pub rule: Rule,
}

/// One cell of a grid, as the page draws it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    /// `ok`, `warn`, `bad`, `regressed`, `failed`, `missing`, `none` (not in the mesh) or
    /// `new` (measured, no history to judge by).
    pub class: &'static str,
    /// The value shown, with its unit.
    pub text: String,
    /// The hover text: value, share of the path's baseline, verdict, or the reason of a failure.
    pub title: String,
    /// The newest value ÷ the path's history mean.
    pub share: Option<f64>,
}

/// The grid of one inventory's newest round.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Grid {
    /// The inventory file as the mesh was given it.
    pub inventory: String,
    /// The run of the round.
    pub run: i64,
    /// Its start, UTC text.
    pub started: String,
    /// The run's status (`running` while the round goes on).
    pub status: String,
    /// Test type id.
    pub test: String,
    /// Row names.
    pub senders: Vec<String>,
    /// Column names.
    pub receivers: Vec<String>,
    /// `cells[row][column]`.
    pub cells: Vec<Vec<Cell>>,
}

/// A lean result as an observation of its series (without a headline metric, as a test that
/// failed before measuring has none, it is left out: the grid shows failures from the round).
pub fn observation(r: &PathResult) -> Option<Observation> {
    let metric = r.metric.clone()?;
    let completed = r.status == "completed";
    Some(Observation {
        series: Series {
            sender: r.sender.clone(),
            receiver: r.receiver.clone(),
            test: r.test.clone(),
            label: r.label.clone(),
            metric,
        },
        at_unix_ms: r.started_unix_ms,
        value: if completed { r.value } else { None },
        failure: (!completed).then(|| r.error.clone().unwrap_or_else(|| r.status.clone())),
    })
}

/// What a grid cell is judged by: its path's history and the newest result's verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Baseline {
    /// The verdict on the newest result.
    pub verdict: Verdict,
    /// How many earlier results the history holds.
    pub n: u64,
    /// Their mean.
    pub mean: f64,
    /// The newest result's change against that mean, %.
    pub change_pct: f64,
    /// The interval's half-width, % of the mean.
    pub interval_pct: Option<f64>,
}

impl From<&Judgement> for Baseline {
    fn from(j: &Judgement) -> Self {
        Baseline {
            verdict: j.verdict,
            n: j.history.len() as u64,
            mean: j.history_mean,
            change_pct: j.change_pct,
            interval_pct: j.interval_pct,
        }
    }
}

/// Grid baselines keyed by (sender, receiver, test).
pub type Baselines = HashMap<(String, String, String), Baseline>;

/// Every series in the period, judged from its raw results, keyed by (sender, receiver, test).
pub fn judgements(st: &Store, j: &Judging) -> store::Result<Baselines> {
    let obs: Vec<Observation> = st.path_results(j.since_unix_ms)?.iter().filter_map(observation).collect();
    Ok(stats::regression::judge_all(&obs, &j.rule)
        .iter()
        .map(|x| ((x.series.sender.clone(), x.series.receiver.clone(), x.series.test.clone()), x.into()))
        .collect())
}

/// Every path's baseline from the archive's path summary ([`store::summary`]): the newest
/// result per path against the per-day moments of its history, from the UTC day holding
/// `since` on. The same statistics as [`judgements`] (the moments are all a one-newest-value
/// interval needs), over whole days; with `rule.latest` above 1 the raw results are judged.
pub fn baselines(st: &Store, j: &Judging) -> store::Result<Baselines> {
    if j.rule.latest > 1 {
        return judgements(st, j);
    }
    let since_day = j.since_unix_ms - j.since_unix_ms % store::summary::DAY_MS;
    let mut moments: HashMap<(String, String, String, String, String), Moments> = HashMap::new();
    for d in st.path_days(j.since_unix_ms, None)? {
        let m = Moments { n: d.n, mean: d.mean, m2: d.m2 };
        let e = moments.entry((d.sender, d.receiver, d.test, d.label, d.metric)).or_default();
        *e = e.merge(&m);
    }
    let mut out = Baselines::new();
    let mut quantiles = Quantiles::new();
    for l in st.latest_per_path()?.into_iter().filter(|l| l.started_unix_ms >= since_day) {
        let Some(metric) = l.metric.clone() else { continue };
        let key = (l.sender.clone(), l.receiver.clone(), l.test.clone(), l.label.clone(), metric);
        let all = moments.get(&key).copied().unwrap_or_default();
        let b = match l.value.filter(|_| l.status == "completed") {
            None => Baseline {
                verdict: Verdict::Failed,
                n: all.n,
                mean: all.mean,
                change_pct: 0.0,
                interval_pct: None,
            },
            Some(v) => judge_newest(&all.without(v), v, &key.4, &j.rule, &mut quantiles),
        };
        out.insert((l.sender, l.receiver, l.test), b);
    }
    Ok(out)
}

/// Student's t two-sided quantiles at the rule's level, by history size: each is a root search
/// (hundreds of evaluations of the t distribution), the same for every path of the same size.
type Quantiles = HashMap<u64, Option<f64>>;

/// The newest value `v` against a history of moments `h`, as [`stats::regression`] judges it
/// ([`stats::regression::shift_from`], with its quantile looked up in `quantiles`).
fn judge_newest(h: &Moments, v: f64, metric: &str, rule: &Rule, quantiles: &mut Quantiles) -> Baseline {
    let mut b =
        Baseline { verdict: Verdict::Unknown, n: h.n, mean: h.mean, change_pct: 0.0, interval_pct: None };
    if h.n == 1 && h.mean != 0.0 {
        b.change_pct = 100.0 * (v - h.mean) / h.mean;
    }
    if let Some(d) = shift_from(h, v, rule.level_pct, quantiles) {
        b.change_pct = d.diff_pct;
        b.interval_pct = d.half_width.map(|w| if d.mean_a == 0.0 { 0.0 } else { 100.0 * w / d.mean_a.abs() });
        b.verdict = stats::regression::verdict_of(metric, &d, rule.threshold_pct);
    }
    b
}

/// [`stats::regression::shift_from`] with the quantile memoised (the test below holds the two
/// equal through the verdicts on raw results).
fn shift_from(h: &Moments, v: f64, level_pct: f64, quantiles: &mut Quantiles) -> Option<Difference> {
    if h.n < 2 {
        return None;
    }
    let n = h.n as f64;
    let se = (h.m2 / (n - 1.0) * (1.0 + 1.0 / n)).sqrt();
    let t = *quantiles.entry(h.n).or_insert_with(|| stats::student::two_sided(level_pct / 100.0, n - 1.0));
    let diff = v - h.mean;
    Some(Difference {
        mean_a: h.mean,
        mean_b: v,
        diff,
        half_width: if se == 0.0 { Some(0.0) } else { t.map(|t| t * se) },
        diff_pct: if h.mean == 0.0 { 0.0 } else { 100.0 * diff / h.mean },
    })
}

/// The grid of every inventory's newest round (each read lean: [`Store::mesh_round`]).
pub fn grids(st: &Store, j: &Judging) -> store::Result<Vec<Grid>> {
    let judged = baselines(st, j)?;
    let mut out = Vec::new();
    for (inventory, id) in st.latest_meshes()? {
        let Some(round) = st.mesh_round(id)? else { continue };
        let m = matrix(&round);
        let test = round.base.test.id().to_string();
        let cells = m
            .cells
            .iter()
            .enumerate()
            .map(|(s, row)| {
                row.iter()
                    .enumerate()
                    .map(|(r, e)| {
                        let key = (m.senders[s].clone(), m.receivers[r].clone(), test.clone());
                        cell(&m, e, judged.get(&key), j.rule.threshold_pct)
                    })
                    .collect()
            })
            .collect();
        out.push(Grid {
            inventory,
            run: id,
            started: report::tables::utc(round.started_unix_ms),
            status: round.status,
            test,
            senders: m.senders,
            receivers: m.receivers,
            cells,
        });
    }
    Ok(out)
}

/// The matrix of a lean round, as [`Matrix::of`] makes it of the whole run, without what the
/// grid does not show (the cells' shares of the loop-back baselines, the intervals' half-widths):
/// a cell of the mesh is `NotRun` until its point is stored, then measured, or failed when
/// its test did not complete.
pub fn matrix(round: &store::round::Round) -> Matrix {
    let mesh = &round.mesh;
    let mut grid = Matrix::planned(mesh);
    fn slot<'a>(grid: &'a mut [Vec<Entry>], c: &results::MeshCell) -> Option<&'a mut Entry> {
        grid.get_mut(c.sender as usize)?.get_mut(c.receiver as usize)
    }
    for p in &round.points {
        let Some(e) = mesh.cells.get(p.point as usize).and_then(|c| slot(&mut grid, c)) else { continue };
        *e = match p.status.as_deref() {
            Some(s) if s != "completed" => Entry::Failed {
                code: p.code.clone().unwrap_or_else(|| "failed".into()),
                reason: p.reason.clone().unwrap_or_else(|| "failed".into()),
            },
            _ => Entry::Measured {
                value: p.mean,
                half_width: None,
                iterations: p.iterations,
                met: p.met,
                sender_share: None,
                receiver_share: None,
            },
        };
    }
    Matrix::arranged(&round.metric, mesh, &grid)
}

fn cell(m: &Matrix, e: &Entry, judged: Option<&Baseline>, threshold_pct: f64) -> Cell {
    let (div, unit) = m.scale();
    let plain = |class, text: &str, title: String| Cell { class, text: text.into(), title, share: None };
    match e {
        Entry::None => plain("none", "", "not in the mesh".into()),
        Entry::NotRun => plain("missing", "-", "missing: not measured in this round (yet)".into()),
        Entry::Failed { reason, .. } => plain("failed", "✗", format!("failed: {reason}")),
        Entry::Measured { value, .. } => {
            let text = format!("{:.0}", value / div);
            let Some(jd) = judged.filter(|jd| jd.mean > 0.0) else {
                return Cell {
                    class: "new",
                    title: format!("{text} {unit}; no history yet"),
                    text,
                    share: None,
                };
            };
            let share = value / jd.mean;
            let t = threshold_pct / 100.0;
            let class = match jd.verdict {
                Verdict::Regressed => "regressed",
                _ if share >= 1.0 - t => "ok",
                _ if share >= 1.0 - 2.0 * t => "warn",
                _ => "bad",
            };
            let ci = jd.interval_pct.map_or(String::new(), |c| format!(" ± {c:.1} %"));
            let title = format!(
                "{text} {unit}: {:.0} % of the path's baseline ({:.0} {unit}, {} results), change {:+.1} %{ci}: {:?}",
                100.0 * share,
                jd.mean / div,
                jd.n,
                jd.change_pct,
                jd.verdict
            );
            Cell { class, text, title, share: Some(share) }
        }
    }
}

/// The results of one path (`sender → receiver`, one test type, any with `test` empty) or,
/// with `receiver` `None`, of every path `sender` sends on, oldest first.
pub fn history(
    st: &Store,
    since_unix_ms: u64,
    sender: &str,
    receiver: Option<&str>,
    test: &str,
) -> store::Result<Vec<PathResult>> {
    let mut v = st.path_detail(since_unix_ms, Some(sender), receiver)?;
    v.retain(|r| test.is_empty() || r.test == test);
    Ok(v)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]
    use super::*;
    use results::{Headline, Metric, RunRecord, TestKind, TestResult, TestSpec};
    use store::{RunKind, RunStatus};

    const DAY: u64 = store::summary::DAY_MS;

    /// Four paths, 3 days of results every 2 h; the newest of path 1 is 30 % slower, of path 2
    /// failed, of path 3 a little faster.
    fn archive(dir: &std::path::Path, t0: u64) -> Store {
        let mut st = Store::open(&dir.join("a.db")).unwrap();
        for k in 0..36u64 {
            for p in 0..4u64 {
                let host = results::HostInfo { hostname: "a".into(), ..Default::default() };
                let rec = RunRecord::new("0", t0, host);
                let run = st.begin_run(&rec, RunKind::Test, &format!("s{p}:1")).unwrap();
                let mut r =
                    TestResult::new("stream", TestSpec::new(TestKind::TcpStream), "x:1", t0 + k * 7_200_000);
                let mut v = 1e9 * (1.0 + 0.01 * ((k * 5 + p) % 7) as f64);
                if k == 35 {
                    v *= [1.0, 0.7, 1.0, 1.03][p as usize];
                }
                r.summary.headline = Some(Headline::measured(Metric::Goodput, v));
                if k == 35 && p == 2 {
                    r.status = results::Status::Failed;
                    r.summary.headline =
                        Some(Headline { metric: Metric::Goodput, value: None, partial: false });
                }
                st.add_test(run, &r).unwrap();
                st.finish_run(run, RunStatus::Complete, None, t0 + 1).unwrap();
            }
        }
        st
    }

    #[test]
    fn summary_baselines_judge_as_the_raw_results_do() {
        let dir = tempfile::tempdir().unwrap();
        let t0 = 1_700_006_400_000 - 1_700_006_400_000 % DAY;
        let st = archive(dir.path(), t0);
        let rule = Rule { level_pct: 95.0, threshold_pct: 10.0, latest: 1 };
        for since in [t0, t0 + DAY] {
            let j = Judging { since_unix_ms: since, rule };
            let (raw, summed) = (judgements(&st, &j).unwrap(), baselines(&st, &j).unwrap());
            assert_eq!(raw.len(), 4);
            assert_eq!(raw.keys().collect::<std::collections::BTreeSet<_>>(), summed.keys().collect());
            for (k, a) in &raw {
                let b = &summed[k];
                assert_eq!((a.verdict, a.n), (b.verdict, b.n), "{k:?}");
                assert!(
                    (a.mean - b.mean).abs() < 1e-3 && (a.change_pct - b.change_pct).abs() < 1e-9,
                    "{k:?}"
                );
                let (x, y) = (a.interval_pct.unwrap_or(0.0), b.interval_pct.unwrap_or(0.0));
                assert!((x - y).abs() < 1e-9, "{k:?}: {a:?} {b:?}");
            }
            let verdict = |p: &str| summed[&("a".to_string(), format!("{p}:1"), "tcp-stream".into())].verdict;
            assert_eq!(
                [verdict("s0"), verdict("s1"), verdict("s2"), verdict("s3")][1..3],
                [Verdict::Regressed, Verdict::Failed]
            );
        }
    }

    #[test]
    fn history_pages_judge_every_raw_result() {
        let dir = tempfile::tempdir().unwrap();
        let t0 = 1_700_006_400_000 - 1_700_006_400_000 % DAY;
        let st = archive(dir.path(), t0);
        let rule = Rule { level_pct: 95.0, threshold_pct: 10.0, latest: 1 };
        let raw = judgements(&st, &Judging { since_unix_ms: t0, rule }).unwrap();
        let page = history(&st, t0, "a", Some("s1:1"), "").unwrap();
        assert_eq!(page.len(), 36, "one row per stored result, none merged");
        let lean = st.path_history(t0, Some("a"), Some("s1:1")).unwrap();
        assert_eq!(
            page.iter().map(|r| r.value).collect::<Vec<_>>(),
            lean.iter().map(|r| r.value).collect::<Vec<_>>()
        );
        let obs: Vec<Observation> = page.iter().filter_map(observation).collect();
        let judged = stats::regression::judge_all(&obs, &rule);
        let want = &raw[&("a".to_string(), "s1:1".to_string(), "tcp-stream".to_string())];
        assert_eq!((Baseline::from(&judged[0]), judged.len()), (want.clone(), 1));
        assert_eq!(want.verdict, Verdict::Regressed);
    }

    /// A round of a mesh of a, b (both) and c (receives only): five of six cells stored, one
    /// failed, one of three iterations below its target.
    fn mesh_round(st: &mut Store) -> i64 {
        use results::{
            MeshCell, MeshHost, MeshPlan, MeshRole, ParamSetting, ParamValue, SweepPoint, TestError,
        };
        let host = |name: &str, role| MeshHost {
            name: name.into(),
            address: "198.18.0.1".into(),
            port: 9180,
            labels: Default::default(),
            role,
            machine: None,
        };
        let hosts = vec![host("a", MeshRole::Both), host("b", MeshRole::Both), host("c", MeshRole::Receiver)];
        let cells: Vec<MeshCell> = [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
            .map(|(sender, receiver)| MeshCell { sender, receiver })
            .to_vec();
        let plan = results::SweepPlan {
            base: TestSpec::new(TestKind::TcpStream),
            axes: Vec::new(),
            confidence: None,
            metric: "goodput_bps".into(),
            mesh: Some(MeshPlan { inventory: "fleet.toml".into(), hosts, cells: cells.clone() }),
        };
        let rec = RunRecord::new("0", 1_700_000_000_000, results::HostInfo::default());
        let run = st.begin_run(&rec, RunKind::Sweep, "mesh").unwrap();
        st.begin_sweep(run, &plan).unwrap();
        for k in 0..5u32 {
            let c = cells[k as usize];
            let name = |i: u32| ParamValue::Text(["a", "b", "c"][i as usize].into());
            let mut r =
                TestResult::new("stream", TestSpec::new(TestKind::TcpStream), "x:1", 1_700_000_000_000);
            let v = 1e9 * f64::from(k + 1);
            r.summary.headline = Some(Headline::measured(Metric::Goodput, v));
            if k == 2 {
                r.status = results::Status::Failed;
                r.error = Some(TestError { code: "connect".into(), message: "connecting: refused".into() });
            }
            let values = if k == 3 { vec![v, v, v] } else { vec![v] };
            let point = SweepPoint {
                index: k,
                coords: vec![k],
                params: vec![
                    ParamSetting { name: "sender".into(), value: name(c.sender) },
                    ParamSetting { name: "receiver".into(), value: name(c.receiver) },
                ],
                test_index: k,
                headline: results::Estimate {
                    metric: "goodput_bps".into(),
                    mean: v,
                    values,
                    ..Default::default()
                },
                met: k != 3,
            };
            st.add_point(run, &point, &r).unwrap();
        }
        run
    }

    #[test]
    fn a_round_read_lean_is_the_matrix_of_the_whole_run() {
        let dir = tempfile::tempdir().unwrap();
        let mut st = Store::open(&dir.path().join("a.db")).unwrap();
        let run = mesh_round(&mut st);
        let lean = matrix(&st.mesh_round(run).unwrap().unwrap());
        let mut whole = Matrix::of(&st.load_run(run).unwrap()).unwrap();
        for e in whole.cells.iter_mut().flatten() {
            if let Entry::Measured { half_width, sender_share, receiver_share, .. } = e {
                (*half_width, *sender_share, *receiver_share) = (None, None, None);
            }
        }
        assert_eq!(
            (&lean.metric, &lean.senders, &lean.receivers),
            (&whole.metric, &whole.senders, &whole.receivers)
        );
        assert_eq!(lean.cells, whole.cells);
        assert_eq!((lean.senders.len(), lean.receivers.len()), (2, 3));
        assert!(matches!(&lean.cells[0][2], Entry::Failed { reason, .. } if reason == "connecting: refused"));
        assert!(matches!(lean.cells[1][0], Entry::Measured { iterations: 3, met: false, .. }));
        assert_eq!(lean.cells[1][2], Entry::NotRun);
    }
}
