#!/usr/bin/env bash
# hold_connections.sh — one agent holding thousands of PostgreSQL connections, directly or
# through HAProxy, at a fixed rate: whether every connection opens and stays, and what the agent
# costs in memory and CPU (issue 20: 10,000 connections per agent, RSS < 1 GB).
#
#   bench/hold_connections.sh [-o RESULTS.md]
#
# Settings (environment):
#   DBLOAD=build/cli/dbload  the binary under test
#   CONNS=10000      connections (target.pool), on event loops
#   VIA=haproxy      haproxy: through a dbenv HAProxy in front of the server; direct: to it
#   RATE=1000        open-loop point selects per second, spread over the connections
#   DURATION=60      seconds of load once every connection is open
#   CONNECT_TIMEOUT=120s
#
# Everything runs on 127.0.0.1 against servers this script starts (tests/harness/dbenv, with
# max_connections and maxconn raised to CONNS + 100) in a mktemp directory and stops on exit,
# also on Ctrl-C; the run is bounded by its duration. Memory is `free -m`'s available, read every
# 5 s while the run lasts; listen-queue overflows are the kernel's (`nstat`).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
DBENV=$ROOT/tests/harness/dbenv
DBLOAD=${DBLOAD:-$ROOT/build/cli/dbload}
CONNS=${CONNS:-10000}
VIA=${VIA:-haproxy}
RATE=${RATE:-1000}
DURATION=${DURATION:-60}
CONNECT_TIMEOUT=${CONNECT_TIMEOUT:-120s}
OUT=""

BENCH_NAME=hold_connections
# shellcheck source=bench/lib.sh
source "$HERE/lib.sh"

while getopts "o:" opt; do
  case $opt in
    o) OUT=$OPTARG ;;
    *) die "usage: $0 [-o RESULTS.md]" ;;
  esac
done
[[ $VIA == haproxy || $VIA == direct ]] || die "VIA: expected haproxy or direct, got '$VIA'"
[[ $CONNS =~ ^[0-9]+$ && $CONNS -gt 0 ]] || die "CONNS: expected a positive number, got '$CONNS'"
[[ -x $DBLOAD ]] || die "no dbload binary at $DBLOAD (set DBLOAD)"
for tool in jq nstat free /usr/bin/time; do
  command -v "$tool" >/dev/null || die "needs $tool"
done

WORK=$(mktemp -d /tmp/hold_connections.XXXXXX)
DBDIR=$(mktemp -d /tmp/dbenv.XXXXXX)
SAMPLER=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  [[ -z $SAMPLER ]] || kill "$SAMPLER" 2>/dev/null || true
  "$DBENV" stop "$DBDIR" >/dev/null 2>&1 || note "dbenv stop $DBDIR failed"
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# HAProxy holds two descriptors per connection (client and server side) and refuses to start
# if it cannot get them. Past what one process may open (ulimit -Hn; raising it needs
# CAP_SYS_RESOURCE, which this machine refuses even to root), the connections go through
# several HAProxy processes on the same port (dbenv's DBENV_HAPROXY_PROCESSES; the kernel
# spreads them), each allowed 1.2× its even share so that an uneven spread still fits.
HAPROXY_PROCESSES=1
MAXCONN=$((CONNS + 100))
if [[ $VIA == haproxy ]] && ((2 * CONNS + 1000 > $(ulimit -Hn))); then
  HAPROXY_PROCESSES=$(((2 * CONNS + 1000) / ($(ulimit -Hn) - 1000) + 1))
  MAXCONN=$((CONNS * 12 / 10 / HAPROXY_PROCESSES + 100))
  ((2 * MAXCONN + 1000 <= $(ulimit -Hn))) ||
    die "HAProxy: $HAPROXY_PROCESSES processes of maxconn $MAXCONN need more than $(ulimit -Hn) open files each"
fi
fds=$((CONNS + 1000))
[[ $VIA == direct ]] || fds=$((2 * MAXCONN + 1000))
(($(ulimit -Sn) >= fds)) || ulimit -Sn "$fds"

services=(postgres)
[[ $VIA == direct ]] || services+=(haproxy)
note "starting ${services[*]} in $DBDIR (max_connections $((CONNS + 100)); $HAPROXY_PROCESSES HAProxy process(es) of maxconn $MAXCONN)"
DBENV_PG_MAX_CONNECTIONS=$((CONNS + 100)) DBENV_HAPROXY_MAXCONN=$MAXCONN \
  DBENV_HAPROXY_PROCESSES=$HAPROXY_PROCESSES \
  "$DBENV" start "$DBDIR" "${services[@]}" --owner-pid $$ --fast >"$WORK/env" 2>"$WORK/dbenv.log" ||
  die "dbenv start failed: $(tail -n 20 "$WORK/dbenv.log")"
# shellcheck disable=SC1091
source "$WORK/env"
PORT=$PG_PORT
[[ $VIA == direct ]] || PORT=$HAPROXY_PG_PORT

PLAN=$WORK/hold.yaml
cat >"$PLAN" <<EOF
name: hold-$CONNS-$VIA
target:
  driver: postgresql
  host: 127.0.0.1
  port: $PORT
  user: $PG_USER
  password_file: $PG_PASSWORD_FILE
  database: $PG_DATABASE
  pool: $CONNS
  engine: event_loops
  connect_timeout: $CONNECT_TIMEOUT
workload: oltp
workload_options: {table_size: 100000}
scenario: point_select
load: {open: {rate: $RATE}}
stop: {duration: ${DURATION}s}
EOF
note "loading sbtest1"
"$DBLOAD" prepare "$PLAN" --set "target.port=$PG_PORT" >"$WORK/prepare.log" 2>&1 ||
  die "dbload prepare failed: $(tail -n 5 "$WORK/prepare.log")"

free -m | awk '/^Mem:/ { print $7 }' >"$WORK/available-before"
(while :; do
  echo "$(date +%s) $(free -m | awk '/^Mem:/ { print $7 }')"
  sleep 5
done) >"$WORK/available" &
SAMPLER=$!
nstat -n >/dev/null
note "dbload run: $CONNS connections via $VIA, $RATE/s for ${DURATION}s"
STARTED=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
rc=0
/usr/bin/time -v -o "$WORK/time" "$DBLOAD" run "$PLAN" --report "$WORK/report.json" >"$WORK/run.log" 2>&1 || rc=$?
OVERFLOWS=$(nstat 2>/dev/null | awk '/TcpExtListenOverflows/ { print $2 }')
kill "$SAMPLER" 2>/dev/null || true
wait "$SAMPLER" 2>/dev/null || true
SAMPLER=""
HAPROXY_RSS="–"
if [[ $VIA == haproxy ]]; then
  HAPROXY_RSS=""
  for pid in $("$DBENV" pids "$DBDIR" haproxy); do
    HAPROXY_RSS+="${HAPROXY_RSS:+ + }$(awk '/VmHWM/ { print $2, $3 }' "/proc/$pid/status")"
  done
  HAPROXY_RSS+=" (peak of each of $HAPROXY_PROCESSES)"
fi

rss_kb=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$WORK/time")
user_s=$(awk -F': ' '/User time/ { print $2 }' "$WORK/time")
sys_s=$(awk -F': ' '/System time/ { print $2 }' "$WORK/time")
wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { print $2 }' "$WORK/time")
min_available=$(awk 'NR == 1 || $2 < m { m = $2 } END { print m }' "$WORK/available")
if [[ -f $WORK/report.json ]]; then
  read -r executed errors not_started rate <<<"$(jq -r '"\(.executed // 0) \(.errors // 0) \(.not_started // 0) \(.actual_rate)"' "$WORK/report.json")"
  verdict=$(jq -r '.commit_reconciliation.verdict // "–"' "$WORK/report.json")
  timeline=$(jq -r '"Measured \(.total_duration_s) s; executed per second: \([.intervals[] | .executed // 0] | join(" ")); schedule lag p99 \(.schedule_lag.p99_ms) ms, dispatch lag p99 \(.dispatch_lag.p99_ms) ms; service time p99 \(.service_time.p99_ms) ms, p99.9 \(.service_time.p999_ms) ms."' "$WORK/report.json")
else
  executed="–" errors="–" not_started="–" rate="–" verdict="–"
fi
{
  echo "## hold_connections.sh — $STARTED"
  echo
  echo "\`CONNS=$CONNS VIA=$VIA RATE=$RATE DURATION=$DURATION DBLOAD=$DBLOAD bench/hold_connections.sh\` on $(nproc) CPUs, $(free -g | awk '/^Mem:/ { print $2 }') GB; $("$DBLOAD" version 2>/dev/null); PostgreSQL $("$PG_BINDIR/postgres" --version | awk '{ print $3 }')$([[ $VIA == direct ]] || echo ", $(haproxy -v 2>/dev/null | head -n 1 | awk '{ print "HAProxy", $3 }')")."
  echo
  echo "| dbload exit | executed | errors | not started | achieved/s | commits | dbload peak RSS | dbload CPU user + sys | wall | HAProxy RSS | memory available before / lowest | listen overflows |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  echo "| $rc | $executed | $errors | $not_started | $rate | $verdict | $rss_kb kB | $user_s + $sys_s s | $wall | $HAPROXY_RSS | $(<"$WORK/available-before") / $min_available MB | ${OVERFLOWS:-0} |"
  echo
  [[ -z ${timeline:-} ]] || { echo "$timeline"; echo; }
  echo "The run's last lines:"
  echo
  echo '```'
  grep -v '^ *$' "$WORK/run.log" | tail -n 25
  echo '```'
} | tee -a "${OUT:-/dev/null}"
