#!/usr/bin/env bash
# The diagnosis against ground truth (issue 25): every scenario of the corpus in
# crates/cli/tests/diagnosis_corpus.rs (emulated paths and loopback whose configuration fixes
# the limit), run with the release binary; prints each scenario's verdict and the confusion
# matrix (true cause × cause named) that BENCHMARKS.md keeps. Needs root for the emulated
# paths (network namespaces, TUN, cgroups) and the veth pair with a qdisc (iproute2's ip and
# tc); without root only the loopback scenarios run.
#
#   bash bench/diagnosis.sh                                # the whole corpus (about 4 minutes)
#   TCPLAB_CORPUS_ONLY=rwnd,udp- bash bench/diagnosis.sh   # scenarios whose id starts so
#
# The harness is the test binary (a debug build is fine: it only starts the scenarios and
# reads their JSON); the scenarios run the release binary (TCPLAB_CORPUS_BIN), so no debug
# build limits a 1 Gbit/s path. Everything talks to loopback or to the emulator's
# namespaces and its own veth pair (198.18.0.0/15) only.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT=${OUT:-target/diagnosis-corpus.txt}
cargo build --release -p tcplab
BIN="${CARGO_TARGET_DIR:-$PWD/target}/release/tcplab"
echo "== corpus with $BIN: verdicts on stderr, matrix to $OUT"
TCPLAB_CORPUS_BIN="$BIN" cargo test -p tcplab --test diagnosis_corpus -- \
    --ignored --nocapture --test-threads 1 the_whole_corpus 2>&1 | tee "$OUT"
