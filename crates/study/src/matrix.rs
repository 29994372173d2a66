//! A paper's sender × receiver matrix (seed 000's Tables 2 and 3): the same tests between
//! every pair of distinct hosts. On emulated paths each cell is the paper's pair of hosts,
//! each end slowed to its host's CPU quota; with an inventory (`--inventory FILE`, the
//! format `tcplab mesh` reads) each cell is an ordered pair of real hosts, measured as a
//! third-party test (the sender's `tcplab server --allow-third-party` runs the client end
//! against the receiver's). A single HOST cannot make a matrix: the stage is skipped and
//! named.
//!
//! A cell's cases are keyed `m:SENDER:RECEIVER:CASE`, so a study finds them with
//! [`cell_key`] and [`cells_of`].

use results::MeshHost;

use crate::plan::{Case, Stage, Where};
use crate::{Options, Outcome};

/// A host of the paper's matrix and how an emulated path slows it down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaperHost {
    /// The paper's name (`P100`).
    pub name: &'static str,
    /// Its share of one CPU on the emulated path (`2%`), or `None` for an unlimited end.
    pub quota: Option<&'static str>,
}

/// The matrix of a study.
#[derive(Debug, Clone)]
pub struct Matrix {
    /// What it stands for (`Table 2: sender × receiver, 64K buffers`).
    pub label: String,
    /// The emulated path the paper's cells run on.
    pub spec: String,
    /// The paper's hosts.
    pub hosts: &'static [PaperHost],
    /// The paper's cells, as (sender, receiver) indices into `hosts`.
    pub cells: &'static [(usize, usize)],
    /// The tests of every cell.
    pub cases: Vec<Case>,
}

/// The key of case `case` in the cell from `sender` to `receiver`.
pub fn cell_key(sender: &str, receiver: &str, case: &str) -> String {
    format!("m:{sender}:{receiver}:{case}")
}

/// The matrix's cells that ran, as (sender, receiver), in run order without repeats.
pub fn cells_of(out: &Outcome) -> Vec<(String, String)> {
    let mut cells: Vec<(String, String)> = Vec::new();
    for d in &out.done {
        let mut parts = d.case.key.splitn(4, ':');
        let (Some("m"), Some(s), Some(r), Some(_)) = (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if !cells.iter().any(|(a, b)| a == s && b == r) {
            cells.push((s.to_string(), r.to_string()));
        }
    }
    cells
}

/// The stages of `m` as `opts` asks: real pairs with an inventory, nothing with a single
/// HOST (the reason goes to `skipped`), the paper's cells on the emulated path otherwise.
pub fn stages(m: &Matrix, opts: &Options, skipped: &mut Vec<String>) -> Vec<Stage> {
    if let Some(hosts) = &opts.inventory {
        return between(m, hosts);
    }
    if opts.host.is_some() {
        skipped.push(format!(
            "{}: a sender × receiver matrix needs several hosts; give them with --inventory FILE",
            m.label
        ));
        return Vec::new();
    }
    emulated(m)
}

/// The paper's cells on the emulated path, each end at its host's quota.
pub fn emulated(m: &Matrix) -> Vec<Stage> {
    m.cells
        .iter()
        .filter_map(|&(s, r)| Some((m.hosts.get(s)?, m.hosts.get(r)?)))
        .map(|(s, r)| {
            let label = format!("{}: {} → {}", m.label, s.name, r.name);
            let quotas: Vec<String> = [("client", s.quota), ("server", r.quota)]
                .into_iter()
                .filter_map(|(end, q)| Some(format!("{end}={}", q?)))
                .collect();
            let cases = keyed(&m.cases, s.name, r.name);
            match quotas.is_empty() {
                true => Stage::path(&label, &m.spec, cases),
                false => Stage::slow(&label, &m.spec, &quotas.join(","), cases),
            }
        })
        .collect()
}

/// Every ordered pair of distinct inventory hosts whose roles allow it.
fn between(m: &Matrix, hosts: &[MeshHost]) -> Vec<Stage> {
    let mut out = Vec::new();
    for s in hosts.iter().filter(|h| h.role.sends()) {
        for r in hosts.iter().filter(|h| h.role.receives() && h.name != s.name) {
            out.push(Stage {
                label: format!("{}: {} → {}", m.label, s.name, r.name),
                place: Where::Between { sender: s.clone(), receiver: r.clone() },
                emulated_only: false,
                trace: false,
                cases: keyed(&m.cases, &s.name, &r.name),
            });
        }
    }
    out
}

fn keyed(cases: &[Case], sender: &str, receiver: &str) -> Vec<Case> {
    cases.iter().map(|c| Case { key: cell_key(sender, receiver, &c.key), ..c.clone() }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::stream;
    use crate::Mode;
    use results::MeshRole;

    const HOSTS: &[PaperHost] =
        &[PaperHost { name: "slow", quota: Some("2%") }, PaperHost { name: "fast", quota: None }];

    fn matrix() -> Matrix {
        Matrix {
            label: "T".into(),
            spec: "atm-oc3-clip".into(),
            hosts: HOSTS,
            cells: &[(0, 1), (1, 0), (1, 1)],
            cases: vec![Case::new("l8K", stream(8192, None, 1))],
        }
    }

    fn opts() -> Options {
        crate::fixture::options(Mode::Quick, None)
    }

    fn host(name: &str, role: MeshRole) -> MeshHost {
        MeshHost {
            name: name.into(),
            address: "198.18.9.1".into(),
            port: 9180,
            labels: Default::default(),
            role,
            machine: None,
        }
    }

    #[test]
    fn emulated_cells_carry_each_ends_quota() {
        let stages = stages(&matrix(), &opts(), &mut Vec::new());
        let places: Vec<_> =
            stages.iter().map(|s| (s.label.clone(), s.place.clone(), s.emulated_only)).collect();
        assert_eq!(places.len(), 3);
        assert_eq!(
            places[0].1,
            Where::Path { spec: "atm-oc3-clip".into(), host_cpu: Some("client=2%".into()) }
        );
        assert_eq!(
            places[1].1,
            Where::Path { spec: "atm-oc3-clip".into(), host_cpu: Some("server=2%".into()) }
        );
        assert_eq!(places[2].1, Where::Path { spec: "atm-oc3-clip".into(), host_cpu: None });
        assert!(places[0].2 && places[1].2 && !places[2].2);
        assert_eq!(stages[0].cases[0].key, "m:slow:fast:l8K");
        assert_eq!(places[0].0, "T: slow → fast");
    }

    #[test]
    fn an_inventory_gives_every_ordered_pair_its_roles_allow() {
        let mut o = opts();
        o.inventory =
            Some(vec![host("a", MeshRole::Both), host("b", MeshRole::Receiver), host("c", MeshRole::Sender)]);
        let stages = stages(&matrix(), &o, &mut Vec::new());
        let labels: Vec<&str> = stages.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["T: a → b", "T: c → a", "T: c → b"]);
        assert!(
            matches!(&stages[0].place, Where::Between { sender, receiver } if sender.name == "a" && receiver.name == "b")
        );
    }

    #[test]
    fn one_host_cannot_make_a_matrix() {
        let mut o = opts();
        o.host = Some(engine::client::ClientOptions {
            host: "198.18.9.1".into(),
            port: 9180,
            bind: None,
            family: None,
            timeout: std::time::Duration::from_secs(1),
            busy_wait: std::time::Duration::ZERO,
            key: None,
        });
        let mut skipped = Vec::new();
        assert!(stages(&matrix(), &o, &mut skipped).is_empty());
        assert!(skipped[0].contains("--inventory FILE"), "{skipped:?}");
    }
}
