#!/usr/bin/env python3
"""Summarise a bench/udp.sh work directory as the `udp` section of BENCHMARKS.md (stdout).

usage: python3 bench/udp_report.py WORKDIR

Two tables, never mixed: one datagram per call (tcplab --no-offload, iperf3 -u) and with UDP
GSO/GRO (tcplab, iperf3 -u --gsro). Every row gives datagrams and, separately, the skbs loopback
counted (lo tx_packets around the client run, read by the script the same way for both tools).
"""
import glob
import json
import os
import statistics
import sys

UNLIMITED = [("u64", 64, "64 B, unlimited"), ("u1400", 1400, "1400 B, unlimited"), ("u8192", 8192, "8192 B, unlimited")]
# Row fields, by index.
RX_DPS, RX_MBPS, TX_MBPS, LOSS, JITTER_US, SKBS_PER_S, DGRAMS_PER_SKB = range(7)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def lo_skbs(path):
    """lo tx_packets over the client run, or None."""
    try:
        with open(path) as f:
            before, after = (int(x) for x in f.read().split())
        return after - before
    except (OSError, ValueError):
        return None


def with_skbs(row, sent, secs, skbs):
    if skbs is None or skbs <= 0 or secs <= 0:
        return row + (float("nan"), float("nan"))
    return row + (skbs / secs, sent / skbs)


def tcplab(doc, skbs):
    try:
        t = doc["tests"][0]
        d = t["summary"]["udp"][0]
        secs = t["local"]["measured_s"]
    except (KeyError, IndexError, TypeError):
        return None
    rx_dps = d.get("receiver_datagrams_per_s", d.get("receiver_pps"))
    row = (rx_dps, d["receiver_bps"] / 1e6, d["sender_bps"] / 1e6, d["loss_pct"], d["jitter_ms"] * 1e3)
    return with_skbs(row, d["sent"], secs, skbs)


def tcplab_own_batching(doc):
    """tcplab's own sender datagrams per skb (its sender_path), or None."""
    try:
        return doc["tests"][0]["summary"]["udp"][0]["sender_path"]["datagrams_per_skb"]
    except (KeyError, IndexError, TypeError):
        return None


def iperf3(doc, length, skbs):
    try:
        sent, rcvd = doc["end"]["sum_sent"], doc["end"]["sum_received"]
    except (KeyError, TypeError):
        return None
    secs = rcvd["seconds"] or 1.0
    row = (rcvd["bytes"] / length / secs, rcvd["bytes"] * 8 / secs / 1e6, sent["bits_per_second"] / 1e6,
           rcvd["lost_percent"], rcvd["jitter_ms"] * 1e3)
    return with_skbs(row, sent.get("packets", sent["bytes"] / length), sent["seconds"] or secs, skbs)


def collect(work, tool, case, length):
    rows, own = [], []
    for rd in sorted(glob.glob(os.path.join(work, "r*"))):
        path = os.path.join(rd, f"{tool}_{case}.json")
        doc, skbs = load(path), lo_skbs(path + ".lo")
        r = tcplab(doc, skbs) if tool.startswith("tcplab") else iperf3(doc, length, skbs)
        if r:
            rows.append(r)
        if tool.startswith("tcplab") and tcplab_own_batching(doc) is not None:
            own.append(tcplab_own_batching(doc))
    return rows, own


def med(rows, k):
    vals = [r[k] for r in rows if r[k] == r[k]]
    return statistics.median(vals) if vals else float("nan")


def cell(rows, k, fmt):
    vals = [r[k] for r in rows if r[k] == r[k]]
    if not vals:
        return "-"
    return f"{fmt(statistics.median(vals))} ({fmt(min(vals))}–{fmt(max(vals))})"


def verdict(t, i, k):
    """Ratio of medians; parity within noise when the min–max ranges overlap and the medians are
    within 10 %; unresolved when the ranges overlap but the medians are not."""
    tv, iv = [r[k] for r in t if r[k] == r[k]], [r[k] for r in i if r[k] == r[k]]
    if not tv or not iv:
        return "–", "–"
    mt, mi = statistics.median(tv), statistics.median(iv)
    ratio = f"{mt / mi:.2f}×" if mi > 0 else "–"
    if min(tv) <= max(iv) and min(iv) <= max(tv):
        close = mi > 0 and abs(mt / mi - 1) <= 0.10
        return ratio, "parity within noise" if close else "ranges overlap: unresolved"
    return ratio, "tcplab higher" if min(tv) > max(iv) else "iperf3 higher"


kpps = lambda x: f"{x / 1e3:,.0f} k"
mbps = lambda x: f"{x:,.0f}"
ratio1 = lambda x: f"{x:.1f}"


def unlimited_rows(work, a, b, b_name):
    p = print
    for case, length, name in UNLIMITED:
        t, _ = collect(work, a, case, length)
        i, _ = collect(work, b, case, length) if b else ([], [])
        for k, metric, fmt in [(RX_DPS, "received datagrams/s", kpps), (RX_MBPS, "received Mbit/s", mbps),
                               (SKBS_PER_S, "skbs/s on lo (all lo traffic)", kpps),
                               (DGRAMS_PER_SKB, "datagrams sent per lo skb", ratio1)]:
            # The batching factor is a property of the method, not a speed: no verdict.
            ratio, v = verdict(t, i, k) if b and k != DGRAMS_PER_SKB else ("–", "–")
            other = cell(i, k, fmt) if b else f"not run ({b_name})"
            p(f"| {name} | {metric} | {cell(t, k, fmt)} | {other} | {ratio} | {v} |")


def paced_rows(work):
    p = print
    t, _ = collect(work, "tcplab-plain", "r100", 1400)
    i, _ = collect(work, "iperf3", "r100", 1400)
    two, three = (lambda x: f"{x:.2f}"), (lambda x: f"{x:.3f}")
    worst = lambda rows: three(max((r[LOSS] for r in rows), default=float("nan")))
    p(f"| 1400 B, target 100 Mbit/s, -w 2M | achieved send rate, Mbit/s | {cell(t, TX_MBPS, two)} | "
      f"{cell(i, TX_MBPS, two)} | – | {'both within 1 %' if all(abs(med(x, TX_MBPS) - 100) <= 1 for x in (t, i)) else 'see values'} |")
    p(f"| 1400 B, target 100 Mbit/s, -w 2M | loss % (worst round) | {worst(t)} | {worst(i)} | – | – |")
    t, _ = collect(work, "tcplab-plain", "r1", 64)
    i, _ = collect(work, "iperf3", "r1", 64)
    p(f"| 64 B, target 1 Mbit/s | achieved send rate, Mbit/s | {cell(t, TX_MBPS, three)} | {cell(i, TX_MBPS, three)} | "
      f"– | {'both within 1 %' if all(abs(med(x, TX_MBPS) - 1) <= 0.01 for x in (t, i)) else 'see values'} |")
    ratio, v = verdict(t, i, JITTER_US)
    p(f"| 64 B, target 1 Mbit/s | RFC 3550 jitter, µs | {cell(t, JITTER_US, ratio1)} | {cell(i, JITTER_US, ratio1)} | "
      f"{ratio} | {v} |")


def losses(work, a, b):
    parts = []
    for case, length, _ in UNLIMITED:
        t, _ = collect(work, a, case, length)
        i, _ = collect(work, b, case, length) if b else ([], [])
        parts.append(f"{case} tcplab {med(t, LOSS):.1f} %" + (f" / iperf3 {med(i, LOSS):.1f} %" if b else ""))
    return ", ".join(parts)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    work = sys.argv[1]
    meta = load(os.path.join(work, "meta.json")) or {}
    gsro = meta.get("iperf3_gsro") or ""
    gsro_commit = meta.get("iperf3_gsro_commit") or ""
    p = print
    p("## udp: tcplab udp vs iperf3 -u (loopback), like with like")
    p()
    p(f"Written by `bench/udp.sh` on {meta.get('date', '?')}, commit {meta.get('commit', '?')}: "
      f"{meta.get('rounds', '?')} rounds of {meta.get('duration', '?')} s per case, the two tools of a pair "
      f"alternating which goes first, {meta.get('nproc', '?')} CPUs, {meta.get('kernel', '?')}, load average at "
      f"start {meta.get('loadavg', '?')}. The machine is shared with other build sessions, so absolute numbers "
      "are low and noisy; compare within a row. Medians with min–max over rounds. Verdict: *parity within "
      "noise* when the two ranges overlap and the medians are within 10 %; *unresolved* when the ranges "
      "overlap but the medians are further apart (more rounds, or a quieter machine, needed); otherwise "
      "which tool is higher (for jitter, lower is better).")
    p()
    p("A *datagram* is one UDP payload as the application sent or received it; an *skb* is a packet as "
      "the loopback interface counted it (`lo` tx_packets, read by the script before and after each client "
      "run, the same way for both tools). With UDP GSO one skb carries many datagrams (tcplab up to 64; "
      "the kernel here accepts 128) and loopback never splits it, so a GSO datagram rate is not a packet rate and is compared here only with another "
      "GSO datagram rate. The skb count covers the whole client run and everything else on `lo` in it "
      "(control connections, other sessions), divided by the test's seconds.")
    p()
    p(f"### One datagram per call: `tcplab udp --no-offload` vs `iperf3 -u` ({meta.get('iperf3', 'iperf3')})")
    p()
    p("| case | metric | tcplab --no-offload | iperf3 -u | ratio | verdict |")
    p("|---|---|---|---|---|---|")
    unlimited_rows(work, "tcplab-plain", "iperf3", "")
    paced_rows(work)
    p()
    p("Loss at unlimited rate, median (the receiver cannot keep up with a sender on the same two cores; "
      "tcplab names it a receiver overrun with the kernel's drop counter): "
      + losses(work, "tcplab-plain", "iperf3") + ".")
    p()
    if gsro:
        built = f", built here from esnet/iperf {gsro_commit}" if gsro_commit else ""
        p(f"### With UDP GSO/GRO: `tcplab udp` vs `iperf3 -u --gsro` ({gsro}{built})")
    else:
        p("### With UDP GSO/GRO: `tcplab udp` alone")
        p()
        p("No iperf3 with `--gsro` (3.21 or later; Debian has 3.12) was given (`IPERF3_GSRO`), so these are "
          "tcplab's own offload figures, to be compared with nothing in the table above.")
    p()
    p(f"| case | metric | tcplab (sendmmsg + GSO, recvmmsg + GRO) | iperf3 -u --gsro | ratio | verdict |")
    p("|---|---|---|---|---|---|")
    b = "iperf3-gsro" if gsro else None
    unlimited_rows(work, "tcplab", b, "no iperf3 with --gsro")
    p()
    own = [x for case, length, _ in UNLIMITED for x in collect(work, "tcplab", case, length)[1]]
    if own:
        p(f"tcplab's own count (`sender_path.datagrams_per_skb` in its JSON, its flows' window only) gave "
          f"{min(own):.1f}–{max(own):.1f} datagrams per skb with offload. tcplab puts at most 64 datagrams "
          "in one GSO send; where the kernel accepts more segments, a tool that sends longer trains shows "
          "more datagrams per skb for small datagrams. Loss at unlimited rate, median: "
          + losses(work, "tcplab", b) + ".")


if __name__ == "__main__":
    main()
