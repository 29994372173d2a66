#!/usr/bin/env bash
# Full study runs over several sittings (issue 26). Runs each named study (default: all five,
# shortest first) at its full design, continuing the newest unfinished run of it with
# `--resume` when an earlier sitting was stopped, and stops cleanly (SIGINT, so the study keeps
# every finished case) when UNTIL comes. Run it again in the next sitting with the same DB and
# OUT: finished studies are skipped, the interrupted one continues.
#
#   UNTIL='06:40 UTC' DB=/work/studies.db OUT=/work/studies bash bench/studies.sh
#   UNTIL='+120 min' DB=bench/full-runs/studies.db OUT=bench/full-runs bash bench/studies.sh tcp-atm-2000
#   UNTIL='+90 min' bash bench/studies.sh nic-eval atm-loss
#   EXTRA='--quick -t 1' UNTIL='+1 min' bash bench/studies.sh nic-eval   # the script itself
#
# Studies measure CPU cost and rates: run them on a quiet host (no builds). The script gives its
# own scheduling group priority (autogroup nice -15, root only) and records the load average
# before and after each sitting of each study in OUT/sittings.tsv, beside each study's wall
# time, exit status, the tcplab commit and the machine (boot id); each sitting's progress lines
# are appended to OUT/STUDY.log under a line naming the same. bench/full-runs/ keeps the runs
# that outlast a working session in the repository (its README). Reports: OUT/STUDY.html (rewritten each sitting,
# covering every case of the run so far) and OUT/STUDY.txt.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ -z "${TCPLAB:-}" ]; then    # the release build of this tree, brought up to date
    TCPLAB=$ROOT/target/release/tcplab
    (cd "$ROOT" && cargo build --release -q -p tcplab) || exit 2
fi
DB=${DB:-$ROOT/target/studies.db}
OUT=${OUT:-$ROOT/target/studies}
UNTIL=${UNTIL:-+170 min}
EXTRA=${EXTRA:-}   # more study flags, e.g. EXTRA='--quick -t 1' to try the script
deadline=$(date -d "$UNTIL" +%s) || { echo "studies.sh: UNTIL '$UNTIL' is not a time" >&2; exit 2; }
mkdir -p "$OUT" || exit 2

log() { printf '[studies %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
load() { cut -d' ' -f1 /proc/loadavg; }

# Priority over other work on the host: nice alone does not reach across autogroups.
echo -15 2>/dev/null > "/proc/$$/autogroup" || log "could not raise this group's priority (not root?)"

# One sitting of study $1 for at most $2 seconds, with the rest of the arguments; its stderr
# (the progress lines) shown and kept in OUT/STUDY.sitting.log and appended to OUT/STUDY.log.
sitting() {
    local s=$1 secs=$2
    log "$s: ${3:+$3, }at most ${secs} s"
    printf '# sitting %s on %s, machine %s, tcplab %s\n' "$(date -u +%FT%TZ)" "$(hostname)" "$machine" \
        "$commit" >> "$OUT/$s.log"
    # shellcheck disable=SC2086 # EXTRA is a list of flags
    timeout -s INT -k 120 "$secs" "$TCPLAB" study "$s" --db "$DB" -o "$OUT/$s.html" $EXTRA "${@:3}" \
        2>&1 > "$OUT/$s.txt" | tee "$OUT/$s.sitting.log" >&2
    rc=${PIPESTATUS[0]}
    cat "$OUT/$s.sitting.log" >> "$OUT/$s.log"
}

studies=("$@")
[ ${#studies[@]} -gt 0 ] || studies=(nic-eval atm-loss slac-stacks tcp-atm-2000 segment-flow)
commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
# The machine, as this boot's id: a run continued over sittings may move between machines.
machine=$(cut -c1-8 /proc/sys/kernel/random/boot_id 2>/dev/null || echo unknown)
[ -s "$OUT/sittings.tsv" ] ||
    printf 'study\tstarted\tseconds\texit\tload before\tload after\tresumed\tcommit\tmachine\n' > "$OUT/sittings.tsv"

for s in "${studies[@]}"; do
    if [ -e "$OUT/$s.done" ]; then
        log "$s: finished in an earlier sitting ($OUT/$s.done)"
        continue
    fi
    left=$(( deadline - $(date +%s) ))
    if [ "$left" -lt 60 ]; then
        log "$s: not started, less than a minute before $UNTIL"
        break
    fi
    before=$(load)
    start=$(date +%s)
    resumed=yes
    sitting "$s" "$left" --resume
    if [ $rc -ne 0 ] && grep -q 'no unfinished run' "$OUT/$s.sitting.log"; then
        resumed=no
        sitting "$s" "$(( deadline - $(date +%s) ))"
    fi
    secs=$(( $(date +%s) - start ))
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$s" "$(date -u -d "@$start" +%FT%TZ)" "$secs" "$rc" \
        "$before" "$(load)" "$resumed" "$commit" "$machine" >> "$OUT/sittings.tsv"
    # A run whose every case ran is finished even if some failed (their errors are in the
    # report): without the mark, the next sitting's --resume would find no unfinished run
    # and start the whole design again.
    if [ $rc -eq 0 ] || grep -qE '^error: [0-9]+ of [0-9]+ tests failed' "$OUT/$s.sitting.log"; then
        date -u +%FT%TZ > "$OUT/$s.done"
        log "$s: finished in ${secs} s (exit $rc)"
    else
        log "$s: stopped (exit $rc) after ${secs} s; the next sitting resumes it"
        break
    fi
done
column -t -s $'\t' "$OUT/sittings.tsv" >&2
