//! Seed 001, Tolendino (Sandia SAND97-0642): Windows NT 4.0 ATM NIC performance. ttcp
//! (n=2000 × 8192-byte buffers, 32 KB socket buffer) and an FTP transfer of an 11 MB file,
//! transmit and receive, with CPU utilisation and the figure of merit M = Mbit/s ÷ CPU
//! fraction; ATM LANE against 100BASE-T and 10 Mbit/s Ethernet.

use results::{Buffer, End, TestResult};

use crate::compare::{mbps, mbps_sample, Row};
use crate::html::{rows_chart, series, size_chart};
use crate::paper::{find, v, Figure, Unit};
use crate::plan::{base, reverse, stream, times, Case, Mode, Stage};
use crate::status::{self, diagram, measured, not_reproducible, Entry, Verdict};
use crate::{Info, Outcome, Study};

/// The study.
#[derive(Debug)]
pub struct NicEval;

const INFO: Info = Info {
    name: "nic-eval",
    seed: "001",
    paper: "Tolendino, Sandia SAND97-0642: Windows NT 4.0 ATM NIC performance",
    reruns: "ttcp -n2000 -l8192 -b32768 and an 11 MB file transfer, transmit and receive, CPU and M, \
             over ATM LANE 1500, 100BASE-T and 10 Mbit/s Ethernet",
};

const FIGURES: &[Figure] = &[
    Figure {
        id: "f1",
        source: "Figure 1 (table, G6-150)",
        caption: "NIC performance, data throughput (perspective of the NT system)",
        printed_unit: "Mbps",
        unit: Unit::Mbps,
        values: &[
            v("Interphase ATM 5515 TTCP Receive", 20.65),
            v("Interphase ATM 5515 TTCP Transmit", 45.91),
            v("Interphase ATM 5515 FTP Receive", 15.5),
            v("Interphase ATM 5515 FTP Transmit", 30.1),
            v("Adaptec ATM ANA5240 TTCP Receive", 27.7),
            v("Adaptec ATM ANA5240 TTCP Transmit", 35.8),
            v("Adaptec ATM ANA5240 FTP Receive", 21.8),
            v("Adaptec ATM ANA5240 FTP Transmit", 28.4),
            v("3Com509 ISA Ethernet TTCP Receive", 7.9),
            v("3Com509 ISA Ethernet TTCP Transmit", 6.5),
            v("3Com509 ISA Ethernet FTP Receive", 7.8),
            v("3Com509 ISA Ethernet FTP Transmit", 8.0),
        ],
    },
    Figure {
        id: "f1cpu",
        source: "Figure 1 (table, G6-150)",
        caption: "NIC performance, CPU utilization",
        printed_unit: "%",
        unit: Unit::Percent,
        values: &[
            v("Interphase ATM 5515 TTCP Receive", 100.0),
            v("Interphase ATM 5515 TTCP Transmit", 79.0),
            v("Interphase ATM 5515 FTP Receive", 100.0),
            v("Interphase ATM 5515 FTP Transmit", 92.0),
            v("Adaptec ATM ANA5240 TTCP Receive", 89.0),
            v("Adaptec ATM ANA5240 TTCP Transmit", 66.0),
            v("Adaptec ATM ANA5240 FTP Receive", 98.0),
            v("Adaptec ATM ANA5240 FTP Transmit", 75.0),
            v("3Com509 ISA Ethernet TTCP Receive", 74.0),
            v("3Com509 ISA Ethernet TTCP Transmit", 47.0),
            v("3Com509 ISA Ethernet FTP Receive", 82.0),
            v("3Com509 ISA Ethernet FTP Transmit", 57.0),
        ],
    },
    Figure {
        id: "f3",
        source: "Figure 3 (table, G6-200)",
        caption: "ATM and 100 Base-T NIC performance, data throughput",
        printed_unit: "Mbps",
        unit: Unit::Mbps,
        values: &[
            v("Interphase ATM 5515 TTCP Receive", 47.9),
            v("Interphase ATM 5515 TTCP Transmit", 53.7),
            v("Interphase ATM 5515 FTP Receive", 30.6),
            v("Interphase ATM 5515 FTP Transmit", 41.3),
            v("3COM595 100 Base-T TTCP Receive", 44.4),
            v("3COM595 100 Base-T TTCP Transmit", 46.2),
            v("3COM595 100 Base-T FTP Receive", 26.2),
            v("3COM595 100 Base-T FTP Transmit", 38.4),
        ],
    },
    Figure {
        id: "f3cpu",
        source: "Figure 3 (table, G6-200)",
        caption: "ATM and 100 Base-T NIC performance, CPU utilization",
        printed_unit: "%",
        unit: Unit::Percent,
        values: &[
            v("Interphase ATM 5515 TTCP Receive", 92.0),
            v("Interphase ATM 5515 TTCP Transmit", 57.0),
            v("Interphase ATM 5515 FTP Receive", 100.0),
            v("Interphase ATM 5515 FTP Transmit", 61.0),
            v("3COM595 100 Base-T TTCP Receive", 75.0),
            v("3COM595 100 Base-T TTCP Transmit", 58.0),
            v("3COM595 100 Base-T FTP Receive", 100.0),
            v("3COM595 100 Base-T FTP Transmit", 56.0),
        ],
    },
    Figure {
        id: "m",
        source: "§Network Interface Card Figure of Merit",
        caption: "Worked examples of M = Mbps / CPU utilization as a fraction",
        printed_unit: "dimensionless",
        unit: Unit::Number,
        values: &[v("10 Mbps at 100 % CPU", 10.0), v("7.5 Mbps at 50 % CPU", 15.0)],
    },
    Figure {
        id: "concl",
        source: "Conclusions",
        caption: "ATM held by the 1,500-byte LANE packets; larger packets on the HPSS",
        printed_unit: "Mbps",
        unit: Unit::Mbps,
        values: &[v("ATM LANE, approximately", 40.0), v("packet size ~10,000 bytes, over", 100.0)],
    },
    Figure {
        id: "ttcp",
        source: "Appendix A",
        caption: "ttcp parameters (n = 2000 buffers)",
        printed_unit: "bytes",
        unit: Unit::Bytes,
        values: &[v("b: TCP socket buffer size", 32768.0), v("l: length of buffers read or written", 8192.0)],
    },
];

/// Every figure of the paper (its tables are Figures 1 and 3).
const CATALOGUE: &[Entry] = &[
    measured("Figure 1", "ATM NIC throughput above 10 Mbit/s Ethernet (ttcp, FTP, both ways)"),
    not_reproducible(
        "Figure 1 (Adaptec, G6-150 rows)",
        "the Adaptec ANA5240 and the G6-150 host",
        "specific adapters and host; one emulated LANE path stands for the Interphase card",
    ),
    not_reproducible(
        "Figure 2",
        "figure of merit M, ATM against Ethernet",
        "M needs the NT system's own CPU; here client, server and emulator share one host, so the cores \
         counted are not one end's",
    ),
    measured("Figure 3", "ATM LANE above 100BASE-T (ttcp, FTP, both ways)"),
    not_reproducible(
        "Figure 4",
        "figure of merit M, ATM against 100BASE-T",
        "as Figure 2: M counts the whole host here",
    ),
    diagram("Figure 5", "the ATM testbed"),
    measured("Figure 6", "the 1500-byte LANE packet limits ATM: ~10,000-byte packets go faster"),
    measured("Appendix C", "ttcp throughput against the TCP window over LANE: a rise, then LANE's limit"),
];

/// Why a measured M differs from the paper's.
const M_WHY: &str = "tcplab's M is Mbit/s ÷ CPU-cores busy on the whole client host, measured system-wide; on an \
                     emulated path the client, the server and the emulator's packet pumps share this machine, so \
                     the cores counted include the far end's and the link's work, where the paper's NT system \
                     counted its own side only. Compare M between paths here, not with the paper's absolute M.";

/// Each path: case-key prefix, preset, the NIC it stands for in the paper, and the figure.
const PATHS: [(&str, &str, &str, &str); 3] = [
    ("lane", "atm-oc3-lane", "Interphase ATM 5515", "f3"),
    ("fe", "ethernet-100", "3COM595 100 Base-T", "f3"),
    ("e10", "ethernet-10", "3Com509 ISA Ethernet", "f1"),
];
/// The four tests: key, the paper's column.
const TESTS: [(&str, &str); 4] = [
    ("ttcp-rx", "TTCP Receive"),
    ("ttcp-tx", "TTCP Transmit"),
    ("ftp-rx", "FTP Receive"),
    ("ftp-tx", "FTP Transmit"),
];

/// The adapters' names as the bar charts show them (the full names ran past the labels'
/// room and were all cut to the same first words).
const SHORT: [(&str, &str); 3] = [
    ("Interphase ATM 5515", "ATM 5515"),
    ("3COM595 100 Base-T", "100BASE-T"),
    ("3Com509 ISA Ethernet", "10 Mbit/s"),
];

impl Study for NicEval {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn paper(&self) -> &'static [Figure] {
        FIGURES
    }

    fn stages(&self, mode: Mode) -> Vec<Stage> {
        // Four runs as the paper's; three in --quick, for an interval on every status.
        let reps = Some(times(mode.pick(3, 4)));
        let mut stages: Vec<Stage> = PATHS
            .iter()
            .map(|&(key, preset, nic, _)| {
                // 10 Mbit/s takes 13 s per ttcp run: --quick moves an eighth of the data there.
                let scale = if key == "e10" && mode == Mode::Quick { 8 } else { 1 };
                let cases = cases(key, scale).into_iter().map(|c| c.repeated(reps.clone())).collect();
                Stage::path(&format!("{preset} ({nic})"), preset, cases)
            })
            .collect();
        let windows: Vec<u32> = mode.pick(vec![2048, 8192, 32768], WINDOWS.to_vec());
        let secs = mode.pick(2, 10);
        let sweep =
            windows.iter().map(|&w| Case::new(format!("win-{w}"), windowed(w, secs)).repeated(reps.clone()));
        stages.push(Stage::path(
            "atm-oc3-lane, ttcp against the TCP window (Appendix C)",
            "atm-oc3-lane",
            sweep.collect(),
        ));
        let big = Case::new("bigmtu-win-32768", windowed(32768, secs)).repeated(reps);
        stages.push(Stage::path(
            "ATM LANE with 9180-byte packets (Figure 6's ~10,000 bytes)",
            BIG_MTU,
            vec![big],
        ));
        stages
    }

    fn compare(&self, out: &Outcome) -> Vec<Row> {
        let mut rows = Vec::new();
        for (key, _, nic, fig) in PATHS {
            for (test, column) in TESTS {
                let label = format!("{nic} {column}");
                let r = out.get(&format!("{key}-{test}"));
                let cite = find(FIGURES, fig).and_then(|f| f.cite(&label));
                rows.push(
                    Row::new(&format!("{} Mbit/s", source(fig)), &label, "Mbit/s").paper(cite).goodput(r),
                );
                let m = paper_m(fig, &label);
                let mut row = Row::new(&format!("{} M", source(fig)), &label, "M")
                    .paper(m)
                    .measured(r.and_then(merit), r);
                if row.vs_paper().is_some_and(|x| (x - 1.0).abs() > 0.1) {
                    row.why = M_WHY.into();
                }
                rows.push(row);
            }
        }
        for d in out.with_prefix("win-").chain(out.with_prefix("bigmtu-")) {
            let mtu = if d.case.key.starts_with("bigmtu") { 9180 } else { 1500 };
            let what = format!(
                "ttcp transmit, window {}, LANE {mtu}-byte packets",
                d.case.spec.buffers(End::Client).send.unwrap_or(0)
            );
            rows.push(Row::new("Appendix C", &what, "Mbit/s").goodput(Some(&d.result)));
        }
        rows
    }

    fn charts(&self, out: &Outcome) -> Vec<String> {
        let rows = self.compare(out);
        let rows = crate::html::relabelled(&rows.iter().collect::<Vec<_>>(), &SHORT);
        let of = |unit: &str| {
            rows.iter().filter(|r| r.unit == unit && r.group != "Appendix C").collect::<Vec<&Row>>()
        };
        let window = out
            .with_prefix("win-")
            .filter_map(|d| Some((f64::from(d.case.spec.buffers(End::Client).send?), mbps(&d.result)?)));
        let model = out
            .get("win-32768")
            .and_then(|r| r.reference.as_ref())
            .map(|r| (r.limit_bps / 1e6, "model: LANE".into()));
        vec![
            rows_chart("Figures 1, 3: paper, tcplab, model", "Mbit/s", &of("Mbit/s")),
            rows_chart("M: paper (from Figures 1, 3), tcplab", "M", &of("M")),
            size_chart(
                "Appendix C: ttcp against the TCP window, LANE",
                "window (bytes)",
                vec![series("tcplab measured, LANE 1500", window)],
                model,
            ),
        ]
    }

    fn catalogue(&self) -> &'static [Entry] {
        CATALOGUE
    }

    fn judge(&self, figure: &str, out: &Outcome) -> Verdict {
        let (atm, other, name) = match figure {
            "Figure 1" => ("lane", "e10", "10 Mbit/s Ethernet"),
            "Figure 3" => ("lane", "fe", "100BASE-T"),
            "Figure 6" => return big_packets(out),
            "Appendix C" => return window_order(out),
            _ => return Verdict::not_run("no judge for this figure"),
        };
        let samples: Vec<_> = TESTS
            .iter()
            .map(|(t, col)| {
                (
                    format!("ATM LANE {col}"),
                    mbps_sample(out, &format!("{atm}-{t}")),
                    format!("{name} {col}"),
                    mbps_sample(out, &format!("{other}-{t}")),
                )
            })
            .collect();
        let pairs: Vec<_> =
            samples.iter().map(|(a, x, b, y)| (a.as_str(), x.as_ref(), b.as_str(), y.as_ref())).collect();
        status::ordered(&pairs)
    }
}

/// The four tests on one path; `scale` divides the amounts (10 Mbit/s in --quick).
/// Appendix C's windows (ttcp -b), full design: from just above one 1460-byte segment up. A
/// window below one segment stalls Linux on the delayed-ACK timer (seed 004's stall), which
/// would make a run of ttcp's 16 MB last minutes.
const WINDOWS: [u32; 7] = [1536, 2048, 4096, 8192, 16384, 32768, 65536];
/// LANE's framing with the ~10,000-byte packets the paper expected to lift the limit (9180,
/// the IP MTU over AAL5).
const BIG_MTU: &str = "rate=149.76mbit,atm=lane,mtu=9180";

/// ttcp transmit of 8192-byte writes for `secs` seconds (a time, not ttcp's 2000 writes, so
/// that a small window's slow run stays bounded), with a TCP window of `window` bytes: the
/// receiver announces at most that (TCP_WINDOW_CLAMP) and the sender buffers that much.
fn windowed(window: u32, secs: u64) -> results::TestSpec {
    let mut s = stream(8192, None, secs);
    s.set_buffer(End::Client, Buffer::Send, Some(window));
    s.options.insert("window-clamp".into(), results::ParamValue::Int(u64::from(window)));
    s
}

/// Appendix C: throughput against the window rises, then stops at LANE's limit: 8 KiB above
/// 2 KiB (just above the 1500-byte packet), and 32 KiB level with 8 KiB. The paper: "the 1,500
/// byte legacy Ethernet packet limit shows up dramatically ... as the TCP window size was
/// increased", where experience expected the throughput to go on rising; the packets, not the
/// window, are the limit (Figure 6 lifts it with bigger ones).
fn window_order(out: &Outcome) -> Verdict {
    let w = |n: u32| mbps_sample(out, &format!("win-{n}"));
    let (a, b, c) = (w(2048), w(8192), w(32768));
    status::shape(
        &[("window 8192", b.as_ref(), "2048", a.as_ref())],
        &[("window 32768", c.as_ref(), "8192", b.as_ref())],
    )
}

/// Figure 6: at a 32 KiB window, LANE with 9180-byte packets above LANE's 1500-byte ones.
fn big_packets(out: &Outcome) -> Verdict {
    let (big, lane) = (mbps_sample(out, "bigmtu-win-32768"), mbps_sample(out, "win-32768"));
    status::ordered(&[("9180-byte packets", big.as_ref(), "1500-byte", lane.as_ref())])
}

fn cases(key: &str, scale: u64) -> Vec<Case> {
    let mut ttcp = stream(8192, Some(32768), 120);
    ttcp.bytes_limit = Some(2000 * 8192 / scale);
    let mut ftp = base(results::TestKind::File, 120);
    ftp.bytes_limit = Some(11 * 1024 * 1024 / scale);
    vec![
        Case::new(format!("{key}-ttcp-rx"), reverse(ttcp.clone())),
        Case::new(format!("{key}-ttcp-tx"), ttcp),
        Case::new(format!("{key}-ftp-rx"), reverse(ftp.clone())),
        Case::new(format!("{key}-ftp-tx"), ftp),
    ]
}

fn source(fig: &str) -> &'static str {
    find(FIGURES, fig).map_or("", |f| f.source)
}

/// The paper's M for `label`: its throughput ÷ its CPU fraction (both printed in `fig`).
fn paper_m(fig: &str, label: &str) -> Option<(f64, String)> {
    let mbps = find(FIGURES, fig)?.get(label)?.value;
    let cpu = find(FIGURES, &format!("{fig}cpu"))?.get(label)?.value;
    (cpu > 0.0).then(|| {
        (mbps / (cpu / 100.0), format!("{} (M computed from the printed Mbps and CPU %)", source(fig)))
    })
}

/// M measured on the client (the paper's NT system): Mbit/s ÷ CPU-cores busy there.
fn merit(r: &TestResult) -> Option<f64> {
    mbps(r)?;
    r.summary.local_cost.as_ref().and_then(|c| c.figure_of_merit)
}
