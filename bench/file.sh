#!/usr/bin/env bash
# tcplab's zero-copy and file-transfer modes on loopback, side by side in alternating rounds
# (issue 13's goals); writes the `file` section of BENCHMARKS.md through bench/section.py.
#
#   bash bench/file.sh                       # ROUNDS=3 DURATION=5 SIZE=2G DSIZE=1G
#   ROUNDS=5 bash bench/file.sh
#   DIRECT_DIR=/some/disk/dir bash bench/file.sh
#
# Three groups, each run once per round, the order of the tools inside a group reversed every
# other round:
# - stream: `tcplab stream` copying receive against `--skip-rx-copy` (same flags otherwise);
#   iperf3 3.12 has no receive-side skip-copy (checked from `iperf3 --help`, said in the report).
# - file: `tcplab file --size SIZE --send write` and `--send sendfile` against `iperf3 -Z -n SIZE`
#   (iperf3's -Z is sendfile). The client sends, the server receives. `--send sendfile
#   --no-verify` is the like-for-like row (neither end hashes; iperf3 does not verify either).
#   Also, for reference, `--send sendfile --recv skip-copy` (the receiver neither copies nor hashes).
# - direct: `tcplab file --sink direct --size DSIZE` both ways: the server receives into its
#   TMPDIR (set to DIRECT_DIR), and with -R the client receives into `--dir DIRECT_DIR`; O_DIRECT
#   on a disk filesystem, never tmpfs.
# Every client runs under bench/compare.py exec, which reads /proc/stat, the server's
# /proc/PID/stat and the client's wait4 rusage around it, so both tools are measured the same
# way from the outside. Everything talks to 127.0.0.1 only; servers are killed by PID at exit.
set -uo pipefail

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
SIZE=${SIZE:-2G}
DSIZE=${DSIZE:-1G}
PORT_BASE=${PORT_BASE:-29480}
HOST=127.0.0.1
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TCPLAB="${CARGO_TARGET_DIR:-$ROOT/target}/release/tcplab"
HELPER="$ROOT/bench/compare.py"
P_TCPLAB=$PORT_BASE
P_IPERF=$((PORT_BASE + 1))
CLIENT_LIMIT=$((DURATION + 60))
SERVER_LIMIT=$((ROUNDS * 6 * (DURATION + 70) + 300))

log() { printf '[bench file %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
case $ROUNDS in ''|*[!0-9]*|0) die "ROUNDS must be a positive integer" ;; esac
case $DURATION in ''|*[!0-9]*|0) die "DURATION must be a positive integer (seconds)" ;; esac

WORK=$(mktemp -d /tmp/tcplab-bench-file.XXXXXX) || die "mktemp failed"
log "raw results in $WORK"

# The O_DIRECT sink needs a disk filesystem: /var/tmp unless told, refused when it is tmpfs.
DIRECT_DIR=${DIRECT_DIR:-/var/tmp}
DIRECT_DIR=$(mktemp -d "$DIRECT_DIR/tcplab-bench-direct.XXXXXX") || die "mktemp in DIRECT_DIR failed"
DIRECT_FS=$(df -T "$DIRECT_DIR" | awk 'NR == 2 { print $2 " (" $1 ")" }')
case $DIRECT_FS in tmpfs*|ramfs*) die "DIRECT_DIR $DIRECT_DIR is on $DIRECT_FS; give a disk directory" ;; esac

PIDS=()
cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
    sleep 0.5
    for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$DIRECT_DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

listening() {   # listening PORT: something listens on 127.0.0.1:PORT (TCP)
    local hex
    hex=$(printf '%04X' "$1")
    awk -v want="0100007F:$hex" 'NR > 1 && $2 == want && $4 == "0A" { f = 1 } END { exit !f }' /proc/net/tcp
}

start_server() {   # start_server NAME PORT CMD...: CMD runs directly, so $! is the server's PID
    local name=$1 port=$2 i
    shift 2
    listening "$port" && die "port $port already in use; set PORT_BASE"
    "$@" >"$WORK/$name.log" 2>&1 &
    SERVER_PID=$!
    PIDS+=("$SERVER_PID")
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

# iperf3 >= 3.19 has --skip-rx-copy; the Debian one may not.
IPERF_SKIP=no
iperf3 --help 2>&1 | grep -q -- --skip-rx-copy && IPERF_SKIP=yes

# The server's temporary files (its O_DIRECT sink, its generated source with -R) go to TMPDIR.
start_server tcplab-server "$P_TCPLAB" env TMPDIR="$DIRECT_DIR" "$TCPLAB" server --bind "$HOST" -p "$P_TCPLAB"
TCPLAB_PID=$SERVER_PID
start_server iperf3-server "$P_IPERF" iperf3 -s -B "$HOST" -p "$P_IPERF"
IPERF_PID=$SERVER_PID

git_commit=$(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -n "$(cd "$ROOT" && git status --porcelain --untracked-files=no 2>/dev/null)" ] && git_commit="$git_commit + uncommitted changes"
cat >"$WORK/meta.json" <<META
{"date": "$(date -u '+%Y-%m-%d %H:%M UTC')", "nproc": $(nproc), "kernel": "$(uname -sr)",
 "cpu_model": "$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)",
 "loadavg": "$(cut -d' ' -f1-3 /proc/loadavg)", "iperf3": "$(iperf3 --version 2>&1 | head -1)",
 "iperf3_skip_rx_copy": "$IPERF_SKIP", "tcplab": "$("$TCPLAB" --version 2>&1 | head -1)",
 "commit": "$git_commit", "rounds": $ROUNDS, "duration": $DURATION, "size": "$SIZE", "dsize": "$DSIZE",
 "direct_dir": "$(dirname "$DIRECT_DIR")", "direct_fs": "$DIRECT_FS",
 "tmp_fs": "$(df -T /tmp | awk 'NR == 2 { print $2 }')"}
META

one() {   # one ROUNDDIR NAME SERVERPID CMD...: one client run, measured from the outside
    local rd=$1 name=$2 spid=$3 p
    shift 3
    for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null || die "a server died (see $WORK/*.log)"; done
    log "  $name"
    timeout -k 5 $((CLIENT_LIMIT + 15)) python3 "$HELPER" exec --out "$rd/$name.exec.json" \
        --stdout "$rd/$name.json" --server-pid "$spid" -- timeout -k 5 "$CLIENT_LIMIT" "$@" \
        || log "  $name: exit $? (see $rd/$name.json.err)"
    sleep 1
}

group() {   # group ROUNDDIR ROUND CASE...: each CASE is a function name; reversed on even rounds
    local rd=$1 r=$2 c
    shift 2
    local order=("$@")
    if [ $((r % 2)) -eq 0 ]; then
        order=()
        for c in "$@"; do order=("$c" "${order[@]}"); done
    fi
    for c in "${order[@]}"; do "$c" "$rd"; done
}

T=("$TCPLAB")
stream_copy() { one "$1" stream-copy "$TCPLAB_PID" "${T[@]}" stream "$HOST" -p "$P_TCPLAB" -t "$DURATION" -i 0 --json; }
stream_skip() {
    one "$1" stream-skip "$TCPLAB_PID" "${T[@]}" stream "$HOST" -p "$P_TCPLAB" -t "$DURATION" -i 0 --json --skip-rx-copy
}
iperf_skip() {
    [ "$IPERF_SKIP" = yes ] || return 0
    one "$1" iperf3-skip "$IPERF_PID" iperf3 -c "$HOST" -p "$P_IPERF" -t "$DURATION" --skip-rx-copy --json
}
file_write() { one "$1" file-write "$TCPLAB_PID" "${T[@]}" file "$HOST" -p "$P_TCPLAB" --size "$SIZE" --send write -i 0 --json; }
file_sendfile() {
    one "$1" file-sendfile "$TCPLAB_PID" "${T[@]}" file "$HOST" -p "$P_TCPLAB" --size "$SIZE" --send sendfile -i 0 --json
}
file_sendfile_skip() {
    one "$1" file-sendfile-skip "$TCPLAB_PID" "${T[@]}" file "$HOST" -p "$P_TCPLAB" --size "$SIZE" --send sendfile \
        --recv skip-copy -i 0 --json
}
file_sendfile_noverify() {
    one "$1" file-sendfile-noverify "$TCPLAB_PID" "${T[@]}" file "$HOST" -p "$P_TCPLAB" --size "$SIZE" --send sendfile \
        --no-verify -i 0 --json
}
iperf_z() { one "$1" iperf3-z "$IPERF_PID" iperf3 -c "$HOST" -p "$P_IPERF" -Z -n "$SIZE" --json; }
file_direct_put() {
    one "$1" file-direct-put "$TCPLAB_PID" "${T[@]}" file "$HOST" -p "$P_TCPLAB" --size "$DSIZE" --sink direct -i 0 --json
}
file_direct_get() {
    one "$1" file-direct-get "$TCPLAB_PID" "${T[@]}" file "$HOST" -p "$P_TCPLAB" -R --size "$DSIZE" --sink direct \
        --dir "$DIRECT_DIR" -i 0 --json
}

for r in $(seq 1 "$ROUNDS"); do
    rd="$WORK/r$r"
    mkdir -p "$rd"
    log "round $r/$ROUNDS"
    group "$rd" "$r" stream_copy stream_skip iperf_skip
    group "$rd" "$r" file_write file_sendfile file_sendfile_noverify iperf_z file_sendfile_skip
    group "$rd" "$r" file_direct_put file_direct_get
done

timeout 60 python3 "$ROOT/bench/file_report.py" "$WORK" >"$WORK/section.md" || die "report failed"
python3 "$ROOT/bench/section.py" file <"$WORK/section.md" || die "section.py failed"
log "wrote the file section of BENCHMARKS.md"
