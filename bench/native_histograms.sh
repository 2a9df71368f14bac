#!/usr/bin/env bash
# native_histograms.sh — what native histograms cost and save (issue 20, metrics): one coordinator
# (coordinator_load_bench serve, the real service and /metrics page) following simulated agents
# of a 20-query-type scenario, scraped every second by two real Prometheus 2.42 servers at once,
# one classic and one with --enable-feature=native-histograms (tests/harness/dbenv). Reports,
# for each: the series it stores from the coordinator, the samples per scrape and the scrape
# duration and its own memory; and the page itself in both expositions (bytes, time to serve, over 20 fetches).
#
#   bench/native_histograms.sh [-o RESULTS.md]
#
# Settings (environment): BIN=build/bench/coordinator_load_bench  AGENTS=10  QUERY_TYPES=20
#   DURATION=30
# Everything runs on 127.0.0.1; the servers and the coordinator are stopped by their PIDs.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BIN=${BIN:-$ROOT/build/bench/coordinator_load_bench}
AGENTS=${AGENTS:-10}
QUERY_TYPES=${QUERY_TYPES:-20}
DURATION=${DURATION:-30}
OUT=/dev/stdout
while getopts "o:" opt; do
  case $opt in
    o) OUT=$OPTARG ;;
    *) echo "usage: $0 [-o RESULTS.md]" >&2; exit 2 ;;
  esac
done
DBENV=$ROOT/tests/harness/dbenv
PROTOBUF='application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3,*/*;q=0.2'

WORK=$(mktemp -d)
SERVE_PID=
cleanup() {
  for kind in classic native; do
    [[ -d $WORK/$kind ]] && "$DBENV" stop "$WORK/$kind" >/dev/null 2>&1 || true
  done
  if [[ -n $SERVE_PID ]]; then kill "$SERVE_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

DBLOAD_BENCH_QUERY_TYPES=$QUERY_TYPES "$BIN" serve --listen 127.0.0.1:0 --metrics 127.0.0.1:0 \
  >"$WORK/serve" 2>"$WORK/serve.err" &
SERVE_PID=$!
for _ in $(seq 50); do grep -q 'metrics on' "$WORK/serve" 2>/dev/null && break; sleep 0.1; done
addr=$(awk '/^listening on/ {print $3}' "$WORK/serve")
metrics=$(awk '/^metrics on/ {print $3}' "$WORK/serve")
metrics_hostport=${metrics#http://}
metrics_hostport=${metrics_hostport%/metrics}

declare -A PORT
for kind in classic native; do
  flag=()
  [[ $kind == native ]] && flag=(--native-histograms)
  "$DBENV" start "$WORK/$kind" prometheus --scrape "$metrics_hostport" --owner-pid $$ "${flag[@]}" \
    >"$WORK/$kind.env" 2>"$WORK/$kind.err"
  PORT[$kind]=$(awk -F= '/^PROMETHEUS_PORT=/ {print $2}' "$WORK/$kind.env")
done
query() {  # query KIND PROMQL → the first value
  curl -s "http://127.0.0.1:${PORT[$1]}/api/v1/query" --data-urlencode "query=$2" |
    sed -n 's/.*"value":\[[0-9.]*,"\([^"]*\)"\].*/\1/p'
}
for kind in classic native; do  # until each has scraped the coordinator once
  for _ in $(seq 100); do [[ $(query "$kind" 'up{job="dbload"}') == 1 ]] && break; sleep 0.2; done
done

# The page in both expositions, 20 fetches each, halfway through the run.
(
  sleep $((DURATION / 2))
  for accept in '*/*' "$PROTOBUF"; do
    for _ in $(seq 20); do
      curl -s -o /dev/null -H "Accept: $accept" -w '%{size_download} %{time_total}\n' "$metrics"
    done >"$WORK/fetch.$([[ $accept == '*/*' ]] && echo text || echo protobuf)"
  done
) &
fetcher=$!
"$BIN" agents --coordinator "$addr" --agents "$AGENTS" --query-types "$QUERY_TYPES" \
  --duration "$DURATION" --coordinator-pid "$SERVE_PID" >"$WORK/agents" 2>&1 || true
wait "$fetcher" || true
sleep 3  # the last intervals scraped

median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
{
  echo "### native_histograms.sh: $AGENTS simulated agents × $QUERY_TYPES query types, ${DURATION} s ($(date -u +%H:%M:%S) UTC, $BIN)"
  echo
  echo "| Prometheus | series stored from the coordinator | samples per scrape (last) | scrape duration, median over the run | its RSS at the end |"
  echo "|---|---|---|---|---|"
  for kind in classic native; do
    series=$(query "$kind" 'count({job="dbload"})')
    samples=$(query "$kind" 'scrape_samples_scraped{job="dbload"}')
    duration=$(query "$kind" "quantile_over_time(0.5, scrape_duration_seconds{job=\"dbload\"}[${DURATION}s])")
    rss=$(query "$kind" 'process_resident_memory_bytes{job="prometheus"}')
    echo "| $kind | $series | $samples | $(awk -v d="$duration" 'BEGIN {printf "%.2f ms", d * 1000}') |" \
      "$(awk -v b="$rss" 'BEGIN {printf "%.1f MiB", b / 1048576}') |"
  done
  echo
  echo "| exposition | bytes per page | time to fetch, median of 20 |"
  echo "|---|---|---|"
  for format in text protobuf; do
    bytes=$(awk '{print $1}' "$WORK/fetch.$format" | median)
    seconds=$(awk '{print $2}' "$WORK/fetch.$format" | median)
    echo "| $format | $bytes | $(awk -v s="$seconds" 'BEGIN {printf "%.2f ms", s * 1000}') |"
  done
  echo
  echo "Coordinator, from the agents' side:"
  echo
  echo '```'
  grep -E "coordinator|merged|lost" "$WORK/agents" | tail -6
  echo '```'
  echo
} >>"$OUT"
