#!/usr/bin/env bash
# Cost and capacity of `--trace` (issue 14): a loopback stream against a `tcplab server`,
# alternating runs without and with --trace, RUNS pairs of TIME seconds. Per run it prints
# the receiver's goodput; per traced run also the segments captured per second (AF_PACKET)
# and the tcp_probe events per second, with each source's lost-event count. Then medians and
# ranges. Numbers only from this machine, this run (say in BENCHMARKS.md if it was loaded).
#
#   sudo RUNS=5 TIME=5 bash bench/trace.sh
#
# Needs root (tracefs, AF_PACKET). Traffic stays on loopback.
set -uo pipefail

RUNS=${RUNS:-5}
TIME=${TIME:-5}
PORT=${PORT:-9471}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TCPLAB=${TCPLAB:-$ROOT/target/release/tcplab}
WORK=$(mktemp -d /tmp/tcplab-trace-bench.XXXXXX)

log() { printf '[trace bench %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
[ "$(id -u)" = 0 ] || { log "needs root"; exit 1; }
command -v jq >/dev/null || { log "jq missing"; exit 1; }
[ -x "$TCPLAB" ] || (cd "$ROOT" && cargo build --release -p tcplab) || exit 1
log "raw results in $WORK"

"$TCPLAB" server -p "$PORT" >"$WORK/server.log" 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null' EXIT
sleep 0.5

goodput() { jq -r '.tests[0].summary.directions[0].receiver_bps // .tests[0].summary.receiver_bps // empty' "$1"; }

run() { # $1 = label, rest = extra args
    local label=$1; shift
    local out="$WORK/$label.json"
    "$TCPLAB" stream 127.0.0.1 -p "$PORT" -t "$TIME" -i 0 --json --no-store "$@" >"$out" 2>"$WORK/$label.err"
    echo "$out"
}

printf '%-10s %14s %16s %10s %16s %10s\n' run goodput_bps capture_seg/s lost probe_ev/s lost
for i in $(seq 1 "$RUNS"); do
    plain=$(run "plain-$i")
    traced=$(run "traced-$i" --trace "$WORK/trace-$i")
    printf '%-10s %14s\n' "plain-$i" "$(goodput "$plain")"
    jq -r --arg t "$TIME" --arg l "traced-$i" '
      .tests[0] as $x | $x.segment_flow.sources as $s
      | ($s | map(select(.name|startswith("AF_PACKET"))) | .[0]) as $c
      | ($s | map(select(.name|startswith("tracefs"))) | .[0]) as $p
      | [$l, ($x.summary.directions[0].receiver_bps // $x.summary.receiver_bps),
         (($c.events // 0) / ($t|tonumber) | floor), ($c.lost // "-"),
         (($p.events // 0) / ($t|tonumber) | floor), ($p.lost // "-")] | @tsv' "$traced" |
        awk -F'\t' '{ printf "%-10s %14s %16s %10s %16s %10s\n", $1, $2, $3, $4, $5, $6 }'
    rm -rf "$WORK/trace-$i"
done
