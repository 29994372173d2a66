//! What the pages show, read from the archive (opened read-only per request): the grid of each
//! inventory's newest mesh round with every cell judged against its path's own history
//! (`stats::regression`), and the history of one cell or one host.

use std::collections::HashMap;

use report::mesh::{Entry, Matrix};
use results::regression::{Judgement, Verdict};
use serde::Serialize;
use stats::regression::{Observation, Rule, Series};
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

/// Every series in the period, judged, keyed by (sender, receiver, test).
pub fn judgements(st: &Store, j: &Judging) -> store::Result<HashMap<(String, String, String), Judgement>> {
    let obs: Vec<Observation> = st.path_results(j.since_unix_ms)?.iter().filter_map(observation).collect();
    Ok(stats::regression::judge_all(&obs, &j.rule)
        .into_iter()
        .map(|x| ((x.series.sender.clone(), x.series.receiver.clone(), x.series.test.clone()), x))
        .collect())
}

/// The grid of every inventory's newest round.
pub fn grids(st: &Store, j: &Judging) -> store::Result<Vec<Grid>> {
    let judged = judgements(st, j)?;
    let mut out = Vec::new();
    for (inventory, id) in st.latest_meshes()? {
        let run = st.load_run(id)?;
        let (status, _) = st.run_state(id)?;
        let Some(m) = Matrix::of(&run) else { continue };
        let test = run.sweep.as_ref().map(|s| s.plan.base.test.id().to_string()).unwrap_or_default();
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
            started: report::tables::utc(run.started_unix_ms),
            status,
            test,
            senders: m.senders.clone(),
            receivers: m.receivers.clone(),
            cells,
        });
    }
    Ok(out)
}

fn cell(m: &Matrix, e: &Entry, judged: Option<&Judgement>, threshold_pct: f64) -> Cell {
    let (div, unit) = m.scale();
    let plain = |class, text: &str, title: String| Cell { class, text: text.into(), title, share: None };
    match e {
        Entry::None => plain("none", "", "not in the mesh".into()),
        Entry::NotRun => plain("missing", "-", "missing: not measured in this round (yet)".into()),
        Entry::Failed { reason, .. } => plain("failed", "✗", format!("failed: {reason}")),
        Entry::Measured { value, .. } => {
            let text = format!("{:.0}", value / div);
            let Some(jd) = judged.filter(|jd| jd.history_mean > 0.0) else {
                return Cell {
                    class: "new",
                    title: format!("{text} {unit}; no history yet"),
                    text,
                    share: None,
                };
            };
            let share = value / jd.history_mean;
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
                jd.history_mean / div,
                jd.history.len(),
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
