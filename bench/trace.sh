#!/usr/bin/env bash
# Cost and capacity of `--trace` (issue 14), three parts, each alternating a run without and
# a run with --trace, RUNS pairs of TIME seconds, against one `tcplab server` on loopback:
#
#   stream  loopback bulk stream: the receiver's goodput; per traced run the segments
#           captured per second (AF_PACKET) and tcp_probe events per second, each source's
#           lost count, and the CPU the tracer's own threads took (capture, trace; % of a
#           core, from /proc/PID/task/*/stat just before the run ends).
#   rr      rr 1/1 (two segments a transaction, no super-packets): transactions per second,
#           and the tracer's capacity — captured segments/s and probe events/s, lost counts.
#   path    a 1 Gbit/s emulated path (`--path rate=1gbit,delay=1ms`, PATH_RUNS pairs).
#
# Then the median and range of each column and the traced/plain ratio of the medians.
# Numbers only from this machine, this run (say in BENCHMARKS.md if it was loaded).
#
#   sudo RUNS=5 TIME=5 PATH_RUNS=3 PARTS="stream rr path" bash bench/trace.sh
#
# Needs root (tracefs, AF_PACKET, namespaces for --path). Traffic stays on this host.
set -uo pipefail

RUNS=${RUNS:-5}
TIME=${TIME:-5}
PATH_RUNS=${PATH_RUNS:-3}
PARTS=${PARTS:-stream rr path}
PORT=${PORT:-9471}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TCPLAB=${TCPLAB:-$ROOT/target/release/tcplab}
WORK=$(mktemp -d /tmp/tcplab-trace-bench.XXXXXX)

log() { printf '[trace bench %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
[ "$(id -u)" = 0 ] || { log "needs root"; exit 1; }
command -v jq >/dev/null || { log "jq missing"; exit 1; }
[ -x "$TCPLAB" ] || (cd "$ROOT" && cargo build --release -p tcplab) || exit 1
log "$TCPLAB; raw results in $WORK"

"$TCPLAB" server -p "$PORT" >"$WORK/server.log" 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null' EXIT
sleep 0.5

# CPU seconds (utime + stime) of the threads of $1 named $2, from /proc.
thread_cpu_s() {
    local pid=$1 name=$2 tick total=0
    tick=$(getconf CLK_TCK)
    for t in /proc/"$pid"/task/*; do
        [ "$(cat "$t/comm" 2>/dev/null)" = "$name" ] || continue
        # Fields after the ")" of comm: state is $1, utime $12, stime $13.
        total=$(( total + $(sed 's/.*) //' "$t/stat" | awk '{ print $12 + $13 }') ))
    done
    awk -v t="$total" -v k="$tick" 'BEGIN { printf "%.3f", t / k }'
}

# Runs `tcplab ARGS` into $WORK/LABEL.json; with TRACER=1 also samples the tracer threads'
# CPU just before the end into $WORK/LABEL.cpu ("capture% trace%").
run() { # $1 = label, rest = tcplab args
    local label=$1; shift
    "$TCPLAB" "$@" --json --no-store >"$WORK/$label.json" 2>"$WORK/$label.err" &
    local pid=$!
    if [ "${TRACER:-0}" = 1 ]; then
        sleep "$(awk -v t="$TIME" 'BEGIN { print t - 0.3 }')"
        printf '%s %s\n' "$(thread_cpu_s "$pid" capture)" "$(thread_cpu_s "$pid" trace)" >"$WORK/$label.cpu"
    fi
    wait "$pid" || log "$label failed: $(tail -1 "$WORK/$label.err")"
    echo "$WORK/$label.json"
}

# $1 = json, $2 = seconds: "events/s lost" of the AF_PACKET source, then of the probe
# source (perf_event rings, or tracefs text with TCPLAB_TRACE_TEXT=1).
sources() {
    jq -r --arg t "$2" '
      .tests[0].segment_flow.sources as $s
      | ($s | map(select(.name|startswith("AF_PACKET") or startswith("emulator"))) | .[0]) as $c
      | ($s | map(select(.name|startswith("tracefs") or startswith("perf_event"))) | .[0]) as $p
      | [(($c.events // 0) / ($t|tonumber) | floor), ($c.lost // "-"),
         (($p.events // 0) / ($t|tonumber) | floor), ($p.lost // "-")] | @tsv' "$1"
}

goodput() { jq -r '.tests[0].summary.directions[0].receiver_bps // empty' "$1"; }
trans() { jq -r '.tests[0].summary.rr.trans_per_s // empty' "$1"; }

# median and range of the numbers on stdin: "median (min–max)".
stats() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "-"; exit }
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.4g (%.4g–%.4g) n=%d\n", m, v[1], v[NR], NR }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print 0; exit }
    print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# $1 = part, $2 = pairs, $3 = metric function, rest = tcplab args.
part() {
    local name=$1 pairs=$2 metric=$3; shift 3
    log "$name: $pairs pairs of ${TIME}s: $*"
    printf '%-12s %14s %12s %8s %12s %8s %10s %10s\n' run metric capture/s lost probe/s lost cap_cpu% trc_cpu%
    : >"$WORK/$name.plain"; : >"$WORK/$name.traced"
    for i in $(seq 1 "$pairs"); do
        local plain traced
        plain=$(run "$name-plain-$i" "$@")
        traced=$(TRACER=1 run "$name-traced-$i" "$@" --trace "$WORK/trace-$name-$i")
        "$metric" "$plain" | tee -a "$WORK/$name.plain" | awk -v l="$name-plain-$i" '{ printf "%-12s %14s\n", l, $1 }'
        local m cpu
        m=$("$metric" "$traced"); echo "$m" >>"$WORK/$name.traced"
        cpu=$(awk -v t="$TIME" '{ printf "%.1f\t%.1f", 100 * $1 / (t - 0.3), 100 * $2 / (t - 0.3) }' "$WORK/$name-traced-$i.cpu" 2>/dev/null)
        printf '%s\t%s\t%s\n' "$m" "$(sources "$traced" "$TIME")" "${cpu:-	}" | tee -a "$WORK/$name.sources" |
            awk -F'\t' -v l="$name-traced-$i" '{ printf "%-12s %14s %12s %8s %12s %8s %10s %10s\n", l, $1, $2, $3, $4, $5, $6, $7 }'
        rm -rf "$WORK/trace-$name-$i"
    done
    local p t
    p=$(median <"$WORK/$name.plain"); t=$(median <"$WORK/$name.traced")
    echo "$name without --trace: $(stats <"$WORK/$name.plain")"
    echo "$name with --trace:    $(stats <"$WORK/$name.traced")"
    awk -v p="$p" -v t="$t" -v n="$name" 'BEGIN { if (p > 0) printf "%s ratio of medians: %.3f\n", n, t / p }'
    echo "$name captured segments/s: $(cut -f2 "$WORK/$name.sources" | stats), lost: $(cut -f3 "$WORK/$name.sources" | paste -sd+ | bc)"
    echo "$name probe events/s:      $(cut -f4 "$WORK/$name.sources" | stats), lost: $(cut -f5 "$WORK/$name.sources" | paste -sd+ | bc)"
}

for p in $PARTS; do
    case $p in
        stream) part stream "$RUNS" goodput stream 127.0.0.1 -p "$PORT" -t "$TIME" -i 0 ;;
        rr) part rr "$RUNS" trans rr 127.0.0.1 -p "$PORT" -t "$TIME" -i 0 ;;
        path) part path "$PATH_RUNS" goodput stream --path rate=1gbit,delay=1ms -t "$TIME" -i 0 ;;
        *) log "unknown part $p" ;;
    esac
done
