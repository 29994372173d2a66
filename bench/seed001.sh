#!/usr/bin/env bash
# Seed 001's experiment (SAND97-0642, issue 13 item 4): an FTP-style transfer of an 11 MB file,
# transmit and receive, next to ttcp's memory-to-memory test (n=2000 × l=8192, 32 KB socket
# buffers), over the atm-oc3-lane and ethernet-100 emulated paths and on loopback; writes the
# `seed001` section of BENCHMARKS.md through bench/section.py.
#
#   bash bench/seed001.sh               # ROUNDS=3 by default (the seed ran each test 4 times)
#   ROUNDS=4 bash bench/seed001.sh
#
# Transmit and receive are from the client's side, as the seed's were from the NT workstation's:
# transmit = the client sends (`file`, `stream`), receive = the server sends (`-R`). Emulated
# paths need root (network namespaces); loopback talks to a server started here on 127.0.0.1,
# killed by PID at exit. Rounds alternate the order of the cases.
set -uo pipefail

ROUNDS=${ROUNDS:-3}
PORT=${PORT:-29490}
HOST=127.0.0.1
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TCPLAB="${CARGO_TARGET_DIR:-$ROOT/target}/release/tcplab"
PATHS=(loopback atm-oc3-lane ethernet-100)
LIMIT=120

log() { printf '[bench seed001 %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
case $ROUNDS in ''|*[!0-9]*|0) die "ROUNDS must be a positive integer" ;; esac
[ "$(id -u)" -eq 0 ] || die "the emulated paths need root (network namespaces)"

WORK=$(mktemp -d /tmp/tcplab-bench-seed001.XXXXXX) || die "mktemp failed"
log "raw results in $WORK"
SERVER=""
cleanup() {
    [ -n "$SERVER" ] && { kill -TERM "$SERVER" 2>/dev/null; sleep 0.3; kill -KILL "$SERVER" 2>/dev/null; }
    wait 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log "building tcplab (release)"
(cd "$ROOT" && timeout 1800 cargo build --release -p tcplab) || die "cargo build --release failed"
[ -x "$TCPLAB" ] || die "$TCPLAB missing after build"

"$TCPLAB" server --bind "$HOST" -p "$PORT" >"$WORK/server.log" 2>&1 &
SERVER=$!
sleep 0.5
kill -0 "$SERVER" 2>/dev/null || die "tcplab server did not start (see $WORK/server.log)"

git_commit=$(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -n "$(cd "$ROOT" && git status --porcelain --untracked-files=no 2>/dev/null)" ] && git_commit="$git_commit + uncommitted changes"
cat >"$WORK/meta.json" <<META
{"date": "$(date -u '+%Y-%m-%d %H:%M UTC')", "nproc": $(nproc), "kernel": "$(uname -sr)",
 "cpu_model": "$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)",
 "loadavg": "$(cut -d' ' -f1-3 /proc/loadavg)", "tcplab": "$("$TCPLAB" --version 2>&1 | head -1)",
 "commit": "$git_commit", "rounds": $ROUNDS}
META

one() {   # one ROUNDDIR PATH TEST DIR
    local rd=$1 path=$2 test=$3 dir=$4 where out args
    if [ "$path" = loopback ]; then where=("$HOST" -p "$PORT"); else where=(--path "$path"); fi
    case $test in
    ftp) args=(file --size 11M -i 0) ;;
    ttcp) args=(stream -k 2000 -l 8K -w 32K -i 0) ;;
    esac
    [ "$dir" = receive ] && args+=(-R)
    out="$rd/$path.$test.$dir.json"
    log "  $path $test $dir: tcplab ${args[*]}"
    timeout -k 5 "$LIMIT" "$TCPLAB" "${args[@]}" "${where[@]}" --json >"$out" 2>"$out.err" \
        || log "  exit $? (see $out.err)"
    sleep 1
}

for r in $(seq 1 "$ROUNDS"); do
    rd="$WORK/r$r"
    mkdir -p "$rd"
    log "round $r/$ROUNDS"
    cases=()
    for p in "${PATHS[@]}"; do for t in ttcp ftp; do for d in receive transmit; do cases+=("$p $t $d"); done; done; done
    if [ $((r % 2)) -eq 0 ]; then
        rev=()
        for c in "${cases[@]}"; do rev=("$c" "${rev[@]}"); done
        cases=("${rev[@]}")
    fi
    for c in "${cases[@]}"; do
        # shellcheck disable=SC2086
        one "$rd" $c
    done
done

timeout 60 python3 "$ROOT/bench/seed001_report.py" "$WORK" >"$WORK/section.md" || die "report failed"
python3 "$ROOT/bench/section.py" seed001 <"$WORK/section.md" || die "section.py failed"
log "wrote the seed001 section of BENCHMARKS.md"
