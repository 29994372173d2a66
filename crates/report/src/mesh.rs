//! A mesh run (`tcplab mesh`) as its sender × receiver matrix: the headline of every cell
//! (rows send, columns receive), the diagonal being each host's loop-back baseline, and each
//! cell's share of its sender's and its receiver's baseline, as seed 000's tables 1–3 set a
//! pair's peak rate beside the two machines' loop-back rates. Failed cells carry their reason;
//! cells not run yet are `-`, never blank.

use std::fmt::Write as _;

use results::{MeshPlan, Metric, ParamValue, RunRecord, Status, Sweep};
use serde::Serialize;

use crate::units::sig3;

/// One cell of the matrix.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum Entry {
    /// Not in the mesh (a role leaves it out, or no baseline was asked).
    None,
    /// In the mesh, not run yet (an interrupted mesh).
    NotRun,
    /// Measured.
    Measured {
        /// Headline, in the metric's unit (bit/s, trans/s).
        value: f64,
        /// Half-width of its confidence interval, with `-I`.
        half_width: Option<f64>,
        /// Iterations.
        iterations: u32,
        /// Whether the confidence target was met (true without one).
        met: bool,
        /// `value` ÷ the sender's loop-back baseline (a fraction), when known.
        sender_share: Option<f64>,
        /// `value` ÷ the receiver's loop-back baseline.
        receiver_share: Option<f64>,
    },
    /// Failed.
    Failed {
        /// The error code (`connect`, `unsupported`, …).
        code: String,
        /// Why, in one line.
        reason: String,
    },
}

/// A mesh run's matrix.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Matrix {
    /// Headline metric id (`goodput_bps`, `trans_per_s`).
    pub metric: String,
    /// Row names (hosts that send).
    pub senders: Vec<String>,
    /// Column names (hosts that receive).
    pub receivers: Vec<String>,
    /// `cells[row][column]`.
    pub cells: Vec<Vec<Entry>>,
    /// Each host's loop-back baseline (its own cell), every host in inventory order.
    pub baselines: Vec<(String, Entry)>,
}

impl Matrix {
    /// The matrix of `run`, when it is a mesh.
    pub fn of(run: &RunRecord) -> Option<Matrix> {
        let sweep = run.sweep.as_ref()?;
        let mesh = sweep.plan.mesh.as_ref()?;
        let n = mesh.hosts.len();
        let mut grid = Matrix::planned(mesh);
        fill(&mut grid, run, sweep, mesh);
        let base: Vec<Option<f64>> = (0..n).map(|i| measured(&grid[i][i])).collect();
        for (s, row) in grid.iter_mut().enumerate() {
            for (r, e) in row.iter_mut().enumerate() {
                if let Entry::Measured { value, sender_share, receiver_share, .. } = e {
                    if s != r {
                        *sender_share = base[s].filter(|b| *b > 0.0).map(|b| *value / b);
                        *receiver_share = base[r].filter(|b| *b > 0.0).map(|b| *value / b);
                    }
                }
            }
        }
        Some(Matrix::arranged(&sweep.plan.metric, mesh, &grid))
    }

    /// The host × host grid of `mesh` before any result: `NotRun` on its cells, `None`
    /// elsewhere (`grid[sender][receiver]`, by inventory index).
    pub fn planned(mesh: &MeshPlan) -> Vec<Vec<Entry>> {
        let n = mesh.hosts.len();
        let mut grid = vec![vec![Entry::None; n]; n];
        for cell in &mesh.cells {
            if let Some(slot) =
                grid.get_mut(cell.sender as usize).and_then(|r| r.get_mut(cell.receiver as usize))
            {
                *slot = Entry::NotRun;
            }
        }
        grid
    }

    /// The matrix of a filled host × host `grid` of `mesh`: its senders' rows by its receivers'
    /// columns, and each host's own cell as its loop-back baseline.
    pub fn arranged(metric: &str, mesh: &MeshPlan, grid: &[Vec<Entry>]) -> Matrix {
        let (rows, cols) = (mesh.senders(), mesh.receivers());
        let at = |s: u32, r: u32| grid[s as usize][r as usize].clone();
        Matrix {
            metric: metric.to_string(),
            senders: rows.iter().map(|&i| mesh.name(i).to_string()).collect(),
            receivers: cols.iter().map(|&i| mesh.name(i).to_string()).collect(),
            cells: rows.iter().map(|&s| cols.iter().map(|&r| at(s, r)).collect()).collect(),
            baselines: (0..grid.len())
                .filter(|&i| !matches!(grid[i][i], Entry::None))
                .map(|i| (mesh.hosts[i].name.clone(), grid[i][i].clone()))
                .collect(),
        }
    }

    /// Every failed cell: `sender → receiver: reason`.
    pub fn failures(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (s, row) in self.cells.iter().enumerate() {
            for (r, e) in row.iter().enumerate() {
                if let Entry::Failed { reason, .. } = e {
                    out.push(format!("{} → {}: {reason}", self.senders[s], self.receivers[r]));
                }
            }
        }
        for (name, e) in &self.baselines {
            let in_grid = self.senders.contains(name) && self.receivers.contains(name);
            if let (Entry::Failed { reason, .. }, false) = (e, in_grid) {
                out.push(format!("{name} → {name} (loop-back): {reason}"));
            }
        }
        out
    }

    /// Divisor and unit of the headline in tables.
    pub fn scale(&self) -> (f64, &'static str) {
        match Metric::from_id(&self.metric) {
            Some(m) if m.is_bit_rate() => (1e6, "Mbit/s"),
            Some(m) => (1.0, m.unit()),
            None => (1.0, "(unknown metric)"),
        }
    }
}

fn measured(e: &Entry) -> Option<f64> {
    match e {
        Entry::Measured { value, .. } => Some(*value),
        _ => None,
    }
}

fn fill(grid: &mut [Vec<Entry>], run: &RunRecord, sweep: &Sweep, mesh: &MeshPlan) {
    let index = |name: &str| mesh.hosts.iter().position(|h| h.name == name);
    for p in &sweep.points {
        let param = |n: &str| {
            p.params.iter().find(|s| s.name == n).and_then(|s| match &s.value {
                ParamValue::Text(t) => index(t),
                _ => None,
            })
        };
        let (Some(s), Some(r)) = (param("sender"), param("receiver")) else { continue };
        let test = run.tests.get(p.test_index as usize);
        let entry = match test {
            Some(t) if t.status != Status::Completed => Entry::Failed {
                code: t.error.as_ref().map_or("failed".into(), |e| e.code.clone()),
                reason: t.error.as_ref().map_or("failed".into(), |e| e.message.clone()),
            },
            _ => Entry::Measured {
                value: p.headline.mean,
                half_width: (p.headline.values.len() > 1).then_some(p.headline.half_width),
                iterations: p.headline.values.len() as u32,
                met: p.met,
                sender_share: None,
                receiver_share: None,
            },
        };
        grid[s][r] = entry;
    }
}

/// The matrix as text tables: the headline, then the shares of the sender's and of the
/// receiver's loop-back, then the failed cells with their reasons. Empty when `run` is not a
/// mesh.
pub fn text(run: &RunRecord) -> String {
    let Some(m) = Matrix::of(run) else { return String::new() };
    let (div, unit) = m.scale();
    let name = Metric::from_id(&m.metric).map_or(m.metric.as_str(), |x| x.name());
    let mut o = String::new();
    let _ = writeln!(o, "{name} in {unit}; rows send, columns receive; [x] = the host's loop-back baseline");
    table(&mut o, &m, |s, r, e| match e {
        Entry::Measured { value, met, .. } => {
            let bang = if *met { "" } else { "!" };
            let v = format!("{}{bang}", sig3(value / div));
            if m.senders[s] == m.receivers[r] {
                format!("[{v}]")
            } else {
                v
            }
        }
        other => mark(other),
    });
    for (title, pick) in [("sender's", true), ("receiver's", false)] {
        let _ = writeln!(o, "\nshare of the {title} loop-back baseline, %");
        table(&mut o, &m, |s, r, e| match e {
            Entry::Measured { .. } if m.senders[s] == m.receivers[r] => "100".into(),
            Entry::Measured { sender_share, receiver_share, .. } => {
                let share = if pick { sender_share } else { receiver_share };
                share.map_or("no base".into(), |f| format!("{:.0}", f * 100.0))
            }
            other => mark(other),
        });
    }
    let failures = m.failures();
    if !failures.is_empty() {
        let _ = writeln!(o, "\nfailed:");
        for f in &failures {
            let _ = writeln!(o, "  {f}");
        }
    }
    if m.cells.iter().flatten().any(|e| matches!(e, Entry::Measured { met: false, .. })) {
        let _ = writeln!(o, "! confidence target not met");
    }
    let warnings = cell_warnings(run);
    if !warnings.is_empty() {
        let _ = writeln!(o, "\nwarnings stored with the cells:");
        for (warning, cells) in &warnings {
            let _ = writeln!(o, "  {warning}\n    cells: {}", cells.join(", "));
        }
    }
    for note in machine_notes(run) {
        let _ = writeln!(o, "{note}");
    }
    o
}

/// One line per group of a mesh's hosts that are one machine.
pub fn machine_notes(run: &RunRecord) -> Vec<String> {
    let mesh = run.sweep.as_ref().and_then(|s| s.plan.mesh.as_ref());
    mesh.map(|m| m.shared_machines().iter().map(|names| shared_machine_note(names)).collect())
        .unwrap_or_default()
}

/// What is said of hosts `names` that are one machine.
pub fn shared_machine_note(names: &[&str]) -> String {
    format!(
        "hosts {} are one machine (their servers share one boot id): their cells ran one at a time",
        names.join(", ")
    )
}

/// The measurement-quality warnings stored with a mesh's cells, each once (`message — advice`),
/// with the cells (`sender → receiver`) that carry it, in the order first seen.
pub fn cell_warnings(run: &RunRecord) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let Some(sweep) = run.sweep.as_ref() else { return out };
    for p in &sweep.points {
        let name = |n: &str| {
            p.params.iter().find(|s| s.name == n).map(|s| s.value.to_string()).unwrap_or_else(|| "?".into())
        };
        let cell = format!("{} → {}", name("sender"), name("receiver"));
        let Some(test) = run.tests.get(p.test_index as usize) else { continue };
        for w in &test.warnings {
            let text = format!("{} — {}", w.message, w.advice);
            match out.iter_mut().find(|(t, _)| *t == text) {
                Some((_, cells)) if !cells.contains(&cell) => cells.push(cell.clone()),
                Some(_) => {}
                None => out.push((text, vec![cell.clone()])),
            }
        }
    }
    out
}

fn mark(e: &Entry) -> String {
    match e {
        Entry::None => String::new(),
        Entry::NotRun => "-".into(),
        Entry::Failed { .. } => "failed".into(),
        Entry::Measured { value, .. } => sig3(*value),
    }
}

fn table(o: &mut String, m: &Matrix, cell: impl Fn(usize, usize, &Entry) -> String) {
    let texts: Vec<Vec<String>> = m
        .cells
        .iter()
        .enumerate()
        .map(|(s, row)| row.iter().enumerate().map(|(r, e)| cell(s, r, e)).collect())
        .collect();
    let corner = "sender ↓ receiver →";
    let lw = m.senders.iter().map(|s| s.chars().count()).max().unwrap_or(0).max(corner.chars().count());
    let cw =
        texts.iter().flatten().chain(&m.receivers).map(|t| t.chars().count()).max().unwrap_or(0).max(6) + 2;
    let pad = |t: &str, w: usize| format!("{}{t}", " ".repeat(w.saturating_sub(t.chars().count())));
    let _ = write!(o, "{corner}{}", " ".repeat(lw - corner.chars().count()));
    m.receivers.iter().for_each(|r| o.push_str(&pad(r, cw)));
    o.push('\n');
    for (s, row) in texts.iter().enumerate() {
        let _ = write!(o, "{}{}", m.senders[s], " ".repeat(lw - m.senders[s].chars().count()));
        row.iter().for_each(|t| o.push_str(&pad(t, cw)));
        o.push('\n');
    }
}

/// Columns of [`csv`].
pub const CSV_COLUMNS: &[&str] = &[
    "run_id",
    "sender",
    "receiver",
    "loopback",
    "state",
    "metric",
    "value",
    "ci_half_width",
    "iterations",
    "confidence_met",
    "sender_loopback_share",
    "receiver_loopback_share",
    "error_code",
    "error",
];

/// One row per cell of every mesh among `runs` (other runs are left out).
pub fn csv(runs: &[RunRecord]) -> String {
    let mut o = CSV_COLUMNS.join(",");
    o.push('\n');
    for run in runs {
        let Some(m) = Matrix::of(run) else { continue };
        for (s, row) in m.cells.iter().enumerate() {
            for (r, e) in row.iter().enumerate() {
                let f = fields(run.id, (&m.senders[s], &m.receivers[r]), &m.metric, e);
                o.push_str(&f.iter().map(|x| crate::csv::field(x)).collect::<Vec<_>>().join(","));
                o.push('\n');
            }
        }
    }
    o
}

fn fields(run: Option<i64>, (s, r): (&str, &str), metric: &str, e: &Entry) -> Vec<String> {
    let opt = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
    let state = match e {
        Entry::None => "none",
        Entry::NotRun => "not-run",
        Entry::Measured { .. } => "measured",
        Entry::Failed { .. } => "failed",
    };
    let mut f = vec![
        run.map(|i| i.to_string()).unwrap_or_default(),
        s.into(),
        r.into(),
        (s == r).to_string(),
        state.into(),
        metric.into(),
    ];
    match e {
        Entry::Measured { value, half_width, iterations, met, sender_share, receiver_share } => f.extend([
            value.to_string(),
            opt(*half_width),
            iterations.to_string(),
            met.to_string(),
            opt(*sender_share),
            opt(*receiver_share),
            String::new(),
            String::new(),
        ]),
        Entry::Failed { code, reason } => {
            f.extend(std::iter::repeat_n(String::new(), 6).chain([code.clone(), reason.clone()]))
        }
        _ => f.extend(std::iter::repeat_n(String::new(), 8)),
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    #[test]
    fn the_cells_warnings_are_shown_under_the_matrix_once_each() {
        let mut run = fixture::mesh_run();
        let w = |message: &str| results::Warning {
            kind: results::WarningKind::CpuSaturated,
            message: message.into(),
            advice: "pin the ends".into(),
        };
        for t in run.tests.iter_mut() {
            t.warnings = vec![w("cpu0 was 100% busy")];
        }
        run.tests[0].warnings.push(w("only 12 latency samples"));
        let text = text(&run);
        let at = text.find("warnings stored with the cells:").unwrap_or_else(|| panic!("{text}"));
        let below = &text[at..];
        assert_eq!(below.matches("cpu0 was 100% busy — pin the ends").count(), 1, "{below}");
        assert!(below.contains("only 12 latency samples — pin the ends"), "{below}");
        assert!(below.contains("cells: a → a, "), "{below}");
    }

    #[test]
    fn hosts_that_are_one_machine_are_named_under_the_matrix() {
        let mut run = fixture::mesh_run();
        assert!(!text(&run).contains("one machine"));
        let mesh = run.sweep.as_mut().and_then(|s| s.plan.mesh.as_mut()).unwrap();
        mesh.hosts[0].machine = Some("ab".into());
        mesh.hosts[2].machine = Some("ab".into());
        mesh.hosts[1].machine = Some("cd".into());
        let text = text(&run);
        assert!(text.contains("hosts a, c are one machine (their servers share one boot id)"), "{text}");
    }

    #[test]
    fn the_matrix_has_baselines_shares_failures_and_cells_not_run() {
        let m = Matrix::of(&fixture::mesh_run()).unwrap();
        assert_eq!((m.senders.len(), m.receivers.len(), m.baselines.len()), (3, 3, 3));
        let Entry::Measured { sender_share, receiver_share, .. } = &m.cells[0][1] else { panic!("a→b") };
        // a → b at 9 Gbit/s against baselines of 20 (a) and 10 (b).
        assert!((sender_share.unwrap() - 0.45).abs() < 1e-9 && (receiver_share.unwrap() - 0.9).abs() < 1e-9);
        assert_eq!(m.cells[1][2], Entry::NotRun);
        assert!(matches!(&m.cells[2][1], Entry::Failed { code, .. } if code == "connect"));
        assert_eq!(m.failures(), vec!["c → b: connection refused".to_string()]);
        assert!(Matrix::of(&fixture::sweep_run()).is_none());
    }

    #[test]
    fn text_and_csv_of_a_mesh() {
        let run = fixture::mesh_run();
        insta::assert_snapshot!("mesh-text", text(&run));
        insta::assert_snapshot!("mesh-csv", csv(&[run, fixture::sweep_run()]));
    }

    #[test]
    fn the_heatmap_marks_failed_and_missing_cells() {
        let svg = crate::html::mesh_heatmap(&fixture::mesh_run()).unwrap();
        assert!(svg.contains("failed: connection refused"));
        assert!(svg.contains("not run"));
        assert!(svg.contains("receiver a, sender a: [20"), "{svg}");
        assert!(svg.contains("receiver b, sender a: 9"));
    }
}
