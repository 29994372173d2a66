//! Seed 000, Borriss, Dannowski, Härtig: TCP over 155 Mbit/s ATM on Linux and Windows NT.
//! netperf TCP_STREAM over message sizes and 32/64 KB socket buffers, the loop-back
//! baseline (Table 1), peak rates (Tables 2, 3), TCP_RR (Table 4, Figure 11) and the
//! theoretical 134.5 Mbit/s ceiling (Figure 2).

use crate::compare::{mbps, mbps_sample, tps_sample, trans_per_s, Row};
use crate::html::{rows_chart, series};
use crate::matrix::{cell_key, cells_of, Matrix, PaperHost};
use crate::paper::{find, v, Figure, Unit};
use crate::plan::{self, netperf_iterations, rr, stream, Case, Mode, Stage, Where};
use crate::status::{self, diagram, measured, not_reproducible, Entry, Sample, Verdict};
use crate::studies::size_key;
use crate::{Info, Outcome, Study};
use results::TestSpec;

mod curves;

/// The study.
#[derive(Debug)]
pub struct TcpAtm;

const INFO: Info = Info {
    name: "tcp-atm-2000",
    seed: "000",
    paper: "Borriss, Dannowski, Härtig: TCP performance over ATM on Linux and Windows NT",
    reruns: "loop-back baseline, TCP_STREAM vs message size × 32K/64K buffers over OC-3c CLIP, \
             slow sender by CPU quota, TCP_RR at 1/1 64/64 100/200 128/8192, the sender × receiver \
             matrix of Table 2 (emulated hosts by CPU quota, or real hosts with --inventory)",
};

const FIGURES: &[Figure] = &[
    Figure {
        id: "t1",
        source: "Table 1",
        caption: "Loop-back device throughput",
        printed_unit: "Mbps",
        unit: Unit::Mbps,
        values: &[
            v("Sun (Kastor) SunOS", 408.88),
            v("PPro-200 (Christian) Linux", 347.25),
            v("P-100 (Carola) Linux", 84.42),
            v("PPro-200 (Maria) WinNT", 338.85),
            v("P-100 (Johann) WinNT", 14.23),
        ],
    },
    Figure {
        id: "t2",
        source: "Table 2",
        caption: "Linux TCP peak transfer rates for 64KB-sized socket buffers (sender → receiver)",
        printed_unit: "Mbps",
        unit: Unit::Mbps,
        values: &[
            v("P100 → PPro200", 98.84),
            v("P100 → Sun", 112.12),
            v("PPro200 → P100", 33.80),
            v("PPro200 → PPro200", 111.65),
            v("PPro200 → Sun", 119.12),
            v("Sun → P100", 64.57),
            v("Sun → PPro200", 102.95),
        ],
    },
    Figure {
        id: "t3",
        source: "Table 3",
        caption: "Windows NT TCP peak transfer rates for 64KB-sized socket buffers (sender → receiver)",
        printed_unit: "Mbps",
        unit: Unit::Mbps,
        values: &[
            v("P100 → PPro200", 59.20),
            v("P100 → Sun", 60.99),
            v("PPro200 → P100", 38.40),
            v("PPro200 → PPro200", 104.29),
            v("PPro200 → Sun", 113.17),
            v("Sun → P100", 43.31),
            v("Sun → PPro200", 102.38),
        ],
    },
    Figure {
        id: "max",
        source: "§2.2 and Figure 2",
        caption: "Achievable TCP bandwidth over ATM, MTU 9180 (after Cavanaugh)",
        printed_unit: "Mbps",
        unit: Unit::Mbps,
        values: &[v("TCP, MTU 9180", 134.5)],
    },
    Figure {
        id: "share",
        source: "Abstract and §4 (Figure 6)",
        caption: "Share of the bandwidth reached",
        printed_unit: "%",
        unit: Unit::Percent,
        values: &[v("abstract: data rates up to", 83.0), v("fast senders: up to (Figure 6)", 88.5)],
    },
    Figure {
        id: "rr",
        source: "§5 and Figure 11",
        caption: "TCP_RR peak on PPro-200 machines, request/response 1/1",
        printed_unit: "requests and responses per second",
        unit: Unit::TransPerS,
        values: &[v("Linux", 3387.43), v("Windows NT", 2250.87)],
    },
    Figure {
        id: "rtt",
        source: "§5",
        caption: "Application-to-application round trip time (1 s ÷ transactions per second)",
        printed_unit: "ms",
        unit: Unit::Ms,
        values: &[
            v("Linux 1/1", 0.295),
            v("Windows NT 1/1", 0.444),
            v("Linux 128/8192", 0.964),
            v("Windows NT 128/8192", 1.372),
        ],
    },
    Figure {
        id: "t4",
        source: "Table 4",
        caption: "Request and response message sizes",
        printed_unit: "bytes",
        unit: Unit::Bytes,
        values: &[
            v("request 1", 1.0),
            v("response 1", 1.0),
            v("request 64", 64.0),
            v("response 64", 64.0),
            v("request 100", 100.0),
            v("response 200", 200.0),
            v("request 128", 128.0),
            v("response 8192", 8192.0),
        ],
    },
];

/// Every figure and table of the paper.
const CATALOGUE: &[Entry] = &[
    diagram("Figure 1", "test environment"),
    measured("Figure 2", "theoretical TCP bandwidth against message size, up to 134.5 at MTU 9180"),
    measured("Table 1", "loop-back throughput, PPro-200 Linux"),
    measured("Figure 3", "64K above 32K socket buffers (8K messages)"),
    diagram("Figure 4", "write data path"),
    measured("Figure 5", "a slow sender below a fast one (8K messages)"),
    measured("Figure 6", "fast senders: peak share of the link's ceiling"),
    diagram("Figure 7", "read data path"),
    measured("Figure 8", "slow receivers against message size: Sun → P-100 below Sun → PPro-200"),
    measured("Figure 9", "fast receivers against message size: Sun → PPro-200 at about 75 % of the ceiling"),
    measured("Table 2", "sender × receiver peaks: the P-100 as receiver is the slowest"),
    not_reproducible(
        "Table 3",
        "Windows NT peaks",
        "Windows NT 4.0's stack; the end systems here run Linux (shown as the paper's numbers)",
    ),
    measured("Table 4, §5", "request/response round trip, 1/1 bytes"),
    measured(
        "Figure 10",
        "request/responses per second with a slow client: below a fast one, falling with size",
    ),
    not_reproducible("Figure 11", "Windows NT against Linux request/response", "Windows NT 4.0's stack"),
];

/// The cases the statuses are judged on (repeated in --quick too).
const JUDGED: &[&str] = &[
    "loopback",
    "clip-b64K-l8K",
    "clip-b32K-l8K",
    "clip-b64K-l64K",
    "slow-l8K",
    "rr-1-1",
    "slow-rr-1-1",
    "slow-rr-128-8192",
];

/// Why tcplab's host is faster than the paper's.
const MODERN: &str = "Today's CPUs and memory move far more per second than the paper's PPro-200.";

/// Table 2's hosts on an emulated path: the P-100 at the 2 % of a core the slow-sender stage
/// uses, the others scaled by their Table 1 loop-back rates (347.25 and 408.88 against the
/// P-100's 84.42 Mbit/s).
const HOSTS: &[PaperHost] = &[
    PaperHost { name: "P100", quota: Some("2%") },
    PaperHost { name: "PPro200", quota: Some("8%") },
    PaperHost { name: "Sun", quota: Some("10%") },
];
/// Table 2's cells (sender, receiver).
const CELLS: &[(usize, usize)] = &[(0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (2, 0), (2, 1)];

/// Why a CPU quota does not slow a sender down to a P-100.
const QUOTA_WHY: &str = "A CPU quota cannot make this host a P-100: it throttles the sending process, but most of \
                         TCP's per-byte work (the copy, segmentation, the ACK processing in softirq) is kernel work \
                         not charged to the quota's cgroup, so even 2 % of a core sends at nearly the link rate.";

/// Why a receiver's CPU quota does slow a cell down, where a sender's does not.
fn receiver_why(quota: &str) -> String {
    format!(
        "The receiver's quota ({quota} of a CPU) does bite: its application drains the socket too slowly, \
         so the announced window closes and the sender waits, as the paper's slow receivers made \
         their cells the slowest of the table."
    )
}

/// netperf's TCP_STREAM as the paper ran it, `-m len -s buf -S buf`: netserver reads a
/// socket buffer's worth per call, since its receive size defaults to its socket buffer's
/// size when `-M` is not given; only the sender's calls are `len` bytes. (A receiver that
/// also read `len` bytes made a syscall per byte or two at the small sizes, a cost the
/// paper's receivers did not pay.)
pub(crate) fn netperf_stream(len: u32, buf: u32, secs: u64) -> TestSpec {
    let mut s = stream(len, Some(buf), secs);
    s.recv_len = buf;
    s
}

/// The request/response sizes of Table 4.
const RR_SIZES: [(u32, u32); 4] = [(1, 1), (64, 64), (100, 200), (128, 8192)];
/// The path: OC-3c at the SONET payload rate, CLIP MTU 9180.
const CLIP: &str = "atm-oc3-clip";

impl Study for TcpAtm {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn paper(&self) -> &'static [Figure] {
        FIGURES
    }

    fn stages(&self, mode: Mode) -> Vec<Stage> {
        let secs = mode.pick(2, 60);
        // netperf -i 10,2 -I 99,3 for the streams, -i 10,3 -I 99,5 for TCP_RR (full only).
        let conf = (mode == Mode::Full).then(|| netperf_iterations(99.0, 3.0, 10, 2));
        let rr_conf = (mode == Mode::Full).then(|| netperf_iterations(99.0, 5.0, 10, 3));
        let lens: Vec<u32> = mode.pick(vec![1024, 8192, 65536], (0..17).map(|k| 1u32 << k).collect());
        let bufs: Vec<u32> = mode.pick(vec![65536], vec![32768, 65536]);
        let mut fast = Vec::new();
        for &b in &bufs {
            for &l in &lens {
                fast.push(
                    Case::new(format!("clip-b{}-l{}", size_key(b), size_key(l)), netperf_stream(l, b, secs))
                        .repeated(conf.clone()),
                );
            }
        }
        if mode == Mode::Quick {
            fast.push(Case::new("clip-b32K-l8K", netperf_stream(8192, 32768, secs)));
        }
        for (q, r) in RR_SIZES {
            fast.push(Case::new(format!("rr-{q}-{r}"), rr(q, r, mode.pick(2, 60))).repeated(rr_conf.clone()));
        }
        let slow_lens: Vec<u32> = mode.pick(vec![8192], lens.clone());
        let slow = slow_lens
            .iter()
            .map(|&l| {
                Case::new(format!("slow-l{}", size_key(l)), netperf_stream(l, 65536, secs))
                    .repeated(conf.clone())
            })
            .collect();
        // Figure 10: the P-100 as client (the slow sender's quota) of a fast server; --quick
        // runs the smallest and the largest of Table 4's sizes.
        let slow_rr = RR_SIZES
            .iter()
            .filter(|&&(q, _)| mode == Mode::Full || q == 1 || q == 128)
            .map(|&(q, r)| Case::new(format!("slow-rr-{q}-{r}"), rr(q, r, secs)).repeated(rr_conf.clone()))
            .collect();
        let loopback = Case::new("loopback", netperf_stream(65536, 65536, secs)).repeated(conf.clone());
        let mut stages = vec![
            Stage {
                label: "loop-back (Table 1)".into(),
                place: Where::Loopback,
                emulated_only: false,
                trace: false,
                cases: vec![loopback],
            },
            Stage::path("OC-3c CLIP, fast hosts (Figure 6)", CLIP, fast),
            Stage::slow(
                "OC-3c CLIP, slow sender: client at 2 % of a CPU (Figure 5)",
                CLIP,
                "client=2%",
                slow,
            ),
            Stage::slow(
                "OC-3c CLIP, slow client: client at 2 % of a CPU, request/response (Figure 10)",
                CLIP,
                "client=2%",
                slow_rr,
            ),
        ];
        plan::repeat_judged(mode, &mut stages, JUDGED, 3);
        stages
    }

    fn compare(&self, out: &Outcome) -> Vec<Row> {
        let t = |id: &str, label: &str| find(FIGURES, id).and_then(|f| f.cite(label));
        let mut rows = vec![Row::new("Table 1", "loop-back, this host", "Mbit/s")
            .paper(t("t1", "PPro-200 (Christian) Linux"))
            .goodput(out.get("loopback"))];
        let peak = out
            .with_prefix("clip-b64K-")
            .filter_map(|d| mbps(&d.result).map(|m| (m, &d.result)))
            .max_by(|a, b| a.0.total_cmp(&b.0));
        let so_far = self.peak_so_far(out);
        rows.push(
            Row::new("Table 2", &format!("peak, 64K buffers (PPro200 → Sun){so_far}"), "Mbit/s")
                .paper(t("t2", "PPro200 → Sun"))
                .goodput(peak.map(|p| p.1)),
        );
        rows.push(
            Row::new("§2.2", &format!("ceiling MTU 9180 vs peak{so_far}"), "Mbit/s")
                .paper(t("max", "TCP, MTU 9180"))
                .goodput(peak.map(|p| p.1)),
        );
        for d in out.with_prefix("clip-b") {
            rows.push(Row::new("Figure 6", &d.case.key["clip-".len()..], "Mbit/s").goodput(Some(&d.result)));
        }
        rows.push(
            Row::new("Figure 5", "slow sender (client at 2 % of a CPU), 8K", "Mbit/s")
                .goodput(out.get("slow-l8K")),
        );
        rows.extend(matrix_rows(out));
        for (q, r) in RR_SIZES {
            let res = out.get(&format!("rr-{q}-{r}"));
            let ms = res.and_then(trans_per_s).filter(|x| *x > 0.0).map(|x| 1000.0 / x);
            rows.push(
                Row::new("§5 RTT", &format!("TCP_RR {q}/{r}"), "ms")
                    .paper(t("rtt", &format!("Linux {q}/{r}")))
                    .measured(ms, res),
            );
        }
        for d in out.with_prefix("slow-rr-") {
            let (q, r) = (d.case.spec.request_len, d.case.spec.response_len);
            let what = format!("slow client (2 % of a CPU), TCP_RR {q}/{r}");
            rows.push(
                Row::new("Figure 10", &what, "trans/s").measured(trans_per_s(&d.result), Some(&d.result)),
            );
        }
        rows
    }

    fn charts(&self, out: &Outcome) -> Vec<String> {
        let curve = |b: &str| {
            series(
                &format!("tcplab, {b}"),
                out.with_prefix(&format!("clip-b{b}-l"))
                    .filter_map(|d| Some((f64::from(d.case.spec.send_len), mbps(&d.result)?))),
            )
        };
        let model = out
            .get("clip-b64K-l8K")
            .and_then(|r| r.reference.as_ref())
            .map(|r| (r.limit_bps / 1e6, format!("model ceiling {:.1}", r.limit_bps / 1e6)));
        let mut refs = model.into_iter().collect::<Vec<_>>();
        refs.push((134.5, "paper 134.5 (Fig. 2)".into()));
        let mut chart = report::plot::LineChart::new(
            "TCP vs message size, OC-3c CLIP",
            report::plot::AxisSpec::sizes("message size (bytes)"),
            report::plot::AxisSpec::linear("Mbit/s"),
        );
        let fig2 = series("Fig. 2 model", curves::model_curve(CLIP));
        // Table 2's peak is a line in the legend, not a labelled reference line: its label sat
        // where the measured curves run (119–131 Mbit/s) and was overprinted by them.
        let ends = [fig2.points.first(), fig2.points.last()].into_iter().flatten();
        let table2 = series("paper Table 2", ends.map(|p| (p.x, 119.12)).collect::<Vec<_>>());
        chart.series =
            [curve("64K"), curve("32K"), fig2, table2].into_iter().filter(|s| !s.points.is_empty()).collect();
        chart.refs = crate::html::ref_lines(refs);
        let rows = self.compare(out);
        let is_cell = |r: &Row| r.group == "Table 2" && r.case.ends_with(", peak");
        let mbit: Vec<&Row> =
            rows.iter().filter(|r| r.unit == "Mbit/s" && r.paper.is_some() && !is_cell(r)).collect();
        let ms: Vec<&Row> = rows.iter().filter(|r| r.unit == "ms").collect();
        let cells: Vec<&Row> = rows.iter().filter(|r| is_cell(r)).collect();
        let mut charts = vec![
            chart.render(),
            rows_chart(
                "Tables 1, 2: paper, tcplab, model",
                "Mbit/s",
                &crate::html::relabelled(&mbit, &[("64K buffers", "64K")]).iter().collect::<Vec<_>>(),
            ),
            rows_chart("§5: request/response round trip", "ms", &ms),
        ];
        charts.push(curves::receivers_chart(out));
        if !cells.is_empty() {
            charts.push(rows_chart("Table 2: sender × receiver peak", "Mbit/s", &cells));
        }
        charts
    }

    fn catalogue(&self) -> &'static [Entry] {
        CATALOGUE
    }

    fn judge(&self, figure: &str, out: &Outcome) -> Verdict {
        let g = |key: &str| mbps_sample(out, key);
        let cell = |s: &str, r: &str| g(&cell_key(s, r, &matrix_case(8192)));
        match figure {
            "Figure 2" => curves::figure2(CLIP),
            "Table 1" => status::value(g("loopback").as_ref(), 347.25, 0.1, " Mbit/s").because_above(MODERN),
            "Figure 3" => status::ordered(&[(
                "64K buffers",
                g("clip-b64K-l8K").as_ref(),
                "32K buffers",
                g("clip-b32K-l8K").as_ref(),
            )])
            .because_level(
                "Both buffer sizes fill the link today: over the path's sub-millisecond round trip \
                 32 KiB already covers what OC-3c carries, and the host keeps up.",
            ),
            "Figure 5" => status::ordered(&[(
                "fast sender",
                g("clip-b64K-l8K").as_ref(),
                "sender at 2 % of a CPU",
                g("slow-l8K").as_ref(),
            )])
            .because(QUOTA_WHY),
            "Figure 6" => {
                let r = out.get("clip-b64K-l64K");
                let limit = r.and_then(|r| r.reference.as_ref()).map(|re| re.limit_bps / 1e6);
                let share = r.zip(limit).and_then(|(r, l)| Sample::of(r, |run| Some(mbps(run)? / l * 100.0)));
                let share = share.map(Sample::steal_lowers);
                status::value(share.as_ref(), 88.5, 0.05, " %").because_above(MODERN)
            }
            "Table 2" => {
                let (a, b, c, d) = (
                    cell("PPro200", "Sun"),
                    cell("PPro200", "P100"),
                    cell("Sun", "PPro200"),
                    cell("Sun", "P100"),
                );
                status::ordered(&[
                    ("PPro200 → Sun", a.as_ref(), "PPro200 → P100", b.as_ref()),
                    ("Sun → PPro200", c.as_ref(), "Sun → P100", d.as_ref()),
                ])
            }
            "Figure 8" => curves::figure8(out),
            "Figure 9" => curves::figure9(out),
            "Figure 10" => {
                let t = |key: &str| tps_sample(out, key);
                status::ordered(&[
                    ("fast client 1/1", t("rr-1-1").as_ref(), "slow client 1/1", t("slow-rr-1-1").as_ref()),
                    (
                        "slow client 1/1",
                        t("slow-rr-1-1").as_ref(),
                        "128/8192",
                        t("slow-rr-128-8192").as_ref(),
                    ),
                ])
            }
            "Table 4, §5" => {
                let ms = out.get("rr-1-1").and_then(|r| Sample::of(r, |r| Some(1000.0 / trans_per_s(r)?)));
                let ms = ms.map(Sample::steal_raises);
                status::value(ms.as_ref(), 0.295, 0.2, " ms")
            }
            _ => Verdict::not_run("no judge for this figure"),
        }
    }

    fn matrix(&self, mode: Mode) -> Option<Matrix> {
        let conf = (mode == Mode::Full).then(|| netperf_iterations(99.0, 3.0, 10, 2));
        let secs = mode.pick(3, 60);
        let lens: Vec<u32> = mode.pick(vec![8192, 65536], vec![4096, 8192, 16384, 32768, 65536]);
        let cases = lens
            .iter()
            .map(|&l| Case::new(matrix_case(l), netperf_stream(l, 65536, secs)).repeated(conf.clone()))
            .collect();
        Some(Matrix {
            label: "Table 2, 64K buffers".into(),
            spec: CLIP.into(),
            hosts: HOSTS,
            cells: CELLS,
            cases,
        })
    }
}

impl TcpAtm {
    /// What the 64K peak rows add when the run has not measured every message size yet (an
    /// interrupted run): how many it has, and that the peak is a lower bound.
    fn peak_so_far(&self, out: &Outcome) -> String {
        let stages = self.stages(out.mode);
        let planned =
            stages.iter().flat_map(|s| &s.cases).filter(|c| c.key.starts_with("clip-b64K-")).count();
        let done = out.with_prefix("clip-b64K-").count();
        if done == 0 || done >= planned {
            return String::new();
        }
        format!(": {done} of {planned} message sizes run so far, a lower bound")
    }
}

/// A matrix cell's case for `len`-byte messages.
fn matrix_case(len: u32) -> String {
    format!("b64K-l{}", size_key(len))
}

/// One row per matrix cell that ran: its peak over message sizes, beside Table 2's cell
/// when the cell is the paper's (emulated hosts).
fn matrix_rows(out: &Outcome) -> Vec<Row> {
    cells_of(out)
        .into_iter()
        .map(|(s, r)| {
            let peak = [4096, 8192, 16384, 32768, 65536]
                .into_iter()
                .filter_map(|l| out.get(&cell_key(&s, &r, &matrix_case(l))))
                .filter_map(|res| Some((mbps(res)?, res)))
                .max_by(|a, b| a.0.total_cmp(&b.0));
            let cell = format!("{s} → {r}");
            let paper = find(FIGURES, "t2").and_then(|f| f.cite(&cell));
            let quota = |name: &str| HOSTS.iter().find(|h| h.name == name).and_then(|h| h.quota);
            let mut row = Row::new("Table 2", &format!("{cell}, peak"), "Mbit/s")
                .paper(paper)
                .goodput(peak.map(|p| p.1));
            let at_link = row.vs_model().is_some_and(|x| x >= 0.95);
            if quota(&s).is_some() && at_link && row.vs_paper().is_some_and(|x| x > 1.1) {
                row.why = format!("{} {QUOTA_WHY}", row.why);
            } else if let (Some(q), false) = (quota(&r), at_link) {
                row.why = format!("{} {}", row.why, receiver_why(q));
            }
            row
        })
        .collect()
}

#[cfg(test)]
mod curves_tests;
