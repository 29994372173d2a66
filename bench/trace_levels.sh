#!/usr/bin/env bash
# Traced against untraced rates per --trace-level (issue 30 item 7): for each place, rounds
# of one run untraced and one at each level (probes, wire, both), in that order, ROUNDS
# times (alternating, so a slow spell of this shared host falls on every level alike).
# Prints per place and level the median receiver goodput, its range, the median ratio to
# the untraced median, and the trace readers' CPU (ms per run, from the result's
# segment_flow.sources[].cpu_ns) and lost events.
#
#   sudo ROUNDS=5 TIME=3 PLACES="loopback 1g 10g" bash bench/trace_levels.sh
#
# Places: loopback (a tcplab server on 127.0.0.1, as fast as it goes), loopback-10g (the
# same with the sender paced to 10 Gbit/s, -b 10G: the issue's "up to 10 Gbit/s" on the
# real stack), 1g and 10g (emulated paths, --path rate=1gbit|10gbit,delay=1ms). Needs root.
# Traffic stays on this host.
set -uo pipefail

ROUNDS=${ROUNDS:-5}
TIME=${TIME:-3}
PLACES=${PLACES:-loopback 1g 10g}
PORT=${PORT:-9472}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TCPLAB=${TCPLAB:-$ROOT/target/release/tcplab}
WORK=$(mktemp -d /tmp/tcplab-trace-levels.XXXXXX)

log() { printf '[trace levels %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
[ "$(id -u)" = 0 ] || { log "needs root"; exit 1; }
command -v jq >/dev/null || { log "jq missing"; exit 1; }
[ -x "$TCPLAB" ] || { log "no $TCPLAB (cargo build --release -p tcplab)"; exit 1; }
log "$TCPLAB; raw results in $WORK"

"$TCPLAB" server -p "$PORT" --bind 127.0.0.1 >"$WORK/server.log" 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null' EXIT
sleep 0.5

target() { # $1 = place
    case $1 in
        loopback) echo "127.0.0.1 -p $PORT" ;;
        loopback-10g) echo "127.0.0.1 -p $PORT -b 10G" ;;
        1g) echo "--path rate=1gbit,delay=1ms" ;;
        10g) echo "--path rate=10gbit,delay=1ms" ;;
    esac
}

one() { # $1 = place, $2 = level (none, probes, wire, both), $3 = round
    local out="$WORK/$1-$2-$3.json" trace=()
    [ "$2" = none ] || trace=(--trace "$WORK/trace-$1-$2-$3" --trace-level "$2")
    # shellcheck disable=SC2046
    "$TCPLAB" stream $(target "$1") -t "$TIME" -i 0 --json --no-store "${trace[@]}" >"$out" 2>"$out.err"
    rm -rf "$WORK/trace-$1-$2-$3"
    jq -r --arg p "$1" --arg l "$2" '.tests[0] as $t |
        [$p, $l, ($t.summary.directions[0].receiver_bps // 0),
         ([$t.segment_flow.sources[]? | .cpu_ns // 0] | add // 0),
         ([$t.segment_flow.sources[]? | .lost] | add // 0)] | @tsv' "$out" >>"$WORK/rows.tsv"
}

for place in $PLACES; do
    for r in $(seq 1 "$ROUNDS"); do
        for level in none probes wire both; do
            one "$place" "$level" "$r"
        done
        log "$place round $r done"
    done
done

python3 - "$WORK/rows.tsv" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
by = {}
for p, l, bps, cpu, lost in rows:
    by.setdefault((p, l), []).append((float(bps), float(cpu), int(float(lost))))
places = list(dict.fromkeys(p for p, _ in by))
print("| place | level | runs | goodput median (range), Gbit/s | ratio of medians | ratio per round, min–max | reader CPU ms/run, median | lost |")
print("|---|---|---|---|---|---|---|---|")
for p in places:
    base = [b for b, _, _ in by.get((p, "none"), [])]
    m0 = statistics.median(base) if base else float("nan")
    for l in ["none", "probes", "wire", "both"]:
        v = by.get((p, l), [])
        if not v:
            continue
        g = [b for b, _, _ in v]
        med = statistics.median(g)
        ratio = "–" if l == "none" else f"{med / m0:.2f}×"
        per = "–" if l == "none" else f"{min(a / b for a, b in zip(g, base)):.2f}–{max(a / b for a, b in zip(g, base)):.2f}"
        cpu = "–" if l == "none" else f"{statistics.median(c for _, c, _ in v) / 1e6:.0f}"
        lost = "–" if l == "none" else str(sum(x for _, _, x in v))
        print(f"| {p} | {l} | {len(v)} | {med / 1e9:.2f} ({min(g) / 1e9:.2f}–{max(g) / 1e9:.2f}) | {ratio} | {per} | {cpu} | {lost} |")
PY
