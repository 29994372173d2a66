#!/usr/bin/env bash
# tcplab udp vs iperf3 -u on loopback, like with like, side by side in alternating rounds;
# writes the `udp` section of BENCHMARKS.md through bench/section.py.
#
#   bash bench/udp.sh                  # ROUNDS=3 DURATION=5 by default
#   ROUNDS=5 DURATION=10 bash bench/udp.sh
#   IPERF3_GSRO=/path/to/iperf3 bash bench/udp.sh   # an iperf3 >= 3.21 with --gsro
#
# Two pairs, never mixed:
# - one datagram per call: `tcplab udp --no-offload` against `iperf3 -u` (Debian's). Cases:
#   64, 1400 and 8192-byte datagrams unlimited, a 100 Mbit/s target with 1400-byte datagrams
#   (achieved rate, loss), 1 Mbit/s of 64-byte datagrams (achieved rate, jitter).
# - with UDP GSO/GRO: `tcplab udp` (sendmmsg + GSO, recvmmsg + GRO) against `iperf3 -u --gsro`
#   when IPERF3_GSRO names one; otherwise tcplab alone, labelled as such. Unlimited cases only.
# Around every client run the script reads lo's tx_packets, so both tools' skbs (packets as
# loopback counted them: a GSO train once) are measured the same way, beside their datagrams.
# Everything talks to 127.0.0.1 only; the servers are started here and killed by PID.
set -uo pipefail

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
PORT_BASE=${PORT_BASE:-9410}
HOST=127.0.0.1
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TCPLAB="${CARGO_TARGET_DIR:-$ROOT/target}/release/tcplab"
P_TCPLAB=$PORT_BASE
P_IPERF=$((PORT_BASE + 1))
P_GSRO=$((PORT_BASE + 2))
IPERF3_GSRO=${IPERF3_GSRO:-}
CLIENT_LIMIT=$((DURATION + 30))
SERVER_LIMIT=$((ROUNDS * 16 * (DURATION + 10) + 300))

log() { printf '[bench udp %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
case $ROUNDS in ''|*[!0-9]*|0) die "ROUNDS must be a positive integer" ;; esac
case $DURATION in ''|*[!0-9]*|0) die "DURATION must be a positive integer (seconds)" ;; esac

WORK=$(mktemp -d /tmp/tcplab-bench-udp.XXXXXX) || die "mktemp failed"
log "raw results in $WORK"

PIDS=()
cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
    sleep 0.5
    for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
    wait 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

listening() {   # listening PORT: something listens on 127.0.0.1:PORT (TCP)
    local hex
    hex=$(printf '%04X' "$1")
    awk -v want="0100007F:$hex" 'NR > 1 && $2 == want && $4 == "0A" { f = 1 } END { exit !f }' /proc/net/tcp
}

start_server() {   # start_server NAME PORT CMD...: runs CMD directly (no wrapper) so $! is its PID
    local name=$1 port=$2 i
    shift 2
    listening "$port" && die "port $port already in use; set PORT_BASE"
    "$@" >"$WORK/$name.log" 2>&1 &
    PIDS+=("$!")
    for i in $(seq 1 100); do listening "$port" && return 0; sleep 0.05; done
    die "$name does not listen on $port (see $WORK/$name.log)"
}

command -v iperf3 >/dev/null 2>&1 || {
    log "installing iperf3"
    [ "$(id -u)" -eq 0 ] && SUDO="" || SUDO="sudo"
    timeout 300 $SUDO apt-get update && DEBIAN_FRONTEND=noninteractive timeout 600 $SUDO apt-get install -y iperf3 \
        || die "apt-get install iperf3 failed"
}
log "building tcplab (release)"
(cd "$ROOT" && timeout 1800 cargo build --release -p tcplab) || die "cargo build --release failed"
[ -x "$TCPLAB" ] || die "$TCPLAB missing after build"

start_server tcplab-server "$P_TCPLAB" timeout -k 5 "$SERVER_LIMIT" "$TCPLAB" server --bind "$HOST" -p "$P_TCPLAB"
start_server iperf3-server "$P_IPERF" timeout -k 5 "$SERVER_LIMIT" iperf3 -s -B "$HOST" -p "$P_IPERF"
GSRO_VERSION=""
if [ -n "$IPERF3_GSRO" ]; then
    "$IPERF3_GSRO" --help 2>&1 | grep -q -- --gsro || die "$IPERF3_GSRO has no --gsro"
    GSRO_VERSION=$("$IPERF3_GSRO" --version 2>&1 | head -1)
    start_server iperf3-gsro-server "$P_GSRO" timeout -k 5 "$SERVER_LIMIT" "$IPERF3_GSRO" -s -B "$HOST" -p "$P_GSRO"
else
    log "IPERF3_GSRO not set: the offload pair shows tcplab alone"
fi

cat >"$WORK/meta.json" <<META
{"date": "$(date -u '+%Y-%m-%d %H:%M UTC')", "nproc": "$(nproc)", "kernel": "$(uname -sr)",
 "loadavg": "$(cut -d' ' -f1-3 /proc/loadavg)", "iperf3": "$(iperf3 --version 2>&1 | head -1)",
 "iperf3_gsro": "$GSRO_VERSION", "iperf3_gsro_commit": "${IPERF3_GSRO_COMMIT:-}",
 "commit": "$(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo unknown)",
 "rounds": $ROUNDS, "duration": $DURATION}
META

lo_tx() { cat /sys/class/net/lo/statistics/tx_packets; }

one() {   # one ROUNDDIR TOOL CASE RATE LEN [EXTRA FLAGS...]
    local rd=$1 tool=$2 case=$3 rate=$4 len=$5 out before
    shift 5
    out="$rd/${tool}_$case.json"
    log "  $tool $case (-b $rate -l $len $*)"
    before=$(lo_tx)
    case $tool in
    tcplab|tcplab-plain)
        [ "$tool" = tcplab-plain ] && set -- "$@" --no-offload
        timeout -k 5 "$CLIENT_LIMIT" "$TCPLAB" udp "$HOST" -p "$P_TCPLAB" -t "$DURATION" -b "$rate" -l "$len" \
            -i 0 --json "$@" >"$out" 2>"$out.err" || log "  tcplab exit $? (see $out.err)" ;;
    iperf3)
        timeout -k 5 "$CLIENT_LIMIT" iperf3 -c "$HOST" -p "$P_IPERF" -u -t "$DURATION" -b "$rate" -l "$len" \
            --json "$@" >"$out" 2>"$out.err" || log "  iperf3 exit $? (see $out.err)" ;;
    iperf3-gsro)
        timeout -k 5 "$CLIENT_LIMIT" "$IPERF3_GSRO" -c "$HOST" -p "$P_GSRO" -u --gsro -t "$DURATION" -b "$rate" \
            -l "$len" --json "$@" >"$out" 2>"$out.err" || log "  iperf3 --gsro exit $? (see $out.err)" ;;
    esac
    # Every packet on lo in the run (this test's, its control connection's, anything else's).
    echo "$before $(lo_tx)" >"$out.lo"
    sleep 1
}

pair() {   # pair ROUNDDIR ROUND TOOL_A TOOL_B CASES...: each case with both tools, order alternating
    local rd=$1 r=$2 a=$3 b=$4 c case rate len extra tool p
    shift 4
    local order=("$a" "$b")
    [ $((r % 2)) -eq 0 ] && order=("$b" "$a")
    [ "$b" = iperf3-gsro ] && [ -z "$IPERF3_GSRO" ] && order=("$a")
    for c in "$@"; do
        IFS=: read -r case rate len extra <<<"$c"
        for tool in "${order[@]}"; do
            for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null || die "a server died (see $WORK/*.log)"; done
            # shellcheck disable=SC2086
            one "$rd" "$tool" "$case" "$rate" "$len" $extra
        done
    done
}

for r in $(seq 1 "$ROUNDS"); do
    rd="$WORK/r$r"
    mkdir -p "$rd"
    log "round $r/$ROUNDS"
    # r100 runs with 2 MB socket buffers on both tools (-w sets both ends' buffers in each), so that
    # a receiver descheduled for a few ms on this shared machine does not overflow 208 KB.
    pair "$rd" "$r" tcplab-plain iperf3 "u64:0:64:" "u1400:0:1400:" "u8192:0:8192:" "r100:100M:1400:-w 2M" "r1:1M:64:"
    pair "$rd" "$r" tcplab iperf3-gsro "u64:0:64:" "u1400:0:1400:" "u8192:0:8192:"
done

timeout 60 python3 "$ROOT/bench/udp_report.py" "$WORK" >"$WORK/section.md" || die "report failed"
python3 "$ROOT/bench/section.py" udp <"$WORK/section.md" || die "section.py failed"
log "wrote the udp section of BENCHMARKS.md"
