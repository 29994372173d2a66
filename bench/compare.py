#!/usr/bin/env python3
"""Helper for bench/run.sh (python3 standard library only).

Subcommands
  exec   --out F [--stdout F] [--server-pid PID] -- CMD...
         run CMD, record wall time, the child's rusage (process CPU of CMD and
         its reaped children), host-wide /proc/stat deltas and, when given, the
         CPU time a long-running server process used meanwhile; exit with
         CMD's status.
  rss    PID        print "VmRSS_kB VmHWM_kB" of PID
  report --work DIR --out FILE
         parse the raw results in DIR, write the markdown report to FILE and
         print a short summary.
"""

import json
import os
import re
import statistics
import subprocess
import sys
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------- sampling --

def read_proc_stat():
    """Aggregate CPU line of /proc/stat in seconds: (busy, steal, total)."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    v = [int(x) for x in fields[1:]]
    v += [0] * (8 - len(v))
    user, nice, system, idle, iowait, irq, softirq, steal = v[:8]
    busy = user + nice + system + irq + softirq
    total = busy + idle + iowait + steal
    return busy / CLK_TCK, steal / CLK_TCK, total / CLK_TCK


def pid_cpu_s(pid):
    """utime + stime (all threads) of a process, seconds; None if gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
    except OSError:
        return None
    rest = data[data.rindex(")") + 2:].split()
    # fields after the command name start at field 3 (state)
    utime, stime = int(rest[11]), int(rest[12])
    return (utime + stime) / CLK_TCK


def pid_rss(pid):
    out = {"VmRSS": None, "VmHWM": None}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in out:
                    out[k] = int(v.split()[0])
    except OSError:
        pass
    return out


def cmd_exec(argv):
    out = stdout_path = None
    server_pid = None
    i = 0
    while i < len(argv) and argv[i] != "--":
        if argv[i] == "--out":
            out = argv[i + 1]
            i += 2
        elif argv[i] == "--stdout":
            stdout_path = argv[i + 1]
            i += 2
        elif argv[i] == "--server-pid":
            server_pid = int(argv[i + 1])
            i += 2
        else:
            sys.exit(f"compare.py exec: unknown option {argv[i]}")
    cmd = argv[i + 1:]
    if not out or not cmd:
        sys.exit("usage: compare.py exec --out F [--stdout F] [--server-pid PID] -- CMD...")
    sout = open(stdout_path, "wb") if stdout_path else subprocess.DEVNULL
    serr = open(stdout_path + ".err", "wb") if stdout_path else None
    srv0 = pid_cpu_s(server_pid) if server_pid else None
    h0 = read_proc_stat()
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=sout, stderr=serr)
    _, status, ru = os.wait4(proc.pid, 0)
    t1 = time.monotonic()
    h1 = read_proc_stat()
    srv1 = pid_cpu_s(server_pid) if server_pid else None
    if stdout_path:
        sout.close()
        serr.close()
    rc = os.waitstatus_to_exitcode(status)
    rec = {
        "cmd": cmd,
        "rc": rc,
        "wall_s": t1 - t0,
        "client_cpu_s": ru.ru_utime + ru.ru_stime,
        "host_busy_s": h1[0] - h0[0],
        "host_steal_s": h1[1] - h0[1],
        "host_total_s": h1[2] - h0[2],
        "server_cpu_s": (srv1 - srv0) if (srv0 is not None and srv1 is not None) else None,
    }
    with open(out, "w") as f:
        json.dump(rec, f, indent=1)
    sys.exit(rc if rc >= 0 else 128 - rc)


# ----------------------------------------------------------------- parsing --

def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def tcplab_stream(doc, execrec):
    t = doc["tests"][0]
    if t.get("status") != "completed":
        return None
    reverse = t["spec"]["direction"] == "reverse"
    d = t["summary"]["directions"][0]
    rx = t["local"] if reverse else t["remote"]
    cost = t["summary"]["local_cost"] if reverse else t["summary"]["remote_cost"]
    cpu = rx["cpu"]
    gb = d["receiver_bytes"] / 1e9
    proc_s = cpu["process"]["pct_of_core"] / 100.0 * cpu["window_s"]
    r = {
        "bps": d["receiver_bps"],
        "rx_pct_core": cpu["process"]["pct_of_core"],
        "rx_cpu_s_per_gb": proc_s / gb if gb else None,
        "sd_us_per_kb": cost["service_demand_us"],
        "retrans": d.get("retransmits"),
    }
    r.update(os_measures(execrec, reverse, gb))
    return r


def iperf3_stream(doc, execrec):
    if not doc or "end" not in doc or doc.get("error"):
        return None
    reverse = bool(doc["start"]["test_start"]["reverse"])
    rcv = doc["end"]["sum_received"]
    cu = doc["end"]["cpu_utilization_percent"]
    pct = cu["host_total"] if reverse else cu["remote_total"]
    gb = rcv["bytes"] / 1e9
    r = {
        "bps": rcv["bits_per_second"],
        "rx_pct_core": pct,
        "rx_cpu_s_per_gb": (pct / 100.0 * rcv["seconds"]) / gb if gb else None,
        "sd_us_per_kb": None,
        "retrans": doc["end"].get("sum_sent", {}).get("retransmits"),
    }
    r.update(os_measures(execrec, reverse, gb))
    return r


def os_measures(execrec, reverse, gb):
    """Tool-independent figures: receiving process CPU from the OS (client:
    wait4 rusage of the whole client run; server: /proc/PID/stat delta over the
    client run) and host-wide busy CPU (/proc/stat, steal and idle excluded)."""
    if not execrec or not gb:
        return {"os_rx_cpu_s_per_gb": None, "host_cpu_s_per_gb": None, "steal_frac": None,
                "foreign_frac": None}
    rx = execrec["client_cpu_s"] if reverse else execrec["server_cpu_s"]
    tot = execrec["host_total_s"] or 1
    return {
        "os_rx_cpu_s_per_gb": rx / gb if rx is not None else None,
        "host_cpu_s_per_gb": execrec["host_busy_s"] / gb,
        "steal_frac": execrec["host_steal_s"] / tot,
        "foreign_frac": foreign_frac(execrec),
    }


def foreign_frac(execrec):
    """Share of host CPU capacity busy during the client run but not used by the client or the
    server process: other load on the host (near 0 on a quiet host, since loopback softirq work
    is mostly charged to the two processes)."""
    if not execrec or execrec.get("server_cpu_s") is None or not execrec.get("host_total_s"):
        return None
    own = execrec["client_cpu_s"] + execrec["server_cpu_s"]
    return max(0.0, (execrec["host_busy_s"] - own) / execrec["host_total_s"])


def tcplab_rr(doc, execrec):
    t = doc["tests"][0]
    if t.get("status") != "completed":
        return None
    rr = t["summary"]["rr"]
    return {
        "tps": rr["trans_per_s"],
        "p50_us": rr["latency"]["p50_us"],
        "p99_us": rr["latency"]["p99_us"],
        "mean_us": rr["latency"]["mean_us"],
        "steal_frac": (execrec["host_steal_s"] / (execrec["host_total_s"] or 1)) if execrec else None,
        "foreign_frac": foreign_frac(execrec),
    }


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def sockperf_rr(text, execrec):
    """sockperf ping-pong run with --full-rtt: the printed figures are round
    trips (without --full-rtt sockperf prints half the round trip). One
    ping-pong message = one transaction; rate = ReceivedMessages / RunTime of
    the [Valid Duration] line (warm-up excluded)."""
    text = ANSI.sub("", text)
    m = re.search(r"\[Valid Duration\] RunTime=([\d.]+) sec; SentMessages=(\d+); ReceivedMessages=(\d+)", text)
    avg = re.search(r"avg-rtt=([\d.]+)", text)
    p50 = re.search(r"percentile 50\.000 =\s*([\d.]+)", text)
    p99 = re.search(r"percentile 99\.000 =\s*([\d.]+)", text)
    if not (m and avg and p50):
        return None
    runtime, received = float(m.group(1)), int(m.group(3))
    return {
        "tps": received / runtime if runtime else None,
        "tps_from_avg": 1e6 / float(avg.group(1)),
        "p50_us": float(p50.group(1)),
        "p99_us": float(p99.group(1)) if p99 else None,
        "mean_us": float(avg.group(1)),
        "steal_frac": (execrec["host_steal_s"] / (execrec["host_total_s"] or 1)) if execrec else None,
        "foreign_frac": foreign_frac(execrec),
    }


# ----------------------------------------------------------------- report ---

STREAM_TESTS = [
    ("s1f", "1 stream, forward (client sends)"),
    ("s2f", "2 streams (-P 2), forward"),
    ("s1r", "1 stream, reverse (-R, client receives)"),
    ("s2r", "2 streams (-P 2), reverse"),
]


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def rng(xs, fmt):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "n/a"
    return f"{fmt(min(xs))}–{fmt(max(xs))}"


def f_gbps(x):
    return f"{x / 1e9:.2f}"


def f2(x):
    return f"{x:.2f}"


def f3(x):
    return f"{x:.3f}"


def f0(x):
    return f"{x:,.0f}"


def f1(x):
    return f"{x:.1f}"


def wins(a, b, higher_better=True):
    """Rounds in which tcplab beat the peer run of the same round: "w/n"."""
    pairs = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
    w = sum(1 for x, y in pairs if (x > y if higher_better else x < y))
    return f"{w}/{len(pairs)}"


def ratio(a, b):
    return a / b if (a is not None and b) else None


def fmt_or(x, fmt):
    return fmt(x) if x is not None else "n/a"


def collect(work, rounds):
    data = {}
    failures = []
    for r in range(1, rounds + 1):
        rd = os.path.join(work, f"r{r}")
        for tid, _ in STREAM_TESTS:
            for tool, parser in (("tcplab", tcplab_stream), ("iperf3", iperf3_stream)):
                doc = load_json(os.path.join(rd, f"{tool}_{tid}.json"))
                ex = load_json(os.path.join(rd, f"{tool}_{tid}.exec.json"))
                res = None
                try:
                    res = parser(doc, ex) if doc else None
                except (KeyError, TypeError, IndexError, ZeroDivisionError) as e:
                    failures.append(f"round {r} {tool} {tid}: unparsable result ({e})")
                if res is None:
                    failures.append(f"round {r} {tool} {tid}: no result (exit {ex and ex.get('rc')})")
                data.setdefault((tid, tool), []).append(res)
        ex = load_json(os.path.join(rd, "tcplab_rr.exec.json"))
        doc = load_json(os.path.join(rd, "tcplab_rr.json"))
        res = None
        try:
            res = tcplab_rr(doc, ex) if doc else None
        except (KeyError, TypeError, IndexError) as e:
            failures.append(f"round {r} tcplab rr: unparsable result ({e})")
        if res is None:
            failures.append(f"round {r} tcplab rr: no result (exit {ex and ex.get('rc')})")
        data.setdefault(("rr", "tcplab"), []).append(res)
        ex = load_json(os.path.join(rd, "sockperf_rr.exec.json"))
        try:
            with open(os.path.join(rd, "sockperf_rr.txt"), errors="replace") as f:
                res = sockperf_rr(f.read(), ex)
        except OSError:
            res = None
        if res is None:
            failures.append(f"round {r} sockperf rr: no result (exit {ex and ex.get('rc')})")
        data.setdefault(("rr", "sockperf"), []).append(res)
    return data, failures


def col(rows, key):
    return [x[key] if x else None for x in rows]


def cmd_report(argv):
    work = out = None
    i = 0
    while i < len(argv):
        if argv[i] == "--work":
            work = argv[i + 1]
        elif argv[i] == "--out":
            out = argv[i + 1]
        i += 2
    meta = load_json(os.path.join(work, "meta.json")) or {}
    rounds = int(meta.get("rounds", 3))
    data, failures = collect(work, rounds)
    L = []
    add = L.append
    summary = []

    add("## TCP stream and request/response: tcplab vs iperf3 and sockperf (bench/run.sh)")
    add("")
    add(f"Generated by `bench/run.sh` on {meta.get('date', '?')}. "
        "How to reproduce: `bash bench/run.sh` (env: `ROUNDS=3 DURATION=5`).")
    add("")
    add("### Machine and tools")
    add("")
    add(f"- CPUs: {meta.get('nproc', '?')} × {meta.get('cpu_model', '?')}")
    add(f"- kernel: {meta.get('kernel', '?')}; load average at start: {meta.get('loadavg', '?')}")
    add(f"- tcplab: {meta.get('tcplab_version', '?')} (release build, commit {meta.get('commit', '?')})")
    add(f"- iperf3: {meta.get('iperf3_version', '?')}")
    add(f"- sockperf: {meta.get('sockperf_version', '?')}")
    add("")
    add("### Method")
    add("")
    add(f"- {rounds} alternating rounds, {meta.get('duration', '?')} s per test. In every round each "
        "test runs once per tool, back to back; odd rounds run tcplab first, even rounds the peer "
        "first. Reported: median over rounds, min–max, ratio = median(tcplab) / median(peer), "
        "and rounds won (rounds in which tcplab beat the peer's run of the same round). PASS/FAIL "
        "uses the ratio of medians only; with few rounds a ratio within a few percent of 1 is "
        "within run-to-run noise.")
    add("- Loopback only (127.0.0.1); client and server of both tools run on the **same host**, so "
        "they compete for its CPUs, and any system-wide CPU figure counts both ends.")
    add("- Servers (`tcplab server`, `iperf3 -s`, `sockperf server --tcp`) are started once by the "
        "script on fixed high ports and kept running across rounds; every command runs under "
        "`timeout`; servers are killed by PID at exit.")
    add("- Both tools use defaults otherwise: 128 KiB writes and reads, default socket buffers and "
        "congestion control. iperf3 3.12 is single-threaded (its `-P 2` streams share one thread); "
        "tcplab runs a thread per stream.")
    add("- Unpinned: the scheduler decides whether the two ends share a core, which makes RR results "
        "bimodal (same core: a few µs per round trip; different cores: vCPU wake-up, tens of µs). "
        "Look at min–max as well as the median.")
    st = [x.get("steal_frac") for rows in data.values() for x in rows if x and x.get("steal_frac") is not None]
    if st:
        add(f"- Hypervisor steal time during the runs (from /proc/stat): median {100 * med(st):.0f}% of "
            f"host CPU time (range {100 * min(st):.0f}–{100 * max(st):.0f}%). Absolute numbers on this "
            "VM drift with host load; ratios from alternating rounds hold better.")
    busy = []
    for (tid, tool), rows in sorted(data.items()):
        for rnd, x in enumerate(rows, 1):
            if x and x.get("foreign_frac") is not None:
                busy.append((x["foreign_frac"], f"round {rnd} {tool} {tid}"))
    if busy:
        vals = [b[0] for b in busy]
        hot = [f"{name} {100 * v:.0f}%" for v, name in sorted(busy, reverse=True) if v > 0.25]
        add(f"- Other load: host CPU busy during a client run but not used by that test's client or "
            f"server process, from /proc/stat and /proc/PID/stat: median {100 * med(vals):.0f}% of "
            f"host capacity (max {100 * max(vals):.0f}%). "
            + (f"Runs disturbed by more than 25%: {', '.join(hot)}." if hot
               else "No run was disturbed by more than 25%."))
    add("")

    # ---- stream
    add("### Goal 1 — bulk TCP: throughput ≥ 1.00× iperf3 with less receiver CPU per byte")
    add("")
    add("Receiver throughput, Gbit/s (iperf3: `end.sum_received.bits_per_second`; tcplab: "
        "`summary.directions[0].receiver_bps`).")
    add("")
    add("| test | tcplab median | tcplab min–max | iperf3 median | iperf3 min–max | ratio | rounds won | check |")
    add("|---|---|---|---|---|---|---|---|")
    stream_verdict = {}
    for tid, name in STREAM_TESTS:
        a, b = col(data[(tid, "tcplab")], "bps"), col(data[(tid, "iperf3")], "bps")
        ma, mb = med(a), med(b)
        q = ratio(ma, mb)
        ok = q is not None and q >= 1.0
        stream_verdict[(tid, "bps")] = ok
        add(f"| {name} | {fmt_or(ma, f_gbps)} | {rng(a, f_gbps)} | {fmt_or(mb, f_gbps)} | "
            f"{rng(b, f_gbps)} | {fmt_or(q, f3)}× | {wins(a, b)} | {'PASS' if ok else 'FAIL'} |")
    add("")
    add("Receiver CPU per byte: **process CPU-seconds per GB received (10^9 bytes) on the receiving "
        "process**, lower is better. iperf3's `cpu_utilization_percent` is *process-only* (its own "
        "user+system time as % of one core; `remote_total` = server when the server receives, "
        "`host_total` = client with `-R`), so it is compared with tcplab's process-only figure "
        "(`cpu.process.pct_of_core` × `cpu.window_s` of the receiving side), not with tcplab's "
        "system-wide service demand.")
    add("")
    add("| test | tcplab median | tcplab min–max | iperf3 median | iperf3 min–max | ratio | rounds won | check |")
    add("|---|---|---|---|---|---|---|---|")
    for tid, name in STREAM_TESTS:
        a, b = col(data[(tid, "tcplab")], "rx_cpu_s_per_gb"), col(data[(tid, "iperf3")], "rx_cpu_s_per_gb")
        ma, mb = med(a), med(b)
        q = ratio(ma, mb)
        ok = q is not None and q < 1.0
        stream_verdict[(tid, "cpu")] = ok
        add(f"| {name} | {fmt_or(ma, f3)} | {rng(a, f3)} | {fmt_or(mb, f3)} | {rng(b, f3)} | "
            f"{fmt_or(q, f3)}× | {wins(a, b, False)} | {'PASS' if ok else 'FAIL'} |")
    add("")
    add("Cross-checks measured by the script the same way for both tools (not used for PASS/FAIL): "
        "receiving process CPU-s/GB from the OS (server: `/proc/PID/stat` delta over the client run; "
        "client: `wait4` rusage of the whole client run, so setup and teardown are included), "
        "host-wide busy CPU-s/GB from `/proc/stat` over the client run (both ends, steal excluded), "
        "and tcplab's own system-wide service demand (µs/KB, receiver side; on one host it counts both "
        "ends, and its utilisation counts hypervisor steal as busy).")
    add("")
    add("| test | OS rx process CPU-s/GB tcplab / iperf3 | host CPU-s/GB tcplab / iperf3 | "
        "tcplab service demand µs/KB | receiver %core tcplab / iperf3 |")
    add("|---|---|---|---|---|")
    for tid, name in STREAM_TESTS:
        ta, ib = data[(tid, "tcplab")], data[(tid, "iperf3")]
        add(f"| {name} | {fmt_or(med(col(ta, 'os_rx_cpu_s_per_gb')), f3)} / "
            f"{fmt_or(med(col(ib, 'os_rx_cpu_s_per_gb')), f3)} | "
            f"{fmt_or(med(col(ta, 'host_cpu_s_per_gb')), f3)} / {fmt_or(med(col(ib, 'host_cpu_s_per_gb')), f3)} | "
            f"{fmt_or(med(col(ta, 'sd_us_per_kb')), f3)} | "
            f"{fmt_or(med(col(ta, 'rx_pct_core')), f1)} / {fmt_or(med(col(ib, 'rx_pct_core')), f1)} |")
    add("")
    g1 = all(stream_verdict[(t, k)] for t in ("s1f", "s1r") for k in ("bps", "cpu"))
    add(f"**Goal 1 (1 stream, forward and reverse: throughput ≥ 1.00× and less receiver process "
        f"CPU per byte): {'PASS' if g1 else 'FAIL'}.** The 2-stream rows are informational.")
    summary.append(f"goal 1 stream: {'PASS' if g1 else 'FAIL'}")
    add("")

    # ---- rr
    a_rows, b_rows = data[("rr", "tcplab")], data[("rr", "sockperf")]
    add("### Goal 2 — TCP request/response 1/1: trans/s ≥ 1.00× sockperf, p50 latency no worse")
    add("")
    add("tcplab: `tcplab rr -r 1,1` (1-byte request and response), `summary.rr.trans_per_s` and "
        "`summary.rr.latency.p50_us`. sockperf: `sockperf ping-pong --tcp --mps=max -m 14 --full-rtt` "
        "(14 bytes is the smallest message sockperf accepts). With `--full-rtt` sockperf prints "
        "round-trip times (without it, half the round trip); its p50 is the `percentile 50.000` "
        "line. sockperf trans/s = `ReceivedMessages / RunTime` of its `[Valid Duration]` line "
        "(one ping-pong = one transaction; its 400 ms warm-up is excluded); `1e6 / avg-rtt` is "
        "shown as a cross-check.")
    add("")
    add("| metric | tcplab median | tcplab min–max | sockperf median | sockperf min–max | ratio | rounds won | check |")
    add("|---|---|---|---|---|---|---|---|")
    ta, tb = col(a_rows, "tps"), col(b_rows, "tps")
    q_t = ratio(med(ta), med(tb))
    ok_t = q_t is not None and q_t >= 1.0
    add(f"| trans/s | {fmt_or(med(ta), f0)} | {rng(ta, f0)} | {fmt_or(med(tb), f0)} | {rng(tb, f0)} | "
        f"{fmt_or(q_t, f3)}× | {wins(ta, tb)} | {'PASS' if ok_t else 'FAIL'} |")
    pa, pb = col(a_rows, "p50_us"), col(b_rows, "p50_us")
    q_p = ratio(med(pa), med(pb))
    ok_p = q_p is not None and q_p <= 1.0
    add(f"| p50 RTT µs (lower is better) | {fmt_or(med(pa), f2)} | {rng(pa, f2)} | {fmt_or(med(pb), f2)} | "
        f"{rng(pb, f2)} | {fmt_or(q_p, f3)}× | {wins(pa, pb, False)} | {'PASS' if ok_p else 'FAIL'} |")
    for key, label in (("p99_us", "p99 RTT µs (info)"), ("mean_us", "mean RTT µs (info)")):
        xa, xb = col(a_rows, key), col(b_rows, key)
        add(f"| {label} | {fmt_or(med(xa), f2)} | {rng(xa, f2)} | {fmt_or(med(xb), f2)} | {rng(xb, f2)} | "
            f"{fmt_or(ratio(med(xa), med(xb)), f2)}× | {wins(xa, xb, False)} | |")
    xb = col(b_rows, "tps_from_avg")
    add(f"| sockperf 1e6/avg-rtt (info) | | | {fmt_or(med(xb), f0)} | {rng(xb, f0)} | | | |")
    add("")
    g2 = ok_t and ok_p
    add(f"**Goal 2: {'PASS' if g2 else 'FAIL'}.**")
    summary.append(f"goal 2 rr: {'PASS' if g2 else 'FAIL'}")
    add("")

    # ---- footprint
    idle = load_json(os.path.join(work, "idle_rss.json")) or {}
    add("### Goal 3 — idle `tcplab server` resident memory < 10 MB")
    add("")
    add("`VmRSS` from `/proc/PID/status` of a separate `tcplab server` (1 s after start, and 1 s after "
        f"it served one `tcplab stream -t {meta.get('duration', '?')}`). Peers' idle servers for context.")
    add("")
    add("| process | VmRSS | peak (VmHWM) |")
    add("|---|---|---|")

    def kb(x):
        return f"{x / 1024:.1f} MB ({x} kB)" if x is not None else "n/a"
    rows = [
        ("tcplab server, after start", idle.get("start")),
        ("tcplab server, after one test", idle.get("after_test")),
        (f"benchmark tcplab server, after all {rounds} rounds", idle.get("main_end")),
        ("iperf3 -s, after start", idle.get("iperf3_start")),
        ("sockperf server, after start", idle.get("sockperf_start")),
    ]
    for label, v in rows:
        v = v or {}
        add(f"| {label} | {kb(v.get('VmRSS'))} | {kb(v.get('VmHWM'))} |")
    rss_vals = [(idle.get(k) or {}).get("VmRSS") for k in ("start", "after_test")]
    g3 = all(v is not None and v < 10 * 1024 for v in rss_vals)
    add("")
    add(f"**Goal 3 (both idle readings < 10 MB = 10240 kB): {'PASS' if g3 else 'FAIL'}.**")
    summary.append(f"goal 3 idle rss: {'PASS' if g3 else 'FAIL'} ({rss_vals} kB)")
    add("")

    run = load_json(os.path.join(work, "run.exec.json"))
    rdoc = load_json(os.path.join(work, "run.json"))
    add("### Goal 4 — `tcplab run` (default suite, embedded loopback server) < 60 s")
    add("")
    wall = run["wall_s"] if run else None
    statuses = []
    if rdoc:
        statuses = [f"{t.get('label')}: {t.get('status')}" for t in rdoc.get("tests", [])]
    ok_run = bool(run) and run["rc"] == 0 and wall is not None and wall < 60
    add(f"- wall time: {fmt_or(wall, f1)} s (exit status {run['rc'] if run else 'n/a'})")
    if statuses:
        add(f"- tests: {'; '.join(statuses)}")
    add("")
    add(f"**Goal 4: {'PASS' if ok_run else 'FAIL'}.**")
    summary.append(f"goal 4 run wall: {'PASS' if ok_run else 'FAIL'} ({fmt_or(wall, f1)} s)")
    add("")

    add("### Problems seen during the run")
    add("")
    if failures:
        for x in failures:
            add(f"- {x}")
    else:
        add("- none (every test of every round produced a result)")
    add("")
    add(f"Raw outputs were kept in `{work}` (temporary; not part of the repository).")
    add("")
    from section import replace_section
    replace_section(out, "tcp", "\n".join(L))
    print("\n".join(summary))
    for x in failures:
        print("problem:", x)


def cmd_rss(argv):
    r = pid_rss(int(argv[0]))
    print(json.dumps(r))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sub, rest = sys.argv[1], sys.argv[2:]
    if sub == "exec":
        cmd_exec(rest)
    elif sub == "rss":
        cmd_rss(rest)
    elif sub == "report":
        cmd_report(rest)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
