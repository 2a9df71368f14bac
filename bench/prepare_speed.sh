#!/usr/bin/env bash
# prepare_speed.sh — how fast `dbload prepare` loads a data set, against sysbench's and pgbench's
# own loaders on the same throwaway servers, in one run, each load into an empty database:
#
#   a. oltp, 1 table x OLTP_ROWS rows: dbload prepare (workload oltp) and
#      sysbench oltp_read_only prepare on PostgreSQL and MariaDB; pgbench -i -s OLTP_ROWS/100000
#      on PostgreSQL (pgbench_accounts rows are narrower than sbtest rows: the script prints
#      the measured table sizes), and dbload prepare of pgbench's own tables
#      (bench/workloads/pgbench_accounts.yaml) for the same rows as pgbench -i;
#   b. the shop data set (users, items, orders, order_items) on both;
#   c. tenant_orders at TENANT_ROWS rows (generated inside the server) on both.
#
#   bench/prepare_speed.sh [-o RAW.txt] [-k]
#
#   -o FILE   also write everything printed (timestamped tool outputs, commands, summary) to FILE
#   -k        keep the work directory (plans, logs)
#
# Settings (environment):
#   DBLOAD=build/cli/dbload   binary under test
#   PARTS="oltp shop tenant"  which parts to run
#   OLTP_ROWS=1000000         rows of sbtest1 (pgbench scale = OLTP_ROWS / 100000, at least 1)
#   SHOP_USERS=500000 SHOP_ITEMS=500000 SHOP_ORDERS=2000000 SHOP_ORDER_ITEMS=4000000
#   TENANT_ROWS=1000000
#   FAST=1                    dbenv --fast (durability off: PostgreSQL fsync=off,
#                             synchronous_commit=off, full_page_writes=off; MariaDB
#                             innodb_flush_log_at_trx_commit=2, innodb_doublewrite=0) for every
#                             tool alike; FAST=0: dbenv's stock durability
#   MY_BUFFER_POOL=2147483648 MY_ISOLATION=READ-COMMITTED
#                             set on MariaDB (SET GLOBAL, as root over its socket) after start,
#                             the same as bench/shop_cases.sh (dbenv's 256 MiB buffer pool with
#                             O_DIRECT would not hold the shop data set). Empty: keep dbenv's
#   WAIT_FILE=""  WAIT_MAX=2700
#                             before the first measurement, wait (checking every 30 s, at most
#                             WAIT_MAX s) until WAIT_FILE exists; reported either way
#
# Each tool runs with its defaults: dbload prepare loads a table in as many parts side by side
# as the machine has cores (at most 8, --parallel); sysbench prepare with 1 table uses one
# thread; pgbench -i is single-threaded. Wall time is measured around the whole
# command. Each output line is time-stamped (seconds since the command started) so that the
# loading phase can be told apart from index building and validation: for dbload, "loaded at"
# is the time of the table's last "N / N rows" line; what follows is index build, after_load
# steps and (at the end) validation. Validation alone is measured by running the same
# `dbload prepare` again on the loaded data (it then only validates).
#
# Everything runs on 127.0.0.1 against servers this script starts with tests/harness/dbenv in
# a mktemp directory and stops on exit (also on Ctrl-C; dbenv's guard stops them if this script
# dies). Only processes this script started are signalled.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
DBENV=$ROOT/tests/harness/dbenv

DBLOAD=${DBLOAD:-$ROOT/build/cli/dbload}
PARTS=${PARTS:-"oltp shop tenant"}
OLTP_ROWS=${OLTP_ROWS:-1000000}
SHOP_USERS=${SHOP_USERS:-500000}
SHOP_ITEMS=${SHOP_ITEMS:-500000}
SHOP_ORDERS=${SHOP_ORDERS:-2000000}
SHOP_ORDER_ITEMS=${SHOP_ORDER_ITEMS:-4000000}
TENANT_ROWS=${TENANT_ROWS:-1000000}
FAST=${FAST:-1}
MY_BUFFER_POOL=${MY_BUFFER_POOL:-2147483648}
MY_ISOLATION=${MY_ISOLATION:-READ-COMMITTED}
WAIT_FILE=${WAIT_FILE:-}
WAIT_MAX=${WAIT_MAX:-2700}

OUT_FILE=""
KEEP=0
while getopts "o:kh" opt; do
  case $opt in
    o) OUT_FILE=$OPTARG ;;
    k) KEEP=1 ;;
    h)
      sed -n '2,40s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
      exit 0
      ;;
    *) exit 2 ;;
  esac
done

BENCH_NAME=prepare_speed
# shellcheck source=bench/lib.sh
source "$HERE/lib.sh"

for tool in sysbench pgbench psql mariadb jq /usr/bin/time awk stdbuf; do
  command -v "$tool" >/dev/null || die "$tool not found"
done
[[ -x $DBLOAD ]] || die "dbload binary not found at $DBLOAD (cmake --build build -j2 --target dbload, or set DBLOAD=...)"
for v in OLTP_ROWS SHOP_USERS SHOP_ITEMS SHOP_ORDERS SHOP_ORDER_ITEMS TENANT_ROWS WAIT_MAX; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a non-negative integer, got '${!v}'"
done

WORK=$(mktemp -d /tmp/prepare_speed.XXXXXX)
DBDIR=$(mktemp -d /tmp/dbenv.XXXXXX)

stop_servers_on_exit
tee_output_to "$OUT_FILE"

CLK_TCK=$(getconf CLK_TCK)
NCPU=$(nproc)

# ---------------------------------------------------------------------------------------------
# Servers

note "starting PostgreSQL and MariaDB in $DBDIR (fast=$FAST)"
start_servers "$FAST"
pg_super() { psql -h "$PG_SOCKET_DIR" -p "$PG_PORT" -U postgres -d "$PG_DATABASE" -Atq -c "$1"; }
tune_mariadb

PGBENCH_SCALE=$(((OLTP_ROWS + 99999) / 100000))
SB_PG=(--db-driver=pgsql --pgsql-host="$PG_HOST" --pgsql-port="$PG_PORT" --pgsql-user="$PG_USER"
  --pgsql-password="$PG_PW" --pgsql-db="$PG_DATABASE" --tables=1 --table-size="$OLTP_ROWS")
SB_MY=(--db-driver=mysql --mysql-host="$MARIADB_HOST" --mysql-port="$MARIADB_PORT"
  --mysql-user="$MARIADB_USER" --mysql-password="$MY_PW" --mysql-db="$MARIADB_DATABASE"
  --tables=1 --table-size="$OLTP_ROWS")
PGB_CONN=(-h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" "$PG_DATABASE")

PLANS=$ROOT/workloads/plans
SHOP_SET=(--set "workload_options.users=$SHOP_USERS" --set "workload_options.items=$SHOP_ITEMS"
  --set "workload_options.orders=$SHOP_ORDERS" --set "workload_options.order_items=$SHOP_ORDER_ITEMS")
SHOP_ROWS=$((SHOP_USERS + SHOP_ITEMS + SHOP_ORDERS + SHOP_ORDER_ITEMS))

echo "# prepare_speed.sh, started $(date -u '+%Y-%m-%d %H:%M:%S') UTC on $(hostname), nproc $NCPU"
echo "# clients: $("$DBLOAD" version 2>/dev/null | head -n1) ($DBLOAD), $(sysbench --version), $(pgbench --version)"
echo "# servers: PostgreSQL $(pg_sql 'SHOW server_version'), MariaDB $(my_sql 'SELECT VERSION()'), tests/harness/dbenv$( ((FAST)) && echo ' --fast')"
echo "# PostgreSQL fsync=$(pg_sql 'SHOW fsync') synchronous_commit=$(pg_sql 'SHOW synchronous_commit') full_page_writes=$(pg_sql 'SHOW full_page_writes') shared_buffers=$(pg_sql 'SHOW shared_buffers') maintenance_work_mem=$(pg_sql 'SHOW maintenance_work_mem')"
echo "# MariaDB $(my_sql "SELECT CONCAT('innodb_flush_log_at_trx_commit=', @@innodb_flush_log_at_trx_commit, ' innodb_doublewrite=', @@innodb_doublewrite, ' innodb_buffer_pool_size=', @@innodb_buffer_pool_size, ' innodb_flush_method=', @@innodb_flush_method, ' tx_isolation=', @@tx_isolation)")"
wait_for_file

# ---------------------------------------------------------------------------------------------
# One measurement: NAME SERVICE -- CMD...  Prints the command, the time-stamped output, wall
# time, client and server CPU and other processes' share; sets R_WALL R_LOG R_LOAD R_OTHER.

SUMMARY=() # NAME|wall|rows|load|other|extra
measure() {
  local name=$1 service=$2
  shift 3
  R_LOG=$WORK/$name.log
  # Each load starts from the same state: dirty pages of the previous load written out.
  pg_super 'CHECKPOINT' >/dev/null 2>&1 || true
  sleep 3
  R_LOAD=$(load1)
  echo
  echo "### $name"
  echo "# $(utc) UTC, load average $R_LOAD"
  echo "\$ $(show_cmd "$@")"
  local b0 s0 b1 s1 rc=0 t0
  b0=$(machine_busy_ticks)
  s0=$(server_ticks "$service")
  t0=$EPOCHREALTIME
  { /usr/bin/time -o "$WORK/$name.time" -f "%e %U %S" stdbuf -oL -eL "$@" 2>&1 || echo "EXIT $?"; } |
    while IFS= read -r line; do echo "$EPOCHREALTIME $line"; done >"$WORK/$name.raw"
  b1=$(machine_busy_ticks)
  s1=$(server_ticks "$service")
  awk -v t0="$t0" '{ t = $1; sub(/^[^ ]+ /, ""); printf "%8.3f  %s\n", t - t0, $0 }' "$WORK/$name.raw" >"$R_LOG"
  cat "$R_LOG"
  if grep -q '^ *[0-9.]*  EXIT ' "$R_LOG"; then die "$name failed: $(tail -n 3 "$R_LOG")"; fi
  local u s
  read -r R_WALL u s <"$WORK/$name.time"
  R_CLIENT=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
  R_SERVER=$(awk -v d=$((s1 - s0)) -v t="$CLK_TCK" 'BEGIN { printf "%.2f", d / t }')
  R_OTHER=$(awk -v b=$((b1 - b0)) -v t="$CLK_TCK" -v c="$R_CLIENT" -v sv="$R_SERVER" \
    -v w="$R_WALL" -v n="$NCPU" 'BEGIN { o = b / t - c - sv; if (o < 0) o = 0; printf "%.1f", 100 * o / (w * n) }')
  echo "# wall ${R_WALL} s, client CPU ${R_CLIENT} s, server CPU ${R_SERVER} s, other processes ${R_OTHER} % of the machine, load after $(load1)"
}

# The time (s since start) of the last line matching REGEX in the current log.
t_of() { awk -v re="$1" '$0 ~ re { t = $1 } END { print t }' "$R_LOG"; }
# When each table's last row was committed: the time of its first "T: N / N rows" line.
done_at() { # [TABLE] -> seconds (one table) or "T at S s, ..." (all)
  awk -v want="${1:-}" '$4 == "/" && $6 == "rows" && $3 == $5 && $3 ~ /^[0-9]+$/ {
      tbl = $2; sub(/:$/, "", tbl)
      if (!(tbl in at)) { at[tbl] = $1; order[++n] = tbl } }
    END { if (want != "") print at[want]; else for (i = 1; i <= n; i++) printf "%s%s at %s s", (i > 1 ? ", " : ""), order[i], at[order[i]] }' "$R_LOG"
}
rate() { awk -v r="$1" -v s="$2" 'BEGIN { if (s > 0) printf "%.0f", r / s; else print "n/a" }'; }
commas() { sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<<"$1"; }
sub_s() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a - b }'; }

# dbload prepare, then the same again (validation only), then cleanup.
# NAME SERVICE ROWS LAST_TABLE PLAN SET...
dbload_prepare() {
  local name=$1 service=$2 rows=$3 last=$4 plan=$5
  shift 5
  measure "$name" "$service" -- "$DBLOAD" prepare "$plan" "$@"
  local wall=$R_WALL load=$R_LOAD other=$R_OTHER t_load t_tail per_table
  t_load=$(done_at "$last")
  t_tail=$(sub_s "$wall" "$t_load")
  # dbload's own per-table rates (its last line per table; it starts counting after the first batch)
  per_table=$(awk '/ rows \(/ { sub(/^ *[0-9.]+  /, ""); split($0, a, ":"); last[a[1]] = $0; if (!(a[1] in seen)) { seen[a[1]] = 1; order[++n] = a[1] } }
    END { for (i = 1; i <= n; i++) { l = last[order[i]]; sub(/.*\(/, "", l); sub(/ rows\/s.*/, "", l); printf "%s%s %s/s", (i > 1 ? ", " : ""), order[i], l } }' "$R_LOG")
  local loaded_at
  loaded_at=$(done_at)
  measure "$name-revalidate" "$service" -- "$DBLOAD" prepare "$plan" "$@"
  local t_valid=$R_WALL
  SUMMARY+=("$name|$wall|$rows|$load|$other|rows committed: ${loaded_at} ($(commas "$(rate "$rows" "$t_load")") rows/s up to the last row); then ${t_tail} s of the last table's indexes + validation; validation alone (re-run on the loaded data) ${t_valid} s; dbload's rates: $per_table")
  note "$name: $wall s"
  "$DBLOAD" cleanup "$plan" "$@" >/dev/null
}

pg_sizes() { # TABLE -> "heap B/row, total MiB"
  pg_sql "SELECT round(pg_table_size('$1')::numeric / count(*), 1) || ' B/row heap, ' || round(pg_total_relation_size('$1') / 1048576.0) || ' MiB with indexes' FROM $1"
}
my_sizes() {
  my_sql "ANALYZE TABLE $1" >/dev/null
  my_sql "SELECT CONCAT(ROUND(data_length / table_rows, 1), ' B/row clustered index (estimate), ', ROUND((data_length + index_length) / 1048576), ' MiB with indexes') FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = '$1'"
}

# ---------------------------------------------------------------------------------------------
# a. oltp

if [[ " $PARTS " == *" oltp "* ]]; then
  OLTP_SET=(--set "workload_options.tables=1" --set "workload_options.table_size=$OLTP_ROWS")
  dbload_prepare "oltp-dbload-postgresql" postgres "$OLTP_ROWS" sbtest1 \
    "$PLANS/oltp-point-select-postgresql.yaml" --set "target.port=$PG_PORT" "${OLTP_SET[@]}"

  measure "oltp-sysbench-postgresql" postgres -- sysbench oltp_read_only "${SB_PG[@]}" prepare
  t=$(t_of "Creating a secondary index")
  [[ $(pg_sql 'SELECT count(*) FROM sbtest1') == "$OLTP_ROWS" ]] || die "sysbench loaded a wrong row count"
  SUMMARY+=("oltp-sysbench-postgresql|$R_WALL|$OLTP_ROWS|$R_LOAD|$R_OTHER|rows inserted by ${t} s ($(commas "$(rate "$OLTP_ROWS" "$t")") rows/s), then the k index; $(pg_sizes sbtest1)")
  sysbench oltp_read_only "${SB_PG[@]}" cleanup >/dev/null

  # pgbench's own tables, loaded by dbload from a user workload file: the same rows as pgbench -i.
  PGB_LAYOUT_ROWS=$((PGBENCH_SCALE * 100000))
  dbload_prepare "oltp-dbload-pgbench-layout-postgresql" postgres "$PGB_LAYOUT_ROWS" pgbench_accounts \
    "$ROOT/bench/workloads/pgbench-select-only-postgresql.yaml" --set "target.port=$PG_PORT" \
    --set "workload_options.scale=$PGBENCH_SCALE"

  measure "oltp-pgbench-postgresql" postgres -- pgbench -i -s "$PGBENCH_SCALE" "${PGB_CONN[@]}"
  PGB_ROWS=$(pg_sql 'SELECT count(*) FROM pgbench_accounts')
  SUMMARY+=("oltp-pgbench-postgresql|$R_WALL|$PGB_ROWS|$R_LOAD|$R_OTHER|pgbench: $(grep -o 'done in .*' "$R_LOG" | head -n1 | sed 's/\.$//'); pgbench_accounts $(pg_sizes pgbench_accounts) (sbtest1: see above)")
  pgbench -i -I d "${PGB_CONN[@]}" >/dev/null 2>&1

  dbload_prepare "oltp-dbload-mariadb" mariadb "$OLTP_ROWS" sbtest1 \
    "$PLANS/oltp-point-select-mariadb.yaml" --set "target.port=$MARIADB_PORT" "${OLTP_SET[@]}"

  measure "oltp-sysbench-mariadb" mariadb -- sysbench oltp_read_only "${SB_MY[@]}" prepare
  t=$(t_of "Creating a secondary index")
  [[ $(my_sql 'SELECT count(*) FROM sbtest1') == "$OLTP_ROWS" ]] || die "sysbench loaded a wrong row count"
  SUMMARY+=("oltp-sysbench-mariadb|$R_WALL|$OLTP_ROWS|$R_LOAD|$R_OTHER|rows inserted by ${t} s ($(commas "$(rate "$OLTP_ROWS" "$t")") rows/s), then the k index; $(my_sizes sbtest1)")
  sysbench oltp_read_only "${SB_MY[@]}" cleanup >/dev/null
fi

# ---------------------------------------------------------------------------------------------
# b. shop, c. tenant_orders

if [[ " $PARTS " == *" shop "* ]]; then
  dbload_prepare "shop-dbload-postgresql" postgres "$SHOP_ROWS" order_items \
    "$PLANS/shop-05-select-users-by-id-postgresql.yaml" --set "target.port=$PG_PORT" "${SHOP_SET[@]}"
  dbload_prepare "shop-dbload-mariadb" mariadb "$SHOP_ROWS" order_items \
    "$PLANS/shop-05-select-users-by-id-mariadb.yaml" --set "target.port=$MARIADB_PORT" "${SHOP_SET[@]}"
fi

if [[ " $PARTS " == *" tenant "* ]]; then
  dbload_prepare "tenant_orders-dbload-postgresql" postgres "$TENANT_ROWS" tenant_orders \
    "$PLANS/tenant-orders-pk-lookup-postgresql.yaml" --set "target.port=$PG_PORT" --set "workload_options.rows=$TENANT_ROWS"
  dbload_prepare "tenant_orders-dbload-mariadb" mariadb "$TENANT_ROWS" tenant_orders \
    "$PLANS/tenant-orders-pk-lookup-mariadb.yaml" --set "target.port=$MARIADB_PORT" --set "workload_options.rows=$TENANT_ROWS"
fi

# ---------------------------------------------------------------------------------------------
# Summary

echo
echo "## Summary (finished $(date -u '+%H:%M:%S') UTC)"
echo
echo "| run | rows | wall s | rows/s overall | load before | other % | notes |"
echo "|---|---|---|---|---|---|---|"
for row in "${SUMMARY[@]}"; do
  IFS='|' read -r name wall rows load other extra <<<"$row"
  printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$(commas "$rows")" "$wall" \
    "$(commas "$(rate "$rows" "$wall")")" "$load" "$other" "$extra"
done
