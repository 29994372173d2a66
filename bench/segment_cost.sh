#!/usr/bin/env bash
# Per-segment stack time against segment size (`tcplab segment-cost`, seed 004 Figure 4) on
# this host: ROUNDS rounds alternating three placements of the two ends on loopback — not
# pinned, both on CPU 0 (`-A 0,0`), on different CPUs (`-A 0,1`) — and, with PATH_SPEC set,
# the same over an emulated path. Prints per placement and size the median over rounds of
# each method's median per segment (µs), send and receive, and the two methods' ratio.
# Numbers only from this machine, this run.
#
#   sudo ROUNDS=3 SECS=0.5 bash bench/segment_cost.sh
#   sudo ROUNDS=3 PATH_SPEC=taxi-140 bash bench/segment_cost.sh
#
# Needs root for the tracepoint method (without it, that method says why and is left out).
set -uo pipefail

ROUNDS=${ROUNDS:-3}
SECS=${SECS:-0.5}
SIZES=${SIZES:-64..64K:x4}
PATH_SPEC=${PATH_SPEC:-}
PORT=9471
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TCPLAB=${TCPLAB:-$ROOT/target/release/tcplab}
WORK=$(mktemp -d /tmp/tcplab-segcost-bench.XXXXXX)

log() { printf '[segment-cost bench %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
[ -x "$TCPLAB" ] || (cd "$ROOT" && cargo build --release -p tcplab) || exit 1
log "raw results in $WORK"

"$TCPLAB" server -p "$PORT" --bind 127.0.0.1 >"$WORK/server.log" 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null' EXIT
sleep 1

one() { # NAME ROUND ARGS...
    local name=$1 round=$2
    shift 2
    timeout 120 "$TCPLAB" segment-cost "$@" --sizes "$SIZES" -t "$SECS" -i 0 --json --no-store \
        >"$WORK/$name-$round.json" 2>"$WORK/$name-$round.err" || log "$name round $round failed"
}

for r in $(seq 1 "$ROUNDS"); do
    one unpinned "$r" 127.0.0.1 -p "$PORT"
    one same-cpu "$r" 127.0.0.1 -p "$PORT" -A 0,0
    one cross-cpu "$r" 127.0.0.1 -p "$PORT" -A 0,1
    [ -n "$PATH_SPEC" ] && one "path-$PATH_SPEC" "$r" --path "$PATH_SPEC"
    log "round $r done (load average $(cut -d' ' -f1-3 /proc/loadavg))"
done

python3 - "$WORK" <<'EOF'
import glob, json, os, statistics, sys
work = sys.argv[1]
runs = {}
for f in sorted(glob.glob(os.path.join(work, "*.json"))):
    name = os.path.basename(f).rsplit("-", 1)[0]
    try:
        t = json.load(open(f))["tests"][0]["summary"]["segment-cost"]
    except Exception:
        continue
    runs.setdefault(name, []).append(t)

def per_segment(row, way, method):
    d = row[method]["dist"]
    if not d:
        return None
    per = max(row["segments"], 1) if way == "send" else 1
    return d["median_ns"] / per / 1e3

def med(xs):
    xs = [x for x in xs if x is not None]
    return (statistics.median(xs), min(xs), max(xs)) if xs else None

def fmt(m):
    return "–" if m is None else f"{m[0]:.2f} ({m[1]:.2f}–{m[2]:.2f})"

print("| placement | size | send, timestamps µs | send, tracepoints µs | receive, timestamps µs | receive, tracepoints µs | runs |")
print("|---|---|---|---|---|---|---|")
for name, sides in runs.items():
    sizes = [r["size"] for r in sides[0]["send"]["rows"]]
    for size in sizes:
        cells = []
        for way in ("send", "receive"):
            for method in ("timestamping", "tracepoints"):
                vals = []
                for s in sides:
                    rows = [r for r in (s.get(way) or {}).get("rows", []) if r["size"] == size]
                    vals.append(per_segment(rows[0], way, method) if rows else None)
                cells.append(fmt(med(vals)))
        print(f"| {name} | {size} | " + " | ".join(cells) + f" | {len(sides)} |")
EOF
