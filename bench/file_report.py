#!/usr/bin/env python3
"""The `file` section of BENCHMARKS.md from the raw results of bench/file.sh.

usage: python3 bench/file_report.py WORKDIR > section.md

WORKDIR holds meta.json and r1/, r2/, ...; each run is NAME.json (the client's stdout) and
NAME.exec.json (bench/compare.py exec: wall time, client rusage, server /proc/PID/stat delta and
/proc/stat delta around the client run).
"""
import json
import os
import statistics
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def rng(xs, fmt):
    xs = [x for x in xs if x is not None]
    return f"{fmt(min(xs))}–{fmt(max(xs))}" if xs else "–"


def f2(x):
    return "–" if x is None else f"{x:.2f}"


def f3(x):
    return "–" if x is None else f"{x:.3f}"


def gbps(x):
    return "–" if x is None else f"{x / 1e9:.2f}"


# ------------------------------------------------------------------ per run --

def tcplab_run(doc, ex):
    """Figures of one tcplab run (stream or file): receiver and sender, in the JSON's own terms
    and from the outside (ex)."""
    if not doc or not doc.get("tests") or doc["tests"][0].get("status") != "completed":
        return None
    t = doc["tests"][0]
    reverse = t["spec"]["direction"] == "reverse"
    d = t["summary"]["directions"][0]
    rx, tx = (t["local"], t["remote"]) if reverse else (t["remote"], t["local"])
    rx_cost = t["summary"]["local_cost" if reverse else "remote_cost"]
    tx_cost = t["summary"]["remote_cost" if reverse else "local_cost"]
    gb = d["receiver_bytes"] / 1e9

    def proc_per_gb(side):
        c = side.get("cpu")
        return c["process"]["pct_of_core"] / 100 * c["window_s"] / gb if c and gb else None

    def system_per_gb(side):
        c = side.get("cpu")
        return c["util_pct"] / 100 * c["cpus"] * c["window_s"] / gb if c and gb else None

    r = {
        "bps": d["receiver_bps"],
        "gb": gb,
        "rx_proc": proc_per_gb(rx),
        "tx_proc": proc_per_gb(tx),
        "sys": system_per_gb(rx),
        "rx_sd": rx_cost["service_demand_us"] if rx_cost else None,
        "tx_sd": tx_cost["service_demand_us"] if tx_cost else None,
        "file": t["summary"].get("file"),
        "rx_measured_s": rx.get("measured_s"),
        "tx_measured_s": tx.get("measured_s"),
    }
    r.update(outside(ex, gb, reverse))
    return r


def iperf3_run(doc, ex):
    if not doc or "end" not in doc or doc.get("error"):
        return None
    e = doc["end"]
    rcv, snd = e["sum_received"], e["sum_sent"]
    cu = e["cpu_utilization_percent"]
    gb = rcv["bytes"] / 1e9
    # iperf3's figures are process-only, % of one core over the test; the client sends here.
    r = {
        "bps": rcv["bits_per_second"],
        "gb": gb,
        "rx_proc": cu["remote_total"] / 100 * rcv["seconds"] / gb if gb else None,
        "tx_proc": cu["host_total"] / 100 * snd["seconds"] / gb if gb else None,
        "sys": None,
        "rx_sd": None,
        "tx_sd": None,
        "file": None,
    }
    r.update(outside(ex, gb, False))
    return r


def outside(ex, gb, reverse):
    """The same figures for both tools, read by bench/compare.py around the client run."""
    if not ex or not gb:
        return {"os_rx": None, "os_host": None, "wall": None}
    srv, cli = ex.get("server_cpu_s"), ex.get("client_cpu_s")
    rx = cli if reverse else srv
    return {
        "os_rx": rx / gb if rx is not None else None,
        "os_host": ex["host_busy_s"] / gb,
        "wall": ex["wall_s"],
        "steal_frac": ex["host_steal_s"] / ex["host_total_s"] if ex.get("host_total_s") else None,
    }


def collect(work, rounds):
    runs = {}
    for r in range(1, rounds + 1):
        rd = os.path.join(work, f"r{r}")
        if not os.path.isdir(rd):
            continue
        for name in sorted(os.listdir(rd)):
            if not name.endswith(".exec.json"):
                continue
            case = name[: -len(".exec.json")]
            doc, ex = load(os.path.join(rd, case + ".json")), load(os.path.join(rd, name))
            fig = iperf3_run(doc, ex) if case.startswith("iperf3") else tcplab_run(doc, ex)
            runs.setdefault(case, []).append(fig)
    return runs


# ------------------------------------------------------------------ tables --

def col(rows, key):
    return [r[key] if r else None for r in rows]


def wins(a, b, higher=True):
    n = sum(1 for x, y in zip(a, b) if x is not None and y is not None and ((x > y) if higher else (x < y)))
    return f"{n}/{sum(1 for x, y in zip(a, b) if x is not None and y is not None)}"


def overlap(a, b):
    a, b = [x for x in a if x is not None], [x for x in b if x is not None]
    return bool(a and b) and min(a) <= max(b) and min(b) <= max(a)


def verdict(a, b, higher=True):
    ma, mb = med(a), med(b)
    if ma is None or mb is None:
        return "–"
    if overlap(a, b):
        return "parity within noise (ranges overlap)"
    return "better" if (ma > mb) == higher else "worse"


def ratio(a, b):
    ma, mb = med(a), med(b)
    return f"{ma / mb:.2f}×" if ma and mb else "–"


def goal_at_most(a, b):
    """Whether a's median is at most b's; a miss whose ranges overlap is said to be within noise."""
    ma, mb = med(a), med(b)
    if ma is None or mb is None:
        return "**no data**"
    if ma <= mb:
        return "**PASS**"
    return "**FAIL** on the medians (ranges overlap: parity within noise)" if overlap(a, b) else "**FAIL**"


def row(name, xs, fmt):
    return f"| {name} | {fmt(med(xs))} | {rng(xs, fmt)} | {sum(1 for x in xs if x is not None)} |"


def stream_part(runs, meta):
    copy, skip = runs.get("stream-copy", []), runs.get("stream-skip", [])
    out = [
        "### `stream --skip-rx-copy` against tcplab's copying receive",
        "",
        f"`tcplab stream -t {meta['duration']}` (client sends, server receives; 128 KiB writes and reads, "
        "default buffers) with and without `--skip-rx-copy` (MSG_TRUNC: the receiving kernel drops the "
        "data instead of copying it to the application). Goodput = `summary.directions[0].receiver_bps`; "
        "receiver CPU = the server process's CPU-s per GB (10^9 bytes) from `/proc/PID/stat` around the "
        "client run.",
        "",
        "| receive | goodput Gbit/s median | min–max | receiver process CPU-s/GB median | min–max | runs |",
        "|---|---|---|---|---|---|",
    ]
    for name, rs in (("copy (`read`)", copy), ("skip (`--skip-rx-copy`)", skip)):
        b, c = col(rs, "bps"), col(rs, "os_rx")
        out.append(f"| {name} | {gbps(med(b))} | {rng(b, gbps)} | {f3(med(c))} | {rng(c, f3)} | "
                   f"{sum(1 for x in b if x is not None)} |")
    b1, b2 = col(skip, "bps"), col(copy, "bps")
    out += [
        "",
        f"Throughput ratio skip / copy: **{ratio(b1, b2)}** (rounds won by skip: {wins(b1, b2)}; "
        f"{verdict(b1, b2)}). Goal ≥ 1.2× on loopback: **{'PASS' if med(b1) and med(b2) and med(b1) / med(b2) >= 1.2 else 'FAIL'}**.",
    ]
    if meta.get("iperf3_skip_rx_copy") == "yes":
        i = col(runs.get("iperf3-skip", []), "bps")
        out.append(f"iperf3 `--skip-rx-copy`: {gbps(med(i))} Gbit/s ({rng(i, gbps)}); tcplab / iperf3 = {ratio(b1, i)}.")
    else:
        out.append(f"iperf3 receive-side skip-copy: **not available** — `{meta['iperf3']}` has no "
                   "`--skip-rx-copy` in `iperf3 --help` (iperf3 added it in 3.19), so the goal falls back "
                   "to tcplab's own copying receive.")
    return out


def file_part(runs, meta):
    cases = (("tcplab `--send write`", "file-write"), ("tcplab `--send sendfile`", "file-sendfile"),
             ("tcplab `--send sendfile --no-verify` (no hash: like for like)", "file-sendfile-noverify"),
             ("iperf3 `-Z` (sendfile)", "iperf3-z"),
             ("tcplab `--send sendfile --recv skip-copy` (reference: no copy, no hash)", "file-sendfile-skip"))
    out = [
        f"### `file --send sendfile` against `--send write` and iperf3 `-Z`",
        "",
        f"{meta['size']} of data, client sends, server receives, 128 KiB per call. tcplab: `tcplab file "
        f"--size {meta['size']} --send MODE` (the receiver reads into a null sink, hashing every byte for "
        "the SHA-256 check; with `--no-verify` neither end hashes and only the byte count is checked); "
        "iperf3: `iperf3 -c -Z -n "
        f"{meta['size']}` against `iperf3 -s` (its receiver reads and discards, no hash). CPU-s per GB "
        "(10^9 bytes), lower is better:",
        "",
        "- **receiver, OS** — the server process's utime+stime from `/proc/PID/stat` before and after "
        "the client run ÷ GB; the same for both tools (so it includes connection setup and teardown).",
        "- **sender, process** — the sending process's own CPU over the test: tcplab "
        "`local.cpu.process.pct_of_core` × `window_s`; iperf3 `cpu_utilization_percent.host_total` × "
        "`sum_sent.seconds` (both process-only, in the test's window; tcplab's source preparation — "
        "writing and hashing the file before the start — is outside it).",
        "- **system, tcplab JSON** — the receiver's window: `util_pct` × `cpus` × `window_s` ÷ GB "
        "(all CPUs, so on loopback both ends).",
        "- **system, outside** — `/proc/stat` busy time around the whole client run ÷ GB, both tools; "
        "for tcplab this includes generating (and, unless `--no-verify`, hashing) the source file "
        "before the test.",
        "",
        "| case | goodput Gbit/s | receiver, OS | sender, process | system, tcplab JSON | system, outside | runs |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, key in cases:
        rs = runs.get(key, [])
        cells = []
        for k, fmt in (("bps", gbps), ("os_rx", f3), ("tx_proc", f3), ("sys", f3), ("os_host", f3)):
            xs = col(rs, k)
            cells.append("–" if med(xs) is None else f"{fmt(med(xs))} ({rng(xs, fmt)})")
        out.append(f"| {name} | " + " | ".join(cells) + f" | {sum(1 for r in rs if r)} |")
    w, s, z = runs.get("file-write", []), runs.get("file-sendfile", []), runs.get("iperf3-z", [])
    n = runs.get("file-sendfile-noverify", [])
    hash_s = [((r["file"] or {}).get("receiver") or {}).get("hash_s") if r else None for r in s]
    gb = [r["gb"] if r else None for r in s]
    hash_per_gb = [h / g if h is not None and g else None for h, g in zip(hash_s, gb)]
    tx_s, tx_w = col(s, "tx_proc"), col(w, "tx_proc")
    rx_s, rx_z, rx_n = col(s, "os_rx"), col(z, "os_rx"), col(n, "os_rx")
    out += [
        "",
        "Cells: median (min–max). Medians of service demand, tcplab only (µs of system-wide CPU per KB, "
        f"`summary.remote_cost` / `local_cost`): write {f3(med(col(w, 'rx_sd')))} / {f3(med(col(w, 'tx_sd')))}, "
        f"sendfile {f3(med(col(s, 'rx_sd')))} / {f3(med(col(s, 'tx_sd')))} (receiver / sender; on one host both "
        "count both ends).",
        "",
        f"- Sender CPU per GB, sendfile / write: **{ratio(tx_s, tx_w)}** ({verdict(tx_s, tx_w, False)}; rounds "
        f"sendfile used less: {wins(tx_s, tx_w, False)}). Goal below write: "
        f"**{'PASS' if med(tx_s) is not None and med(tx_w) is not None and med(tx_s) < med(tx_w) else 'FAIL'}**.",
        f"- Receiver CPU per GB like for like (neither verifies), tcplab sendfile `--no-verify` / iperf3 -Z: "
        f"**{ratio(rx_n, rx_z)}** ({verdict(rx_n, rx_z, False)}; rounds tcplab used less: "
        f"{wins(rx_n, rx_z, False)}). Goal ≤ iperf3: {goal_at_most(rx_n, rx_z)}.",
        f"- Receiver CPU per GB verified, tcplab sendfile / iperf3 -Z: **{ratio(rx_s, rx_z)}** "
        f"({verdict(rx_s, rx_z, False)}; rounds tcplab used less: {wins(rx_s, rx_z, False)}); verified / "
        f"`--no-verify`: {ratio(rx_s, rx_n)} ({verdict(rx_s, rx_n, False)}). "
        f"Of tcplab's receiver CPU, hashing took {f3(med(hash_per_gb))} s/GB (median of the receiver's "
        "`file.receiver.hash_s`, wall time in the hash calls) — work iperf3's receiver does not do; "
        "on these 2 cores it also caps tcplab's file goodput. The skip-copy row shows the receiver "
        "without copy or hash (not verified, not like-for-like with iperf3, which copies).",
    ]
    return out


def direct_part(runs, meta):
    out = [
        "### `file --sink direct`: do disk and network time add up to the wall time?",
        "",
        f"`tcplab file --size {meta['dsize']} --sink direct`, both ways: *put* (the client sends, the server "
        "writes with O_DIRECT into its TMPDIR) and *get* (`-R --dir DIR`: the server sends generated data, "
        f"the client writes). Both sink directories are `{meta['direct_dir']}`, on {meta['direct_fs']} "
        f"(`/tmp` is {meta['tmp_fs']}). From the receiver's `file` section: net = time in socket calls, "
        "disk = time in O_DIRECT writes, hash = SHA-256 time; wall = the receiver's measured time "
        "(`measured_s` of the receiving side). With -R the server generates and hashes its source after "
        "the start, so the receiver's net time includes waiting for it (tcplab says so in a note).",
        "",
        "| case | round | wall s | net s | disk s | hash s | net + disk + hash s | sum / wall | goodput Gbit/s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    shares = []
    for case, key in (("put", "file-direct-put"), ("get (-R)", "file-direct-get")):
        for i, r in enumerate(runs.get(key, []), 1):
            if not r:
                out.append(f"| {case} | {i} | failed | | | | | | |")
                continue
            rx = (r["file"] or {}).get("receiver") or {}
            net, disk, hsh = rx.get("net_s"), rx.get("disk_s"), rx.get("hash_s")
            wall = r["rx_measured_s"]
            total = (net or 0) + (disk or 0) + (hsh or 0)
            share = total / wall if wall else None
            shares.append(share)
            out.append(f"| {case} | {i} | {f3(wall)} | {f3(net)} | {f3(disk)} | {f3(hsh)} | {f3(total)} | "
                       f"{'–' if share is None else f'{share * 100:.1f}%'} | {gbps(r['bps'])} |")
    within = sum(1 for s in shares if s is not None and abs(s - 1) <= 0.05)
    out += ["", f"Within 5 % of the wall time: **{within} of {len(shares)} runs**"
            f"{' (all)' if shares and within == len(shares) else ''}."]
    return out


def main():
    work = sys.argv[1]
    meta = load(os.path.join(work, "meta.json"))
    runs = collect(work, meta["rounds"])
    steal = [r.get("steal_frac") for rs in runs.values() for r in rs if r]
    out = [
        "## Zero-copy and file transfer: tcplab modes vs each other and iperf3 (bench/file.sh)",
        "",
        f"Generated by `bench/file.sh` on {meta['date']}. How to reproduce: `bash bench/file.sh` "
        f"(env: `ROUNDS={meta['rounds']} DURATION={meta['duration']} SIZE={meta['size']} DSIZE={meta['dsize']}`).",
        "",
        f"- Machine: {meta['nproc']} × {meta['cpu_model']}, {meta['kernel']}; load average at start "
        f"{meta['loadavg']}. The machine is **shared** (other jobs may run), and with 2 cores client and "
        "server compete for the same CPUs; absolute figures drift, look at the ranges.",
        f"- Hypervisor steal around the client runs (/proc/stat): median {f2((med(steal) or 0) * 100)}% "
        f"(max {f2(max([s for s in steal if s is not None] or [0]) * 100)}%).",
        f"- tcplab: {meta['tcplab']} (release build, commit {meta['commit']}); iperf3: {meta['iperf3']}.",
        f"- {meta['rounds']} rounds on loopback (127.0.0.1). In each round every case runs once, "
        "back to back; the order inside a group is reversed every other round. Median and min–max "
        "over rounds; where the ranges overlap the difference is called parity within noise.",
        "",
    ]
    out += stream_part(runs, meta) + [""] + file_part(runs, meta) + [""] + direct_part(runs, meta)
    print("\n".join(out))


if __name__ == "__main__":
    main()
