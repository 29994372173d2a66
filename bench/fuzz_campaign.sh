#!/usr/bin/env bash
# Fuzzing campaign (issue 18): every cargo-fuzz target under fuzz/ for RUNS executions or
# CAP seconds, whichever comes first, one process per target (-jobs 1 equivalent: no forks),
# and a table of what libFuzzer reported at the end: executions, executions per second,
# coverage (cov: edges, ft: features), corpus size and crashes. Crash inputs stay in
# fuzz/artifacts/TARGET/; the corpus grows in fuzz/corpus/TARGET/.
#
#   nice -n 19 bash bench/fuzz_campaign.sh            # all targets
#   RUNS=10000000 CAP=600 bash bench/fuzz_campaign.sh hello units
#   UNTIL='20:40 UTC' bash bench/fuzz_campaign.sh      # no target runs past that time
#
# Built without a sanitizer (the code under test forbids `unsafe`) but with debug assertions
# (-a), so that integer overflow is a crash too. With cargo-fuzz, nightly features are
# enabled on the stable toolchain with RUSTC_BOOTSTRAP=1, as CI does. Without it (a machine
# where it is not installed), the same build is made by hand: cargo-fuzz's coverage flags,
# the nightly toolchain, one binary per target run directly (FUZZ_TOOLCHAIN, default
# nightly). Either way each target runs in one process: at most one core at a time.
set -uo pipefail

RUNS=${RUNS:-10000000}
CAP=${CAP:-420}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${OUT:-$(mktemp -d /tmp/tcplab-fuzz.XXXXXX)}
mkdir -p "$OUT" || exit 1
export RUSTC_BOOTSTRAP=1

log() { printf '[fuzz %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
cd "$ROOT/fuzz" || exit 1
targets=("$@")
if command -v cargo-fuzz >/dev/null 2>&1; then
    [ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(cargo fuzz list)
    if [ $# -eq 0 ]; then
        cargo fuzz build --sanitizer none -a >&2 || exit 1
    else
        for t in "${targets[@]}"; do cargo fuzz build --sanitizer none -a "$t" >&2 || exit 1; done
    fi
    # The binaries built above, run directly: the campaign measures one build even if the
    # sources change while it runs (cargo fuzz run would rebuild first).
    BIN="${CARGO_TARGET_DIR:-$ROOT/fuzz/target}/$(rustc -vV | sed -n 's/^host: //p')/release"
    run_target() { "$BIN/$1" "corpus/$1" -artifact_prefix="artifacts/$1/" "${@:2}"; }
else
    TRIPLE=$(rustc -vV | sed -n 's/^host: //p')
    BIN="$ROOT/target/fuzz/$TRIPLE/release"
    [ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.toml | grep -v tcplab-fuzz)
    log "cargo-fuzz not installed: building with the ${FUZZ_TOOLCHAIN:-nightly} toolchain and cargo-fuzz's flags"
    RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions" \
        CARGO_TARGET_DIR="$ROOT/target/fuzz" cargo "+${FUZZ_TOOLCHAIN:-nightly}" build --release \
        --target "$TRIPLE" $(printf -- '--bin %s ' "${targets[@]}") >&2 || exit 1
    run_target() { "$BIN/$1" "corpus/$1" -artifact_prefix="artifacts/$1/" "${@:2}"; }
fi
log "logs in $OUT; ${#targets[@]} target(s), at most $RUNS runs or $CAP s each"

# The last "#N DONE/pulse/NEW … cov: C ft: F corp: K/…" line and the final stats.
field() { grep -oE "$1 [0-9]+" "$2" | tail -1 | awk '{print $2}'; }
stat() { grep -E "^stat::$1:" "$2" | tail -1 | awk '{print $2}'; }

printf '| target | executions | exec/s | cov | ft | corpus | crashes | seconds |\n'
printf '|---|---:|---:|---:|---:|---:|---:|---:|\n'
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t" "artifacts/$t"
    log "$t"
    start=$(date +%s)
    cap=$CAP
    if [ -n "${UNTIL:-}" ]; then
        left=$(( $(date -d "$UNTIL" +%s) - start ))
        [ "$left" -gt 0 ] || { log "past $UNTIL: $t not run"; continue; }
        [ "$left" -ge "$cap" ] || cap=$left
    fi
    run_target "$t" \
        -runs="$RUNS" -max_total_time="$cap" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
        > "$OUT/$t.log" 2>&1
    rc=$?
    secs=$(( $(date +%s) - start ))
    crashes=$(find "artifacts/$t" -type f \( -name 'crash-*' -o -name 'oom-*' -o -name 'timeout-*' \) | wc -l)
    printf '| %s | %s | %s | %s | %s | %s | %s%s | %s |\n' "$t" \
        "$(stat number_of_executed_units "$OUT/$t.log")" "$(stat average_exec_per_sec "$OUT/$t.log")" \
        "$(field cov: "$OUT/$t.log")" "$(field ft: "$OUT/$t.log")" "$(field corp: "$OUT/$t.log")" \
        "$crashes" "$([ $rc -ne 0 ] && echo " (exit $rc)")" "$secs"
done
