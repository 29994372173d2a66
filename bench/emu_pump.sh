#!/usr/bin/env bash
# The emulator's pump at full speed (issue 15): TCP through `tcplab emu` with no rate and no
# delay (`rate=unlimited`), and through 2.5 Gbit/s × 170 ms with a one-BDP queue, iperf3 and
# `tcplab stream` alternating, ROUNDS rounds. Prints per run the receiver's rate (after -O)
# and the pump's release lateness p50/p99/max per direction, then median and range per tool
# and path. Numbers only from this machine, this run.
#
#   sudo ROUNDS=5 TIME=10 bash bench/emu_pump.sh
#   sudo PATHS=unshaped bash bench/emu_pump.sh      # only the unshaped path
#
# Needs root (namespaces, TUN) and iperf3. Traffic stays inside the emulator's namespaces.
set -uo pipefail

ROUNDS=${ROUNDS:-5}
TIME=${TIME:-10}
PATHS=${PATHS:-unshaped long}
PORT=9462
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TCPLAB=${TCPLAB:-$ROOT/target/release/tcplab}
WORK=$(mktemp -d /tmp/tcplab-pump-bench.XXXXXX)

log() { printf '[pump bench %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
[ "$(id -u)" = 0 ] || { log "needs root"; exit 1; }
command -v iperf3 >/dev/null || { log "iperf3 missing (apt-get install iperf3)"; exit 1; }
[ -x "$TCPLAB" ] || (cd "$ROOT" && cargo build --release -p tcplab) || exit 1
log "raw results in $WORK"

spec() { # NAME -> path spec
    case $1 in
        unshaped) echo "rate=unlimited" ;;
        long) echo "rate=2.5gbit,delay=85ms" ;;
    esac
}
omit() { case $1 in unshaped) echo 2 ;; long) echo 10 ;; esac; }

run_iperf() { # NAME N
    local out="$WORK/$1-iperf-$2.json" stats="$WORK/$1-iperf-$2.emu.json" o
    o=$(omit "$1")
    timeout $((TIME + o + 60)) "$TCPLAB" emu --path "$(spec "$1")" --stats-json \
        --server-cmd "exec iperf3 -s -1 -p $PORT >/dev/null 2>&1" -- \
        sh -c "sleep 0.5; exec iperf3 -c \$TCPLAB_PEER -p $PORT -C cubic -t $TIME -O $o -J" \
        >"$out" 2>"$stats.raw"
    grep '^{' "$stats.raw" | tail -1 >"$stats"
}

run_tcplab() { # NAME N
    local o
    o=$(omit "$1")
    timeout $((TIME + o + 60)) "$TCPLAB" stream --path "$(spec "$1")" -C cubic -t $((TIME + o)) -O "$o" \
        -J --no-store >"$WORK/$1-tcplab-$2.json" 2>"$WORK/$1-tcplab-$2.err"
}

for i in $(seq 1 "$ROUNDS"); do
    for p in $PATHS; do
        run_iperf "$p" "$i"; log "$p: iperf3 round $i done"
        run_tcplab "$p" "$i"; log "$p: tcplab round $i done (load average $(cut -d' ' -f1-3 /proc/loadavg))"
    done
done

python3 - "$WORK" "$ROUNDS" "$PATHS" <<'PY'
import json, statistics, sys
work, rounds, paths = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
# Goodput ceiling of the 2.5 Gbit/s path: the rate counts IP bytes, 1448 of 1500 are payload.
ceiling = {"long": 2.5e9 * 1448 / 1500}
def load(p):
    try: return json.load(open(p))
    except Exception: return None
def lat(emu):
    return {d["direction"]: (d.get("lateness_p50_us"), d.get("lateness_p99_us"), d.get("lateness_max_us"))
            for d in (emu or {}).get("directions", [])}
f = lambda v: "–" if v is None else f"{v:.0f}"
print("| path | tool | round | Gbit/s | up p50/p99/max µs | down p50/p99/max µs |")
print("|---|---|---|---|---|---|")
summary = []
for p in paths:
    for tool in ("iperf3", "tcplab"):
        vals = []
        for i in range(1, rounds + 1):
            if tool == "iperf3":
                r, e = load(f"{work}/{p}-iperf-{i}.json"), load(f"{work}/{p}-iperf-{i}.emu.json")
                bps = r["end"]["sum_received"]["bits_per_second"] if r and "end" in r else float("nan")
            else:
                r = load(f"{work}/{p}-tcplab-{i}.json")
                t = r["tests"][0] if r else None
                bps = t["summary"]["directions"][0]["receiver_bps"] if t else float("nan")
                e = t.get("emu") if t else None
            l = lat(e)
            up, dn = l.get("up", (None,) * 3), l.get("down", (None,) * 3)
            vals.append(bps / 1e9)
            print(f"| {p} | {tool} | {i} | {bps/1e9:.2f} | {'/'.join(map(f, up))} | {'/'.join(map(f, dn))} |")
        ok = [v for v in vals if v == v]
        if ok:
            line = f"{p} {tool}: median {statistics.median(ok):.2f} Gbit/s (range {min(ok):.2f}–{max(ok):.2f}, {len(ok)} runs)"
            if p in ceiling:
                line += f"; median {statistics.median(ok) * 1e9 / ceiling[p]:.3f} of the {ceiling[p]/1e9:.3f} Gbit/s ceiling"
            summary.append(line)
print()
print("\n".join(summary))
PY
