#!/usr/bin/env bash
# Benchmark tcplab against iperf3 (bulk TCP) and sockperf (TCP ping-pong) on loopback and write
# BENCHMARKS.md at the repository root.
#
#   bash bench/run.sh                 # ROUNDS=3 DURATION=5 by default
#   ROUNDS=5 DURATION=10 bash bench/run.sh
#
# Everything talks to 127.0.0.1 only. Servers are started here on fixed high ports and killed by
# PID on exit; every command runs under `timeout`.
set -uo pipefail

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
PORT_BASE=${PORT_BASE:-29180}   # below the ephemeral range (32768+): a client socket of an earlier
                                       # test (crr makes thousands) may hold a port there
HOST=127.0.0.1

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HELPER="$ROOT/bench/compare.py"
OUT="$ROOT/BENCHMARKS.md"
TCPLAB="$ROOT/target/release/tcplab"

P_TCPLAB=$PORT_BASE            # benchmark tcplab server
P_IPERF=$((PORT_BASE + 1))     # iperf3 -s
P_SOCKPERF=$((PORT_BASE + 2))  # sockperf server
P_IDLE=$((PORT_BASE + 3))      # tcplab server for the RSS measurement
# (`tcplab run` without HOST starts its own embedded server on 127.0.0.1, ephemeral port)

CLIENT_LIMIT=$((DURATION + 30))                          # one client run
SERVER_LIMIT=$((ROUNDS * 10 * (DURATION + 10) + 900))    # whole script, generous

log() { printf '[bench %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

case $ROUNDS in ''|*[!0-9]*|0) die "ROUNDS must be a positive integer" ;; esac
case $DURATION in ''|*[!0-9]*|0) die "DURATION must be a positive integer (seconds)" ;; esac

WORK=$(mktemp -d /tmp/tcplab-bench.XXXXXX) || die "mktemp failed"
log "raw results in $WORK"

# ------------------------------------------------------------------------------------------------
# Process bookkeeping: every background server is `timeout LIMIT server ...`; we remember the
# timeout PID and the server PID (its child) and kill exactly those at exit.
declare -a TPIDS=()
declare -a CPIDS=()

cleanup() {
    local p i
    for p in "${TPIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
    for p in "${CPIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
    for i in 1 2 3 4 5 6 7 8 9 10; do
        local alive=0
        for p in "${TPIDS[@]}" "${CPIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
        [ $alive -eq 0 ] && break
        sleep 0.3
    done
    for p in "${TPIDS[@]}" "${CPIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
    wait 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# child_of TPID: PID of the process `timeout` started
child_of() {
    local t=$1 c="" i
    for i in $(seq 1 50); do
        c=$(cat "/proc/$t/task/$t/children" 2>/dev/null | awk '{print $1}')
        [ -n "$c" ] && { echo "$c"; return 0; }
        sleep 0.05
    done
    return 1
}

# listening PORT: true once something listens on 127.0.0.1:PORT (checked without connecting)
listening() {
    local hex
    hex=$(printf '%04X' "$1")
    awk -v want="0100007F:$hex" 'NR > 1 && $2 == want && $4 == "0A" { found = 1 } END { exit !found }' \
        /proc/net/tcp
}

# start_server NAME PORT CMD...: sets SERVER_PID; logs to $WORK/NAME.log
start_server() {
    local name=$1 port=$2 t c i
    shift 2
    listening "$port" && die "port $port already in use on $HOST; set PORT_BASE"
    timeout -k 5 "$SERVER_LIMIT" "$@" >"$WORK/$name.log" 2>&1 &
    t=$!
    TPIDS+=("$t")
    c=$(child_of "$t") || die "$name did not start (see $WORK/$name.log)"
    CPIDS+=("$c")
    for i in $(seq 1 100); do
        listening "$port" && break
        kill -0 "$c" 2>/dev/null || die "$name exited (see $WORK/$name.log)"
        sleep 0.05
    done
    listening "$port" || die "$name does not listen on $port"
    SERVER_PID=$c
    SERVER_TPID=$t
}

stop_server() {   # stop_server TPID PID
    kill -TERM "$1" "$2" 2>/dev/null
    for _ in $(seq 1 30); do kill -0 "$2" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$1" "$2" 2>/dev/null
    wait "$1" 2>/dev/null
}

# run_client OUTBASE SERVERPID CMD...: run a client under timeout via the helper (records wall
# time, rusage, /proc/stat, server CPU); stdout to OUTBASE.json or .txt chosen by caller.
run_client() {
    local base=$1 stdout=$2 spid=$3
    shift 3
    timeout -k 5 $((CLIENT_LIMIT + 15)) python3 "$HELPER" exec --out "$base.exec.json" \
        --stdout "$stdout" --server-pid "$spid" -- timeout -k 5 "$CLIENT_LIMIT" "$@"
    local rc=$?
    [ $rc -ne 0 ] && log "  exit status $rc: $* (see $stdout, $stdout.err)"
    sleep 1   # let the last connection drain and the CPUs settle
    return 0
}

# ------------------------------------------------------------------------------------------------
# 1. tools
need=()
command -v iperf3 >/dev/null 2>&1 || need+=(iperf3)
command -v sockperf >/dev/null 2>&1 || need+=(sockperf)
if [ ${#need[@]} -gt 0 ]; then
    log "installing ${need[*]}"
    [ "$(id -u)" -eq 0 ] && SUDO="" || SUDO="sudo"
    timeout 300 $SUDO apt-get update || die "apt-get update failed"
    DEBIAN_FRONTEND=noninteractive timeout 600 $SUDO apt-get install -y iperf3 sockperf \
        || die "apt-get install failed"
fi
command -v python3 >/dev/null 2>&1 || die "python3 is required"

log "building tcplab (release)"
(cd "$ROOT" && timeout 1800 cargo build --release) || die "cargo build --release failed"
[ -x "$TCPLAB" ] || die "$TCPLAB missing after build"

# ------------------------------------------------------------------------------------------------
# 2. metadata
git_commit=$(cd "$ROOT" && timeout 10 git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(cd "$ROOT" && timeout 10 git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
    git_commit="$git_commit + uncommitted changes"
fi
timeout 10 python3 - "$WORK/meta.json" <<EOF
import json, sys
meta = {
    "date": "$(date -u '+%Y-%m-%d %H:%M UTC')",
    "nproc": "$(nproc)",
    "cpu_model": """$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)""",
    "kernel": "$(uname -sr)",
    "loadavg": "$(cut -d' ' -f1-3 /proc/loadavg)",
    "tcplab_version": "$(timeout 10 "$TCPLAB" --version 2>&1 | head -1)",
    "iperf3_version": "$(timeout 10 iperf3 --version 2>&1 | head -1)",
    "sockperf_version": "$(timeout 10 sockperf --version 2>&1 | grep -m1 -i version | sed 's/^[^0-9]*//')",
    "commit": "$git_commit",
    "rounds": $ROUNDS,
    "duration": $DURATION,
}
json.dump(meta, open(sys.argv[1], "w"), indent=1)
EOF

# ------------------------------------------------------------------------------------------------
# 3. servers
start_server tcplab-server "$P_TCPLAB" "$TCPLAB" server --bind "$HOST" -p "$P_TCPLAB"
TCPLAB_PID=$SERVER_PID
start_server iperf3-server "$P_IPERF" iperf3 -s -B "$HOST" -p "$P_IPERF"
IPERF_PID=$SERVER_PID
start_server sockperf-server "$P_SOCKPERF" sockperf server --tcp -i "$HOST" -p "$P_SOCKPERF"
SOCKPERF_PID=$SERVER_PID
sleep 1
idle_iperf=$(timeout 10 python3 "$HELPER" rss "$IPERF_PID")
idle_sockperf=$(timeout 10 python3 "$HELPER" rss "$SOCKPERF_PID")
log "servers: tcplab $TCPLAB_PID (:$P_TCPLAB), iperf3 $IPERF_PID (:$P_IPERF), sockperf $SOCKPERF_PID (:$P_SOCKPERF)"

check_alive() {
    kill -0 "$TCPLAB_PID" 2>/dev/null || die "tcplab server died (see $WORK/tcplab-server.log)"
    kill -0 "$IPERF_PID" 2>/dev/null || die "iperf3 server died (see $WORK/iperf3-server.log)"
    kill -0 "$SOCKPERF_PID" 2>/dev/null || die "sockperf server died (see $WORK/sockperf-server.log)"
}

# one_stream ROUNDDIR TOOL TESTID ARGS...
one_stream() {
    local rd=$1 tool=$2 tid=$3
    shift 3
    log "  $tool $tid $*"
    if [ "$tool" = tcplab ]; then
        run_client "$rd/tcplab_$tid" "$rd/tcplab_$tid.json" "$TCPLAB_PID" \
            "$TCPLAB" stream "$HOST" -p "$P_TCPLAB" -t "$DURATION" --json "$@"
    else
        run_client "$rd/iperf3_$tid" "$rd/iperf3_$tid.json" "$IPERF_PID" \
            iperf3 -c "$HOST" -p "$P_IPERF" -t "$DURATION" --json "$@"
    fi
}

one_rr() {
    local rd=$1 tool=$2
    log "  $tool rr 1/1"
    if [ "$tool" = tcplab ]; then
        run_client "$rd/tcplab_rr" "$rd/tcplab_rr.json" "$TCPLAB_PID" \
            "$TCPLAB" rr "$HOST" -p "$P_TCPLAB" -t "$DURATION" -r 1,1 --json
    else
        run_client "$rd/sockperf_rr" "$rd/sockperf_rr.txt" "$SOCKPERF_PID" \
            sockperf ping-pong --tcp -i "$HOST" -p "$P_SOCKPERF" -t "$DURATION" \
            --mps=max -m 14 --full-rtt
    fi
}

# ------------------------------------------------------------------------------------------------
# 4. alternating rounds
for r in $(seq 1 "$ROUNDS"); do
    rd="$WORK/r$r"
    mkdir -p "$rd"
    if [ $((r % 2)) -eq 1 ]; then order=(tcplab peer); else order=(peer tcplab); fi
    log "round $r/$ROUNDS (first: ${order[0]})"
    for spec in "s1f:" "s2f:-P 2" "s1r:-R" "s2r:-P 2 -R"; do
        tid=${spec%%:*}
        # shellcheck disable=SC2206
        args=(${spec#*:})
        for tool in "${order[@]}"; do
            check_alive
            [ "$tool" = peer ] && tool=iperf3
            one_stream "$rd" "$tool" "$tid" "${args[@]}"
        done
    done
    for tool in "${order[@]}"; do
        check_alive
        [ "$tool" = peer ] && tool=sockperf
        one_rr "$rd" "$tool"
    done
done
main_end=$(timeout 10 python3 "$HELPER" rss "$TCPLAB_PID")

# stop the benchmark servers before the footprint measurements
stop_server "${TPIDS[0]}" "$TCPLAB_PID"
stop_server "${TPIDS[1]}" "$IPERF_PID"
stop_server "${TPIDS[2]}" "$SOCKPERF_PID"

# ------------------------------------------------------------------------------------------------
# 5. idle RSS of a fresh tcplab server, before and after one test
log "idle RSS"
start_server tcplab-idle "$P_IDLE" "$TCPLAB" server --bind "$HOST" -p "$P_IDLE"
IDLE_PID=$SERVER_PID
IDLE_TPID=$SERVER_TPID
sleep 1
rss_start=$(timeout 10 python3 "$HELPER" rss "$IDLE_PID")
timeout -k 5 "$CLIENT_LIMIT" "$TCPLAB" stream "$HOST" -p "$P_IDLE" -t "$DURATION" --json \
    >"$WORK/idle_test.json" 2>"$WORK/idle_test.err" || log "  idle-RSS test client failed"
sleep 1
rss_after=$(timeout 10 python3 "$HELPER" rss "$IDLE_PID")
stop_server "$IDLE_TPID" "$IDLE_PID"
cat >"$WORK/idle_rss.json" <<EOF
{"start": $rss_start, "after_test": $rss_after, "main_end": $main_end,
 "iperf3_start": $idle_iperf, "sockperf_start": $idle_sockperf}
EOF

# ------------------------------------------------------------------------------------------------
# 6. wall time of `tcplab run` (default suite, embedded server on 127.0.0.1)
log "tcplab run (default suite)"
timeout -k 5 400 python3 "$HELPER" exec --out "$WORK/run.exec.json" --stdout "$WORK/run.json" \
    -- timeout -k 5 300 "$TCPLAB" run --json || log "  tcplab run failed"

# ------------------------------------------------------------------------------------------------
# 7. report
timeout 60 python3 "$HELPER" report --work "$WORK" --out "$OUT" || die "report failed"
log "wrote $OUT"
