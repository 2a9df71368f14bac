#!/usr/bin/env bash
# callgrind_per_query.sh — client instructions per point select of `dbload run`, counted by
# callgrind (user space only). This VM has no hardware counters (`perf stat -e instructions`
# says <not supported>), so instruction counts come from valgrind instead; they do not move with
# the load other processes put on the machine, which wall-clock and CPU-time figures do.
#
#   bench/callgrind_per_query.sh DBLOAD ENV_FILE pg|mariadb CONNS [SECONDS] [OUT_DIR]
#
#   DBLOAD     the dbload binary (a RelWithDebInfo build gives function names with sources)
#   ENV_FILE   the output of `tests/harness/dbenv start DIR postgres mariadb` (ports, passwords);
#              `dbload prepare` must have been run against those servers
#   SECONDS    closed-loop duration under valgrind (default 4; valgrind runs ~20x slower)
#
# Prints one line: queries executed, the whole process's instructions per query, the same
# without connection set-up (SCRAM authentication alone is ~85M instructions per PostgreSQL
# connection), and the hot path: LoadRunner::RunClosedLoop inclusive per query (scenario,
# driver, client library, recording). Only the hot-path figure is comparable between runs: the
# rest includes per-second work (drains, gRPC) that valgrind's slowdown inflates per query.
set -euo pipefail

[[ $# -ge 4 ]] || { sed -n '2,18s/^# \{0,1\}//p' "$0" >&2; exit 2; }
DBLOAD=$1 ENV_FILE=$2 DB=$3 CONNS=$4 SECONDS_=${5:-4} OUT=${6:-$(mktemp -d /tmp/callgrind.XXXXXX)}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PLANS=$HERE/../workloads/plans

# shellcheck disable=SC1090
. "$ENV_FILE"
PGPASSWORD=$(<"$PG_PASSWORD_FILE") MYSQL_PWD=$(<"$MARIADB_PASSWORD_FILE")
export PGPASSWORD MYSQL_PWD
case $DB in
  pg) SRC=$PLANS/oltp-point-select-postgresql.yaml PORT=$PG_PORT ;;
  mariadb) SRC=$PLANS/oltp-point-select-mariadb.yaml PORT=$MARIADB_PORT ;;
  *) echo "database must be pg or mariadb" >&2; exit 2 ;;
esac
mkdir -p "$OUT"
NAME=$OUT/$(basename "$DBLOAD")-$DB-$CONNS
# The shipped plans are open loop; a --set cannot switch the load oneof, so copy with closed.
sed 's/^load: .*/load: {closed: {clients: 4}}/' "$SRC" >"$NAME.yaml"

valgrind --tool=callgrind --callgrind-out-file="$NAME.cg" "$DBLOAD" run "$NAME.yaml" \
  --set "target.port=$PORT" --set "load.closed.clients=$CONNS" --set warmup=0s \
  --set "stop.duration=${SECONDS_}s" --report "$NAME.json" >"$NAME.log" 2>&1

QUERIES=$(python3 -c '
import json, sys
def walk(o):
    if isinstance(o, dict):
        for k, v in o.items():
            if k == "executed": yield int(v)
            yield from walk(v)
    elif isinstance(o, list):
        for v in o: yield from walk(v)
print(max(walk(json.load(open(sys.argv[1])))))' "$NAME.json")
callgrind_annotate --threshold=100 --inclusive=yes "$NAME.cg" >"$NAME.incl.txt" 2>/dev/null
first() { grep -E "$1" "$NAME.incl.txt" | grep -v '=>' | head -1 | awk '{gsub(",", "", $1); print $1}'; }
TOTAL=$(first 'PROGRAM TOTALS')
CONNECT=$(first '(PostgreSqlDriver|MySqlDriver)::Connect\(\)')
LOOP=$(first 'LoadRunner::RunClosedLoop')
echo "$(basename "$DBLOAD") $DB conns=$CONNS queries=$QUERIES" \
  "total/query=$((TOTAL / QUERIES)) without_connect/query=$(((TOTAL - ${CONNECT:-0}) / QUERIES))" \
  "hot_path/query=$((${LOOP:-0} / QUERIES)) (files in $OUT)"
