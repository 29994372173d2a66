#!/usr/bin/env bash
# Request/response 1/1 on loopback under four thread placements, in alternating rounds:
# unpinned, both ends on CPU 0 (-A 0,0), one CPU each (-A 0,1), and one CPU each with
# --busy-poll. Writes the "placement" section of BENCHMARKS.md.
#
#   bash bench/placement.sh            # ROUNDS=3 DURATION=5
set -uo pipefail

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
PORT=${PORT:-29190}   # below the ephemeral range, so no client socket holds it
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TCPLAB="$ROOT/target/release/tcplab"

log() { printf '[placement %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
case $ROUNDS in ''|*[!0-9]*|0) log "ROUNDS must be a positive integer"; exit 1 ;; esac
case $DURATION in ''|*[!0-9]*|0) log "DURATION must be a positive integer"; exit 1 ;; esac
[ "$(nproc)" -ge 2 ] || { log "needs at least 2 CPUs"; exit 1; }

(cd "$ROOT" && cargo build --release --quiet) || { log "build failed"; exit 1; }
WORK=$(mktemp -d /tmp/tcplab-placement.XXXXXX)
timeout $((ROUNDS * 4 * (DURATION + 10) + 120)) "$TCPLAB" server --bind 127.0.0.1 -p "$PORT" \
    2>"$WORK/server.log" &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null; wait 2>/dev/null' EXIT
sleep 0.5

declare -A FLAGS=([unpinned]="" [same-cpu]="-A 0,0" [two-cpus]="-A 0,1" [two-cpus-busy-poll]="-A 0,1 --busy-poll")
ORDER=(unpinned same-cpu two-cpus two-cpus-busy-poll)
for round in $(seq 1 "$ROUNDS"); do
    for name in "${ORDER[@]}"; do
        log "round $round: $name"
        # shellcheck disable=SC2086
        timeout $((DURATION + 30)) "$TCPLAB" rr 127.0.0.1 -p "$PORT" -t "$DURATION" -i 0 --json \
            ${FLAGS[$name]} >"$WORK/$name.$round.json" 2>"$WORK/$name.$round.err"
    done
done

python3 - "$WORK" "$ROUNDS" "$DURATION" "${ORDER[@]}" <<'PY' | python3 "$ROOT/bench/section.py" placement
import json, os, statistics, subprocess, sys, time
work, rounds, duration, names = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
flags = {"unpinned": "(none)", "same-cpu": "-A 0,0", "two-cpus": "-A 0,1", "two-cpus-busy-poll": "-A 0,1 --busy-poll"}
print("## Request/response placement (bench/placement.sh)\n")
print(f"Generated on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; tcplab rr 1/1 on loopback, "
      f"{rounds} alternating rounds of {duration} s; median (min–max) over rounds. "
      f"Kernel {os.uname().release}, {os.cpu_count()} CPUs.\n")
print("| placement | flags | trans/s | p50 µs | p99 µs | client CPU | server CPU |")
print("|---|---|---|---|---|---|---|")
for name in names:
    rates, p50, p99, where = [], [], [], ("-", "-")
    for r in range(1, rounds + 1):
        try:
            with open(os.path.join(work, f"{name}.{r}.json")) as f:
                t = json.load(f)["tests"][0]
        except (OSError, ValueError, KeyError, IndexError):
            continue
        rr = t["summary"].get("rr") or {}
        if not rr:
            continue
        rates.append(rr["trans_per_s"]); p50.append(rr["latency"]["p50_us"]); p99.append(rr["latency"]["p99_us"])
        cpu = lambda side: ",".join(str(c["cpu"]) for c in (side or {}).get("streams", [{}])[0].get("placement", {}).get("cpus_seen", [])[:2]) or "-"
        where = (cpu(t.get("local")), cpu(t.get("remote")))
    if not rates:
        print(f"| {name} | `{flags[name]}` | no result | | | | |")
        continue
    span = lambda xs, f: f"{f(statistics.median(xs))} ({f(min(xs))}–{f(max(xs))})"
    print(f"| {name} | `{flags[name]}` | {span(rates, lambda v: f'{v:,.0f}')} | {span(p50, lambda v: f'{v:.1f}')} "
          f"| {span(p99, lambda v: f'{v:.1f}')} | {where[0]} | {where[1]} |")
print("\nCPU columns: the CPUs the worker threads were seen on (most frequent first) in the last round. "
      "On two vCPUs, ends that share a core avoid the idle-vCPU wake-up; ends on two cores pay it on "
      "every message unless they spin (`--busy-poll`, which costs a full core per end).")
PY
log "wrote the placement section of $ROOT/BENCHMARKS.md (raw results in $WORK)"
