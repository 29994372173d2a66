#!/usr/bin/env bash
# The diagnosis against ground truth (issue 25): every scenario of the corpus in
# crates/cli/tests/diagnosis_corpus.rs (emulated paths and loopback whose configuration fixes
# the limit), run with a release build; prints each scenario's verdict and the confusion
# matrix (true cause × cause named) that BENCHMARKS.md keeps. Needs root for the emulated
# paths (network namespaces, TUN, cgroups); without root only the loopback scenarios run.
#
#   bash bench/diagnosis.sh                       # the whole corpus (about 3 minutes)
#   TCPLAB_CORPUS_ONLY=rwnd,udp- bash bench/diagnosis.sh   # scenarios whose id starts so
#
# Everything talks to loopback or to the emulator's namespaces (198.18.0.0/15) only.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT=${OUT:-target/diagnosis-corpus.txt}
echo "== corpus (release build): verdicts on stderr, matrix to $OUT"
cargo test --release -p tcplab --test diagnosis_corpus -- --ignored --nocapture --test-threads 1 the_whole_corpus \
    2>&1 | tee "$OUT"
