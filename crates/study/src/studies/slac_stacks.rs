//! Seed 003, Coccetti and Cottrell (SLAC IEPM): one stream each of Stock, HighSpeed,
//! Scalable and FAST TCP from Sunnyvale to Geneva and to Amsterdam, 1 Gbit/s, MTU 1500,
//! txqueuelen 100, throughput mean ± sd over 1000 s and over 80 s. The controls this kernel
//! has run; the others are named and left out, never replaced.

use std::time::Duration;

use results::TestResult;

use crate::compare::Row;
use crate::html::series;
use crate::paper::{find, pm, v, Figure, Unit};
use crate::plan::{stream, Case, Mode, Stage};
use crate::status::{self, measured, not_reproducible, Entry, Sample, Verdict};
use crate::{Info, Outcome, Study};

/// The study.
#[derive(Debug)]
pub struct SlacStacks;

const INFO: Info = Info {
    name: "slac-stacks",
    seed: "003",
    paper: "Coccetti, Cottrell (SLAC): TCP stacks compared with a single stream",
    reruns: "one stream per congestion control over Geneva's 1 Gbit/s × 170 ms with a 100-packet \
             queue: a 1000-s run and five separate 80-s runs each, mean ± sd, an RTT probe beside every run",
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
    measured("SNV→GVA, 80 s: Stock TCP", "Stock TCP's 80-s mean, 59 ± 4 Mbit/s, from separate runs"),
    measured("pings during the runs", "the RTT stays almost constant (within 10 % of 170 ms)"),
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
/// Why Stock TCP differs.
const STOCK_WHY: &str = "The 100-packet queue (1.2 ms at 1 Gbit/s) overflows in slow start and each loss halves a \
                         window that regrows by one segment per 170-ms round trip; how far it gets depends on \
                         the run's length and on when the first losses fall.";
/// Key infix of the separate short runs (`gva-reno-short-2`).
const SHORT: &str = "-short-";
/// The probe's interval beside a long run and beside a short one.
const PROBE_LONG: Duration = Duration::from_secs(1);
const PROBE_SHORT: Duration = Duration::from_millis(250);
/// The path's round trip without a queue (the emulated `transatlantic`).
const BASE_RTT_MS: f64 = 170.0;
/// The paths: key, preset, stage label, the paper's table (its id is also the row group).
/// Geneva only: the seed gives no RTT or bottleneck for Amsterdam, so an emulated Amsterdam
/// would be Geneva's path again under the paper's Amsterdam numbers (its figure is "not
/// reproducible here"; the `snv-ams` preset stays for whoever knows that path).
const PATHS: [(&str, &str, &str, &str); 1] =
    [("gva", "transatlantic", "Sunnyvale → Geneva: 1 Gbit/s, 170 ms RTT, 100-packet queue", "SNV→GVA")];

impl Study for SlacStacks {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn paper(&self) -> &'static [Figure] {
        FIGURES
    }

    fn stages(&self, mode: Mode) -> Vec<Stage> {
        let (secs, runs) = (mode.pick(20, 1000), mode.pick(3, 5));
        // The 80-s column: separate runs, 80/1000 of the long one (2 s in --quick).
        let short = (secs * 80 / 1000).max(2);
        PATHS
            .iter()
            .map(|&(key, preset, label, _)| {
                let mut cases = Vec::new();
                for cc in controls() {
                    cases.push(Case::new(format!("{key}-{cc}"), one(&cc, secs)).probed(PROBE_LONG));
                    for i in 1..=runs {
                        let case = Case::new(format!("{key}-{cc}{SHORT}{i}"), one(&cc, short));
                        cases.push(case.probed(PROBE_SHORT));
                    }
                }
                Stage::path(label, preset, cases)
            })
            .collect()
    }

    fn compare(&self, out: &Outcome) -> Vec<Row> {
        let mut rows = Vec::new();
        for (key, _, _, table) in PATHS {
            if out.with_prefix(key).next().is_none() {
                continue;
            }
            let fig = find(FIGURES, table);
            for (stack, cc) in STACKS {
                let name = format!("{stack} ({})", cc.unwrap_or("no Linux module"));
                let (long, short) = cc.map_or((None, None), |c| columns(out, key, c));
                let cite = |col: &str| fig.and_then(|f| f.get(&format!("{stack} {col}")));
                for (what, col, got) in [("long run", "1000s", long), ("short runs", "80s", short)] {
                    let mut row = Row::new(
                        table,
                        &format!("{name}, {}", got.as_ref().map_or(what.to_string(), |c| c.what.clone())),
                        "Mbit/s",
                    )
                    .paper(fig.and_then(|f| f.cite(&format!("{stack} {col}"))));
                    row.paper_sd = cite(col).and_then(|v| v.spread);
                    (row.measured, row.sd) = got.map_or((None, None), |c| (Some(c.mean), c.sd));
                    if !available(cc) {
                        row.why = unavailable(cc);
                        row.not_reproducible = true;
                    }
                    rows.push(row);
                }
            }
            for cc in MODERN {
                let (long, short) = columns(out, key, cc);
                for got in [long, short].into_iter().flatten() {
                    let mut row =
                        Row::new(table, &format!("{cc} (not in the paper), {}", got.what), "Mbit/s");
                    (row.measured, row.sd) = (Some(got.mean), got.sd);
                    rows.push(row);
                }
            }
            rows.extend(rtt_rows(out, key, table));
            rows.push(ranking(out, key, table, table));
        }
        rows
    }

    fn charts(&self, out: &Outcome) -> Vec<String> {
        let mut charts = vec![spread_chart(out)];
        for (key, _, _, table) in PATHS {
            let curves: Vec<_> = out
                .with_prefix(key)
                .filter(|d| !d.case.key.contains(SHORT))
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
                // The path's short name: its full description ran past the plot's width.
                &format!("Throughput over time, {table}, one stream per control"),
                report::plot::AxisSpec::linear("time (s)"),
                report::plot::AxisSpec::linear("Mbit/s"),
            );
            c.markers = false;
            c.series = curves;
            c.refs = paper_refs(table);
            charts.push(c.render());
        }
        charts
    }

    fn catalogue(&self) -> &'static [Entry] {
        CATALOGUE
    }

    fn judge(&self, figure: &str, out: &Outcome) -> Verdict {
        let run = |cc: &str| {
            out.get(&format!("gva-{cc}"))
                .and_then(|r| Sample::of(r, crate::compare::mbps))
                .map(Sample::steal_lowers)
        };
        match figure {
            "SNV→GVA, 1000 s: Stock TCP" => {
                let Some(r) = out.get("gva-reno") else { return Verdict::not_run("no measurement") };
                let (s, what) = long_sample(r);
                let v = status::value(s.as_ref(), 91.0, 0.25, " Mbit/s");
                Verdict { evidence: format!("{what}: {}", v.evidence), ..v }.because_below(STOCK_WHY)
            }
            "SNV→GVA, 80 s: Stock TCP" => {
                let runs: Vec<&TestResult> = out.with_prefix("gva-reno-short-").map(|d| &d.result).collect();
                let secs = runs.first().map_or(0, |r| r.spec.duration_ms / 1000);
                let s = Sample::across(runs, crate::compare::mbps).map(Sample::steal_lowers);
                let v = status::value(s.as_ref(), 59.0, 0.25, " Mbit/s");
                Verdict { evidence: format!("{secs}-s runs: {}", v.evidence), ..v }.because(STOCK_WHY)
            }
            "pings during the runs" => {
                let worst = out.done.iter().filter_map(|d| d.rtt).map(|r| r.p95_ms).reduce(f64::max);
                status::observed("worst probe RTT p95", worst, BASE_RTT_MS, 0.1, " ms")
            }
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

/// Whether this kernel has the control `cc` (`None`: a stack with no Linux module).
fn available(cc: Option<&str>) -> bool {
    cc.is_some_and(|c| netio::host::congestion_available().iter().any(|h| h == c))
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

/// One stream of `cc` for `secs` seconds, 1-s intervals.
fn one(cc: &str, secs: u64) -> results::TestSpec {
    let mut s = stream(131072, None, secs);
    s.congestion = Some(cc.to_string());
    s.interval_ms = 1000;
    s
}

/// Shortest stretch of a long run whose mean counts as one observation: several of reno's
/// saw-tooth cycles over 170 ms (about 30 s each at 25 Mbit/s), so that neighbouring stretches
/// are nearly independent.
const BATCH_S: f64 = 100.0;
/// Most stretches a long run is cut into.
const BATCHES: usize = 10;

/// The long run's throughput as batch means ([`batch_means`] of its 1-s intervals), or under
/// three stretches (a --quick run) the run's mean alone, which gives no interval; with what the
/// values are.
fn long_sample(r: &TestResult) -> (Option<Sample>, String) {
    let spans = pipeline::compare_cc::spans_of(r);
    match batch_means(&spans) {
        Some((s, stretch, secs)) => {
            let what = format!(
                "means of {} consecutive {stretch:.0}-s stretches of one {secs:.0}-s run",
                s.values.len()
            );
            (Some(Sample { stolen: r.stolen_from(), ..s }.steal_lowers()), what)
        }
        None => {
            let secs = r.spec.duration_ms / 1000;
            (
                Sample::of(r, crate::compare::mbps).map(Sample::steal_lowers),
                format!("one {secs}-s run, under three {BATCH_S:.0}-s stretches"),
            )
        }
    }
}

/// Intervals of one run cut into up to [`BATCHES`] consecutive stretches of at least
/// [`BATCH_S`], the mean of each in Mbit/s (the values are bit/s): the 1-s intervals of one
/// run are correlated, so their sd is no uncertainty of the mean, while the means of long
/// stretches nearly are independent. With the stretch's and the run's length, s; `None` under
/// three stretches.
fn batch_means(spans: &[stats::series::Span]) -> Option<(Sample, f64, f64)> {
    let secs: f64 = spans.iter().map(|s| s.end_s - s.start_s).sum();
    let n = ((secs / BATCH_S) as usize).min(BATCHES).min(spans.len());
    if n < 3 {
        return None;
    }
    let per = spans.len() / n;
    let mean = |c: &[stats::series::Span]| {
        let t: f64 = c.iter().map(|s| s.end_s - s.start_s).sum();
        c.iter().map(|s| s.value * (s.end_s - s.start_s)).sum::<f64>() / t / 1e6
    };
    let values = spans.chunks(per).take(n).map(mean).collect();
    Some((Sample::new(values)?, secs / n as f64, secs))
}

/// One column of the tables as measured: a mean, its sd, and what it is over.
#[derive(Debug, Clone, PartialEq)]
struct Column {
    mean: f64,
    sd: Option<f64>,
    what: String,
}

/// The long run (mean ± sd of its 1-s intervals, the paper's sampling) and the short runs
/// (mean ± sd over the separate runs' means) of control `cc` on path `key`.
fn columns(out: &Outcome, key: &str, cc: &str) -> (Option<Column>, Option<Column>) {
    let long = out.get(&format!("{key}-{cc}")).and_then(|r| {
        let values: Vec<f64> = pipeline::compare_cc::spans_of(r).iter().map(|s| s.value / 1e6).collect();
        let s = Sample::new(values)?;
        let secs = r.spec.duration_ms / 1000;
        Some(Column { mean: s.mean(), sd: s.sd(), what: format!("one {secs}-s run, sd over 1-s intervals") })
    });
    let prefix = format!("{key}-{cc}{SHORT}");
    let shorts: Vec<&TestResult> = out.with_prefix(&prefix).map(|d| &d.result).collect();
    let short = Sample::across(shorts.iter().copied(), crate::compare::mbps).map(|s| {
        let secs = shorts.first().map_or(0, |r| r.spec.duration_ms / 1000);
        let what = format!("{} separate {secs}-s runs, sd over runs", s.values.len());
        Column { mean: s.mean(), sd: s.sd(), what }
    });
    (long, short)
}

/// The probe's round trips beside every run of the path, per control.
fn rtt_rows(out: &Outcome, key: &str, table: &str) -> Vec<Row> {
    let mut rows = Vec::new();
    for cc in controls() {
        let rtts: Vec<crate::Rtt> = out
            .with_prefix(&format!("{key}-{cc}"))
            .filter(|d| d.case.spec.congestion.as_deref() == Some(&cc))
            .filter_map(|d| d.rtt)
            .collect();
        let Some(worst) = rtts.iter().copied().max_by(|a, b| a.p95_ms.total_cmp(&b.p95_ms)) else { continue };
        let (sent, lost): (usize, usize) = rtts.iter().fold((0, 0), |a, r| (a.0 + r.sent, a.1 + r.lost));
        let mut row = Row::new(table, &format!("{cc}: probe RTT p95, worst of {} runs", rtts.len()), "ms");
        row.measured = Some(worst.p95_ms);
        row.why = format!(
            "Pings during the runs: median {:.1} ms, p95 {:.1}, max {:.1}; {lost} of {sent} probes unanswered; \
             the path's base RTT is {BASE_RTT_MS} ms.",
            worst.p50_ms, worst.p95_ms, worst.max_ms
        );
        rows.push(row);
    }
    rows
}

/// Mean ± sd per control on Geneva's path, both columns, beside the paper's Stock TCP (the
/// only stack of the paper this kernel has): x is the control's place in the legend's list.
fn spread_chart(out: &Outcome) -> String {
    let ccs = controls();
    let point = |i: usize, c: Option<Column>| {
        c.map(|c| report::plot::Point { x: i as f64 + 1.0, y: c.mean, err: c.sd })
    };
    let mut long = Vec::new();
    let mut short = Vec::new();
    for (i, cc) in ccs.iter().enumerate() {
        let (l, s) = columns(out, "gva", cc);
        long.extend(point(i, l));
        short.extend(point(i, s));
    }
    let paper = find(FIGURES, "SNV→GVA");
    let stock = |col: &str, dx: f64| {
        paper.and_then(|f| f.get(&format!("Stock TCP {col}"))).map(|v| report::plot::Point {
            x: 1.0 + dx,
            y: v.value,
            err: v.spread,
        })
    };
    let names = ccs.iter().enumerate().map(|(i, c)| format!("{} {c}", i + 1)).collect::<Vec<_>>().join(", ");
    let mut c = report::plot::LineChart::new(
        "Geneva: mean ± sd per control",
        report::plot::AxisSpec::linear(&format!("control ({names})")),
        report::plot::AxisSpec {
            label: "Mbit/s (log scale)".into(),
            kind: report::plot::ScaleKind::Log2,
            format: report::plot::TickFormat::Number,
            zero: false,
        },
    );
    let s = |name: &str, points: Vec<report::plot::Point>| report::plot::Series { name: name.into(), points };
    c.series = vec![
        s("tcplab long run", long),
        s("tcplab short runs", short),
        s("paper, 1000 s", stock("1000s", 0.1).into_iter().collect()),
        s("paper, 80 s", stock("80s", 0.2).into_iter().collect()),
    ]
    .into_iter()
    .filter(|s| !s.points.is_empty())
    .collect();
    c.render()
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
        .filter(|d| !d.case.key.contains(SHORT))
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

/// The paper's 1000-s means on the path, as reference lines (labels of close ones joined).
fn paper_refs(key: &str) -> Vec<report::plot::RefLine> {
    let refs = find(FIGURES, key).map(|f| {
        f.values
            .iter()
            .filter(|v| v.label.ends_with("1000s"))
            .map(|v| (v.value, format!("paper: {}", v.label.replace(" 1000s", ""))))
            .collect()
    });
    crate::html::ref_lines(refs.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use stats::series::Span;

    /// `secs` 1-s intervals of a saw-tooth between 10 and 40 Mbit/s with a 30-s period.
    fn sawtooth(secs: usize) -> Vec<Span> {
        (0..secs)
            .map(|i| Span { start_s: i as f64, end_s: i as f64 + 1.0, value: (10.0 + (i % 30) as f64) * 1e6 })
            .collect()
    }

    #[test]
    fn a_stack_this_kernel_lacks_is_not_pending_and_one_it_has_is() {
        // One case of the path ran (with nothing measured): the path's rows are made.
        let spec = one("reno", 1);
        let result = TestResult::new("gva-reno", spec.clone(), "h:1", 0);
        let done = crate::Done { stage: "gva".into(), case: Case::new("gva-reno", spec), result, rtt: None };
        let out =
            Outcome { mode: Mode::Full, host: None, done: vec![done], skipped: Vec::new(), run_id: None };
        let rows = SlacStacks.compare(&out);
        let fast: Vec<&Row> = rows.iter().filter(|r| r.case.starts_with("Fast TCP")).collect();
        assert!(fast.len() == 2 && fast.iter().all(|r| r.not_reproducible && r.why.contains("mainline")));
        let reno = rows.iter().find(|r| r.case.starts_with("Stock TCP")).unwrap();
        assert!(!reno.not_reproducible && reno.why.is_empty(), "reno is in every kernel: {reno:?}");
        let pending = crate::text::pending(&[], &rows);
        assert!(pending.iter().any(|p| p.contains("Stock TCP (reno)")), "{pending:?}");
        assert!(!pending.iter().any(|p| p.contains("Fast TCP")), "{pending:?}");
    }

    #[test]
    fn a_long_run_is_judged_on_the_means_of_its_stretches() {
        // The full run's reno: about 25 Mbit/s for 1000 s against the paper's 91 ± 25 %.
        let (s, stretch, secs) = batch_means(&sawtooth(1000)).unwrap();
        assert_eq!((s.values.len(), stretch, secs), (10, 100.0, 1000.0));
        assert!((s.mean() - 24.5).abs() < 0.2, "{}", s.mean());
        let v = status::value(Some(&s), 91.0, 0.25, " Mbit/s");
        assert_eq!(v.status, status::Status::Differs, "{}", v.evidence);
        // The same mean near the paper's: reproduced, since the stretches agree.
        let near: Vec<Span> =
            sawtooth(1000).into_iter().map(|x| Span { value: x.value * 91.0 / 24.5, ..x }).collect();
        let (s, ..) = batch_means(&near).unwrap();
        assert_eq!(status::value(Some(&s), 91.0, 0.25, "").status, status::Status::Reproduced);
        // A 20-s --quick run has no three 100-s stretches: no interval.
        assert!(batch_means(&sawtooth(20)).is_none());
        assert_eq!(batch_means(&sawtooth(350)).map(|b| b.0.values.len()), Some(3));
    }
}
