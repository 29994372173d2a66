#!/usr/bin/env bash
# Mesh wall time (issue 17): a 4 × 4 mesh of TIME-second stream tests (12 ordered pairs and 4
# loop-back baselines) between four network namespaces joined by a bridge, against the same
# 16 third-party tests run one after another (`tcplab stream B --from A`, the loop a script
# would write). Alternates the two RUNS times each, prints every wall time, then the medians
# and ranges, and the goal: 1.2 × (12 × TIME + 4 × TIME) / parallelism, where the mesh's
# schedule runs 2 disjoint pairs per round (6 rounds) and the 4 baselines in one round, i.e.
# 1.2 × 7 × TIME.
#
#   sudo RUNS=3 TIME=2 bash bench/mesh.sh
#
# Needs root (namespaces). Traffic stays inside the namespaces it creates (prefix tlm-bench,
# 198.18.41.0/24), which are removed on exit.
set -uo pipefail

RUNS=${RUNS:-3}
TIME=${TIME:-2}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TCPLAB=${TCPLAB:-$ROOT/target/release/tcplab}
WORK=$(mktemp -d /tmp/tcplab-mesh-bench.XXXXXX)
BR=tlm-bench-br
HOSTS=(tlm-bench-h0 tlm-bench-h1 tlm-bench-h2 tlm-bench-h3)
PIDS=()

log() { printf '[mesh bench %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
[ "$(id -u)" = 0 ] || { log "needs root"; exit 1; }
[ -x "$TCPLAB" ] || (cd "$ROOT" && cargo build --release -p tcplab) || exit 1

cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for ns in "${HOSTS[@]}" "$BR"; do ip netns del "$ns" 2>/dev/null; done
}
trap cleanup EXIT

ip netns add "$BR"
ip -n "$BR" link add br0 type bridge
ip -n "$BR" addr add 198.18.41.254/24 dev br0
ip -n "$BR" link set br0 up
ip -n "$BR" link set lo up
: > "$WORK/inventory.toml"
for i in 0 1 2 3; do
    ns=${HOSTS[$i]}
    ip netns add "$ns"
    ip link add "tlmbh$i" netns "$ns" type veth peer name "tlmbb$i" netns "$BR"
    ip -n "$BR" link set "tlmbb$i" master br0 up
    ip -n "$ns" addr add "198.18.41.$((i + 1))/24" dev "tlmbh$i"
    ip -n "$ns" link set "tlmbh$i" up
    ip -n "$ns" link set lo up
    ip netns exec "$ns" "$TCPLAB" server -B "198.18.41.$((i + 1))" --allow-third-party 2>"$WORK/server$i.log" &
    PIDS+=($!)
    printf '[[host]]\nname = "h%s"\naddress = "198.18.41.%s"\n' "$i" "$((i + 1))" >> "$WORK/inventory.toml"
done
sleep 1
log "raw results in $WORK; binary $TCPLAB"

now() { date +%s.%N; }
mesh_once() {
    local t0; t0=$(now)
    ip netns exec "$BR" "$TCPLAB" mesh "$WORK/inventory.toml" -t "$TIME" -i 0 --db "$WORK/archive.db" \
        > "$WORK/mesh-$1.txt" 2>&1
    echo "$(now) - $t0" | bc
}
serial_once() {
    local t0; t0=$(now)
    for a in 1 2 3 4; do
        for b in 1 2 3 4; do
            ip netns exec "$BR" "$TCPLAB" stream "198.18.41.$b" --from "198.18.41.$a" -t "$TIME" -i 0 \
                --db "$WORK/archive.db" > "$WORK/serial-$1-$a-$b.txt" 2>&1
        done
    done
    echo "$(now) - $t0" | bc
}

MESH=(); SERIAL=()
for run in $(seq 1 "$RUNS"); do
    m=$(mesh_once "$run"); MESH+=("$m"); log "run $run: mesh ${m} s"
    s=$(serial_once "$run"); SERIAL+=("$s"); log "run $run: serial ${s} s"
done

stats() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {printf "median %.1f s (range %.1f–%.1f s, n=%d)", v[int((NR+1)/2)], v[1], v[NR], NR}'; }
echo "4 × 4 mesh of ${TIME} s stream tests (12 pairs + 4 baselines), $RUNS alternating runs each"
echo "  tcplab mesh:                 $(stats "${MESH[@]}")"
echo "  16 × stream --from, serial:  $(stats "${SERIAL[@]}")"
echo "  goal: 1.2 × (12 × $TIME + 4 × $TIME) / parallelism = 1.2 × 7 rounds × $TIME s = $(echo "1.2 * 7 * $TIME" | bc) s (+ setup)"
echo "  serial test time alone: 16 × $TIME s = $((16 * TIME)) s"
