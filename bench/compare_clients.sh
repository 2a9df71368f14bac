#!/usr/bin/env bash
# compare_clients.sh — dbload against pgbench and sysbench on the same throwaway servers, in one
# run: point-select throughput and client CPU per query (closed loop), open-loop rate accuracy,
# and what each client reports when the server stalls (coordinated omission).
#
#   bench/compare_clients.sh [-o RESULTS.md] [-k]
#
#   -o FILE   also append the markdown results (tables + commands) to FILE (the only file
#             written outside the temporary directories)
#   -k        keep the work directory (plans, client logs) instead of deleting it
#
# Settings (environment):
#   DBLOAD=build-bench/cli/dbload  the binary under test
#   DURATION=20       seconds of every closed-loop and open-loop measurement
#   CONNS="4 8"       connection counts for the closed-loop comparisons
#   PARTS="closed rate co"
#                     which parts to run: closed-loop point select (a-c), the fixed rate and
#                     open-loop accuracy (c, d), coordinated omission (e)
#   REPEATS=1         rounds of the closed-loop and fixed-rate comparisons (clients interleaved
#                     in every round); the summary shows the median of the rounds
#   ROWS=100000       rows in sbtest1 (and pgbench scale = ROWS/100000, at least 1)
#   CLOSED_ENGINES=threads
#                     dbload's engines (target.engine) in the closed-loop PostgreSQL rows
#   MYSQL_CLIENTS="connector_c connector_cpp"
#                     dbload's MySQL client libraries (target.mysql_client) in the closed-loop
#                     MariaDB rows
#   OPEN_RATE=10000   fixed-rate test (PostgreSQL, DURATION seconds): dbload's open-loop
#                     accuracy, and client CPU per query of dbload / sysbench --rate /
#                     pgbench --rate at that same rate
#   OPEN_POOL=8       connections (threads, clients) of that test
#   RATE_JOBS=        pgbench's threads (-j) in that test (empty: one per connection, as sysbench
#                     and dbload's threads engine; 2: one per core, as dbload's event loops)
#   RATE_ENGINES="threads event_loops"
#                     dbload's engines (target.engine) measured in that test, each a row
#   RATE_SERVERS=postgres
#                     servers of that test: postgres and/or mariadb (dbload on each engine of
#                     RATE_ENGINES with Connector/C, and sysbench --rate; no pgbench)
#   RATE_ARRIVAL=poisson
#                     dbload's arrivals in that test (load.open.arrival): poisson, as pgbench
#                     --rate and sysbench --rate draw theirs (exponential gaps), or uniform
#   CORE_COST=0       1: in that test, an idle-class spinner (build-bench/bench/core_soaker,
#                     $SOAKER) shares the client's CPU (CLIENT_CPUS, one CPU); what the client
#                     takes from it is the client's cost to its core, the kernel's interrupts
#                     and wake-ups for it included, which its own CPU time leaves out
#   RATE_SET=         one more --set for dbload in that test (target.connect_timeout=60s: 1,000
#                     connections opened at once can take PostgreSQL longer than 10 s on 2 cores)
#   CONNECT_CLIENTS=4 CONNECT_JOBS=2
#                     part "connect" (not in the default PARTS): a new connection per
#                     transaction, closed loop, DURATION s: dbload target.connect:
#                     per_transaction (each engine of RATE_ENGINES on PostgreSQL, threads on
#                     MariaDB) against pgbench -C -j CONNECT_JOBS; transactions/s, CPU per
#                     transaction, and connect times as each client reports them
#   PIPELINE_CLIENTS=4
#                     part "pipeline" (not in the default PARTS): oltp read_only (BEGIN, 10 point
#                     selects, 4 range selects, COMMIT) on PostgreSQL, closed loop, DURATION s:
#                     dbload with and without target.pipeline (each engine of RATE_ENGINES)
#                     against pgbench running the same statements in a script with and without
#                     \startpipeline … \endpipeline, and sysbench oltp_read_only; transactions/s
#                     and CPU per transaction
#   CO_RATE=2000 CO_DURATION=10 CO_STALL_AT=3 CO_STALL=1 CO_CONNS=8
#                     coordinated-omission test: rate, length, when the stall starts, how long
#                     every PostgreSQL process stays SIGSTOPped, connections per client
#   WARMUP=3          seconds of unrecorded load per client and server before measuring
#   LOAD_MAX=1.5 LOAD_WAIT=30
#                     before each measurement wait (at most LOAD_WAIT s) for the 1-minute load
#                     average to drop to LOAD_MAX; the value found is reported either way
#   SERVER_CPUS= CLIENT_CPUS=
#                     CPU lists (taskset -c) for the servers and the clients, e.g. 1 and 0: the
#                     servers' processes and threads (and every backend forked later) on some
#                     cores, each measured client on others (empty: no pinning)
#   OTHER_MAX=10 RETRIES=1
#                     a closed-loop measurement during which processes other than the client
#                     and the server used more than OTHER_MAX % of the machine is repeated up
#                     to RETRIES times; the least disturbed attempt is reported
#
# Everything runs on 127.0.0.1 against servers this script starts (tests/harness/dbenv) in a
# mktemp directory and stops on exit, also on Ctrl-C. Every client run is bounded by its
# duration. Only processes this script started are signalled (and the PostgreSQL processes of
# its own dbenv instance, which it SIGSTOPs for the stall test and always SIGCONTs).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
DBENV=$ROOT/tests/harness/dbenv

DBLOAD=${DBLOAD:-$ROOT/build-bench/cli/dbload}
PARTS=${PARTS:-"closed rate co"}
DURATION=${DURATION:-20}
CONNS=${CONNS:-"4 8"}
REPEATS=${REPEATS:-1}
ROWS=${ROWS:-100000}
OPEN_RATE=${OPEN_RATE:-10000}
OPEN_POOL=${OPEN_POOL:-8}
RATE_JOBS=${RATE_JOBS:-$OPEN_POOL}
RATE_ARRIVAL=${RATE_ARRIVAL:-poisson}
CORE_COST=${CORE_COST:-0}
# Room on the server for the fixed-rate test's connections (dbenv's default is 300).
export DBENV_PG_MAX_CONNECTIONS=$((OPEN_POOL + 100 > 300 ? OPEN_POOL + 100 : 300))
export DBENV_MARIADB_MAX_CONNECTIONS=$((OPEN_POOL + 100 > 1000 ? OPEN_POOL + 100 : 1000))
RATE_ENGINES=${RATE_ENGINES:-"threads event_loops"}
CLOSED_ENGINES=${CLOSED_ENGINES:-threads}
MYSQL_CLIENTS=${MYSQL_CLIENTS:-"connector_c connector_cpp"}
RATE_SERVERS=${RATE_SERVERS:-postgres}
CONNECT_CLIENTS=${CONNECT_CLIENTS:-4}
CONNECT_JOBS=${CONNECT_JOBS:-2}
PIPELINE_CLIENTS=${PIPELINE_CLIENTS:-4}
CO_RATE=${CO_RATE:-2000}
CO_DURATION=${CO_DURATION:-10}
CO_STALL_AT=${CO_STALL_AT:-3}
CO_STALL=${CO_STALL:-1}
CO_CONNS=${CO_CONNS:-8}
WARMUP=${WARMUP:-3}
LOAD_MAX=${LOAD_MAX:-1.5}
LOAD_WAIT=${LOAD_WAIT:-30}
OTHER_MAX=${OTHER_MAX:-10}
RETRIES=${RETRIES:-1}
SERVER_CPUS=${SERVER_CPUS:-}
CLIENT_CPUS=${CLIENT_CPUS:-}
SOAKER=${SOAKER:-$(dirname "$DBLOAD")/../bench/core_soaker}

OUT_FILE=""
KEEP=0
while getopts "o:kh" opt; do
  case $opt in
    o) OUT_FILE=$OPTARG ;;
    k) KEEP=1 ;;
    h)
      awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"
      exit 0
      ;;
    *) exit 2 ;;
  esac
done

BENCH_NAME=compare_clients
# shellcheck source=bench/lib.sh
source "$HERE/lib.sh"

for tool in sysbench pgbench jq /usr/bin/time awk taskset; do
  command -v "$tool" >/dev/null || die "$tool not found"
done
[[ -x $DBLOAD ]] || die "dbload binary not found at $DBLOAD (build it, or set DBLOAD=...)"
for v in REPEATS DURATION ROWS OPEN_RATE OPEN_POOL RATE_JOBS CONNECT_CLIENTS CONNECT_JOBS CO_RATE CO_DURATION CO_STALL_AT CO_STALL CO_CONNS WARMUP LOAD_WAIT RETRIES OTHER_MAX; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a non-negative integer, got '${!v}'"
done
for v in SERVER_CPUS CLIENT_CPUS; do
  [[ -z ${!v} || ${!v} =~ ^[0-9]+([-,][0-9]+)*$ ]] || die "$v must be a CPU list such as 0 or 0-1 or 0,2, got '${!v}'"
done
((DURATION >= 1 && DURATION <= 3600)) || die "DURATION must be 1..3600"
[[ $RATE_ARRIVAL == poisson || $RATE_ARRIVAL == uniform ]] || die "RATE_ARRIVAL must be poisson or uniform, got '$RATE_ARRIVAL'"
[[ $CORE_COST == 0 || $CORE_COST == 1 ]] || die "CORE_COST must be 0 or 1, got '$CORE_COST'"
if ((CORE_COST)); then
  [[ $CLIENT_CPUS =~ ^[0-9]+$ ]] || die "CORE_COST=1 needs CLIENT_CPUS to be one CPU (the spinner measures that CPU), got '$CLIENT_CPUS'"
  [[ -x $SOAKER ]] || die "core_soaker not found at $SOAKER (build it with -DDBLOAD_BENCH=ON, or set SOAKER=...)"
fi
((CO_STALL_AT + CO_STALL < CO_DURATION)) || die "the stall must end before CO_DURATION"
for part in $PARTS; do
  [[ $part == closed || $part == connect || $part == pipeline || $part == rate || $part == co ]] || die "PARTS: unknown part '$part' (closed, connect, pipeline, rate, co)"
done
want() { [[ " $PARTS " == *" $1 "* ]]; }

# ---------------------------------------------------------------------------------------------
# State for clean-up: the dbenv directory, client PIDs started in the background, and PIDs
# currently SIGSTOPped by us.

WORK=$(mktemp -d /tmp/compare_clients.XXXXXX)
DBDIR=$(mktemp -d /tmp/dbenv.XXXXXX)
BG_PIDS=()
STOPPED_PIDS=()
SOAK_NOW=0 # 1 while the fixed-rate test's clients run beside core_soaker (CORE_COST)

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if ((${#STOPPED_PIDS[@]})); then
    note "resuming stopped server processes"
    kill -CONT "${STOPPED_PIDS[@]}" 2>/dev/null || true
  fi
  local pid child
  for pid in "${BG_PIDS[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then
      # /usr/bin/time wraps clients: signal its child too (a PID we started, through it).
      for child in $(pgrep -P "$pid" 2>/dev/null || true); do kill -TERM "$child" 2>/dev/null || true; done
      kill -TERM "$pid" 2>/dev/null || true
    fi
  done
  for pid in "${BG_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  "$DBENV" stop "$DBDIR" >/dev/null 2>&1 || note "dbenv stop $DBDIR failed"
  if ((KEEP)); then note "work directory kept: $WORK"; else rm -rf "$WORK"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

forget_bg() { # PID: drop it from BG_PIDS
  local kept=() p
  for p in "${BG_PIDS[@]}"; do [[ $p == "$1" ]] || kept+=("$p"); done
  BG_PIDS=("${kept[@]}")
}

# Runs a client in the background (so that the traps can reach it) and waits for it.
run_bg_wait() {
  "$@" &
  local pid=$!
  BG_PIDS+=("$pid")
  local rc=0
  wait "$pid" || rc=$?
  forget_bg "$pid"
  return "$rc"
}

# ---------------------------------------------------------------------------------------------
# Recording commands and results

COMMANDS=() # exact commands, secrets masked
record_cmd() { COMMANDS+=("$(show_cmd "$@")"); }

# Waits (bounded) for the load average to settle; prints the 1-minute load it saw last.
settle() {
  local waited=0 l
  while :; do
    l=$(load1)
    if awk -v l="$l" -v m="$LOAD_MAX" 'BEGIN { exit !(l <= m) }' || ((waited >= LOAD_WAIT)); then break; fi
    sleep 5
    waited=$((waited + 5))
  done
  echo "$l"
}

CLK_TCK=$(getconf CLK_TCK)
NCPU=$(nproc)

# measure NAME SERVICE QUERIES_PARSER -- CMD...: runs CMD under /usr/bin/time after the load
# settles; sets M_LOAD M_CLIENT_S M_SERVER_S M_OTHER_PCT M_WALL M_LOG.
measure_once() {
  local name=$1 service=$2
  shift 3
  M_LOG=$WORK/$name.log
  M_FAILED=""
  M_LOAD=$(settle)
  local rc=0
  local pin=()
  [[ -z $CLIENT_CPUS ]] || pin=(taskset -c "$CLIENT_CPUS")
  M_CORE_S="" M_IRQ=""
  local alone_it alone_s soak_pid="" soak_cpu_s=0
  # The spinner's pace alone on the CPU, then beside the client for the client's whole life.
  if ((SOAK_NOW)); then
    read -r alone_it alone_s _ < <(taskset -c "$CLIENT_CPUS" "$SOAKER" 2) || die "core_soaker failed"
  fi
  local b0 s0 b1 s1 i0="" i1
  b0=$(machine_busy_ticks)
  s0=$(server_ticks "$service")
  [[ ! $CLIENT_CPUS =~ ^[0-9]+$ ]] || i0=$(cpu_interrupts "$CLIENT_CPUS")
  if ((SOAK_NOW)); then
    taskset -c "$CLIENT_CPUS" "$SOAKER" >"$WORK/$name.soak" &
    soak_pid=$!
    BG_PIDS+=("$soak_pid")
  fi
  run_bg_wait /usr/bin/time -o "$WORK/$name.time" -f "%e %U %S" "${pin[@]}" "$@" >"$M_LOG" 2>&1 || rc=$?
  if [[ -n $soak_pid ]]; then
    kill -TERM "$soak_pid"
    wait "$soak_pid" || die "core_soaker failed"
    forget_bg "$soak_pid"
    local with_it with_s
    read -r with_it with_s soak_cpu_s <"$WORK/$name.soak"
    # Core seconds the client took: the spinner's time beside it less what its iterations
    # would have taken alone.
    M_CORE_S=$(awk -v wi="$with_it" -v ws="$with_s" -v ai="$alone_it" -v as="$alone_s" 'BEGIN { c = ws - wi * as / ai; printf "%.2f", c < 0 ? 0 : c }')
  fi
  if ((rc != 0)); then
    # One client's failure (1,000 threads can starve an agent's reporting) is a row of its own;
    # the other clients are still measured.
    M_FAILED="exit $rc: $(grep -v '^Command exited' "$M_LOG" | tail -n 1 | tr '|' '/')"
    note "$name failed ($M_FAILED); log: $M_LOG"
    M_CLIENT_S=0 M_SERVER_S=0 M_OTHER_PCT=0
    return
  fi
  b1=$(machine_busy_ticks)
  s1=$(server_ticks "$service")
  if [[ -n $i0 ]]; then
    i1=$(cpu_interrupts "$CLIENT_CPUS")
    M_IRQ=$(paste -d' ' <(tr ' ' '\n' <<<"$i0") <(tr ' ' '\n' <<<"$i1") | awk '{ printf "%s%d", (NR > 1 ? " " : ""), $2 - $1 }')
  fi
  local wall u s
  read -r wall u s <"$WORK/$name.time"

  M_CLIENT_S=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
  M_SERVER_S=$(awk -v d=$((s1 - s0)) -v t="$CLK_TCK" 'BEGIN { printf "%.2f", d / t }')
  # The spinner's own CPU (CORE_COST) is not another process's disturbance.
  M_OTHER_PCT=$(awk -v b=$((b1 - b0)) -v t="$CLK_TCK" -v c="$M_CLIENT_S" -v sv="$M_SERVER_S" -v k="$soak_cpu_s" \
    -v w="$wall" -v n="$NCPU" 'BEGIN { o = b / t - c - sv - k; if (o < 0) o = 0; printf "%.1f", 100 * o / (w * n) }')
}

# measure NAME SERVICE -- CMD...: a measurement, repeated (up to RETRIES times) when processes
# other than the client and the server disturbed it; the least disturbed attempt is kept.
# A client that writes $WORK/NAME.json (dbload --report) gets it kept per attempt: M_JSON.
# Commands are listed once, from the first round (later rounds differ only in -rN file names).
measure() {
  local name=$1 service=$2 attempt best_other=""
  shift 2
  if ((REP == 1)); then record_cmd "${@:2}"; fi
  B_JSON="" B_FAILED=""
  for ((attempt = 0; attempt <= RETRIES; attempt++)); do
    rm -f "$WORK/$name.json"
    measure_once "$name.$attempt" "$service" "$@"
    M_JSON=""
    if [[ -n $M_FAILED ]]; then
      B_FAILED=$M_FAILED B_LOG=$M_LOG B_LOAD=$M_LOAD
      break
    fi
    if [[ -f $WORK/$name.json ]]; then
      M_JSON=$WORK/$name.$attempt.json
      mv "$WORK/$name.json" "$M_JSON"
    fi
    note "$name attempt $attempt: load $M_LOAD, other processes ${M_OTHER_PCT}% of the machine"
    if [[ -z $best_other ]] || awk -v a="$M_OTHER_PCT" -v b="$best_other" 'BEGIN { exit !(a < b) }'; then
      best_other=$M_OTHER_PCT
      B_LOAD=$M_LOAD B_CLIENT_S=$M_CLIENT_S B_CORE_S=$M_CORE_S B_IRQ=$M_IRQ B_SERVER_S=$M_SERVER_S B_OTHER_PCT=$M_OTHER_PCT B_LOG=$M_LOG B_JSON=$M_JSON
    fi
    awk -v o="$M_OTHER_PCT" -v m="$OTHER_MAX" 'BEGIN { exit !(o <= m) }' && break
  done
  if [[ -n $B_FAILED ]]; then
    M_FAILED=$B_FAILED M_LOG=$B_LOG M_LOAD=$B_LOAD M_JSON=""
    return
  fi
  M_LOAD=$B_LOAD M_CLIENT_S=$B_CLIENT_S M_CORE_S=$B_CORE_S M_IRQ=$B_IRQ M_SERVER_S=$B_SERVER_S M_OTHER_PCT=$B_OTHER_PCT M_LOG=$B_LOG M_JSON=$B_JSON
}

median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "n/a"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
minmax() { printf '%s\n' "$@" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "–" hi }'; }

per_query_us() { awk -v s="$1" -v q="$2" 'BEGIN { if (q > 0) printf "%.1f", s * 1e6 / q; else print "n/a" }'; }
jqf() { jq -r "$1" "$2" | awk '{ printf "%.3f", $1 }'; } # a number from a JSON report, 3 decimals
fmt_int() { awk -v x="$1" 'BEGIN { printf "%.0f", x }'; }

# ---------------------------------------------------------------------------------------------
# Servers and data

note "starting PostgreSQL and MariaDB in $DBDIR"
start_servers 1
if [[ -n $SERVER_CPUS ]]; then
  # Every thread of the servers' processes as they are now; PostgreSQL's backends are forked by
  # the postmaster later and MariaDB's connection threads created by its threads, so they inherit it.
  for service in postgres mariadb; do
    for pid in $("$DBENV" pids "$DBDIR" "$service"); do
      taskset -a -p -c "$SERVER_CPUS" "$pid" >/dev/null || die "taskset of $service process $pid failed"
    done
  done
fi
PGBENCH_SCALE=$(((ROWS + 99999) / 100000))

SB_PG=(--db-driver=pgsql --pgsql-host="$PG_HOST" --pgsql-port="$PG_PORT" --pgsql-user="$PG_USER"
  --pgsql-password="$PG_PW" --pgsql-db="$PG_DATABASE" --tables=1 --table-size="$ROWS")
SB_MY=(--db-driver=mysql --mysql-host="$MARIADB_HOST" --mysql-port="$MARIADB_PORT"
  --mysql-user="$MARIADB_USER" --mysql-password="$MY_PW" --mysql-db="$MARIADB_DATABASE" --tables=1
  --table-size="$ROWS")
PGB_CONN=(-h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" "$PG_DATABASE")

note "preparing sbtest1 ($ROWS rows) with sysbench on both servers, pgbench scale $PGBENCH_SCALE"
record_cmd sysbench oltp_point_select "${SB_PG[@]}" prepare
sysbench oltp_point_select "${SB_PG[@]}" prepare >"$WORK/prepare-sb-pg.log" 2>&1 || die "sysbench prepare (pgsql) failed"
record_cmd sysbench oltp_point_select "${SB_MY[@]}" prepare
sysbench oltp_point_select "${SB_MY[@]}" prepare >"$WORK/prepare-sb-my.log" 2>&1 || die "sysbench prepare (mysql) failed"
record_cmd pgbench -i -q -s "$PGBENCH_SCALE" "${PGB_CONN[@]}"
pgbench -i -q -s "$PGBENCH_SCALE" "${PGB_CONN[@]}" >"$WORK/prepare-pgbench.log" 2>&1 || die "pgbench -i failed"

PG_ROWS=$("$PG_BINDIR/psql" -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d "$PG_DATABASE" -Atc 'SELECT count(*) FROM sbtest1')
PGB_ROWS=$("$PG_BINDIR/psql" -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d "$PG_DATABASE" -Atc 'SELECT count(*) FROM pgbench_accounts')
MY_ROWS=$(MYSQL_PWD=$MY_PW mariadb --protocol=tcp -h "$MARIADB_HOST" -P "$MARIADB_PORT" -u "$MARIADB_USER" "$MARIADB_DATABASE" -N -e 'SELECT count(*) FROM sbtest1')
[[ $PG_ROWS == "$ROWS" && $MY_ROWS == "$ROWS" ]] || die "row counts differ: pg $PG_ROWS, mariadb $MY_ROWS, wanted $ROWS"

# dbload plans: the oltp workload's point_select runs on the sysbench-prepared sbtest1.
write_plan() { # FILE DRIVER PORT USER PWFILE DB LOAD DURATION
  cat >"$1" <<EOF
name: compare-$2
target: {driver: $2, host: 127.0.0.1, port: $3, user: $4, password_file: $5, database: $6}
workload: oltp
workload_options: {tables: 1, table_size: $ROWS}
scenario: point_select
load: $7
stop: {duration: ${8}s}
EOF
}
PG_PLAN=$WORK/pg.yaml
MY_PLAN=$WORK/mariadb.yaml
write_plan "$PG_PLAN" postgresql "$PG_PORT" "$PG_USER" "$PG_PASSWORD_FILE" "$PG_DATABASE" "{closed: {clients: 4}}" "$DURATION"
# Open-loop copy for the fixed-rate runs (a --set cannot switch the load oneof).
OPEN_PLAN=$WORK/pg-open.yaml
write_plan "$OPEN_PLAN" postgresql "$PG_PORT" "$PG_USER" "$PG_PASSWORD_FILE" "$PG_DATABASE" "{open: {rate: $OPEN_RATE, arrival: $RATE_ARRIVAL}}" "$DURATION"
RATE_ROWS=()
CORE_ROWS=()
IRQ_ROWS=() # interrupts on the client's CPU per query in that test (CLIENT_CPUS one CPU)
LATE_ROWS=() # how late each client started its queries in that test, as each reports it
OPEN_JSONS=()
OPEN_LOADS=()
OPEN_CPU=()
OPEN_ENGINES=()
write_plan "$MY_PLAN" mysql "$MARIADB_PORT" "$MARIADB_USER" "$MARIADB_PASSWORD_FILE" "$MARIADB_DATABASE" "{closed: {clients: 4}}" "$DURATION"
MY_OPEN_PLAN=$WORK/mariadb-open.yaml
write_plan "$MY_OPEN_PLAN" mysql "$MARIADB_PORT" "$MARIADB_USER" "$MARIADB_PASSWORD_FILE" "$MARIADB_DATABASE" "{open: {rate: $OPEN_RATE, arrival: $RATE_ARRIVAL}}" "$DURATION"

# sysbench's oltp_read_only transaction as a pgbench script (sysbench's default range_size, 100;
# uniform ids, as dbload and sysbench are told to draw them in this part), plain and pipelined.
write_read_only_script() { # FILE PIPELINED(0/1)
  {
    for i in $(seq 1 10); do echo "\\set id$i random(1, $ROWS)"; done
    for i in $(seq 1 4); do echo "\\set r$i random(1, $ROWS)"; done
    (($2)) && echo '\startpipeline'
    echo 'BEGIN;'
    for i in $(seq 1 10); do echo "SELECT c FROM sbtest1 WHERE id = :id$i;"; done
    echo 'SELECT c FROM sbtest1 WHERE id BETWEEN :r1 AND :r1 + 99;'
    echo 'SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN :r2 AND :r2 + 99;'
    echo 'SELECT c FROM sbtest1 WHERE id BETWEEN :r3 AND :r3 + 99 ORDER BY c;'
    echo 'SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN :r4 AND :r4 + 99 ORDER BY c;'
    echo 'END;'
    (($2)) && echo '\endpipeline'
    true
  } >"$1"
}
PGB_READ_ONLY=$WORK/read_only.sql
PGB_READ_ONLY_PIPELINED=$WORK/read_only_pipelined.sql
write_read_only_script "$PGB_READ_ONLY" 0
write_read_only_script "$PGB_READ_ONLY_PIPELINED" 1

# Warm both servers' caches with every client before anything is measured.
note "warming up (${WARMUP}s per client)"
if ((WARMUP > 0)); then
  quiet() { run_bg_wait "$@" >/dev/null 2>&1; }
  quiet "$DBLOAD" run "$PG_PLAN" --set "stop.duration=${WARMUP}s" || die "dbload warm-up (PostgreSQL) failed"
  quiet "$DBLOAD" run "$MY_PLAN" --set "stop.duration=${WARMUP}s" || die "dbload warm-up (MariaDB) failed"
  quiet pgbench -n -S -M prepared -c 4 -j 4 -T "$WARMUP" "${PGB_CONN[@]}" || die "pgbench warm-up failed"
  quiet sysbench oltp_point_select "${SB_PG[@]}" --threads=4 --time="$WARMUP" run || die "sysbench warm-up failed"
  quiet sysbench oltp_point_select "${SB_MY[@]}" --threads=4 --time="$WARMUP" run || die "sysbench warm-up failed"
fi

# ---------------------------------------------------------------------------------------------
# a-c: closed loop, point select, QPS and CPU per query

CLOSED_ROWS=()
PIPELINE_ROWS=()
CONNECT_ROWS=()
CONNECT_TIMES=()
SUMMARY_KEYS=()
declare -A S_QPS=() S_CPU=() S_SRV=() S_OTHER=()
# add_row TABLE KEY "QPS QUERIES ERRORS": one measured row (raw table) and its values for the
# summary.
add_row() {
  local table=$1 key=$2 qps q err cpu_us srv_us
  if [[ -n $M_FAILED ]]; then
    local -n failed_rows=$table
    failed_rows+=("| $REP | ${key//|/ | } | failed: $M_FAILED | | | | | | $M_LOAD | |")
    return
  fi
  read -r qps q err <<<"$3"
  if [[ -z $qps || -z $q || -z $err ]]; then
    # pgbench that executed nothing (1,000 connections still opening at its -T) prints no tps.
    M_FAILED="no result in its log ($M_LOG)"
    add_row "$table" "$key"
    return
  fi
  cpu_us=$(per_query_us "$M_CLIENT_S" "$q")
  srv_us=$(per_query_us "$M_SERVER_S" "$q")
  local -n rows=$table
  rows+=("| $REP | ${key//|/ | } | $(fmt_int "$qps") | $q | $err | $M_CLIENT_S | **$cpu_us** | $srv_us | $M_LOAD | $M_OTHER_PCT |")
  if [[ -n $M_IRQ && $table == RATE_ROWS ]]; then
    local loc cal res
    read -r loc cal res <<<"$M_IRQ"
    IRQ_ROWS+=("| $REP | ${key//|/ | } | $q | $(awk -v n="$loc" -v q="$q" 'BEGIN { printf "%.2f", n / q }') | $(awk -v n="$cal" -v q="$q" 'BEGIN { printf "%.2f", n / q }') | $(awk -v n="$res" -v q="$q" 'BEGIN { printf "%.2f", n / q }') |")
  fi
  [[ -z $M_CORE_S ]] || CORE_ROWS+=("| $REP | ${key//|/ | } | $q | $M_CLIENT_S | $cpu_us | $M_CORE_S | **$(per_query_us "$M_CORE_S" "$q")** |")
  if [[ -z ${S_QPS[$key]:-} ]]; then SUMMARY_KEYS+=("$key"); fi
  S_QPS[$key]+="$qps "
  S_CPU[$key]+="$cpu_us "
  S_SRV[$key]+="$srv_us "
  S_OTHER[$key]+="$M_OTHER_PCT "
}
sysbench_tx_stats() { # LOG -> "TPS TRANSACTIONS ERRORS"
  awk '/^ *transactions:/ { t = $2; r = $3; gsub(/\(/, "", r) } /ignored errors:/ { e = $3 } END { print r, t, e }' "$1"
}
sysbench_stats() { # LOG -> "QPS QUERIES ERRORS"
  awk '/^ *queries:/ { q = $2; r = $3; gsub(/\(/, "", r) } /ignored errors:/ { e = $3 } END { print r, q, e }' "$1"
}
pgbench_stats() { # LOG -> "TPS TRANSACTIONS FAILED"
  awk -F': ' '/number of transactions actually processed/ { q = $2 } /number of failed transactions/ { split($2, a, " "); e = a[1] } /^tps = / { split($0, b, " "); t = b[3] } END { print t, q, (e == "" ? 0 : e) }' "$1"
}
dbload_stats() { # JSON -> "QPS EXECUTED ERRORS"; nothing for a failed run (no JSON)
  [[ -n $1 ]] || return 0
  jq -r '"\(.actual_rate) \(.executed|tonumber) \((.errors // 0)|tonumber)"' "$1"
}

# rate_dbload SERVICE LABEL PLAN: dbload's open loop at the fixed rate on each engine of
# RATE_ENGINES, a row each, kept for the open-loop accuracy table.
rate_dbload() {
  local service=$1 label=$2 plan=$3 engine
  for engine in $RATE_ENGINES; do
    measure "rate-dbload-$service-$engine-r$REP" "$service" -- "$DBLOAD" run "$plan" --set "target.pool=$OPEN_POOL" --set "target.engine=$engine" ${RATE_SET:+--set "$RATE_SET"} --report "$WORK/rate-dbload-$service-$engine-r$REP.json"
    add_row RATE_ROWS "$label|$OPEN_POOL|dbload open loop, $engine" "$(dbload_stats "$M_JSON")"
    [[ -n $M_JSON ]] || continue
    OPEN_JSONS+=("$M_JSON")
    OPEN_LOADS+=("$M_LOAD")
    OPEN_CPU+=("$M_CLIENT_S")
    OPEN_ENGINES+=("$label, $engine")
    LATE_ROWS+=("| $REP | $label | dbload, $engine | schedule lag: mean $(jqf .schedule_lag.mean_ms "$M_JSON"), p99 $(jqf .schedule_lag.p99_ms "$M_JSON"), max $(jqf .schedule_lag.max_ms "$M_JSON") ms; with a free connection (dispatch lag) mean $(jqf .dispatch_lag.mean_ms "$M_JSON"), p99 $(jqf .dispatch_lag.p99_ms "$M_JSON") ms |")
  done
}

for ((REP = 1; REP <= REPEATS; REP++)); do
  for n in $CONNS; do
    want closed || break
    # PostgreSQL
    for engine in $CLOSED_ENGINES; do
      measure "dbload-pg-$engine-$n-r$REP" postgres -- "$DBLOAD" run "$PG_PLAN" --set "load.closed.clients=$n" --set "target.engine=$engine" --report "$WORK/dbload-pg-$engine-$n-r$REP.json"
      add_row CLOSED_ROWS "PostgreSQL|$n|dbload, $engine" "$(dbload_stats "$M_JSON")"
    done

    measure "pgbench-pg-$n-r$REP" postgres -- pgbench -n -S -M prepared -c "$n" -j "$n" -T "$DURATION" "${PGB_CONN[@]}"
    add_row CLOSED_ROWS "PostgreSQL|$n|pgbench -S -M prepared -j $n" "$(pgbench_stats "$M_LOG")"

    measure "sysbench-pg-$n-r$REP" postgres -- sysbench oltp_point_select "${SB_PG[@]}" --threads="$n" --time="$DURATION" run
    add_row CLOSED_ROWS "PostgreSQL|$n|sysbench" "$(sysbench_stats "$M_LOG")"

    # MariaDB
    for client in $MYSQL_CLIENTS; do
      measure "dbload-my-$client-$n-r$REP" mariadb -- "$DBLOAD" run "$MY_PLAN" --set "load.closed.clients=$n" --set "target.mysql_client=$client" --report "$WORK/dbload-my-$client-$n-r$REP.json"
      add_row CLOSED_ROWS "MariaDB|$n|dbload, $client" "$(dbload_stats "$M_JSON")"
    done

    measure "sysbench-my-$n-r$REP" mariadb -- sysbench oltp_point_select "${SB_MY[@]}" --threads="$n" --time="$DURATION" run
    add_row CLOSED_ROWS "MariaDB|$n|sysbench" "$(sysbench_stats "$M_LOG")"
  done

  # A connection per transaction (pgbench -C): what a connection storm costs each client.
  if want connect; then
    note "a connection per transaction, $CONNECT_CLIENTS clients, round $REP"
    for engine in $RATE_ENGINES; do
      measure "conn-dbload-$engine-r$REP" postgres -- "$DBLOAD" run "$PG_PLAN" --set "load.closed.clients=$CONNECT_CLIENTS" --set target.connect=per_transaction --set "target.engine=$engine" --report "$WORK/conn-dbload-$engine-r$REP.json"
      add_row CONNECT_ROWS "PostgreSQL|$CONNECT_CLIENTS|dbload -C, $engine" "$(dbload_stats "$M_JSON")"
      [[ -n $M_JSON ]] && CONNECT_TIMES+=("| $REP | PostgreSQL | dbload, $engine | $(jqf .connect_time.mean_ms "$M_JSON") | $(jqf .connect_time.p50_ms "$M_JSON") | $(jqf .connect_time.p99_ms "$M_JSON") | $(jqf .service_time.p50_ms "$M_JSON") |")
    done
    measure "conn-pgbench-r$REP" postgres -- pgbench -n -S -M prepared -C -c "$CONNECT_CLIENTS" -j "$CONNECT_JOBS" -T "$DURATION" "${PGB_CONN[@]}"
    add_row CONNECT_ROWS "PostgreSQL|$CONNECT_CLIENTS|pgbench -C -j $CONNECT_JOBS" "$(pgbench_stats "$M_LOG")"
    [[ -n $M_FAILED ]] || CONNECT_TIMES+=("| $REP | PostgreSQL | pgbench -C | $(awk '/average connection time/ { print $5 }' "$M_LOG") | (not reported) | (not reported) | latency average $(awk '/latency average/ { print $4 }' "$M_LOG") |")
    measure "conn-dbload-my-r$REP" mariadb -- "$DBLOAD" run "$MY_PLAN" --set "load.closed.clients=$CONNECT_CLIENTS" --set target.connect=per_transaction --report "$WORK/conn-dbload-my-r$REP.json"
    add_row CONNECT_ROWS "MariaDB|$CONNECT_CLIENTS|dbload -C, threads" "$(dbload_stats "$M_JSON")"
    [[ -n $M_JSON ]] && CONNECT_TIMES+=("| $REP | MariaDB | dbload, threads | $(jqf .connect_time.mean_ms "$M_JSON") | $(jqf .connect_time.p50_ms "$M_JSON") | $(jqf .connect_time.p99_ms "$M_JSON") | $(jqf .service_time.p50_ms "$M_JSON") |")
  fi

  # Pipelined transactions (pgbench's \startpipeline): sysbench's read_only transaction, 16
  # statements, in one round trip or in 16.
  if want pipeline; then
    note "read_only transactions with and without a pipeline, $PIPELINE_CLIENTS clients, round $REP"
    for engine in $RATE_ENGINES; do
      for pipeline in false true; do
        measure "pipe-dbload-$engine-$pipeline-r$REP" postgres -- "$DBLOAD" run "$PG_PLAN" --set scenario=read_only --set workload_options.rand_type=uniform --set "load.closed.clients=$PIPELINE_CLIENTS" --set "target.pipeline=$pipeline" --set "target.engine=$engine" --report "$WORK/pipe-dbload-$engine-$pipeline-r$REP.json"
        add_row PIPELINE_ROWS "PostgreSQL|$PIPELINE_CLIENTS|dbload, $engine, pipeline $pipeline" "$(dbload_stats "$M_JSON")"
      done
    done
    for script in "$PGB_READ_ONLY" "$PGB_READ_ONLY_PIPELINED"; do
      measure "pipe-pgbench-$(basename "$script" .sql)-r$REP" postgres -- pgbench -n -M prepared -f "$script" -c "$PIPELINE_CLIENTS" -j "$PIPELINE_CLIENTS" -T "$DURATION" "${PGB_CONN[@]}"
      add_row PIPELINE_ROWS "PostgreSQL|$PIPELINE_CLIENTS|pgbench -f $(basename "$script")" "$(pgbench_stats "$M_LOG")"
    done
    measure "pipe-sysbench-r$REP" postgres -- sysbench oltp_read_only "${SB_PG[@]}" --rand-type=uniform --threads="$PIPELINE_CLIENTS" --time="$DURATION" run
    add_row PIPELINE_ROWS "PostgreSQL|$PIPELINE_CLIENTS|sysbench oltp_read_only" "$(sysbench_tx_stats "$M_LOG")"
  fi

  # Same fixed rate for every client (PostgreSQL): CPU per query when nobody runs flat out.
  want rate || continue
  note "fixed rate $OPEN_RATE/s, round $REP"
  SOAK_NOW=$CORE_COST
  if [[ " $RATE_SERVERS " == *" postgres "* ]]; then
    rate_dbload postgres PostgreSQL "$OPEN_PLAN"

    measure "rate-pgbench-r$REP" postgres -- pgbench -n -S -M prepared -c "$OPEN_POOL" -j "$RATE_JOBS" -T "$DURATION" --rate="$OPEN_RATE" "${PGB_CONN[@]}"
    add_row RATE_ROWS "PostgreSQL|$OPEN_POOL|pgbench --rate -j $RATE_JOBS" "$(pgbench_stats "$M_LOG")"
    LATE_ROWS+=("| $REP | PostgreSQL | pgbench --rate -j $RATE_JOBS | $(grep -m1 'rate limit schedule lag' "$M_LOG" | sed 's/^ *//') |")

    measure "rate-sysbench-r$REP" postgres -- sysbench oltp_point_select "${SB_PG[@]}" --threads="$OPEN_POOL" --time="$DURATION" --rate="$OPEN_RATE" run
    add_row RATE_ROWS "PostgreSQL|$OPEN_POOL|sysbench --rate" "$(sysbench_stats "$M_LOG")"
  fi
  if [[ " $RATE_SERVERS " == *" mariadb "* ]]; then
    rate_dbload mariadb MariaDB "$MY_OPEN_PLAN"

    measure "rate-sysbench-my-r$REP" mariadb -- sysbench oltp_point_select "${SB_MY[@]}" --threads="$OPEN_POOL" --time="$DURATION" --rate="$OPEN_RATE" run
    add_row RATE_ROWS "MariaDB|$OPEN_POOL|sysbench --rate" "$(sysbench_stats "$M_LOG")"
  fi
  SOAK_NOW=0
done

# ---------------------------------------------------------------------------------------------
# d: open-loop accuracy

OPEN_ROWS=()
for i in "${!OPEN_JSONS[@]}"; do
  OJ=${OPEN_JSONS[$i]}
  o_actual=$(jq -r .actual_rate "$OJ")
  o_exec=$(jq -r '.executed|tonumber' "$OJ")
  o_pct=$(awk -v a="$o_actual" -v t="$OPEN_RATE" 'BEGIN { printf "%.2f", 100 * a / t }')
  o_within=$(awk -v p="$o_pct" 'BEGIN { print (p >= 99 && p <= 101) ? "yes" : "no" }')
  OPEN_ROWS+=("| $((i + 1)) | ${OPEN_ENGINES[$i]} | $OPEN_RATE | $(awk -v a="$o_actual" 'BEGIN { printf "%.1f", a }') | $o_pct | $o_within | $(jqf .total_duration_s "$OJ") | $o_exec | $(jq -r '.intervals[0].executed|tonumber' "$OJ") | $(jq -r '(.not_started // 0)|tonumber' "$OJ") | $(jqf .schedule_lag.p99_ms "$OJ") | $(jqf .schedule_lag.max_ms "$OJ") | $(jqf .dispatch_lag.p99_ms "$OJ") | $(jqf .response_time.p99_ms "$OJ") | $(jqf .service_time.p99_ms "$OJ") | $(per_query_us "${OPEN_CPU[$i]}" "$o_exec") | ${OPEN_LOADS[$i]} |")
done

# ---------------------------------------------------------------------------------------------
# e: coordinated omission — every PostgreSQL process SIGSTOPped for CO_STALL s

# stall_run NAME -- CMD...: starts CMD, stalls the server CO_STALL_AT s later, waits for CMD.
stall_run() {
  local name=$1
  shift 2
  record_cmd "$@"
  settle >/dev/null
  "$@" >"$WORK/$name.log" 2>&1 &
  local pid=$!
  BG_PIDS+=("$pid")
  sleep "$CO_STALL_AT"
  local pids
  pids=$("$DBENV" pids "$DBDIR" postgres)
  # shellcheck disable=SC2206
  STOPPED_PIDS=($pids)
  kill -STOP "${STOPPED_PIDS[@]}"
  sleep "$CO_STALL"
  kill -CONT "${STOPPED_PIDS[@]}"
  STOPPED_PIDS=()
  local rc=0
  wait "$pid" || rc=$?
  forget_bg "$pid"
  ((rc == 0)) || die "$name failed (exit $rc): $(tail -n 5 "$WORK/$name.log")"
}

if want co; then
  note "coordinated omission: ${CO_RATE}/s for ${CO_DURATION}s, server stopped for ${CO_STALL}s at ${CO_STALL_AT}s"
  CO_PLAN=$WORK/pg-co.yaml
  write_plan "$CO_PLAN" postgresql "$PG_PORT" "$PG_USER" "$PG_PASSWORD_FILE" "$PG_DATABASE" "{open: {rate: $CO_RATE}}" "$CO_DURATION"
  stall_run co-dbload -- "$DBLOAD" run "$CO_PLAN" --set "target.pool=$CO_CONNS" --report "$WORK/co-dbload.json"
  COMMANDS[-1]="$(basename "$DBLOAD") run pg-co.yaml --set target.pool=$CO_CONNS --report co-dbload.json   # pg-co.yaml: load: {open: {rate: $CO_RATE}}, stop: {duration: ${CO_DURATION}s}"
  CJ=$WORK/co-dbload.json
  stall_run co-sysbench -- sysbench oltp_point_select "${SB_PG[@]}" --threads="$CO_CONNS" --time="$CO_DURATION" --rate="$CO_RATE" --percentile=99 run
  mkdir -p "$WORK/pgbench-log"
  stall_run co-pgbench -- pgbench -n -S -M prepared -c "$CO_CONNS" -j "$CO_CONNS" -T "$CO_DURATION" --rate="$CO_RATE" -P 1 -l --log-prefix="$WORK/pgbench-log/tx" "${PGB_CONN[@]}"

  SBL=$WORK/co-sysbench.log
  PBL=$WORK/co-pgbench.log
  # pgbench's per-transaction log: column 3 is the latency in us (from the scheduled start).
  PB_LOG_STATS=$(cat "$WORK"/pgbench-log/tx* | awk '{ print $3 }' | sort -n |
    awk '{ v[NR] = $1 } END { i = int(NR * 0.999 + 0.999999); if (i < 1) i = 1; i99 = int(NR * 0.99 + 0.999999); if (i99 < 1) i99 = 1;
           printf "%.1f %.1f %.1f %d", v[NR] / 1000, v[i] / 1000, v[i99] / 1000, NR }')
  read -r PB_MAX PB_P999 PB_P99 PB_N <<<"$PB_LOG_STATS"
fi

# ---------------------------------------------------------------------------------------------
# Report

{
  echo "## compare_clients.sh — $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo
  echo "Machine: $(nproc) CPUs ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)), $(uname -sr)."
  echo "Clients: $("$DBLOAD" version 2>/dev/null), $(sysbench --version), $(pgbench --version). Servers: PostgreSQL $("$PG_BINDIR/postgres" --version | awk '{ print $3 }'), MariaDB $(MYSQL_PWD=$MY_PW mariadb --protocol=tcp -h "$MARIADB_HOST" -P "$MARIADB_PORT" -u "$MARIADB_USER" -N -e 'SELECT VERSION()')."
  if [[ -n $SERVER_CPUS$CLIENT_CPUS ]]; then
    where="servers pinned to CPUs ${SERVER_CPUS:-(any)}, each client to CPUs ${CLIENT_CPUS:-(any)} (taskset -c)"
  else
    where="client and server on the same $(nproc) CPUs"
  fi
  echo "Servers from tests/harness/dbenv (--fast), $where, TCP 127.0.0.1; sbtest1 with $ROWS rows prepared by sysbench, pgbench scale $PGBENCH_SCALE ($PGB_ROWS rows)."
  echo
  if want closed; then
    echo "### Point select, closed loop, ${DURATION} s each — summary (median of $REPEATS round(s))"
    echo
    echo "CPU/query = client user+sys CPU (/usr/bin/time) / queries; server CPU/query likewise from /proc of the server processes."
    echo "\"other %\" = CPU used during the run by processes other than this client and the server, in % of the whole machine (other engineers' builds); load = 1-min load average just before the run."
    echo
    echo "| server | conns | client | QPS (median) | client CPU/query µs (median) | range | server CPU/query µs (median) | other % (median) |"
    echo "|---|---|---|---|---|---|---|---|"
    for key in "${SUMMARY_KEYS[@]}"; do
      [[ $key == *"--rate"* || $key == *"open loop"* || $key == *"-C"* || $key == *pipeline* || $key == *read_only* ]] && continue
      # shellcheck disable=SC2086
      echo "| ${key//|/ | } | $(fmt_int "$(median ${S_QPS[$key]})") | **$(median ${S_CPU[$key]})** | $(minmax ${S_CPU[$key]}) | $(median ${S_SRV[$key]}) | $(median ${S_OTHER[$key]}) |"
    done
    echo
    echo "Every round:"
    echo
    echo "| round | server | conns | client | QPS | queries | errors | client CPU s | client CPU/query µs | server CPU/query µs | load before | other % |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${CLOSED_ROWS[@]}"
    echo
  fi
  if want connect; then
    echo "### A connection per transaction (pgbench -C), point select, closed loop, ${CONNECT_CLIENTS} clients, ${DURATION} s"
    echo
    echo "Queries here are transactions, each on a connection of its own (connect, authenticate with SCRAM or MariaDB's native password, prepare, one select, close)."
    echo
    echo "| round | server | conns | client | transactions/s | transactions | errors | client CPU s | client CPU/transaction µs | server CPU/transaction µs | load before | other % |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${CONNECT_ROWS[@]}"
    echo
    echo "Connect times as each client reports them (ms). dbload's service time is the transaction's statements alone. pgbench prints the mean connect time only, and its latency average is duration × clients ÷ transactions, connects included; each pgbench thread opens its clients' connections one at a time, so it has at most -j connects in progress where dbload has one per client:"
    echo
    echo "| round | server | client | connect mean | connect p50 | connect p99 | service p50 / latency |"
    echo "|---|---|---|---|---|---|---|"
    printf '%s\n' "${CONNECT_TIMES[@]}"
    echo
  fi
  if want pipeline; then
    echo "### Pipelined transactions (pgbench's \\startpipeline), oltp read_only, closed loop, ${PIPELINE_CLIENTS} clients, PostgreSQL, ${DURATION} s"
    echo
    echo "Queries here are transactions: BEGIN, 10 point selects, 4 selects of 100-row ranges, COMMIT — one round trip each when pipelined, 16 otherwise. Ids are uniform for all three clients (dbload workload_options.rand_type=uniform, sysbench --rand-type=uniform). pgbench's pipelined script (the other one lacks \\startpipeline and \\endpipeline):"
    echo
    echo '```'
    cat "$PGB_READ_ONLY_PIPELINED"
    echo '```'
    echo
    echo "| round | server | conns | client | transactions/s | transactions | errors | client CPU s | client CPU/transaction µs | server CPU/transaction µs | load before | other % |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${PIPELINE_ROWS[@]}"
    echo
  fi
  if want rate; then
    echo "### Same fixed rate for every client: ${OPEN_RATE}/s, ${OPEN_POOL} connections, ${DURATION} s"
    echo
    echo "| round | server | conns | client | achieved/s | queries | errors | client CPU s | client CPU/query µs | server CPU/query µs | load before | other % |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${RATE_ROWS[@]}"
    echo
    echo "dbload's arrivals: $RATE_ARRIVAL (load.open.arrival); pgbench --rate and sysbench --rate draw exponential gaps (Poisson arrivals)."
    echo
    echo "How late each client started its queries, as each reports it (sysbench --rate reports no lateness):"
    echo
    echo "| round | server | client | lateness |"
    echo "|---|---|---|---|"
    printf '%s\n' "${LATE_ROWS[@]}"
    echo
    if ((${#IRQ_ROWS[@]})); then
      echo "Interrupts the client's CPU ($CLIENT_CPUS) took during each client's run, per query (/proc/interrupts): local timer (a timer that ended a sleep, or the tick), function-call IPIs (mostly wake-ups sent from the server's CPU), rescheduling IPIs:"
      echo
      echo "| round | server | conns | client | queries | timer/query | function-call IPIs/query | rescheduling IPIs/query |"
      echo "|---|---|---|---|---|---|---|---|"
      printf '%s\n' "${IRQ_ROWS[@]}"
      echo
    fi
    if ((CORE_COST)); then
      echo "What each client cost its core (CORE_COST=1): core_soaker spun at SCHED_IDLE on CPU $CLIENT_CPUS beside every client above; core s = the spinner's time beside the client less what its iterations took alone (its pace measured for 2 s before each client). Client CPU is the client's own user+sys time (/usr/bin/time), which leaves out the kernel's interrupts and wake-ups on its behalf; the client CPU figures above are from these same runs, beside the spinner."
      echo
      echo "| round | server | conns | client | queries | client CPU s | client CPU/query µs | core s | core/query µs |"
      echo "|---|---|---|---|---|---|---|---|---|"
      printf '%s\n' "${CORE_ROWS[@]}"
      echo
    fi
    echo "### Open-loop accuracy: dbload at ${OPEN_RATE}/s, ${OPEN_POOL} connections, ${DURATION} s (the dbload rows above)"
    echo
    echo "| run | server, engine | target/s | achieved/s | achieved % | within 1 % | measured s | executed | in 1st second | not started | schedule lag p99 ms | lag max ms | dispatch lag p99 ms | response p99 ms | service p99 ms | client CPU/query µs | load before |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${OPEN_ROWS[@]}"
    echo
  fi
  if want co; then
    echo "### Coordinated omission: ${CO_RATE}/s, ${CO_CONNS} connections, ${CO_DURATION} s; all PostgreSQL processes SIGSTOPped for ${CO_STALL} s at t=${CO_STALL_AT} s"
    echo
    echo "The ≈ $((CO_RATE * CO_STALL)) arrivals due during the stall wait between 0 and ${CO_STALL} s each (≈ $((100 * CO_STALL / CO_DURATION)) % of all arrivals): measured from the intended start, max and p99.9 must be ≈ $((CO_STALL * 1000)) ms; measured from the actual send only the ${CO_CONNS} queries in flight at the stall show it."
    echo
    echo "| client | what it reports | executed | max ms | p99.9 ms | p99 ms | mean ms | other |"
    echo "|---|---|---|---|---|---|---|---|"
    echo "| dbload | response time (from intended start) | $(jq -r '.executed|tonumber' "$CJ") | $(jqf .response_time.max_ms "$CJ") | $(jqf .response_time.p999_ms "$CJ") | $(jqf .response_time.p99_ms "$CJ") | $(jqf .response_time.mean_ms "$CJ") | not started $(jq -r '(.not_started // 0)|tonumber' "$CJ") |"
    echo "| dbload | service time (from actual start) | | $(jqf .service_time.max_ms "$CJ") | $(jqf .service_time.p999_ms "$CJ") | $(jqf .service_time.p99_ms "$CJ") | $(jqf .service_time.mean_ms "$CJ") | schedule lag max $(jqf .schedule_lag.max_ms "$CJ") ms, p99 $(jqf .schedule_lag.p99_ms "$CJ") ms |"
    echo "| sysbench --rate | Latency (ms) | $(awk '/^ *queries:/ { print $2 }' "$SBL") | $(awk '/^ *max:/ { print $2 }' "$SBL") | (no p99.9: --percentile takes integers) | $(awk '/99th percentile:/ { print $3 }' "$SBL") | $(awk '/^ *avg:/ { print $2 }' "$SBL") | |"
    echo "| pgbench --rate | summary: latency average / stddev, schedule lag | $(awk -F': ' '/number of transactions actually processed/ { print $2 }' "$PBL") | (not in summary) | (not in summary) | (not in summary) | $(awk '/latency average/ { print $4 }' "$PBL") | stddev $(awk '/latency stddev/ { print $4 }' "$PBL") ms; $(grep -m1 'rate limit schedule lag' "$PBL" | sed 's/^ *//') |"
    echo "| pgbench --rate | per-transaction log (-l), computed here | $PB_N | $PB_MAX | $PB_P999 | $PB_P99 | | |"
    echo
    echo "pgbench -P 1 around the stall:"
    echo
    echo '```'
    grep '^progress' "$PBL" | sed -n "$((CO_STALL_AT > 1 ? CO_STALL_AT - 1 : 1)),$((CO_STALL_AT + CO_STALL + 2))p"
    echo '```'
    echo
  fi
  echo "### Commands (in order, first round; later rounds write -r2, -r3 … report files; passwords masked)"
  echo
  echo '```'
  printf '%s\n' "${COMMANDS[@]}"
  echo '```'
  echo
  echo "dbload plan for the closed-loop runs (pg.yaml; mariadb.yaml is the same with driver mysql and the MariaDB port; pg-open.yaml has load: {open: {rate: R, arrival: $RATE_ARRIVAL}} and pg-co.yaml load: {open: {rate: R}} instead):"
  echo
  echo '```yaml'
  cat "$PG_PLAN"
  echo '```'
} >"$WORK/report.md"

cat "$WORK/report.md"
if [[ -n $OUT_FILE ]]; then
  cat "$WORK/report.md" >>"$OUT_FILE"
  note "appended to $OUT_FILE"
fi
