#!/usr/bin/env bash
# scaling.sh — issue 3, benchmark 1: 1, 2 and 3 separate dbload-agent processes dialing one
# dbload-coordinator on 127.0.0.1, against the noop driver (open loop at several total rates) and,
# with --postgres, against a throwaway PostgreSQL (tests/harness/dbenv).
#
#   bench/scaling.sh [--build DIR] [--out DIR] [--duration SEC] [--rates "100000 300000 1000000"]
#                    [--pool N] [--postgres] [--pg-rates "10000"] [--pg-clients 8] [--no-noop]
#
# For every (agents, rate) it runs
#   dbload submit PLAN --coordinator ADDR --min-agents N --wait-for-agents 30s --wait --report F
# and records: the report's actual_rate and executed, the coordinator's utime+stime
# (/proc/PID/stat) before and after the submit, the agents' CPU (report JSON), and the number of
# agent reports the coordinator received. That number is not exposed by the coordinator (no
# metric, no log line per report), so it is computed from the protocol: each agent sends one
# report per interval (warm-up and measured) plus one final, i.e. N × (ceil(warmup+duration) + 1).
# An idle baseline (coordinator CPU with N agents connected and no run, over the same length)
# is measured too, so that the per-report figure can be given with and without the idle cost.
#
# Everything listens on 127.0.0.1 only; every process this script starts is stopped by PID.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-dbench
out=/tmp/dbload-scaling-results  # JSON reports, logs and summary.tsv
duration=10
warmup=2
rates="100000 300000 1000000"
pg_rates="10000"
pg_clients=8
pool=2
do_noop=1
do_pg=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --rates) rates=$2; shift 2 ;;
    --pg-rates) pg_rates=$2; shift 2 ;;
    --pg-clients) pg_clients=$2; shift 2 ;;
    --pool) pool=$2; shift 2 ;;
    --postgres) do_pg=1; shift ;;
    --no-noop) do_noop=0; shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
dbload=$build/cli/dbload
agent_bin=$build/agent/dbload-agent
coord_bin=$build/coordinator/dbload-coordinator
mkdir -p "$out"
work=$(mktemp -d /tmp/dbload-scaling.XXXXXX)
chmod 755 "$work"

coord_pid=
agent_pids=()
servers=
cleanup() {
  for p in "${agent_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [[ -n $coord_pid ]] && kill "$coord_pid" 2>/dev/null || true
  for p in "${agent_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [[ -n $coord_pid ]] && wait "$coord_pid" 2>/dev/null || true
  if [[ -n $servers ]]; then "$root/tests/harness/dbenv" stop "$servers" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cpu_of() {  # utime+stime of PID in seconds
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"
}
load1() { cut -d' ' -f1 /proc/loadavg; }

start_coordinator() {
  "$coord_bin" --listen 127.0.0.1:0 --metrics 127.0.0.1:0 >"$work/coord.out" 2>"$out/coordinator.log" &
  coord_pid=$!
  for _ in $(seq 100); do
    grep -q '^metrics on' "$work/coord.out" 2>/dev/null && break
    sleep 0.1
  done
  addr=$(sed -n 's/^listening on //p' "$work/coord.out")
  metrics=$(sed -n 's/^metrics on //p' "$work/coord.out")
  echo "coordinator pid $coord_pid on $addr, metrics $metrics"
}

set_agents() {  # n: start or stop (by PID, newest first) agent processes until n run
  while [[ ${#agent_pids[@]} -gt $1 ]]; do
    local last=${agent_pids[-1]}
    kill "$last"; wait "$last" 2>/dev/null || true
    unset 'agent_pids[-1]'
  done
  while [[ ${#agent_pids[@]} -lt $1 ]]; do add_agent "${names[${#agent_pids[@]}]}"; done
  # Wait until exactly n agents are connected (a stopped one must have left).
  for _ in $(seq 100); do
    [[ $("$dbload" agents --coordinator "$addr" 2>/dev/null | grep -c '^agent-') -eq $1 ]] && return
    sleep 0.1
  done
  echo "expected $1 connected agents" >&2
  exit 1
}

add_agent() {  # name
  "$agent_bin" --coordinator "$addr" --name "$1" >>"$out/agents.log" 2>&1 &
  agent_pids+=($!)
}

summary=$out/summary.tsv
[[ -f $summary ]] || printf 'target\tagents\trate_wanted\tactual_rate\texecuted\tnot_started\tcoord_cpu_s\twall_s\tcoord_idle_cpu_s\treports\tcoord_us_per_report\tcoord_us_per_report_net_idle\tagents_cpu_s\tload_before\tload_after\treport\n' >"$summary"

run_one() {  # label plan n rate(tag) --set args...
  local label=$1 plan=$2 n=$3 rate=$4
  shift 4
  local report=$out/$label-agents$n-rate$rate.json
  local lb c0 c1 t0 t1 la
  lb=$(load1)
  c0=$(cpu_of "$coord_pid"); t0=$(date +%s.%N)
  "$dbload" submit "$plan" --coordinator "$addr" --min-agents "$n" --wait-for-agents 30s --wait \
    --report "$report" --set "stop.duration=${duration}s" \
    --set "warmup=${warmup}s" "$@" >"$out/$label-agents$n-rate$rate.txt" 2>&1 || true
  c1=$(cpu_of "$coord_pid"); t1=$(date +%s.%N)
  la=$(load1)
  # Idle baseline: same number of agents connected, no run, same length.
  local i0 i1 wall
  wall=$(echo "$t1 - $t0" | bc -l)
  i0=$(cpu_of "$coord_pid"); sleep "$wall"; i1=$(cpu_of "$coord_pid")
  python3 - "$report" "$label" "$n" "$rate" "$c0" "$c1" "$t0" "$t1" "$i0" "$i1" "$lb" "$la" \
    "$warmup" "$duration" >>"$summary" <<'EOF'
import json, math, sys
(report, label, n, rate, c0, c1, t0, t1, i0, i1, lb, la, warmup, duration) = sys.argv[1:]
n = int(n)
try:
    r = json.load(open(report))
except Exception as e:
    print(f"{label}\t{n}\t{rate}\tFAILED ({e})")
    sys.exit(0)
cpu = float(c1) - float(c0)
idle = float(i1) - float(i0)
reports = n * (math.ceil(float(warmup) + float(duration)) + 1)
agents_cpu = sum(a.get("cpu_seconds", 0) for a in r.get("agents", []))
print("\t".join(str(x) for x in [
    label, n, rate, round(r.get("actual_rate", 0)), r.get("executed", 0), r.get("not_started", 0),
    f"{cpu:.2f}", f"{float(t1) - float(t0):.1f}", f"{idle:.2f}", reports,
    f"{cpu / reports * 1e6:.0f}", f"{(cpu - idle) / reports * 1e6:.0f}", f"{agents_cpu:.2f}",
    lb, la, report.split('/')[-1]]))
EOF
  tail -1 "$summary"
}

start_coordinator
names=(agent-1 agent-2 agent-3)

if [[ $do_noop == 1 ]]; then
  noop_plan=$root/workloads/plans/noop-engine.yaml
  for n in 1 2 3; do
    set_agents "$n"
    for rate in $rates; do
      run_one noop "$noop_plan" "$n" "$rate" --set "load.open.rate=$rate" \
        --set "target.pool=$pool" --set "target.noop.fixed=0s"
    done
  done
fi

if [[ $do_pg == 1 ]]; then
  servers=$work/servers
  "$root/tests/harness/dbenv" start "$servers" postgres --owner-pid $$ >"$work/env"
  # shellcheck disable=SC1091
  source "$work/env"
  PGPASSWORD=$(<"$PG_PASSWORD_FILE")
  export PGPASSWORD
  # Agents read password_env in their own environment: restart any started before this point.
  set_agents 0
  pg_plan=$root/workloads/plans/oltp-point-select-postgresql.yaml
  pg=(--set "target.port=$PG_PORT")
  "$dbload" prepare "$pg_plan" "${pg[@]}" >"$out/pg-prepare.txt" 2>&1
  # The plan is a closed loop and a plan cannot have both; the open-loop runs use a copy with
  # its load line replaced.
  pg_open_plan=$work/oltp-point-select-postgresql-open.yaml
  sed 's/^load: {closed: {clients: 4}}$/load: {open: {rate: 10000}}/' "$pg_plan" >"$pg_open_plan"
  grep -q '^load: {open' "$pg_open_plan"
  # Closed loop, the same total number of clients split over the agents (8 over 3: 3/3/2), and
  # open loop at fixed total rates, each agent opening a pool of 8 connections.
  for n in 1 2 3; do
    set_agents "$n"
    for clients in $pg_clients; do
      run_one pg-closed "$pg_plan" "$n" "c$clients" "${pg[@]}" --set "load.closed.clients=$clients"
    done
    for rate in $pg_rates; do
      run_one pg-open "$pg_open_plan" "$n" "$rate" "${pg[@]}" --set "load.open.rate=$rate" \
        --set "target.pool=8"
    done
  done
fi
