#!/usr/bin/env bash
# fuzz.sh — the longer fuzzing run of the five libFuzzer targets (CI runs each for 20 s): the
# YAML plan parser, the workload and suite file parsers, the histogram decoder and the report reader, each
# for SECONDS_PER_TARGET seconds under ASan+UBSan, with libFuzzer's own limits as the checks:
# no crash, no input slower than TIMEOUT s (a hang), no run above RSS_LIMIT_MB (unbounded
# memory). Prints one line per target: executions, coverage, corpus size and peak RSS.
#
#   bench/fuzz.sh [-o FILE] [-k]
#
#   -o FILE   also append the summary (markdown) to FILE
#   -k        keep the work directory (the grown corpora and libFuzzer's logs)
#
# Settings (environment):
#   SECONDS_PER_TARGET=300  TIMEOUT=10  RSS_LIMIT_MB=2048  MAX_LEN=65536
#   ASAN_BUILD=build-asan   the clang ASan+UBSan tree with -DDBLOAD_FUZZ=ON (configured and
#                           built here if needed, as scripts/test does)
#   TARGETS="plan_parser workload_parser suite_parser histogram_decoder report_reader"
#
# Starts from the seeds in fuzz/corpus/; writes only to a mktemp directory (and -o FILE). A crash,
# timeout or out-of-memory input is left in that directory and the script exits 1.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
SECONDS_PER_TARGET=${SECONDS_PER_TARGET:-300}
TIMEOUT=${TIMEOUT:-10}
RSS_LIMIT_MB=${RSS_LIMIT_MB:-2048}
MAX_LEN=${MAX_LEN:-65536}
ASAN_BUILD=${ASAN_BUILD:-$ROOT/build-asan}
TARGETS=${TARGETS:-"plan_parser workload_parser suite_parser histogram_decoder report_reader"}

OUT=""
KEEP=0
while getopts "o:kh" opt; do
  case $opt in
    o) OUT=$OPTARG ;;
    k) KEEP=1 ;;
    h) sed -n '2,20p' "$0"; exit 0 ;;
    *) exit 2 ;;
  esac
done

WORK=$(mktemp -d /tmp/dbload-fuzz.XXXXXX)
FAILED=0
finish() { if ((KEEP || FAILED)); then echo "fuzz: work directory kept: $WORK" >&2; else rm -rf "$WORK"; fi; }
trap finish EXIT

cmake -S "$ROOT" -B "$ASAN_BUILD" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
  -DDBLOAD_ASAN=ON -DDBLOAD_FUZZ=ON -DDBLOAD_BENCH=OFF >/dev/null
read -ra targets <<<"$TARGETS"
cmake --build "$ASAN_BUILD" -j2 --target "${targets[@]/%/_fuzz}" >/dev/null

{
  echo "### Fuzzing, $SECONDS_PER_TARGET s per target ($(date -u '+%Y-%m-%d %H:%M') UTC, load $(cut -d' ' -f1 /proc/loadavg))"
  echo
  echo "\`SECONDS_PER_TARGET=$SECONDS_PER_TARGET bench/fuzz.sh\`: -timeout=$TIMEOUT -rss_limit_mb=$RSS_LIMIT_MB -max_len=$MAX_LEN, ASan+UBSan (clang)"
  echo
  echo "| target | result | executions | exec/s | coverage (cov, ft) | corpus (seeds → end) | peak RSS MB |"
  echo "|---|---|---|---|---|---|---|"
} | tee "$WORK/summary.md"
for target in "${targets[@]}"; do
  corpus=$WORK/$target
  mkdir -p "$corpus"
  cp "$ROOT/fuzz/corpus/${target%%_*}"/* "$corpus"/ 2>/dev/null || true
  seeds=$(find "$corpus" -type f | wc -l)
  result=ok
  (cd "$WORK" && "$ASAN_BUILD/fuzz/${target}_fuzz" -max_total_time="$SECONDS_PER_TARGET" \
    -max_len="$MAX_LEN" -rss_limit_mb="$RSS_LIMIT_MB" -timeout="$TIMEOUT" -print_final_stats=1 \
    "$corpus" >"$WORK/$target.log" 2>&1) || { result="**FAILED** (see $WORK/$target.log)"; FAILED=1; }
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$WORK/$target.log" | tail -n1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$WORK/$target.log" | tail -n1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$WORK/$target.log" | tail -n1)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$WORK/$target.log" | tail -n1)
  echo "| $target | $result | ${execs:-?} | ${rate:-?} | ${cov:-?} | $seeds → $(find "$corpus" -type f | wc -l) | ${rss:-?} |" |
    tee -a "$WORK/summary.md"
done
[[ -z $OUT ]] || cat "$WORK/summary.md" >>"$OUT"
exit "$FAILED"
