#!/usr/bin/env bash
# coordinator_rounds.sh — the coordinator following many simulated agents (issue 20: 1,000
# agents × 20 query types × 1 report/s under one core, none lost, every report merged), with
# one scrape of its Prometheus page during the run; binaries A and B in interleaved rounds.
#
#   bench/coordinator_rounds.sh [-o RESULTS.md]
#
# Settings (environment):
#   A=build/bench/coordinator_load_bench   the binary under test
#   B=                                     another build of it, for an A/B (optional)
#   AGENTS=1000  QUERY_TYPES=20  DURATION=20  ROUNDS=2
#
# Both roles run on 127.0.0.1 (`serve` is the real coordinator service, `agents` the simulated
# agents over real gRPC streams; see the binary's header); each round starts a fresh
# coordinator and stops it (by its PID) when the run has ended. The scrape is taken 12 s in.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
A=${A:-$ROOT/build/bench/coordinator_load_bench}
B=${B:-}
AGENTS=${AGENTS:-1000}
QUERY_TYPES=${QUERY_TYPES:-20}
DURATION=${DURATION:-20}
ROUNDS=${ROUNDS:-2}
OUT=/dev/stdout
while getopts "o:" opt; do
  case $opt in
    o) OUT=$OPTARG ;;
    *) echo "usage: $0 [-o RESULTS.md]" >&2; exit 2 ;;
  esac
done

WORK=$(mktemp -d)
SERVE_PID=
cleanup() {
  if [[ -n $SERVE_PID ]]; then kill "$SERVE_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

round() {  # round LABEL BINARY
  local label=$1 bin=$2
  DBLOAD_BENCH_QUERY_TYPES=$QUERY_TYPES "$bin" serve --listen 127.0.0.1:0 \
    --metrics 127.0.0.1:0 >"$WORK/serve" 2>"$WORK/serve.err" &
  SERVE_PID=$!
  for _ in $(seq 50); do grep -q 'metrics on' "$WORK/serve" 2>/dev/null && break; sleep 0.1; done
  local addr metrics
  addr=$(awk '/^listening on/ {print $3}' "$WORK/serve")
  metrics=$(awk '/^metrics on/ {print $3}' "$WORK/serve")
  (sleep 12; curl -s --max-time 10 "$metrics" >"$WORK/scrape" || true) &
  local scraper=$!
  "$bin" agents --coordinator "$addr" --agents "$AGENTS" --query-types "$QUERY_TYPES" \
    --duration "$DURATION" --coordinator-pid "$SERVE_PID" >"$WORK/agents" 2>&1 || true
  wait "$scraper" || true
  kill "$SERVE_PID" 2>/dev/null || true
  wait "$SERVE_PID" 2>/dev/null || true
  SERVE_PID=
  {
    echo "### $label ($(date -u +%H:%M:%S) UTC, $bin)"
    echo '```'
    grep -E '^(run ended|report:|merged exactly|sent:|coordinator|bench process)' "$WORK/agents" | cut -c1-400
    echo "scrape: $(grep -vc '^#' "$WORK/scrape" || true) series, $(wc -c <"$WORK/scrape") bytes," \
      "$(grep -c '^dbload_agent_cpu' "$WORK/scrape" || true) of them dbload_agent_cpu_*"
    echo '```'
  } >>"$OUT"
}

echo "## coordinator_rounds: $AGENTS agents × $QUERY_TYPES query types, ${DURATION} s, $ROUNDS rounds" >>"$OUT"
for r in $(seq "$ROUNDS"); do
  if [[ -n $B ]]; then round "round $r, B" "$B"; fi
  round "round $r, A" "$A"
done
