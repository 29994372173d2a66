#!/usr/bin/env bash
# The same iperf3 client against `tcplab server --iperf3` and against `iperf3 -s`, on
# loopback (issue 16). Cases: TCP forward and -R; UDP at 1400-byte datagrams, unpaced (-b 0),
# forward and -R. Runs alternate between the two servers, RUNS times each, TIME seconds
# each; per case it prints the receiver's rate (iperf3's own end.sum_received) as median and
# range, UDP loss, and the ratio of medians tcplab ÷ iperf3. Numbers only from this machine,
# this run.
#
#   RUNS=5 TIME=5 bash bench/iperf3_server.sh
#
# Needs iperf3. Traffic stays on 127.0.0.1.
set -uo pipefail

RUNS=${RUNS:-5}
TIME=${TIME:-5}
TCPLAB_PORT=15261
IPERF_PORT=15262
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TCPLAB=${TCPLAB:-$ROOT/target/release/tcplab}
WORK=$(mktemp -d /tmp/tcplab-iperf3-server-bench.XXXXXX)

log() { printf '[iperf3 server bench %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
command -v iperf3 >/dev/null || { log "iperf3 missing (apt-get install iperf3)"; exit 1; }
[ -x "$TCPLAB" ] || (cd "$ROOT" && cargo build --release -p tcplab) || exit 1
log "raw results in $WORK"
echo "bench/iperf3_server.sh on $(date -u '+%Y-%m-%d %H:%M') UTC, commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null), $(iperf3 --version | head -1), $(nproc) CPUs, load average at start $(cut -d' ' -f1-3 /proc/loadavg); $RUNS rounds of $TIME s"

"$TCPLAB" server -B 127.0.0.1 -p 0 --iperf3 --iperf3-port "$TCPLAB_PORT" 2>"$WORK/tcplab-server.log" &
TCPLAB_PID=$!
iperf3 -s -B 127.0.0.1 -p "$IPERF_PORT" >"$WORK/iperf3-server.log" 2>&1 &
IPERF_PID=$!
trap 'kill "$TCPLAB_PID" "$IPERF_PID" 2>/dev/null' EXIT
sleep 1

CASES=("tcp" "tcp-R" "udp" "udp-R")
args_of() {
    case "$1" in
        tcp) echo "" ;;
        tcp-R) echo "-R" ;;
        udp) echo "-u -b 0 -l 1400" ;;
        udp-R) echo "-u -b 0 -l 1400 -R" ;;
    esac
}

for i in $(seq 1 "$RUNS"); do
    for c in "${CASES[@]}"; do
        for server in tcplab iperf3; do
            port=$TCPLAB_PORT; [ "$server" = iperf3 ] && port=$IPERF_PORT
            # shellcheck disable=SC2046
            timeout $((TIME + 30)) iperf3 -c 127.0.0.1 -p "$port" -t "$TIME" -J $(args_of "$c") \
                >"$WORK/$c-$server-$i.json" 2>/dev/null
        done
    done
    log "round $i of $RUNS done"
done

python3 - "$WORK" "$RUNS" "${CASES[@]}" <<'PY'
import json, statistics, sys
work, runs, cases = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def rows(case, server):
    out = []
    for i in range(1, runs + 1):
        try:
            d = json.load(open(f"{work}/{case}-{server}-{i}.json"))
            s = d["end"]["sum_received"]
            sent = d["end"]["sum_sent"]["bits_per_second"] / 1e9
            out.append((s["bits_per_second"] / 1e9, s.get("lost_percent"), sent))
        except Exception as e:
            print(f"{case} {server} run {i}: no result ({e})", file=sys.stderr)
    return out
print("| case | server | receiver rate, median (range), Gbit/s | sender rate, median, Gbit/s | UDP loss, median | runs | tcplab ÷ iperf3 (receiver rate) |")
print("|---|---|---|---|---|---|---|")
for c in cases:
    med = {}
    for server in ("tcplab", "iperf3"):
        r = rows(c, server)
        if not r:
            continue
        rates = [x[0] for x in r]
        loss = [x[1] for x in r if x[1] is not None]
        med[server] = statistics.median(rates)
        ratio = f"{med['tcplab'] / med['iperf3']:.2f}×" if server == "iperf3" and "tcplab" in med else ""
        lo = f"{statistics.median(loss):.1f} %" if loss else "—"
        sent = statistics.median([x[2] for x in r])
        print(f"| {c} | {server} | {med[server]:.2f} ({min(rates):.2f}–{max(rates):.2f}) | {sent:.2f} | {lo} | {len(r)} | {ratio} |")
PY
