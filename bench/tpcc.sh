#!/usr/bin/env bash
# tpcc.sh — TPC-C with the built-in tpcc workload (issue 21): how long dbload takes to load
# WAREHOUSES warehouses into each server (and rows/s), then tpmC and per-transaction p90 over a
# range of closed-loop clients (terminals), with the consistency conditions checked after every
# run.
#
#   bench/tpcc.sh [-o RESULTS.md]
#
# Settings (environment):
#   DBLOAD=build/cli/dbload  the binary under test
#   SERVERS="postgres mariadb"
#   WAREHOUSES=10
#   PARALLEL=2       parts loaded at once (dbload prepare --parallel)
#   CLIENTS="1 2 4 8 16 32"
#   WARMUP=10 DURATION=30   seconds per point
#   FAST=0           1: the servers without durability (dbenv --fast); 0: as configured by dbenv
#   TERMINAL_WAITS=0 1: clause 5.2.5's keying and think times (workload option terminal_waits),
#                    and the efficiency against 12.86 tpmC per warehouse; 0: no-wait mode
#   FOREIGN_KEYS=0   1: clause 1.3's foreign keys (workload option foreign_keys), added by the load
#   ALONE=0          1: then each transaction alone (scenario new_order, payment, …) with
#                    ALONE_CLIENTS=4 clients for ALONE_DURATION=10 s, and the server's counters
#                    per transaction from the probe (rows changed, pages read, log bytes)
#
# Everything runs on 127.0.0.1 against servers this script starts (tests/harness/dbenv) in a
# mktemp directory and stops on exit, also on Ctrl-C; each run is bounded by its duration. The
# points run one after another on the same data, which grows by the New-Orders of each (as a
# TPC-C database does over a measurement).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
DBENV=$ROOT/tests/harness/dbenv
DBLOAD=${DBLOAD:-$ROOT/build/cli/dbload}
SERVERS=${SERVERS:-postgres mariadb}
WAREHOUSES=${WAREHOUSES:-10}
PARALLEL=${PARALLEL:-2}
CLIENTS=${CLIENTS:-1 2 4 8 16 32}
WARMUP=${WARMUP:-10}
DURATION=${DURATION:-30}
FAST=${FAST:-0}
TERMINAL_WAITS=${TERMINAL_WAITS:-0}
FOREIGN_KEYS=${FOREIGN_KEYS:-0}
ALONE=${ALONE:-0}
ALONE_CLIENTS=${ALONE_CLIENTS:-4}
ALONE_DURATION=${ALONE_DURATION:-10}
OUT=""

BENCH_NAME=tpcc
# shellcheck source=bench/lib.sh
source "$HERE/lib.sh"

while getopts "o:" opt; do
  case $opt in
    o) OUT=$OPTARG ;;
    *) die "usage: $0 [-o RESULTS.md]" ;;
  esac
done
[[ $WAREHOUSES =~ ^[0-9]+$ && $WAREHOUSES -gt 0 ]] || die "WAREHOUSES: expected a positive number, got '$WAREHOUSES'"
for server in $SERVERS; do
  [[ $server == postgres || $server == mariadb ]] || die "SERVERS: expected postgres and/or mariadb, got '$server'"
done
[[ -x $DBLOAD ]] || die "no dbload binary at $DBLOAD (set DBLOAD)"
command -v jq >/dev/null || die "needs jq"

WORK=$(mktemp -d /tmp/tpcc.XXXXXX)
DBDIR=$(mktemp -d /tmp/dbenv.XXXXXX)
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  "$DBENV" stop "$DBDIR" >/dev/null 2>&1 || note "dbenv stop $DBDIR failed"
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fast=()
[[ $FAST == 1 ]] && fast=(--fast)
# shellcheck disable=SC2086
note "starting $SERVERS in $DBDIR ${fast[*]:-}"
# shellcheck disable=SC2086
"$DBENV" start "$DBDIR" $SERVERS --owner-pid $$ "${fast[@]}" >"$WORK/env" 2>"$WORK/dbenv.log" ||
  die "dbenv start failed: $(tail -n 20 "$WORK/dbenv.log")"
# shellcheck disable=SC1091
source "$WORK/env"

# The server's own count of every row of the nine tables.
rows_of() {
  local sql="SELECT (SELECT COUNT(*) FROM warehouse) + (SELECT COUNT(*) FROM district) + (SELECT COUNT(*) FROM customer) + (SELECT COUNT(*) FROM history) + (SELECT COUNT(*) FROM new_order) + (SELECT COUNT(*) FROM orders) + (SELECT COUNT(*) FROM order_line) + (SELECT COUNT(*) FROM item) + (SELECT COUNT(*) FROM stock)"
  if [[ $1 == postgres ]]; then
    PGPASSWORD=$(<"$PG_PASSWORD_FILE") psql -At -h 127.0.0.1 -p "$PG_PORT" -U "$PG_USER" "$PG_DATABASE" -c "$sql"
  else
    MYSQL_PWD=$(<"$MARIADB_PASSWORD_FILE") mariadb --no-defaults -N -B -h 127.0.0.1 -P "$MARIADB_PORT" -u "$MARIADB_USER" "$MARIADB_DATABASE" -e "$sql"
  fi
}

header_done=0
report() { echo "$*" | tee -a "${OUT:-/dev/null}"; }

for server in $SERVERS; do
  if [[ $server == postgres ]]; then
    target="{driver: postgresql, host: 127.0.0.1, port: $PG_PORT, user: $PG_USER, password_file: $PG_PASSWORD_FILE, database: $PG_DATABASE}"
    version="PostgreSQL $("$PG_BINDIR/postgres" --version | awk '{ print $3 }')"
  else
    target="{driver: mysql, host: 127.0.0.1, port: $MARIADB_PORT, user: $MARIADB_USER, password_file: $MARIADB_PASSWORD_FILE, database: $MARIADB_DATABASE}"
    version="MariaDB $(mariadb --version | sed -E 's/.*Distrib ([^-,]+).*/\1/')"
  fi
  PLAN=$WORK/tpcc-$server.yaml
  cat >"$PLAN" <<EOF
name: tpcc-$server
target: $target
workload: tpcc
workload_options: {warehouses: $WAREHOUSES, terminal_waits: $([[ $TERMINAL_WAITS == 1 ]] && echo true || echo false), foreign_keys: $([[ $FOREIGN_KEYS == 1 ]] && echo true || echo false)}
scenario: standard
load: {closed: {clients: 1}}
warmup: ${WARMUP}s
stop: {duration: ${DURATION}s}
EOF
  "$DBLOAD" cleanup "$PLAN" >"$WORK/cleanup.log" 2>&1 || die "dbload cleanup failed: $(tail -n 5 "$WORK/cleanup.log")"
  note "$server: loading $WAREHOUSES warehouses in $PARALLEL parts"
  start=$(date +%s.%N)
  "$DBLOAD" prepare "$PLAN" --parallel "$PARALLEL" >"$WORK/prepare-$server.log" 2>&1 ||
    die "dbload prepare failed: $(tail -n 5 "$WORK/prepare-$server.log")"
  load_s=$(echo "$(date +%s.%N) - $start" | bc)
  rows=$(rows_of "$server")

  if ((header_done == 0)); then
    report "## tpcc.sh — $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    report ""
    report "\`WAREHOUSES=$WAREHOUSES PARALLEL=$PARALLEL CLIENTS=\"$CLIENTS\" WARMUP=$WARMUP DURATION=$DURATION FAST=$FAST TERMINAL_WAITS=$TERMINAL_WAITS FOREIGN_KEYS=$FOREIGN_KEYS ALONE=$ALONE ALONE_CLIENTS=$ALONE_CLIENTS ALONE_DURATION=$ALONE_DURATION bench/tpcc.sh\` on $(nproc) CPUs, $(free -g | awk '/^Mem:/ { print $2 }') GB (client and servers on the same machine); $("$DBLOAD" version 2>/dev/null)."
    header_done=1
  fi
  report ""
  report "### $version"
  report ""
  report "Loaded $WAREHOUSES warehouses ($rows rows, tables, keys, indexes$([[ $FOREIGN_KEYS == 1 ]] && echo ", foreign keys") and checks included) in $(printf '%.1f' "$load_s") s: $(echo "$rows / $load_s" | bc) rows/s."
  report ""
  report "| clients | tpmC | tpmC per warehouse (efficiency vs 12.86) | transactions/s | New-Order p90 / p99 ms | Payment p90 | Order-Status p90 | Delivery p90 | Stock-Level p90 | rolled back | retries | errors | consistency |"
  report "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  for clients in $CLIENTS; do
    note "$server: $clients clients, ${WARMUP}s + ${DURATION}s"
    rc=0
    "$DBLOAD" run "$PLAN" --set "load.closed.clients=$clients" --report "$WORK/report.json" >"$WORK/run.log" 2>&1 || rc=$?
    [[ -f $WORK/report.json ]] || die "no report (exit $rc): $(tail -n 5 "$WORK/run.log")"
    row=$(jq -r --argjson w "$WAREHOUSES" '
      def p90(n): (.query_types[] | select(.name == n) | .response_time.p90_ms // 0);
      def fmt: . * 100 | round / 100;
      (.query_types[] | select(.name == "new_order")) as $no
      | ((($no.executed // 0) | tonumber) / .queries_duration_s * 60) as $tpmc
      | "\($tpmc | round) | \($tpmc / $w | fmt) (\($tpmc / $w / 12.86 * 100 | round) %) | \(.actual_rate | fmt) | \(p90("new_order") | fmt) / \($no.response_time.p99_ms | fmt) | \(p90("payment") | fmt) | \(p90("order_status") | fmt) | \(p90("delivery") | fmt) | \(p90("stock_level") | fmt) | \($no.rolled_back // 0) | \(.retries // 0) | \(.errors // 0) | \(if (.invariants | length) == 0 then "not checked: \(.invariants_not_checked)" elif ([.invariants[] | .holds] | all) then "holds" else "BROKEN: \([.invariants[] | select(.holds | not) | .name] | join("; "))" end)"' "$WORK/report.json")
    report "| $clients | $row |"
    ((rc == 0)) || note "$server, $clients clients: dbload exited $rc"
    rm -f "$WORK/report.json"
  done
  if [[ $ALONE == 1 ]]; then
    # The probe's counters per executed transaction, each transaction run alone: PostgreSQL's
    # pg_stat_database of the database (rows: tup_*; pages: blks_hit + blks_read; log:
    # wal_bytes); MariaDB's global status, the whole server's (rows: Handler_write, _update,
    # _delete; pages: Innodb_buffer_pool_read_requests; log: Innodb_os_log_written).
    if [[ $server == postgres ]]; then
      names='"postgresql" "tup_inserted" "tup_updated" "tup_deleted" "blks_hit" "blks_read" "wal_bytes"'
    else
      names='"mysql" "Handler_write" "Handler_update" "Handler_delete" "Innodb_buffer_pool_read_requests" "" "Innodb_os_log_written"'
    fi
    report ""
    report "Each transaction alone, $ALONE_CLIENTS clients, ${ALONE_DURATION}s after the sweep above (the server's counters per executed transaction, from the probe):"
    report ""
    report "| transaction | transactions/s | p90 ms | rows inserted | rows updated | rows deleted | buffer pages read | log bytes |"
    report "|---|---|---|---|---|---|---|---|"
    for scenario in new_order payment order_status delivery stock_level; do
      note "$server: $scenario alone, $ALONE_CLIENTS clients, ${ALONE_DURATION}s"
      rc=0
      "$DBLOAD" run "$PLAN" --set "scenario=$scenario" --set "load.closed.clients=$ALONE_CLIENTS" \
        --set warmup=0s --set "stop.duration=${ALONE_DURATION}s" --report "$WORK/report.json" >"$WORK/run.log" 2>&1 || rc=$?
      [[ -f $WORK/report.json ]] || die "no report (exit $rc): $(tail -n 5 "$WORK/run.log")"
      # shellcheck disable=SC2086
      row=$(jq -r --argjson names "[$(echo $names | tr ' ' ',')]" '
        def per(n): if n == "" then 0 else ([.saturation[] | select(.source == $names[0] and .name == n) | .per_query] | first // 0) end;
        def fmt: . * 100 | round / 100;
        "\(.actual_rate | fmt) | \(.query_types[0].response_time.p90_ms | fmt) | \(per($names[1]) | fmt) | \(per($names[2]) | fmt) | \(per($names[3]) | fmt) | \(per($names[4]) + per($names[5]) | fmt) | \(per($names[6]) | round)"' "$WORK/report.json")
      report "| $scenario | $row |"
      ((rc == 0)) || note "$server, $scenario alone: dbload exited $rc"
      rm -f "$WORK/report.json"
    done
  fi
  "$DBLOAD" cleanup "$PLAN" >/dev/null 2>&1 || note "dbload cleanup $server failed"
done
