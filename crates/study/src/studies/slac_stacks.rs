//! Seed 003, Coccetti and Cottrell (SLAC IEPM): one stream each of Stock, HighSpeed,
//! Scalable and FAST TCP from Sunnyvale to Geneva and to Amsterdam, 1 Gbit/s, MTU 1500,
//! txqueuelen 100, throughput mean ± sd over 1000 s and over 80 s. The controls this kernel
//! has run; the others are named and left out, never replaced.

use std::time::Duration;

use results::TestResult;

use crate::compare::Row;
use crate::html::{rows_chart, series};
use crate::paper::{find, pm, v, Figure, Unit};
use crate::plan::{stream, Case, Mode, Stage};
use crate::status::{self, measured, not_reproducible, not_run, Entry, Sample, Verdict};
use crate::{Info, Outcome, Study};

/// The study.
#[derive(Debug)]
pub struct SlacStacks;

const INFO: Info = Info {
    name: "slac-stacks",
    seed: "003",
    paper: "Coccetti, Cottrell (SLAC): TCP stacks compared with a single stream",
    reruns: "one stream per congestion control over 1 Gbit/s × 170 ms with a 100-packet queue, \
             whole-run and windowed mean ± sd",
};

const FIGURES: &[Figure] = &[
    Figure {
        id: "SNV→GVA",
        source: "table \"From Sunnyvale to Geneva\"",
        caption: "Average throughput, mean ± sd, SNV19/SNV14 → GVA5",
        printed_unit: "Mbps",
        unit: Unit::Mbps,
        values: &[
            pm("Stock TCP 1000s", 91.0, 21.0),
            pm("HS TCP 1000s", 929.0, 53.0),
            pm("Scalable TCP 1000s", 576.0, 219.0),
            pm("Fast TCP 1000s", 821.0, 73.0),
            pm("Stock TCP 80s", 59.0, 4.0),
            pm("HS TCP 80s", 896.0, 31.0),
            pm("Scalable TCP 80s", 381.0, 261.0),
            pm("Fast TCP 80s", 739.0, 41.0),
        ],
    },
    Figure {
        id: "SNV→AMS",
        source: "table \"From Sunnyvale to Amsterdam\"",
        caption: "Average throughput, mean ± sd, SNV19 → AMS-97-17",
        printed_unit: "Mbps",
        unit: Unit::Mbps,
        values: &[
            pm("Stock TCP 1000s", 31.0, 6.0),
            pm("HS TCP 1000s", 221.0, 86.0),
            pm("Scalable TCP 1000s", 23.0, 3.0),
            pm("Fast TCP 1000s", 149.0, 30.0),
            pm("Stock TCP 80s", 35.0, 6.0),
            pm("HS TCP 80s", 161.0, 114.0),
            pm("Scalable TCP 80s", 24.0, 3.0),
            pm("Fast TCP 80s", 162.0, 28.0),
        ],
    },
    Figure {
        id: "setup",
        source: "set-up paragraphs",
        caption: "For all measures",
        printed_unit: "bytes",
        unit: Unit::Bytes,
        values: &[v("MTU", 1500.0)],
    },
];

/// Both tables of the paper, by column.
const CATALOGUE: &[Entry] = &[
    measured("SNV→GVA, 1000 s: Stock TCP", "Stock TCP's 1000-s mean, 91 ± 21 Mbit/s"),
    measured("SNV→GVA, 1000 s: high-speed stacks", "HS, Scalable and FAST TCP far above Stock TCP"),
    not_run(
        "SNV→GVA, 80 s",
        "the 80-s column: separate 80-s runs",
        "separate 80-s runs (a window cut from a 1000-s run has the long run's mean by construction)",
    ),
    not_reproducible(
        "SNV→AMS",
        "Sunnyvale → Amsterdam, both columns",
        "the seed gives no RTT or bottleneck for Amsterdam; emulated, it would be Geneva's path again",
    ),
];

/// The paper's stacks and the Linux control of each (`None`: no such module exists).
const STACKS: [(&str, Option<&str>); 4] = [
    ("Stock TCP", Some("reno")),
    ("HS TCP", Some("highspeed")),
    ("Scalable TCP", Some("scalable")),
    ("Fast TCP", None),
];
/// Modern controls run beside the paper's.
const MODERN: [&str; 2] = ["cubic", "bbr"];
/// The paths: key, preset, stage label, the paper's table (its id is also the row group).
const PATHS: [(&str, &str, &str, &str); 2] = [
    ("gva", "transatlantic", "Sunnyvale → Geneva: 1 Gbit/s, 170 ms RTT, 100-packet queue", "SNV→GVA"),
    ("ams", "snv-ams", "Sunnyvale → Amsterdam (RTT assumed 170 ms)", "SNV→AMS"),
];

impl Study for SlacStacks {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn paper(&self) -> &'static [Figure] {
        FIGURES
    }

    fn stages(&self, mode: Mode) -> Vec<Stage> {
        let secs = mode.pick(25, 1000);
        let paths = mode.pick(&PATHS[..1], &PATHS[..]);
        paths
            .iter()
            .map(|&(key, preset, label, _)| {
                let cases = controls()
                    .into_iter()
                    .map(|cc| {
                        let mut s = stream(131072, None, secs);
                        s.congestion = Some(cc.clone());
                        s.interval_ms = 1000;
                        Case::new(format!("{key}-{cc}"), s)
                    })
                    .collect();
                Stage::path(label, preset, cases)
            })
            .collect()
    }

    fn compare(&self, out: &Outcome) -> Vec<Row> {
        let window = window_of(out);
        let mut rows = Vec::new();
        for (key, _, _, table) in PATHS {
            if out.with_prefix(key).next().is_none() {
                continue;
            }
            let label = table;
            let fig = find(FIGURES, table);
            for (stack, cc) in STACKS {
                let r = cc.and_then(|c| out.get(&format!("{key}-{c}")));
                let (whole, windowed) = r.map(|r| figures(r, window)).unwrap_or_default();
                let name = format!("{stack} ({})", cc.unwrap_or("no Linux module"));
                let mut a = Row::new(label, &format!("{name}, whole run"), "Mbit/s")
                    .paper(fig.and_then(|f| f.cite(&format!("{stack} 1000s"))))
                    .goodput(r);
                a.measured = whole.or(a.measured);
                if r.is_none() {
                    a.why = unavailable(cc);
                }
                rows.push(a);
                let mut b = Row::new(label, &format!("{name}, {}-s windows", window.as_secs()), "Mbit/s")
                    .paper(fig.and_then(|f| f.cite(&format!("{stack} 80s"))));
                b.measured = windowed;
                rows.push(b);
            }
            for cc in MODERN {
                let r = out.get(&format!("{key}-{cc}"));
                let mut a =
                    Row::new(label, &format!("{cc} (not in the paper), whole run"), "Mbit/s").goodput(r);
                a.measured = r.and_then(|r| figures(r, window).0).or(a.measured);
                rows.push(a);
            }
            rows.push(ranking(out, key, label, table));
        }
        rows
    }

    fn charts(&self, out: &Outcome) -> Vec<String> {
        let rows = self.compare(out);
        let whole: Vec<&Row> = rows.iter().filter(|r| r.case.ends_with("whole run")).collect();
        let mut charts =
            vec![rows_chart("Whole-run mean: paper (1000 s) vs tcplab vs model", "Mbit/s", &whole)];
        for (key, _, label, _) in PATHS {
            let curves: Vec<_> = out
                .with_prefix(key)
                .map(|d| {
                    let cc = d.case.spec.congestion.clone().unwrap_or_default();
                    series(
                        &cc,
                        pipeline::compare_cc::spans_of(&d.result).iter().map(|s| (s.end_s, s.value / 1e6)),
                    )
                })
                .filter(|s| !s.points.is_empty())
                .collect();
            if curves.is_empty() {
                continue;
            }
            let mut c = report::plot::LineChart::new(
                &format!("Throughput over time, {label}"),
                report::plot::AxisSpec::linear("time (s)"),
                report::plot::AxisSpec::linear("Mbit/s"),
            );
            c.markers = false;
            c.series = curves;
            c.refs = paper_refs(PATHS.iter().find(|p| p.0 == key).map_or("", |p| p.3));
            charts.push(c.render());
        }
        charts
    }

    fn catalogue(&self) -> &'static [Entry] {
        CATALOGUE
    }

    fn judge(&self, figure: &str, out: &Outcome) -> Verdict {
        let run = |cc: &str| out.get(&format!("gva-{cc}")).and_then(|r| Sample::of(r, crate::compare::mbps));
        match figure {
            "SNV→GVA, 1000 s: Stock TCP" => status::value(run("reno").as_ref(), 91.0, 0.25, " Mbit/s"),
            "SNV→GVA, 1000 s: high-speed stacks" => {
                let ran: Vec<(&str, &str)> = STACKS[1..]
                    .iter()
                    .filter_map(|(name, cc)| Some((*name, (*cc)?)))
                    .filter(|(_, cc)| out.get(&format!("gva-{cc}")).is_some())
                    .collect();
                if ran.is_empty() {
                    let have = netio::host::congestion_available();
                    if STACKS[1..].iter().filter_map(|(_, cc)| *cc).any(|cc| have.iter().any(|h| h == cc)) {
                        return Verdict::not_run("this kernel has a high-speed control, but it did not run");
                    }
                    return Verdict::new(status::Status::NotReproducible, unavailable_all());
                }
                let samples: Vec<_> = ran.iter().map(|(n, cc)| (*n, run(cc))).collect();
                let stock = run("reno");
                let pairs: Vec<_> =
                    samples.iter().map(|(n, s)| (*n, s.as_ref(), "Stock TCP", stock.as_ref())).collect();
                status::ordered(&pairs)
            }
            _ => Verdict::not_run("no judge for this figure"),
        }
    }
}

/// The controls to run: the paper's that this kernel has, then the modern ones.
fn controls() -> Vec<String> {
    let have = netio::host::congestion_available();
    STACKS
        .iter()
        .filter_map(|(_, cc)| *cc)
        .chain(MODERN)
        .filter(|cc| have.iter().any(|h| h == cc))
        .map(str::to_string)
        .collect()
}

fn unavailable(cc: Option<&str>) -> String {
    let have = netio::host::congestion_available().join(", ");
    match cc {
        Some(c) => {
            format!("{c} is not available in this kernel (available: {have}); left out, not replaced.")
        }
        None => {
            format!("FAST TCP never had a mainline Linux module (available: {have}); left out, not replaced.")
        }
    }
}

/// Why none of the paper's high-speed stacks ran.
fn unavailable_all() -> String {
    let have = netio::host::congestion_available().join(", ");
    format!(
        "HS TCP and Scalable TCP need the highspeed and scalable modules, FAST TCP never had a mainline \
             Linux module; this kernel has {have}"
    )
}

/// The short window: the paper's 80 s in full runs, scaled by 80/1000 of the run otherwise.
fn window_of(out: &Outcome) -> Duration {
    let secs = out.done.first().map_or(1000, |d| d.case.spec.duration_ms / 1000);
    Duration::from_secs((secs * 80 / 1000).max(2))
}

/// Whole-run mean and the mean of window means, Mbit/s (compare-cc's figures).
fn figures(r: &TestResult, window: Duration) -> (Option<f64>, Option<f64>) {
    let spans = pipeline::compare_cc::spans_of(r);
    let f = pipeline::compare_cc::stream_figures(String::new(), 1, 0, 0, r, &spans, window);
    (f.throughput_bps.map(|m| m.mean / 1e6), f.windowed_bps.map(|m| m.mean / 1e6))
}

/// Which control won on the path, in the paper and here.
fn ranking(out: &Outcome, key: &str, label: &str, table: &str) -> Row {
    let paper: Vec<(f64, &str)> = find(FIGURES, table)
        .map(|f| {
            f.values
                .iter()
                .filter(|v| v.label.ends_with("1000s"))
                .map(|v| (v.value, v.label.trim_end_matches(" 1000s")))
                .collect()
        })
        .unwrap_or_default();
    let measured: Vec<(f64, String)> = out
        .with_prefix(key)
        .filter_map(|d| Some((crate::compare::mbps(&d.result)?, d.case.spec.congestion.clone()?)))
        .collect();
    let mut row = Row::new(label, "ranking (who wins)", "");
    row.why = format!("paper: {}; tcplab: {}.", order(paper), order(measured));
    row
}

fn order<S: AsRef<str>>(mut xs: Vec<(f64, S)>) -> String {
    xs.sort_by(|a, b| b.0.total_cmp(&a.0));
    xs.iter().map(|(v, n)| format!("{} {v:.0}", n.as_ref())).collect::<Vec<_>>().join(" > ")
}

/// The paper's 1000-s means on the path, as reference lines.
fn paper_refs(key: &str) -> Vec<report::plot::RefLine> {
    find(FIGURES, key)
        .map(|f| {
            f.values
                .iter()
                .filter(|v| v.label.ends_with("1000s"))
                .map(|v| report::plot::RefLine {
                    y: v.value,
                    label: format!("paper: {}", v.label.replace(" 1000s", "")),
                })
                .collect()
        })
        .unwrap_or_default()
}
