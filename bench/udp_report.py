#!/usr/bin/env python3
"""Summarise a bench/udp.sh work directory as the `udp` section of BENCHMARKS.md (stdout).

usage: python3 bench/udp_report.py WORKDIR
"""
import glob
import json
import os
import statistics
import sys

CASES = [("u64", 64), ("u1400", 1400), ("u8192", 8192), ("r100", 1400), ("r1", 64)]


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def tcplab(doc):
    """(received datagrams/s, received Mbit/s, sent Mbit/s, loss %, jitter µs) or None."""
    try:
        d = doc["tests"][0]["summary"]["udp"][0]
    except (KeyError, IndexError, TypeError):
        return None
    return d["receiver_pps"], d["receiver_bps"] / 1e6, d["sender_bps"] / 1e6, d["loss_pct"], d["jitter_ms"] * 1e3


def iperf3(doc, length):
    try:
        sent, rcvd = doc["end"]["sum_sent"], doc["end"]["sum_received"]
    except (KeyError, TypeError):
        return None
    secs = rcvd["seconds"] or 1.0
    return (rcvd["bytes"] / length / secs, rcvd["bytes"] * 8 / secs / 1e6, sent["bits_per_second"] / 1e6,
            rcvd["lost_percent"], rcvd["jitter_ms"] * 1e3)


def collect(work):
    out = {}
    for case, length in CASES:
        rows = {"tcplab": [], "iperf3": []}
        for rd in sorted(glob.glob(os.path.join(work, "r*"))):
            t = tcplab(load(os.path.join(rd, f"tcplab_{case}.json")))
            i = iperf3(load(os.path.join(rd, f"iperf3_{case}.json")), length)
            if t:
                rows["tcplab"].append(t)
            if i:
                rows["iperf3"].append(i)
        out[case] = rows
    return out


def med(rows, k):
    return statistics.median(r[k] for r in rows) if rows else float("nan")


def spread(rows, k, fmt):
    if not rows:
        return "-"
    return f"{fmt(min(r[k] for r in rows))}–{fmt(max(r[k] for r in rows))}"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    work = sys.argv[1]
    meta = load(os.path.join(work, "meta.json")) or {}
    data = collect(work)
    kpps = lambda x: f"{x / 1e3:,.0f} k"
    mbps = lambda x: f"{x:,.0f}"
    pct = lambda x: f"{x:.3f}"
    p = print
    p("## udp: tcplab udp vs iperf3 -u (loopback)")
    p()
    p(f"Written by `bench/udp.sh` on {meta.get('date', '?')}, commit {meta.get('commit', '?')}: "
      f"{meta.get('rounds', '?')} alternating rounds of {meta.get('duration', '?')} s per case, "
      f"{meta.get('nproc', '?')} CPUs, {meta.get('kernel', '?')}, {meta.get('iperf3', 'iperf3')}, "
      f"load average at start {meta.get('loadavg', '?')}. The machine is shared with other sessions "
      "(2 cores for 6), so absolute numbers are low and noisy; the ratios come from runs side by side. "
      "Medians with min–max over rounds. tcplab uses sendmmsg + UDP GSO and recvmmsg + UDP GRO "
      "(`--no-offload` turns them off); iperf3 sends and receives one datagram per call.")
    p()
    p("| case | metric | tcplab | iperf3 | ratio | goal | met |")
    p("|---|---|---|---|---|---|---|")
    goals = [("u64", "64 B, unlimited", 0, "received datagrams/s", kpps, 2.0),
             ("u1400", "1400 B, unlimited", 1, "received Mbit/s", mbps, 1.0),
             ("u8192", "8192 B, unlimited", 1, "received Mbit/s", mbps, 1.0)]
    for case, name, k, metric, fmt, goal in goals:
        t, i = data[case]["tcplab"], data[case]["iperf3"]
        mt, mi = med(t, k), med(i, k)
        ratio = mt / mi if mi and mi == mi and mi > 0 else float("nan")
        met = "yes" if ratio >= goal else "no"
        p(f"| {name} | {metric} | {fmt(mt)} ({spread(t, k, fmt)}) | {fmt(mi)} ({spread(i, k, fmt)}) | "
          f"{ratio:.2f}× | ≥ {goal:.1f}× | {met} |")
    t, i = data["r100"]["tcplab"], data["r100"]["iperf3"]
    ach_t, ach_i = med(t, 2), med(i, 2)
    ok = abs(ach_t - 100) <= 1 and (max((r[3] for r in t), default=1) == 0)
    p(f"| 1400 B, target 100 Mbit/s, -w 2M | achieved send rate, Mbit/s | {ach_t:.2f} ({spread(t, 2, lambda x: f'{x:.2f}')}) | "
      f"{ach_i:.2f} ({spread(i, 2, lambda x: f'{x:.2f}')}) | – | within 1 %, loss 0 | {'yes' if ok else 'no'} |")
    p(f"| 1400 B, target 100 Mbit/s, -w 2M | loss % (worst round) | {pct(max((r[3] for r in t), default=float('nan')))} | "
      f"{pct(max((r[3] for r in i), default=float('nan')))} | – | 0 | {'yes' if ok else 'no'} |")
    t, i = data["r1"]["tcplab"], data["r1"]["iperf3"]
    two = lambda x: f"{x:.3f}"
    p(f"| 64 B, target 1 Mbit/s | achieved send rate, Mbit/s | {med(t, 2):.3f} ({spread(t, 2, two)}) | "
      f"{med(i, 2):.3f} ({spread(i, 2, two)}) | – | within 1 % | {'yes' if abs(med(t, 2) - 1) <= 0.01 else 'no'} |")
    p(f"| 64 B, target 1 Mbit/s | RFC 3550 jitter, µs | {med(t, 4):.1f} ({spread(t, 4, lambda x: f'{x:.1f}')}) | "
      f"{med(i, 4):.1f} ({spread(i, 4, lambda x: f'{x:.1f}')}) | – | evenly spaced (512 µs apart) | – |")
    p()
    p("Unlimited cases also lose datagrams at the receiver on both tools (the receiver cannot keep up "
      "with a sender on the same two cores); tcplab reports that as a receiver overrun with the kernel's "
      "drop counter. Loss at unlimited rate, median: " + ", ".join(
          f"{case} tcplab {med(data[case]['tcplab'], 3):.1f} % / iperf3 {med(data[case]['iperf3'], 3):.1f} %"
          for case in ("u64", "u1400", "u8192")) + ".")


if __name__ == "__main__":
    main()
