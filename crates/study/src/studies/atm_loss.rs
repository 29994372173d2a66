//! Seed 002, Zehl and Kusch: protocol, OS and ATM-layer limits of UDP/IP and TCP/IP over
//! ATM. TCP and UDP throughput against packet size with 8 KB socket buffers and
//! TCP_NODELAY over 100 Mbit/s TAXI and 155 Mbit/s OC-3c; TCP losses from cell drops at the
//! switch; UDP receiver overrun from a fast sender to a slow receiver; the cost of the UDP
//! checksum and the gain of large receive buffers.

use results::TestResult;

use crate::compare::{mbps, Row};
use crate::html::{rows_chart, series, size_chart};
use crate::paper::{find, v, Figure, Unit};
use crate::plan::{stream, udp, Case, Mode, Stage};
use crate::studies::size_key;
use crate::{Info, Outcome, Pending, Study};

/// The study.
#[derive(Debug)]
pub struct AtmLoss;

const INFO: Info = Info {
    name: "atm-loss",
    seed: "002",
    paper: "Zehl, Kusch: limits of UDP/IP and TCP/IP over ATM",
    reruns: "TCP (8K buffers, TCP_NODELAY) and UDP vs packet size over TAXI 100 and OC-3c CLIP, \
             0.01 % switch cell loss, slow receiver by CPU quota, UDP checksum off, large receive buffers",
};

const FIGURES: &[Figure] = &[
    Figure {
        id: "tput",
        source: "§3.2 text (Figures 5 and 6)",
        caption: "Maximum throughput reached per adapter",
        printed_unit: "Mbit/s",
        unit: Unit::Mbps,
        values: &[
            v("TCP, HP J2802A (OC-3c), approximately", 44.0),
            v("TCP, Fore SBA200 (TAXI 100), approximately", 26.0),
            v("TCP, HP HIPPI, up to", 62.0),
            v("UDP, Fore SBA100, approx.", 25.0),
            v("UDP, Fore SBA200, up to", 60.0),
            v("UDP, HP J2802A, over", 70.0),
        ],
    },
    Figure {
        id: "loss",
        source: "§2–§4 text (Figures 2, 9, 10, 11, 14)",
        caption: "Overheads and losses",
        printed_unit: "%",
        unit: Unit::Percent,
        values: &[
            v("ATM cell header: loss of the physical bandwidth, at least (§2)", 9.43),
            v("TCP packet loss, single connection, up to (Figure 9)", 6.0),
            v("UDP loss from SPARC 10 to SPARC 2, up to (Figure 10)", 100.0),
            v("switch cell loss, average (§4.1)", 0.01),
            v("AAL5 CS-PDU loss through congestion, up to (Figure 11)", 0.1),
            v("cell loss in the SBA200 driver, up to (Figure 14)", 8.0),
        ],
    },
    Figure {
        id: "gain",
        source: "§4.2 text (Figures 12 and 13)",
        caption: "Software optimisations",
        printed_unit: "%",
        unit: Unit::Percent,
        values: &[
            v("gain from a larger socket receive buffer, up to (Figure 12)", 50.0),
            v("loss with UDP checksum on, large packets, up to (Figure 13)", 20.0),
        ],
    },
    Figure {
        id: "setup",
        source: "§1 and §3.1",
        caption: "Measurement set-up",
        printed_unit: "bytes",
        unit: Unit::Bytes,
        values: &[
            v("socket buffers, receive and send", 8192.0),
            v("smallest packet size", 64.0),
            v("largest packet size", 40000.0),
            v("IP MTU over AAL5 (RFC 1577/1626)", 9180.0),
        ],
    },
];

const CLIP: &str = "atm-oc3-clip";
const TAXI: &str = "taxi-100";

impl Study for AtmLoss {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn paper(&self) -> &'static [Figure] {
        FIGURES
    }

    fn stages(&self, mode: Mode) -> Vec<Stage> {
        let secs = mode.pick(2, 60);
        let lens: Vec<u32> =
            mode.pick(vec![1024, 8192, 32768], (0..10).map(|k| 64u32 << k).chain([40000]).collect());
        let udp_lens: Vec<u32> = mode.pick(vec![1024, 8192, 32768], lens.clone());
        let on = |key: &str, udp_lens: &[u32]| {
            let mut cases: Vec<Case> = lens
                .iter()
                .map(|&l| Case::new(format!("{key}-tcp-l{}", size_key(l)), small_tcp(l, secs)))
                .collect();
            cases.push(Case::new(format!("{key}-tcp-bulk"), stream(65536, None, secs + 1)));
            cases.extend(
                udp_lens
                    .iter()
                    .map(|&l| Case::new(format!("{key}-udp-l{}", size_key(l)), small_udp(l, secs))),
            );
            cases
        };
        let mut clip = on("clip", &udp_lens);
        let mut nocsum = small_udp(8192, secs);
        nocsum.no_checksum = true;
        clip.push(Case::new("clip-udp-nocsum-l8K", nocsum));
        let mut big = small_udp(8192, secs);
        big.remote_rcvbuf = Some(4 << 20);
        clip.push(Case::new("clip-udp-bigbuf-l8K", big));
        let cell = vec![Case::new("cell-tcp-bulk", stream(65536, None, secs + 1))];
        let slow = vec![
            Case::new("slow-udp-l8K", small_udp(8192, secs)),
            Case::new("slow-tcp-l8K", small_tcp(8192, secs)),
        ];
        vec![
            Stage::path("TAXI 100 (Fore SBA200)", TAXI, on("taxi", &[8192])),
            Stage::path("OC-3c CLIP (HP J2802A)", CLIP, clip),
            Stage {
                emulated_only: true,
                ..Stage::path(
                    "OC-3c CLIP, 0.01 % cell loss at the switch (Figures 9, 11)",
                    &format!("{CLIP},cellloss=0.01%"),
                    cell,
                )
            },
            Stage::slow(
                "OC-3c CLIP, slow receiver: server at 10 % of a CPU (Figure 10)",
                CLIP,
                "server=10%",
                slow,
            ),
        ]
    }

    fn compare(&self, out: &Outcome) -> Vec<Row> {
        let t = |id: &str, label: &str| find(FIGURES, id).and_then(|f| f.cite(label));
        let mut rows = vec![
            Row::new("ceiling", "TCP bulk, TAXI 100", "Mbit/s")
                .paper(t("tput", "TCP, Fore SBA200 (TAXI 100), approximately"))
                .goodput(out.get("taxi-tcp-bulk")),
            Row::new("ceiling", "TCP bulk, OC-3c CLIP", "Mbit/s")
                .paper(t("tput", "TCP, HP J2802A (OC-3c), approximately"))
                .goodput(out.get("clip-tcp-bulk")),
            Row::new("Figure 6", "UDP 8K, TAXI 100", "Mbit/s")
                .paper(t("tput", "UDP, Fore SBA200, up to"))
                .goodput(out.get("taxi-udp-l8K")),
            Row::new("Figure 6", "UDP 8K, OC-3c CLIP", "Mbit/s")
                .paper(t("tput", "UDP, HP J2802A, over"))
                .goodput(out.get("clip-udp-l8K")),
        ];
        for d in out.with_prefix("taxi-tcp-l").chain(out.with_prefix("clip-tcp-l")) {
            rows.push(
                Row::new("Figure 5", &format!("TCP 8K buffers, {}", d.case.key), "Mbit/s")
                    .goodput(Some(&d.result)),
            );
        }
        let cell = out.get("cell-tcp-bulk");
        rows.push(
            Row::new("Figure 9", "TCP retransmitted segments, 0.01 % cell loss", "%")
                .paper(t("loss", "TCP packet loss, single connection, up to (Figure 9)"))
                .measured(cell.and_then(retrans_pct), cell),
        );
        rows.push(Row::new("Figure 9", "TCP bulk, 0.01 % cell loss", "Mbit/s").goodput(cell));
        let slow = out.get("slow-udp-l8K");
        rows.push(
            Row::new("Figure 10", "UDP loss to a slow receiver", "%")
                .paper(t("loss", "UDP loss from SPARC 10 to SPARC 2, up to (Figure 10)"))
                .measured(slow.and_then(udp_loss), slow),
        );
        let csum = change(out.get("clip-udp-nocsum-l8K"), out.get("clip-udp-l8K"));
        rows.push(
            Row::new("Figure 13", "UDP 8K: throughput lost to the checksum", "%")
                .paper(t("gain", "loss with UDP checksum on, large packets, up to (Figure 13)"))
                .measured(csum, out.get("clip-udp-l8K")),
        );
        let gain = change(out.get("clip-udp-bigbuf-l8K"), out.get("clip-udp-l8K"));
        rows.push(
            Row::new("Figure 12", "UDP 8K: gain of a 4M receive buffer over 8K", "%")
                .paper(t("gain", "gain from a larger socket receive buffer, up to (Figure 12)"))
                .measured(gain, out.get("clip-udp-bigbuf-l8K")),
        );
        rows
    }

    fn charts(&self, out: &Outcome) -> Vec<String> {
        let curve = |name: &str, prefix: &str| {
            series(
                name,
                out.with_prefix(prefix)
                    .filter_map(|d| Some((f64::from(d.case.spec.send_len), mbps(&d.result)?))),
            )
        };
        let model = out
            .get("clip-tcp-bulk")
            .and_then(|r| r.reference.as_ref())
            .map(|r| (r.limit_bps / 1e6, "model: OC-3c CLIP".to_string()));
        let tcp = size_chart(
            "Figures 5 and 7 again: TCP with 8K buffers and TCP_NODELAY vs packet size",
            "packet size (bytes)",
            vec![
                curve("tcplab, OC-3c CLIP", "clip-tcp-l"),
                curve("tcplab, TAXI 100", "taxi-tcp-l"),
                series("paper: HP J2802A max (44)", [(1024.0, 44.0), (32768.0, 44.0)]),
                series("paper: SBA200 max (26)", [(1024.0, 26.0), (32768.0, 26.0)]),
            ],
            model,
        );
        let rows = self.compare(out);
        let tput: Vec<&Row> = rows.iter().filter(|r| r.unit == "Mbit/s" && r.paper.is_some()).collect();
        let pct: Vec<&Row> = rows.iter().filter(|r| r.unit == "%").collect();
        vec![
            tcp,
            rows_chart("Maxima: paper vs tcplab vs model", "Mbit/s", &tput),
            rows_chart("Losses and gains: paper vs tcplab", "%", &pct),
        ]
    }

    fn pending(&self) -> &'static [Pending] {
        &[]
    }
}

/// A TCP stream with the paper's 8 KB buffers and TCP_NODELAY.
fn small_tcp(len: u32, secs: u64) -> results::TestSpec {
    let mut s = stream(len, Some(8192), secs);
    s.nodelay = true;
    s
}

/// UDP as fast as possible with the paper's 8 KB buffers.
fn small_udp(len: u32, secs: u64) -> results::TestSpec {
    let mut s = udp(len, 0, secs);
    (s.sndbuf, s.remote_rcvbuf) = (Some(8192), Some(8192));
    s
}

/// Retransmitted segments in % of segments sent (full-size segments assumed).
fn retrans_pct(r: &TestResult) -> Option<f64> {
    let d = r.summary.directions.first()?;
    let mss = 9128.0;
    let segments = d.sender_bytes as f64 / mss;
    let retransmits = d.retransmits?;
    (segments > 0.0).then(|| retransmits as f64 / segments * 100.0)
}

/// UDP datagrams lost, %.
fn udp_loss(r: &TestResult) -> Option<f64> {
    (r.status != results::Status::Failed).then(|| r.summary.udp.first().map(|u| u.loss_pct)).flatten()
}

/// How much `a` is above `b`, in % of `b`.
fn change(a: Option<&TestResult>, b: Option<&TestResult>) -> Option<f64> {
    let (a, b) = (mbps(a?)?, mbps(b?)?);
    Some((a - b) / b * 100.0)
}
