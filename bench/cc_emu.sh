#!/usr/bin/env bash
# Emulator steadiness at seed 003's path (issue 15): 1 Gbit/s × 170 ms with a one-BDP queue
# (`transatlantic-bdp`). Alternates iperf3 cubic through `tcplab emu` and `tcplab stream -C
# cubic --path`, RUNS times each, and prints per run: the receiver's rate after slow start
# (iperf3: sum_received over -t after -O; tcplab: its summary after -O), the pump's release
# lateness p50/p99/max per direction, and how many "RT throttling" kernel messages appeared.
# Then medians and ranges per tool. During each run's measured part, bench/wakeup_floor.py
# measures for 5 s how late a SCHED_FIFO thread's 500 µs sleeps end on this host, under the
# same load: the floor under the pump's lateness. Numbers only from this machine, this run.
#
#   sudo RUNS=3 TIME=20 OMIT=10 bash bench/cc_emu.sh
#
# Needs root (namespaces, TUN) and iperf3. Traffic stays inside the emulator's namespaces.
set -uo pipefail

RUNS=${RUNS:-3}
TIME=${TIME:-20}
OMIT=${OMIT:-10}
PATH_SPEC=${PATH_SPEC:-transatlantic-bdp}
PORT=9461
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TCPLAB=${TCPLAB:-$ROOT/target/release/tcplab}
WORK=$(mktemp -d /tmp/tcplab-cc-bench.XXXXXX)

log() { printf '[cc bench %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
[ "$(id -u)" = 0 ] || { log "needs root"; exit 1; }
command -v iperf3 >/dev/null || { log "iperf3 missing (apt-get install iperf3)"; exit 1; }
[ -x "$TCPLAB" ] || (cd "$ROOT" && cargo build --release -p tcplab) || exit 1
log "raw results in $WORK"

throttled() { dmesg 2>/dev/null | grep -c "RT throttling" || true; }

run_iperf() { # N
    local out="$WORK/iperf-$1.json" stats="$WORK/iperf-$1.emu.json"
    timeout $((TIME + OMIT + 60)) "$TCPLAB" emu --path "$PATH_SPEC" --stats-json \
        --server-cmd "exec iperf3 -s -1 -p $PORT >/dev/null 2>&1" -- \
        sh -c "sleep 0.5; exec iperf3 -c \$TCPLAB_PEER -p $PORT -C cubic -t $TIME -O $OMIT -J" \
        >"$out" 2>"$stats.raw"
    grep '^{' "$stats.raw" | tail -1 >"$stats"
}

run_tcplab() { # N
    timeout $((TIME + OMIT + 60)) "$TCPLAB" stream --path "$PATH_SPEC" -C cubic -t $((TIME + OMIT)) -O "$OMIT" \
        -J --no-store >"$WORK/tcplab-$1.json" 2>"$WORK/tcplab-$1.err"
}

# Measures the host's wake-up floor during the measured part of run N of TOOL.
floor() { # TOOL N
    (sleep $((OMIT + 2)); python3 "$ROOT/bench/wakeup_floor.py" 5 >"$WORK/$1-$2.floor" 2>&1) &
}

for i in $(seq 1 "$RUNS"); do
    floor iperf "$i"
    before=$(throttled); run_iperf "$i"; echo "$(( $(throttled) - before ))" >"$WORK/iperf-$i.throttle"
    log "iperf3 run $i done"
    floor tcplab "$i"
    before=$(throttled); run_tcplab "$i"; echo "$(( $(throttled) - before ))" >"$WORK/tcplab-$i.throttle"
    log "tcplab run $i done (load average $(cut -d' ' -f1-3 /proc/loadavg))"
done
wait

python3 - "$WORK" "$RUNS" <<'PY'
import json, statistics, sys
work, runs = sys.argv[1], int(sys.argv[2])
def load(p):
    try: return json.load(open(p))
    except Exception: return None
def lat(emu):
    out = {}
    for d in (emu or {}).get("directions", []):
        out[d["direction"]] = (d.get("lateness_p50_us"), d.get("lateness_p99_us"), d.get("lateness_max_us"))
    return out
rows = {"iperf3": [], "tcplab": []}
for i in range(1, runs + 1):
    ip = load(f"{work}/iperf-{i}.json"); ie = load(f"{work}/iperf-{i}.emu.json")
    bps = ip["end"]["sum_received"]["bits_per_second"] if ip else float("nan")
    rows["iperf3"].append((bps, lat(ie), open(f"{work}/iperf-{i}.throttle").read().strip()))
    tl = load(f"{work}/tcplab-{i}.json")
    t = tl["tests"][0] if tl else None
    bps = t["summary"]["directions"][0]["receiver_bps"] if t else float("nan")
    rows["tcplab"].append((bps, lat(t.get("emu") if t else None), open(f"{work}/tcplab-{i}.throttle").read().strip()))
f = lambda v: "–" if v is None else f"{v:.0f}"
print("| tool | run | Mbit/s after slow start | up p50/p99/max µs | down (ACKs) p50/p99/max µs | RT throttling msgs |")
print("|---|---|---|---|---|---|")
for tool, rs in rows.items():
    for i, (bps, l, thr) in enumerate(rs, 1):
        up, dn = l.get("up", (None,) * 3), l.get("down", (None,) * 3)
        print(f"| {tool} | {i} | {bps/1e6:.1f} | {'/'.join(map(f, up))} | {'/'.join(map(f, dn))} | {thr} |")
print()
for tool, rs in rows.items():
    v = [r[0] / 1e6 for r in rs]
    p99 = [max(r[1].get(d, (0, 0, 0))[1] or 0 for d in ("up", "down")) for r in rs]
    ok = sum(1 for x in v if x >= 0.97 * 941)
    print(f"{tool}: median {statistics.median(v):.1f} Mbit/s (range {min(v):.1f}–{max(v):.1f}; {ok} of {len(v)} runs ≥ 0.97 × 941); worst-direction lateness p99 median {statistics.median(p99):.0f} µs (range {min(p99):.0f}–{max(p99):.0f})")
print()
import glob
for tool in ("iperf", "tcplab"):
    for i in range(1, runs + 1):
        try: print(f"host floor during {tool} run {i}: " + open(f"{work}/{tool}-{i}.floor").read().strip())
        except OSError: pass
PY
