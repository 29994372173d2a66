//! Seed 002, Zehl and Kusch: protocol, OS and ATM-layer limits of UDP/IP and TCP/IP over
//! ATM. TCP and UDP throughput against packet size with 8 KB socket buffers and
//! TCP_NODELAY over 100 Mbit/s TAXI and 155 Mbit/s OC-3c; TCP losses from cell drops at the
//! switch; UDP receiver overrun from a fast sender to a slow receiver; the cost of the UDP
//! checksum and the gain of large receive buffers.

use results::{Buffer, End, ParamValue, TestResult};

use crate::compare::{mbps, Row};
use crate::html::{rows_chart, series, size_chart};
use crate::paper::{find, v, Figure, Unit};
use crate::plan::{self, rr, stream, udp, Case, Mode, Stage};
use crate::status::{self, diagram, measured, not_reproducible, Entry, Sample, Verdict};
use crate::studies::size_key;
use crate::{Info, Outcome, Study};

mod curves;

/// The udp-stream option that makes the receiver work this many µs per datagram.
const RECV_DELAY: &str = "recv-delay-us";

/// The study.
#[derive(Debug)]
pub struct AtmLoss;

const INFO: Info = Info {
    name: "atm-loss",
    seed: "002",
    paper: "Zehl, Kusch: limits of UDP/IP and TCP/IP over ATM",
    reruns: "TCP (an 8 KB window, TCP_NODELAY; and the Linux way, stalled) and UDP vs packet size over TAXI 100 and OC-3c CLIP, \
             0.01 % switch cell loss; UDP paced just under the link into a fast and a slow receiver (2.6 ms of work per datagram), checksum on and off, 8K and 4M receive buffers",
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

/// UDP is paced at this share of the path's UDP goodput for the datagram size (the model's):
/// just under the link, so the emulated link's queue does not overflow and what is lost is
/// lost at the receiver.
const PACE_SHARE: f64 = 0.97;
/// The slow receiver's work per datagram, µs: a host that takes 25 Mbit/s of 8 KiB datagrams
/// (8192 · 8 / 25 Mbit/s), the UDP rate of the paper's slowest SPARC and adapter (§3.2).
const SLOW_US: u64 = 2621;
/// The large receive buffer of Figure 12 (4 MiB).
const BIG_RECEIVE_BUFFER: u32 = 4 << 20;
/// Cell loss at the switch (§4.1).
const CELL_LOSS: f64 = 1e-4;

/// Every figure and table of the paper.
const CATALOGUE: &[Entry] = &[
    diagram("Figure 1", "IP over AAL5 encapsulation, ATMARP"),
    measured("Figure 2", "AAL5 efficiency against packet size (model)"),
    measured("Figure 3", "IP, TCP/IP and UDP/IP efficiency over AAL5 against packet size"),
    diagram("Table 1", "the hardware employed"),
    diagram("Figure 4", "measurement set-up"),
    measured(
        "§3.1 window",
        "8 KB buffers, TCP_NODELAY, 9180-byte MTU: a window below one segment carries small writes",
    ),
    measured("Figure 5", "TCP with 8K buffers, OC-3c: the HP J2802A's ~44 Mbit/s"),
    measured("Figure 6", "UDP 8K datagrams, OC-3c: over 70 Mbit/s"),
    measured("Figure 7", "TCP rises with packet size (32K above 1K)"),
    measured("Figure 8", "IP delay over ATM against packet size: 0.5 to 4 ms round trip (§3.1: RTT)"),
    measured("Figure 9", "TCP retransmissions from 0.01 % cell loss = whole lost PDUs"),
    measured("Figure 10", "UDP receiver overrun: a slow receiver loses most datagrams to its full socket"),
    measured("Figure 11", "AAL5 CS-PDU loss at 0.01 % cell loss: up to 0.1 %"),
    measured("Figure 12", "gain of a large socket receive buffer, up to 50 %"),
    measured("Figure 13", "throughput lost to the UDP checksum, up to 20 %"),
    not_reproducible(
        "Figure 14",
        "cell loss in the SBA-200 driver",
        "the receiving adapter's on-card queue; the emulated path has no receiving adapter",
    ),
    not_reproducible(
        "Figure 15",
        "UDP and TCP against Fore's API",
        "Fore's native ATM API has no Linux counterpart",
    ),
    diagram("Figure 16", "double copy stack"),
    not_reproducible(
        "§3.4",
        "the 512-byte saw-tooth of UDP throughput",
        "SunOS's 112-byte mbufs and 1024-byte clusters; Linux allocates socket buffers differently",
    ),
];

/// Why a host of today reaches more than the paper's.
const MODERN: &str =
    "Today's end systems keep up with a 155 Mbit/s link; the paper's SPARCs and adapters did not.";

/// The cases the statuses are judged on (repeated in --quick too).
const JUDGED: &[&str] = &[
    "clip-tcp-l1K",
    LINUX_1K,
    "clip-tcp-l32K",
    "clip-udp-l8K",
    "clip-udp-bigbuf-l8K",
    "clip-udp-csum-l8K",
    "clip-udp-nocsum-l8K",
    "cell-tcp-bulk",
    "slow-udp-l8K",
    "slow-udp-bigbuf-l8K",
    curves::DELAY_JUDGED[0],
    curves::DELAY_JUDGED[1],
];

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
        // Figure 8: round trips of packet-size requests and responses; 10 s give thousands.
        let rr_lens: Vec<u32> = mode.pick(vec![64, 8192], vec![64, 256, 1024, 4096, 8192, 16384, 32768]);
        let rr_secs = mode.pick(2, 10);
        let on = |key: &str, spec: &str, udp_lens: &[u32]| {
            let mut cases: Vec<Case> = lens
                .iter()
                .map(|&l| Case::new(format!("{key}-tcp-l{}", size_key(l)), small_tcp(l, secs)))
                .collect();
            cases.push(Case::new(format!("{key}-tcp-bulk"), stream(65536, None, secs + 1)));
            cases.extend(
                rr_lens.iter().map(|&l| Case::new(format!("{key}-rr-l{}", size_key(l)), rr(l, l, rr_secs))),
            );
            cases.extend(
                udp_lens
                    .iter()
                    .map(|&l| Case::new(format!("{key}-udp-l{}", size_key(l)), paced_udp(spec, l, secs))),
            );
            cases
        };
        let mut clip = on("clip", CLIP, &udp_lens);
        clip.push(Case::new(LINUX_1K, linux_tcp(1024, secs)));
        clip.extend(udp_variants(secs));
        let cell = vec![Case::new("cell-tcp-bulk", stream(65536, None, secs + 1))];
        let mut slow = paced_udp(CLIP, 8192, secs);
        slow.options.insert(RECV_DELAY.into(), ParamValue::Int(SLOW_US));
        let mut slow_big = slow.clone();
        slow_big.set_buffer(End::Server, Buffer::Receive, Some(BIG_RECEIVE_BUFFER));
        let mut stages = vec![
            Stage::path("TAXI 100 (Fore SBA200)", TAXI, on("taxi", TAXI, &[8192])),
            Stage::path("OC-3c CLIP (HP J2802A)", CLIP, clip),
            Stage {
                emulated_only: true,
                ..Stage::path(
                    "OC-3c CLIP, 0.01 % cell loss at the switch (Figures 9, 11)",
                    &format!("{CLIP},cellloss=0.01%"),
                    cell,
                )
            },
            Stage::path(
                "OC-3c CLIP, slow receiver: 2.6 ms of work per datagram, 8K and 4M buffers (Figure 10)",
                CLIP,
                vec![Case::new("slow-udp-l8K", slow), Case::new("slow-udp-bigbuf-l8K", slow_big)],
            ),
        ];
        plan::repeat_judged(mode, &mut stages, JUDGED, 3);
        stages
    }

    fn catalogue(&self) -> &'static [Entry] {
        CATALOGUE
    }

    fn judge(&self, figure: &str, out: &Outcome) -> Verdict {
        let g =
            |key: &str| out.get(key).and_then(|r| Sample::of(r, udp_or_tcp_mbps)).map(Sample::steal_lowers);
        match figure {
            "Figure 2" => efficiency(),
            "Figure 3" => curves::efficiency_curve(out, CLIP),
            "Figure 8" => curves::delay(out),
            "Figure 5" => {
                status::value(g("clip-tcp-l32K").as_ref(), 44.0, 0.15, " Mbit/s").because_above(MODERN)
            }
            "Figure 6" => {
                status::value(g("clip-udp-l8K").as_ref(), 70.0, 0.15, " Mbit/s").because_above(MODERN)
            }
            "Figure 7" => status::ordered(&[(
                "32K writes",
                g("clip-tcp-l32K").as_ref(),
                "1K writes",
                g("clip-tcp-l1K").as_ref(),
            )])
            .because_level(
                "Both write sizes reach what the 8 KB window allows over the round trip: today's CPU \
                 writes 1K at a time faster than the window empties, where the paper's paid per write.",
            ),
            "§3.1 window" => linux_window(out),
            "Figure 9" => cell_loss(out),
            "Figure 11" => pdu_loss(out),
            "Figure 10" => overrun(out),
            "Figure 12" => {
                status::effect(g("clip-udp-l8K").as_ref(), g("clip-udp-bigbuf-l8K").as_ref(), 50.0, 25.0)
            }
            "Figure 13" => status::effect(
                g("clip-udp-nocsum-l8K").as_ref(),
                g("clip-udp-csum-l8K").as_ref(),
                -20.0,
                10.0,
            ),
            _ => Verdict::not_run("no judge for this figure"),
        }
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
                Row::new("Figure 5", &format!("TCP 8 KB window, {}", d.case.key), "Mbit/s")
                    .goodput(Some(&d.result)),
            );
        }
        rows.push(
            Row::new("§3.1 window", "TCP 8K buffers, 1K writes, Linux's way", "Mbit/s")
                .goodput(out.get(LINUX_1K)),
        );
        let cell = out.get("cell-tcp-bulk");
        rows.push(
            Row::new("Figure 9", "TCP retransmitted segments, 0.01 % cell loss", "%")
                .paper(t("loss", "TCP packet loss, single connection, up to (Figure 9)"))
                .measured(cell.and_then(retrans_pct), cell),
        );
        rows.push(Row::new("Figure 9", "TCP bulk, 0.01 % cell loss", "Mbit/s").goodput(cell));
        let pdu = pdus(out).filter(|p| p.1 > 0).map(|(k, n)| k as f64 * 100.0 / n as f64);
        rows.push(
            Row::new("Figure 11", "AAL5 CS-PDUs lost, 0.01 % cell loss", "%")
                .paper(t("loss", "AAL5 CS-PDU loss through congestion, up to (Figure 11)"))
                .measured(pdu, cell),
        );
        let (slow, fast) = (out.get("slow-udp-l8K"), out.get("clip-udp-l8K"));
        rows.push(
            Row::new("Figure 10", "UDP loss to a slow receiver", "%")
                .paper(t("loss", "UDP loss from SPARC 10 to SPARC 2, up to (Figure 10)"))
                .measured(slow.and_then(udp_loss), slow),
        );
        rows.push(
            Row::new("Figure 10", "of which the receiver's socket dropped", "%")
                .measured(slow.and_then(drops_pct), slow),
        );
        rows.push(
            Row::new("Figure 10", "UDP loss to a fast receiver", "%").measured(fast.and_then(udp_loss), fast),
        );
        let (slow, fast) = (out.get("slow-udp-bigbuf-l8K"), out.get("clip-udp-bigbuf-l8K"));
        rows.push(
            Row::new("Figure 10", "4M buffer: UDP loss to a slow receiver", "%")
                .measured(slow.and_then(udp_loss), slow),
        );
        rows.push(
            Row::new("Figure 10", "4M buffer: of which its socket dropped", "%")
                .measured(slow.and_then(drops_pct), slow),
        );
        rows.push(
            Row::new("Figure 10", "4M buffer: UDP loss to a fast receiver", "%")
                .measured(fast.and_then(udp_loss), fast),
        );
        let csum = change(out.get("clip-udp-nocsum-l8K"), out.get("clip-udp-csum-l8K")).map(|x| -x);
        rows.push(
            Row::new("Figure 13", "UDP 8K: throughput lost with the checksum on", "%")
                .paper(t("gain", "loss with UDP checksum on, large packets, up to (Figure 13)"))
                .measured(csum, out.get("clip-udp-csum-l8K")),
        );
        let gain = change(out.get("clip-udp-l8K"), out.get("clip-udp-bigbuf-l8K"));
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
            "TCP, 8 KB window, TCP_NODELAY vs packet size",
            "packet size (bytes)",
            vec![
                curve("tcplab, OC-3c", "clip-tcp-l"),
                curve("tcplab, TAXI 100", "taxi-tcp-l"),
                series("paper HP max (44)", [(1024.0, 44.0), (32768.0, 44.0)]),
                series("paper SBA200 max", [(1024.0, 26.0), (32768.0, 26.0)]),
            ],
            model,
        );
        let rows = self.compare(out);
        let tput: Vec<&Row> = rows.iter().filter(|r| r.unit == "Mbit/s" && r.paper.is_some()).collect();
        let pct: Vec<&Row> = rows.iter().filter(|r| r.unit == "%").collect();
        let pct = crate::html::relabelled(&pct, &SHORT);
        vec![
            tcp,
            curves::efficiency_chart(out, CLIP),
            curves::delay_chart(out),
            rows_chart("Maxima: paper, tcplab, model", "Mbit/s", &tput),
            rows_chart("Losses and gains: paper, tcplab", "%", &pct.iter().collect::<Vec<_>>()),
        ]
    }
}

/// The percentage rows' names as the bar chart shows them (it cuts a name after 30
/// characters).
const SHORT: [(&str, &str); 7] = [
    ("TCP retransmitted segments, 0.01 % cell loss", "Fig. 9: TCP retransmits"),
    ("AAL5 CS-PDUs lost, 0.01 % cell loss", "Fig. 11: AAL5 PDUs lost"),
    ("of which the receiver's socket dropped", "slow: socket dropped"),
    ("4M buffer: of which its socket dropped", "4M: slow, socket dropped"),
    ("4M buffer: UDP loss to a", "4M: UDP loss,"),
    ("UDP 8K: throughput lost with the checksum on", "Fig. 13: checksum's cost"),
    ("UDP 8K: gain of a 4M receive buffer over 8K", "Fig. 12: 4M buffer's gain"),
];

/// The paper's 8 KB TCP window (§3.1: receive and send buffers of 8 Kbytes; a BSD window is
/// its receive buffer).
const WINDOW: u32 = 8192;

/// A TCP stream with TCP_NODELAY and the paper's 8 KB window as the paper's stacks ran it:
/// the receiver announces exactly 8192 bytes (TCP_WINDOW_CLAMP: Linux would double a
/// requested buffer), the sender buffers 8 KB, and segments are at most the window. With a
/// window below one 9128-byte segment, SunOS and HP-UX sent what the window allowed; Linux
/// holds a full segment back until its persist timer ([`linux_tcp`], judged as "§3.1 window").
fn small_tcp(len: u32, secs: u64) -> results::TestSpec {
    let mut s = stream(len, None, secs);
    s.nodelay = true;
    s.set_buffer(End::Client, Buffer::Send, Some(WINDOW));
    s.options.insert("window-clamp".into(), ParamValue::Int(u64::from(WINDOW)));
    plan::segments_within(&mut s, WINDOW);
    s
}

/// The same stream the Linux way: 8 KB socket buffers asked for (Linux grants 16 KiB and
/// announces less than one segment) and full-size segments.
fn linux_tcp(len: u32, secs: u64) -> results::TestSpec {
    let mut s = stream(len, Some(WINDOW), secs);
    s.nodelay = true;
    s
}

/// The case that runs 1 KiB writes the Linux way.
const LINUX_1K: &str = "linux-clip-tcp-l1K";

/// Why Linux differs with the paper's buffers.
const LINUX_STALL: &str = "Linux differs from SunOS and HP-UX here: an 8 KB window is below one \
     9128-byte segment over the 9180-byte MTU, and Linux's sender does not send a segment the \
     window cannot hold whole; the writes queue into full segments that leave only when the \
     persist timer probes (every 200 ms or more). The paper's stacks sent a window's worth at \
     once, as the study's other TCP cases do (segments capped at the window).";

/// §3.1's set-up on Linux: 1 KiB writes with the segment capped at the window (the paper's
/// stacks) above the same writes with Linux's full segments means Linux stalls where the
/// paper's hosts did not.
fn linux_window(out: &Outcome) -> Verdict {
    let g = |key: &str| out.get(key).and_then(|r| Sample::of(r, udp_or_tcp_mbps)).map(Sample::steal_lowers);
    status::linux_way(
        ("1K writes, segments ≤ window", g("clip-tcp-l1K").as_ref()),
        g(LINUX_1K).as_ref(),
        LINUX_STALL,
    )
}

/// UDP with the paper's 8 KB buffers, paced at [`PACE_SHARE`] of the path's UDP goodput
/// for `len`-byte datagrams.
fn paced_udp(path: &str, len: u32, secs: u64) -> results::TestSpec {
    let rate = udp_ceiling_bps(path, len).map_or(0, |bps| (bps * PACE_SHARE) as u64);
    let mut s = udp(len, rate, secs);
    // A datagram must fit the send buffer (Linux refuses it with ENOBUFS otherwise).
    s.set_buffer(End::Client, Buffer::Send, Some(len.max(8192)));
    s.set_buffer(End::Server, Buffer::Receive, Some(8192));
    s
}

/// The model's UDP goodput of `path` (a preset) for `len`-byte datagrams, bit/s.
fn udp_ceiling_bps(path: &str, len: u32) -> Option<f64> {
    let link = emu::spec::parse(path).ok()?.model_link(emu::spec::Direction::Up)?;
    let g = model::goodput::message_goodput(&link, &model::Stack::udp(model::Ip::V4), u64::from(len)).ok()?;
    Some(g.goodput_bps)
}

/// Figures 12 and 13's cases on OC-3c: a 4M receive buffer, and the checksum on and off
/// (both without GSO/GRO, which needs the checksum: otherwise off would also mean unbatched).
fn udp_variants(secs: u64) -> Vec<Case> {
    let mut big = paced_udp(CLIP, 8192, secs);
    big.set_buffer(End::Server, Buffer::Receive, Some(BIG_RECEIVE_BUFFER));
    let mut on = paced_udp(CLIP, 8192, secs);
    on.no_offload = true;
    let mut off = on.clone();
    off.no_checksum = true;
    vec![
        Case::new("clip-udp-bigbuf-l8K", big),
        Case::new("clip-udp-csum-l8K", on),
        Case::new("clip-udp-nocsum-l8K", off),
    ]
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

/// The change from `a` to `b`, in % of `a`.
fn change(a: Option<&TestResult>, b: Option<&TestResult>) -> Option<f64> {
    let (a, b) = (udp_or_tcp_mbps(a?)?, udp_or_tcp_mbps(b?)?);
    Some((b - a) / a * 100.0)
}

/// Goodput in Mbit/s; `None` for a UDP test that sent nothing (every send refused).
fn udp_or_tcp_mbps(r: &TestResult) -> Option<f64> {
    if r.summary.udp.first().is_some_and(|u| u.sent == 0) {
        return None;
    }
    mbps(r)
}

/// Datagrams the receiver's socket dropped (its buffer full), in % of those sent.
fn drops_pct(r: &TestResult) -> Option<f64> {
    let u = r.summary.udp.first()?;
    (u.sent > 0).then(|| u.socket_drops.map(|d| d as f64 / u.sent as f64 * 100.0)).flatten()
}

/// Figure 2: the AAL5 efficiency of packets under 512 bytes and the least loss of any size,
/// from the cell arithmetic (§2: 50–90 %, at least 9.43 %).
fn efficiency() -> Verdict {
    let eff = |p: u64| p as f64 / model::atm::aal5_wire_bytes(p, 0) as f64 * 100.0;
    let small: Vec<f64> = (64..512).map(eff).collect();
    let (lo, hi) = small.iter().fold((f64::MAX, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
    let best = (64..=65_535).map(eff).fold(0.0f64, f64::max);
    let mut v = status::computed(Some(100.0 - best), 9.43, 0.01, " %");
    let inside = lo >= 50.0 && hi <= 90.0;
    v.evidence = format!(
        "model, AAL5 cells: least loss of any size: {}; packets of 64–511 bytes: {lo:.1}–{hi:.1} % efficient",
        v.evidence
    );
    if !inside {
        v.status = status::Status::Differs;
    }
    v
}

/// Figure 9: TCP's retransmitted segments against the share of 9180-byte PDUs that 0.01 %
/// cell loss destroys (a PDU dies with any of its cells).
fn cell_loss(out: &Outcome) -> Verdict {
    let cells = model::atm::aal5_cells(9180, 8) as f64;
    let pdu_loss = (1.0 - (1.0 - CELL_LOSS).powf(cells)) * 100.0;
    let retrans = out.get("cell-tcp-bulk").and_then(|r| Sample::of(r, retrans_pct));
    let mut v = status::value(retrans.as_ref(), pdu_loss, 0.35, " %");
    v.evidence =
        format!("retransmitted segments against the PDU loss of {cells:.0}-cell PDUs: {}", v.evidence);
    v
}

/// The emulator's count of the cell-loss stage's data direction: PDUs lost to lost cells and
/// PDUs offered, over the case's runs.
fn pdus(out: &Outcome) -> Option<(u64, u64)> {
    let emu = out.get("cell-tcp-bulk")?.emu.as_ref()?;
    let up = emu.directions.iter().find(|d| d.direction == "up")?;
    Some((up.drops_cell_loss.packets, up.offered.packets))
}

/// Figure 11: the share of AAL5 CS-PDUs lost when 0.01 % of cells are, counted by the
/// emulator, against the paper's 0.1 %; the evidence sets the share independent cell losses
/// give beside it.
fn pdu_loss(out: &Outcome) -> Verdict {
    let Some((lost, offered)) = pdus(out) else { return Verdict::not_run("the cell-loss stage did not run") };
    let cells = model::atm::aal5_cells(9180, 8) as f64;
    let independent = (1.0 - (1.0 - CELL_LOSS).powf(cells)) * 100.0;
    let v = status::proportion(lost, offered, 0.1, 0.5);
    let ev = format!(
        "PDUs lost to cell loss at the emulated switch: {}; independent losses of 0.01 % of cells \
         lose {} % of {cells:.0}-cell PDUs.",
        v.evidence,
        status::num(independent)
    );
    Verdict { evidence: ev, ..v }.because_above(
        "The emulator loses cells independently, so a 9180-byte PDU of 192 cells is lost about 192 \
         times as often as a cell; the paper's 0.1 % PDU loss beside a 0.01 % cell loss means its cells were \
         lost together (bursts at the congested switch), few PDUs losing several cells.",
    )
}

/// Figure 10: with a receive buffer large enough that a fast reader loses nothing (4 MiB),
/// the slow reader loses most datagrams, and its own socket drops what it loses (the
/// paper's overrun); the receiver's measured intake beside its capacity shows the slowness
/// binds. With the paper's 8 KiB buffer even the fast reader overruns here (rows).
fn overrun(out: &Outcome) -> Verdict {
    let (slow, fast) = (out.get("slow-udp-bigbuf-l8K"), out.get("clip-udp-bigbuf-l8K"));
    let loss = |r: Option<&TestResult>| r.and_then(|r| Sample::of(r, udp_loss));
    let drops = |r: Option<&TestResult>| r.and_then(|r| Sample::of(r, drops_pct));
    let v = status::ordered(&[
        ("4M buffers: slow reader's loss %", loss(slow).as_ref(), "fast reader's", loss(fast).as_ref()),
        ("slow reader's socket drops %", drops(slow).as_ref(), "fast reader's", drops(fast).as_ref()),
    ]);
    // Its work alone: datagrams read × the work per datagram, against the test's length.
    let work = |r: &TestResult| {
        let u = r.summary.udp.first()?;
        let secs = r.spec.duration_ms as f64 / 1000.0;
        (secs > 0.0).then(|| (u.received - u.duplicates) as f64 * SLOW_US as f64 / 1e6 / secs * 100.0)
    };
    let intake = slow.and_then(|r| Sample::of(r, work)).map_or(String::new(), |s| {
        format!(
            "; the slow reader's work ({SLOW_US} µs per datagram read) filled {} of the test's time \
             (over 100: it read on after the sender stopped)",
            s.show(" %")
        )
    });
    let v = Verdict { evidence: format!("{}{intake}", v.evidence), ..v };
    queue_or_receiver(v, slow)
}

/// Datagrams of `r` that the emulator's queue refused and that the receiver's socket dropped,
/// each in % of those sent, over every run (the emulator counts the whole case).
fn where_lost(r: &TestResult) -> Option<(f64, f64)> {
    let up = r.emu.as_ref()?.directions.iter().find(|d| d.direction == "up")?;
    let (mut sent, mut socket) = (0u64, 0u64);
    for run in curves::runs(r) {
        let u = run.summary.udp.first()?;
        (sent, socket) = (sent + u.sent, socket + u.socket_drops?);
    }
    let pct = |n: u64| n as f64 * 100.0 / sent as f64;
    (sent > 0).then(|| (pct(up.drops_queue_overflow.packets), pct(socket)))
}

/// Tells the paper's receiver overrun from a loss in the emulated link's queue (which the
/// paper's tools could not tell apart) by the emulator's own count: *differs* when the queue
/// refused as many of the slow reader's datagrams as its socket dropped.
fn queue_or_receiver(v: Verdict, slow: Option<&TestResult>) -> Verdict {
    let Some((queue, socket)) = slow.and_then(where_lost) else { return v };
    let ev = format!(
        "{}; of the slow reader's datagrams the emulator's queue refused {} %, its socket dropped {} %",
        v.evidence,
        status::num(queue),
        status::num(socket)
    );
    if queue > 0.0 && queue >= socket {
        let why = "The loss is the emulated link's queue, not the receiver: no receiver overrun.";
        return Verdict::new(status::Status::Differs, format!("{ev}. {why}"));
    }
    Verdict { evidence: ev, ..v }
}

#[cfg(test)]
mod tests;
