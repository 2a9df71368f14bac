#!/usr/bin/env bash
# shop_cases.sh — the 17 cases of the shop comparison (shared/WORKLOADS.md section 1) on
# PostgreSQL and MariaDB, in the source's order, from the ready plans
# workloads/plans/shop-NN-*-{postgresql,mariadb}.yaml, at the source's rates divided by DIV.
#
#   bench/shop_cases.sh [-o RAW.txt] [-r REPORT_DIR] [-k]
#
#   -o FILE   also write everything printed (commands, dbload's outputs, tables) to FILE
#   -r DIR    write the JSON report of every case there (default: the work directory)
#   -k        keep the work directory
#   -t DIR    run nothing: print the PostgreSQL/MariaDB ratio table from the JSON reports in DIR
#
# For each database: start from an empty database, `dbload prepare` the shop data set (timed),
# then run the cases one after the other on that same data (cases 1-4 insert on top of it,
# 14, 15 and 17 delete orders: running them in order is the source's order). Each case:
#   dbload run PLAN --set target.port=P --set load.open.rate=R/DIV --set stop.queries=SECONDS*R/DIV
#              [--set target.pool=N] --report DIR/NN-DB.json
# The tables (wanted and actual rate, executed, response-time mean/p50/p90/p99/p99.9 from the
# intended start, errors by class and code, dbload's "Rows changed" check) and the
# PostgreSQL/MariaDB ratios are computed from the JSON reports.
#
# Settings (environment):
#   DBLOAD=build/cli/dbload   binary under test
#   DBS="postgresql mariadb"  databases, in this order
#   CASES="01 02 … 17"        cases to run (two digits)
#   DIV=10                    the source's rate of every case is divided by this
#   CASE_SECONDS=10           stop.queries = CASE_SECONDS × rate (the source: total = 10 × rate)
#   POOL_PG="" POOL_MY=""     target.pool override (default: the plans' 64 and 128)
#   SHOP_USERS=500000 SHOP_ITEMS=500000 SHOP_ORDERS=2000000 SHOP_ORDER_ITEMS=4000000
#   FAST=1                    dbenv --fast (PostgreSQL fsync=off synchronous_commit=off
#                             full_page_writes=off; MariaDB innodb_flush_log_at_trx_commit=2
#                             innodb_doublewrite=0); FAST=0: stock durability
#   MY_BUFFER_POOL=2147483648 MY_ISOLATION=READ-COMMITTED
#                             set on MariaDB (SET GLOBAL, as root over its socket) after start:
#                             dbenv's 256 MiB buffer pool (InnoDB uses O_DIRECT, so no OS cache
#                             behind it) would not hold the data set, while PostgreSQL has the
#                             OS page cache; the source ran MySQL READ-COMMITTED. Empty: keep
#                             dbenv's setting
#   PAUSE=3                   seconds between cases
#   WAIT_FILE="" WAIT_MAX=2700
#                             before preparing, wait (every 30 s, at most WAIT_MAX s) for WAIT_FILE
#
# Everything runs on 127.0.0.1 against servers this script starts with tests/harness/dbenv in
# a mktemp directory and stops on exit (also on Ctrl-C). Only processes this script started are
# signalled.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
DBENV=$ROOT/tests/harness/dbenv
PLANS=$ROOT/workloads/plans

DBLOAD=${DBLOAD:-$ROOT/build/cli/dbload}
DBS=${DBS:-"postgresql mariadb"}
CASES=${CASES:-"01 02 03 04 05 06 07 08 09 10 11 12 13 14 15 16 17"}
DIV=${DIV:-10}
CASE_SECONDS=${CASE_SECONDS:-10}
POOL_PG=${POOL_PG:-}
POOL_MY=${POOL_MY:-}
SHOP_USERS=${SHOP_USERS:-500000}
SHOP_ITEMS=${SHOP_ITEMS:-500000}
SHOP_ORDERS=${SHOP_ORDERS:-2000000}
SHOP_ORDER_ITEMS=${SHOP_ORDER_ITEMS:-4000000}
FAST=${FAST:-1}
MY_BUFFER_POOL=${MY_BUFFER_POOL:-2147483648}
MY_ISOLATION=${MY_ISOLATION:-READ-COMMITTED}
PAUSE=${PAUSE:-3}
WAIT_FILE=${WAIT_FILE:-}
WAIT_MAX=${WAIT_MAX:-2700}

OUT_FILE=""
REPORT_DIR=""
KEEP=0
TABLES_FROM=""
while getopts "o:r:t:kh" opt; do
  case $opt in
    o) OUT_FILE=$OPTARG ;;
    r) REPORT_DIR=$OPTARG ;;
    k) KEEP=1 ;;
    t) TABLES_FROM=$OPTARG ;;
    h)
      sed -n '2,40s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
      exit 0
      ;;
    *) exit 2 ;;
  esac
done

BENCH_NAME=shop_cases
# shellcheck source=bench/lib.sh
source "$HERE/lib.sh"

# ratio_table: PostgreSQL / MariaDB per case, from the JSON reports in REPORT_DIR.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || a == "null" || b == "null" || b + 0 == 0) print "—"; else { r = a / b; printf (r >= 0.1 ? "%.2f" : "%.2g"), r } }'; }
ratio_table() {
  local nn jp jm name f
  echo
  echo "### PostgreSQL / MariaDB, per case (from the JSON reports)"
  echo
  echo "| # | case | actual rate PG/MariaDB | p99 PG/MariaDB | mean PG/MariaDB |"
  echo "|---|---|---|---|---|"
  for nn in $CASES; do
    jp="" jm=""
    for f in "$REPORT_DIR/$nn"-*-postgresql.json; do [[ -f $f ]] && jp=$f && break; done
    for f in "$REPORT_DIR/$nn"-*-mariadb.json; do [[ -f $f ]] && jm=$f && break; done
    name=$(basename "${jp:-${jm:-$nn-?-x}}" .json); name=${name#"$nn"-}; name=${name%-*}
    if [[ ! -s $jp || ! -s $jm ]]; then
      echo "| $nn | $name | — | — | — |"
      continue
    fi
    echo "| $nn | $name | $(ratio "$(jqr .actual_rate "$jp")" "$(jqr .actual_rate "$jm")") | $(ratio "$(jqr .response_time.p99_ms "$jp")" "$(jqr .response_time.p99_ms "$jm")") | $(ratio "$(jqr .response_time.mean_ms "$jp")" "$(jqr .response_time.mean_ms "$jm")") |"
  done
}
jqr() { jq -r "$1" "$2" 2>/dev/null || echo ""; }


for tool in jq awk psql mariadb; do
  command -v "$tool" >/dev/null || die "$tool not found"
done
[[ -x $DBLOAD ]] || die "dbload binary not found at $DBLOAD (cmake --build build -j2 --target dbload, or set DBLOAD=...)"
for v in DIV CASE_SECONDS SHOP_USERS SHOP_ITEMS SHOP_ORDERS SHOP_ORDER_ITEMS PAUSE WAIT_MAX; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a non-negative integer, got '${!v}'"
done
((DIV >= 1)) || die "DIV must be >= 1"

if [[ -n $TABLES_FROM ]]; then
  REPORT_DIR=$TABLES_FROM
  ratio_table
  exit 0
fi

WORK=$(mktemp -d /tmp/shop_cases.XXXXXX)
DBDIR=$(mktemp -d /tmp/dbenv.XXXXXX)
[[ -n $REPORT_DIR ]] || REPORT_DIR=$WORK/reports
mkdir -p "$REPORT_DIR"
REPORT_DIR=$(cd "$REPORT_DIR" && pwd)

stop_servers_on_exit
tee_output_to "$OUT_FILE"

# ---------------------------------------------------------------------------------------------
# Servers

note "starting PostgreSQL and MariaDB in $DBDIR (fast=$FAST)"
start_servers "$FAST"
tune_mariadb

SHOP_SET=(--set "workload_options.users=$SHOP_USERS" --set "workload_options.items=$SHOP_ITEMS"
  --set "workload_options.orders=$SHOP_ORDERS" --set "workload_options.order_items=$SHOP_ORDER_ITEMS")

echo "# shop_cases.sh, started $(date -u '+%Y-%m-%d %H:%M:%S') UTC on $(hostname), nproc $(nproc)"
echo "# client: $("$DBLOAD" version 2>/dev/null | head -n1) ($DBLOAD)"
echo "# servers: PostgreSQL $(pg_sql 'SHOW server_version') (shared_buffers $(pg_sql 'SHOW shared_buffers'), fsync $(pg_sql 'SHOW fsync'), synchronous_commit $(pg_sql 'SHOW synchronous_commit')), MariaDB $(my_sql 'SELECT VERSION()') ($(my_sql "SELECT CONCAT('innodb_buffer_pool_size ', @@innodb_buffer_pool_size DIV 1048576, 'M, innodb_flush_log_at_trx_commit ', @@innodb_flush_log_at_trx_commit, ', transaction isolation ', @@tx_isolation)")), tests/harness/dbenv$( ((FAST)) && echo ' --fast')"
echo "# data set: users $SHOP_USERS, items $SHOP_ITEMS, orders $SHOP_ORDERS, order_items $SHOP_ORDER_ITEMS; rates = source's / $DIV; stop.queries = $CASE_SECONDS s x rate; pool: PostgreSQL ${POOL_PG:-as in the plan}, MariaDB ${POOL_MY:-as in the plan}"

wait_for_file

# ---------------------------------------------------------------------------------------------
# Runs

declare -A PORT=([postgresql]=$PG_PORT [mariadb]=$MARIADB_PORT)
declare -A POOL=([postgresql]=$POOL_PG [mariadb]=$POOL_MY)
declare -A LOAD_BEFORE START_UTC RC CHECK PREP
declare -A CASE_NAME

plan_of() { # NN DB -> plan file
  local f
  for f in "$PLANS"/shop-"$1"-*-"$2".yaml; do
    [[ -f $f ]] && { echo "$f"; return; }
  done
  die "no plan for case $1 on $2"
}

for db in $DBS; do
  case $db in postgresql | mariadb) ;; *) die "unknown database $db" ;; esac
  first_plan=$(plan_of 05 "$db")
  echo
  echo "## $db: prepare"
  echo "# $(utc) UTC, load average $(load1)"
  cmd=("$DBLOAD" prepare "$first_plan" --set "target.port=${PORT[$db]}" "${SHOP_SET[@]}")
  echo "\$ $(show_cmd "${cmd[@]}")"
  t0=$EPOCHREALTIME
  "${cmd[@]}" 2>&1 | tee "$WORK/prepare-$db.log" || die "prepare on $db failed"
  PREP[$db]=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
  echo "# wall ${PREP[$db]} s"

  for nn in $CASES; do
    plan=$(plan_of "$nn" "$db")
    base=$(basename "$plan" .yaml)
    cname=${base#shop-"$nn"-}
    cname=${cname%-"$db"}
    CASE_NAME[$nn]=$cname
    src_rate=$(sed -n 's/^load: *{ *open: *{ *rate: *\([0-9]*\).*/\1/p' "$plan")
    [[ $src_rate =~ ^[0-9]+$ ]] || die "$plan: cannot read its open-loop rate"
    rate=$((src_rate / DIV))
    ((rate >= 1)) || rate=1
    queries=$((rate * CASE_SECONDS))
    json=$REPORT_DIR/$nn-$cname-$db.json
    cmd=("$DBLOAD" run "$plan" --set "target.port=${PORT[$db]}" "${SHOP_SET[@]}"
      --set "load.open.rate=$rate" --set "stop.queries=$queries")
    [[ -n ${POOL[$db]} ]] && cmd+=(--set "target.pool=${POOL[$db]}")
    cmd+=(--report "$json")
    sleep "$PAUSE"
    LOAD_BEFORE[$nn-$db]=$(load1)
    START_UTC[$nn-$db]=$(utc)
    echo
    echo "## $db case $nn ($cname): source rate $src_rate/s, here $rate/s, $queries queries"
    echo "# ${START_UTC[$nn-$db]} UTC, load average ${LOAD_BEFORE[$nn-$db]}"
    echo "\$ $(show_cmd "${cmd[@]}")"
    rc=0
    "${cmd[@]}" >"$WORK/$nn-$db.log" 2>&1 || rc=$?
    cat "$WORK/$nn-$db.log"
    RC[$nn-$db]=$rc
    echo "# exit $rc, $(utc) UTC"
    # dbload's own check: "  TABLE  counted  expected  ok|MISMATCH" under "Rows changed".
    CHECK[$nn-$db]=$(awk '/^Rows changed/ { on = 1; next } on && /^  / { $1 = $1; printf "%s%s", (n++ ? "; " : ""), $0; next } on { on = 0 }' "$WORK/$nn-$db.log")
  done
done

# ---------------------------------------------------------------------------------------------
# Tables

f3() { awk -v x="$1" 'BEGIN { if (x == "" || x == "null") print "—"; else printf "%.3f", x }'; }
f0() { awk -v x="$1" 'BEGIN { if (x == "" || x == "null") print "—"; else printf "%.0f", x }'; }

echo
echo "## Results (finished $(date -u '+%H:%M:%S') UTC)"
for db in $DBS; do
  echo
  echo "### $db (shop data set prepared in ${PREP[$db]} s)"
  echo
  echo "| # | case | start UTC | load before | wanted/s | actual/s | executed | mean ms | p50 ms | p90 ms | p99 ms | p99.9 ms | service p99 ms | errors | rows changed (counted, expected, check) |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  for nn in $CASES; do
    j=$REPORT_DIR/$nn-${CASE_NAME[$nn]}-$db.json
    if [[ ! -s $j ]]; then
      echo "| $nn | ${CASE_NAME[$nn]} | ${START_UTC[$nn-$db]} | ${LOAD_BEFORE[$nn-$db]} | no report (exit ${RC[$nn-$db]}) |||||||||||"
      continue
    fi
    # shellcheck disable=SC2016 # $q is jq's variable
    errs=$(jqr '[.query_types[] | .name as $q | .error_counts[]? | "\($q) \(.error_class) \(.code) ×\(.count)"] | join(", ")' "$j")
    nerr=$(jqr '.errors // 0' "$j")
    echo "| $nn | ${CASE_NAME[$nn]} | ${START_UTC[$nn-$db]} | ${LOAD_BEFORE[$nn-$db]} | $(f0 "$(jqr .wanted_rate "$j")") | $(f0 "$(jqr .actual_rate "$j")") | $(jqr '.executed // 0' "$j") | $(f3 "$(jqr .response_time.mean_ms "$j")") | $(f3 "$(jqr .response_time.p50_ms "$j")") | $(f3 "$(jqr .response_time.p90_ms "$j")") | $(f3 "$(jqr .response_time.p99_ms "$j")") | $(f3 "$(jqr .response_time.p999_ms "$j")") | $(f3 "$(jqr .service_time.p99_ms "$j")") | $nerr${errs:+ ($errs)} | ${CHECK[$nn-$db]:-—}$( ((RC[$nn-$db])) && echo "; exit ${RC[$nn-$db]}") |"
  done
  # Mixed cases: per query type.
  for nn in $CASES; do
    j=$REPORT_DIR/$nn-${CASE_NAME[$nn]}-$db.json
    [[ -s $j ]] || continue
    if (($(jqr '.query_types | length' "$j") > 1)); then
      echo
      echo "Case $nn per query type ($db):"
      echo
      echo "| query type | executed | errors | mean ms | p50 ms | p99 ms | p99.9 ms |"
      echo "|---|---|---|---|---|---|---|"
      jq -r '.query_types[] | "| \(.name) | \(.executed) | \(.errors) | \(.response_time.mean_ms*1000|round/1000) | \(.response_time.p50_ms*1000|round/1000) | \(.response_time.p99_ms*1000|round/1000) | \(.response_time.p999_ms*1000|round/1000) |"' "$j"
    fi
  done
done

if [[ " $DBS " == *" postgresql "* && " $DBS " == *" mariadb "* ]]; then
  ratio_table
fi
