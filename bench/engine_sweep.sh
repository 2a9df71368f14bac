#!/usr/bin/env bash
# engine_sweep.sh — runs engine_bench (noop driver, open loop, full recording) pinned to one
# core at several rates with 1 and 2 workers, then the memory case (128 connections x 20 query
# types), and prints a markdown table. Read-only apart from an optional output file.
#
#   bench/engine_sweep.sh [-o FILE]     (FILE: the markdown is appended to it)
#
# Settings (environment): ENGINE_BENCH=build-bench/bench/engine_bench, RATES="250000 500000
# 1000000 1500000 2000000 3000000 4000000", WORKERS="1 2", SECONDS_EACH=10, WARMUP=1, CPU=0,
# MEM_RATE=100000, MEM_SECONDS=10, LOAD_MAX=1.5, LOAD_WAIT=60 (wait at most that long for the
# 1-minute load average to reach LOAD_MAX before each run; the value seen is reported),
# NICE= (e.g. NICE=-19: run the pinned engine at that nice level, so that other users' processes
# on the same core get little of it; measures the engine rather than the neighbours).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
ENGINE_BENCH=${ENGINE_BENCH:-$ROOT/build-bench/bench/engine_bench}
RATES=${RATES:-"250000 500000 1000000 1500000 2000000 3000000 4000000"}
WORKERS=${WORKERS:-"1 2"}
SECONDS_EACH=${SECONDS_EACH:-10}
WARMUP=${WARMUP:-1}
CPU=${CPU:-0}
MEM_RATE=${MEM_RATE:-100000}
MEM_SECONDS=${MEM_SECONDS:-10}
LOAD_MAX=${LOAD_MAX:-1.5}
LOAD_WAIT=${LOAD_WAIT:-60}
NICE=${NICE:-}
PREFIX=()
if [[ -n $NICE ]]; then PREFIX=(nice -n "$NICE"); fi
OUT_FILE=""
while getopts "o:" opt; do
  case $opt in
    o) OUT_FILE=$OPTARG ;;
    *) exit 2 ;;
  esac
done
[[ -x $ENGINE_BENCH ]] || {
  echo "engine_sweep: $ENGINE_BENCH not built" >&2
  exit 1
}

TMP=$(mktemp -d /tmp/engine_sweep.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
CLK_TCK=$(getconf CLK_TCK)
NCPU=$(nproc)

settle() {
  local waited=0 l
  while :; do
    l=$(cut -d' ' -f1 /proc/loadavg)
    if awk -v l="$l" -v m="$LOAD_MAX" 'BEGIN { exit !(l <= m) }' || ((waited >= LOAD_WAIT)); then break; fi
    sleep 5
    waited=$((waited + 5))
  done
  echo "$l"
}
busy_ticks() { awk -v c="$1" '$1 == c { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat; } # cpu | cpuN
field() { tr ' ' '\n' <<<"$2" | awk -F= -v k="$1" '$1 == k { print $2 }'; }

# run CPULINE NCPUS ARGS...: one engine_bench run; sets LINE (its key=value output), LOAD, OTHER
# (% of the CPUs of CPULINE in /proc/stat — "cpu0" or "cpu" for all — that other processes
# used during the run).
run() {
  local line=$1 ncpus=$2
  shift 2
  LOAD=$(settle)
  local b0 b1 wall u s
  b0=$(busy_ticks "$line")
  /usr/bin/time -o "$TMP/time" -f "%e %U %S" "$@" >"$TMP/out" 2>"$TMP/err" || {
    cat "$TMP/err" >&2
    exit 1
  }
  b1=$(busy_ticks "$line")
  read -r wall u s <"$TMP/time"
  OTHER=$(awk -v b=$((b1 - b0)) -v t="$CLK_TCK" -v u="$u" -v s="$s" -v w="$wall" -v n="$ncpus" \
    'BEGIN { o = b / t - u - s; if (o < 0) o = 0; printf "%.1f", 100 * o / (w * n) }')
  LINE=$(tail -n 1 "$TMP/out")
}

{
  echo "### engine_bench sweep — $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(nproc) CPUs, pinned to CPU $CPU"
  echo
  echo "Command per row: \`${PREFIX[*]}${PREFIX:+ }taskset -c $CPU $ENGINE_BENCH --rate=RATE --workers=W --seconds=$SECONDS_EACH --warmup=$WARMUP\`"
  echo "(\"other %\": time CPU $CPU spent on other processes during the run, in %: interference.)"
  echo
  echo "| workers | target/s | achieved/s | achieved % | within 1 % | not started | lag p50 µs | lag p99 µs | lag p99.9 µs | lag max µs | CPU ns/txn | load before | other % |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
} >"$TMP/report.md"
cat "$TMP/report.md"

for w in $WORKERS; do
  for r in $RATES; do
    run "cpu$CPU" 1 "${PREFIX[@]}" taskset -c "$CPU" "$ENGINE_BENCH" --rate="$r" --workers="$w" --seconds="$SECONDS_EACH" --warmup="$WARMUP"
    row="| $w | $r | $(field actual_rate "$LINE") | $(field achieved_pct "$LINE") | $(field within_1pct "$LINE") | $(field not_started "$LINE") | $(field lag_p50_us "$LINE") | $(field lag_p99_us "$LINE") | $(field lag_p999_us "$LINE") | $(field lag_max_us "$LINE") | $(field cpu_ns_per_txn "$LINE") | $LOAD | $OTHER |"
    echo "$row" | tee -a "$TMP/report.md"
  done
done

{
  echo
  echo "Memory: \`$ENGINE_BENCH --connections=128 --query-types=20 --rate=$MEM_RATE --seconds=$MEM_SECONDS --warmup=$WARMUP\` (not pinned)"
  echo
  echo "| connections | query types | rate/s | achieved % | RSS at start MiB | peak RSS (VmHWM) MiB | RSS at end MiB |"
  echo "|---|---|---|---|---|---|---|"
} | tee -a "$TMP/report.md"
run cpu "$NCPU" "$ENGINE_BENCH" --connections=128 --query-types=20 --rate="$MEM_RATE" --seconds="$MEM_SECONDS" --warmup="$WARMUP"
echo "| 128 | 20 | $MEM_RATE | $(field achieved_pct "$LINE") | $(field rss_start_mib "$LINE") | $(field rss_peak_mib "$LINE") | $(field rss_end_mib "$LINE") |" | tee -a "$TMP/report.md"

if [[ -n $OUT_FILE ]]; then cat "$TMP/report.md" >>"$OUT_FILE"; fi
