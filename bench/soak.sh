#!/usr/bin/env bash
# soak.sh — a bounded soak of the distributed path: the shop "mixed" case (1 insert : 1 update :
# 1 delete : 3 selects) for DURATION seconds at RATE/s through a real dbload-coordinator and
# AGENTS dbload-agent processes against a throwaway PostgreSQL, with one agent killed and
# restarted and one database restart on the way. It checks:
#   1. memory stays flat: the coordinator's and the never-restarted agents' RSS (sampled every
#      SAMPLE s) in the last quarter of the run is within GROWTH_MAX % (or 8 MiB) of the second
#      quarter's;
#   2. the report's totals equal the database's own counts: users gained and orders lost against
#      the report's successful insert_user and delete_order transactions. The database may hold
#      more than the report, never less, by at most the transactions the report cannot know
#      about: those that failed with a connection error (a commit may have landed before the
#      connection died) and those the killed agent ran after its last report (at most its share
#      of the rate for 2 s);
#   3. the run ends by its duration, degraded (the killed agent), with the database restart's
#      errors counted by class, and the submit exits 0; the restarted agent rejoins the run (as
#      agent-2#2) and takes a share.
#
#   bench/soak.sh [-o FILE] [-k]
#
#   -o FILE   also write the summary (markdown) to FILE
#   -k        keep the work directory (plan, logs, report, RSS samples)
#
# Settings (environment):
#   DBLOAD_BIN=build/cli/dbload  (dbload-coordinator and dbload-agent are taken from the same
#                                 build tree: ../coordinator, ../agent)
#   DURATION=600 RATE=750 AGENTS=3 SAMPLE=10 GROWTH_MAX=10
#   USERS=200000 ORDERS=400000    shop data set (items 10000, order_items 2 per order)
#   KILL_AT=0.2 RESTART_AGENT_AFTER=20 DB_RESTART_AT=0.5   (fractions of DURATION; seconds)
#
# Everything runs on 127.0.0.1 against a PostgreSQL this script starts with tests/harness/dbenv
# in a mktemp directory and stops on exit (also on Ctrl-C); only processes it started are
# signalled, by PID. The load is bounded by the plan's duration, and the script gives the run
# at most DURATION + 180 s.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
DBENV=$ROOT/tests/harness/dbenv

DBLOAD_BIN=${DBLOAD_BIN:-$ROOT/build/cli/dbload}
BUILD_DIR=$(cd "$(dirname "$DBLOAD_BIN")/.." && pwd)
COORDINATOR_BIN=$BUILD_DIR/coordinator/dbload-coordinator
AGENT_BIN=$BUILD_DIR/agent/dbload-agent
DURATION=${DURATION:-600}
RATE=${RATE:-750}
AGENTS=${AGENTS:-3}
SAMPLE=${SAMPLE:-10}
GROWTH_MAX=${GROWTH_MAX:-10}
USERS=${USERS:-200000}
ORDERS=${ORDERS:-400000}
KILL_AT=${KILL_AT:-0.2}
RESTART_AGENT_AFTER=${RESTART_AGENT_AFTER:-20}
DB_RESTART_AT=${DB_RESTART_AT:-0.5}

OUT=""
KEEP=0
while getopts "o:kh" opt; do
  case $opt in
    o) OUT=$OPTARG ;;
    k) KEEP=1 ;;
    h) sed -n '2,32p' "$0"; exit 0 ;;
    *) exit 2 ;;
  esac
done

die() { echo "soak: error: $*" >&2; exit 1; }
note() { echo "soak: $(date -u +%H:%M:%S) $*" >&2; }
for tool in jq psql awk; do command -v "$tool" >/dev/null || die "$tool not found (scripts/setup installs it)"; done
for bin in "$DBLOAD_BIN" "$COORDINATOR_BIN" "$AGENT_BIN"; do [[ -x $bin ]] || die "$bin not built"; done
((AGENTS >= 2)) || die "AGENTS must be at least 2 (one of them is killed)"

WORK=$(mktemp -d /tmp/dbload-soak.XXXXXX)
chmod 755 "$WORK" # the postgres user must reach the server's socket below it
DBDIR=$WORK/db
PIDS=() # every process this script started and has not reaped, by PID
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  [[ -d $DBDIR ]] && "$DBENV" stop "$DBDIR" >/dev/null 2>&1 || true
  if ((KEEP)); then note "work directory kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

note "starting PostgreSQL in $DBDIR"
"$DBENV" start "$DBDIR" postgres --fast --owner-pid $$ >"$WORK/env" 2>"$WORK/dbenv.log" ||
  die "dbenv start failed: $(tail -n 20 "$WORK/dbenv.log")"
# shellcheck disable=SC1091
source "$WORK/env"
PGPASSWORD=$(<"$PG_PASSWORD_FILE")
export PGPASSWORD
pg() { psql -h "$PG_SOCKET_DIR" -p "$PG_PORT" -U postgres -d "$PG_DATABASE" -Atq -c "$1"; }

PLAN=$ROOT/workloads/plans/shop-17-mixed-postgresql.yaml
SETS=(--set "target.port=$PG_PORT" --set "workload_options.users=$USERS"
  --set "workload_options.items=10000" --set "workload_options.orders=$ORDERS"
  --set "workload_options.order_items=$((2 * ORDERS))")
note "preparing the shop data set ($USERS users, $ORDERS orders)"
"$DBLOAD_BIN" prepare "$PLAN" "${SETS[@]}" >"$WORK/prepare.log" 2>&1 || die "prepare failed: $(tail -n 5 "$WORK/prepare.log")"

# Daemons: their first stdout line says where the coordinator listens.
"$COORDINATOR_BIN" --listen 127.0.0.1:0 --metrics 127.0.0.1:0 --state-dir "$WORK/state" \
  >"$WORK/coordinator.out" 2>"$WORK/coordinator.err" &
COORDINATOR_PID=$!
PIDS+=("$COORDINATOR_PID")
for _ in $(seq 1 100); do grep -q '^listening on ' "$WORK/coordinator.out" 2>/dev/null && break; sleep 0.1; done
ADDR=$(sed -n 's/^listening on //p' "$WORK/coordinator.out" | head -n1)
[[ -n $ADDR ]] || die "the coordinator did not start: $(cat "$WORK/coordinator.err")"
declare -A AGENT_PID
start_agent() { # NAME
  "$AGENT_BIN" --coordinator "$ADDR" --name "$1" >>"$WORK/$1.out" 2>>"$WORK/$1.err" &
  AGENT_PID[$1]=$!
  PIDS+=("$!")
}
for i in $(seq 1 "$AGENTS"); do start_agent "agent-$i"; done

count() { pg "SELECT count(*) FROM $1"; }
USERS_BEFORE=$(count users)
ORDERS_BEFORE=$(count orders)

# The run: DURATION seconds at RATE/s (the query limit set far above what the rate can reach).
REPORT=$WORK/report.json
note "run: $RATE/s for $DURATION s over $AGENTS agents (coordinator $ADDR)"
T0=$EPOCHREALTIME
"$DBLOAD_BIN" submit "$PLAN" "${SETS[@]}" --coordinator "$ADDR" --min-agents "$AGENTS" \
  --wait-for-agents 30s --set "load.open.rate=$RATE" --set "stop.duration=${DURATION}s" \
  --set "stop.queries=$((RATE * DURATION * 2))" --wait --report "$REPORT" \
  >"$WORK/submit.out" 2>"$WORK/submit.err" &
SUBMIT_PID=$!
PIDS+=("$SUBMIT_PID")

elapsed() { awk -v a="$EPOCHREALTIME" -v b="$T0" 'BEGIN { printf "%.0f", a - b }'; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo ""; }
KILL_T=$(awk -v d="$DURATION" -v f="$KILL_AT" 'BEGIN { printf "%.0f", d * f }')
RESTART_T=$((KILL_T + RESTART_AGENT_AFTER))
DB_T=$(awk -v d="$DURATION" -v f="$DB_RESTART_AT" 'BEGIN { printf "%.0f", d * f }')
echo "t_s,process,rss_kib" >"$WORK/rss.csv"
killed=0 restarted=0 db_restarted=0 next_sample=0
deadline=$((DURATION + 180))
while kill -0 "$SUBMIT_PID" 2>/dev/null; do
  t=$(elapsed)
  ((t > deadline)) && die "the run did not end within $deadline s"
  if ((t >= next_sample)); then
    echo "$t,coordinator,$(rss_kib "$COORDINATOR_PID")" >>"$WORK/rss.csv"
    for name in "${!AGENT_PID[@]}"; do
      echo "$t,$name,$(rss_kib "${AGENT_PID[$name]}")" >>"$WORK/rss.csv"
    done
    next_sample=$((next_sample + SAMPLE))
  fi
  if ((!killed && t >= KILL_T)); then
    note "t=$t s: SIGKILL agent-2 (pid ${AGENT_PID[agent-2]})"
    kill -KILL "${AGENT_PID[agent-2]}"
    wait "${AGENT_PID[agent-2]}" 2>/dev/null || true
    killed=$t
  fi
  if ((killed && !restarted && t >= RESTART_T)); then
    note "t=$t s: agent-2 started again"
    start_agent agent-2
    restarted=$t
  fi
  if ((!db_restarted && t >= DB_T)); then
    note "t=$t s: restarting PostgreSQL"
    "$DBENV" restart "$DBDIR" postgres >>"$WORK/dbenv.log" 2>&1 || die "dbenv restart failed"
    db_restarted=$t
  fi
  sleep 1
done
SUBMIT_RC=0
wait "$SUBMIT_PID" || SUBMIT_RC=$?
note "the run ended after $(elapsed) s (submit exit $SUBMIT_RC)"
[[ -s $REPORT ]] || die "no report: $(tail -n 5 "$WORK/submit.err")"

USERS_AFTER=$(count users)
ORDERS_AFTER=$(count orders)

# ---------------------------------------------------------------------------------------------
# Checks

FAILED=0
check() { # OK? TEXT
  if (($1)); then echo "- ok: $2"; else echo "- **FAILED**: $2"; FAILED=1; fi
}
q() { jq -r "$1" "$REPORT"; }
qt() { # QUERY_TYPE FIELD: a field of one query type
  jq -r --arg q "$1" ".query_types[] | select(.name == \$q) | $2" "$REPORT"
}
conn_errors() { # QUERY_TYPE
  jq -r --arg q "$1" '[.query_types[] | select(.name == $q) | .error_counts[]? | select(.error_class == "connection") | .count | tonumber] | add // 0' "$REPORT"
}
ok_of() { qt "$1" '.executed // 0'; } # executed counts successful transactions only

# The killed agent's unreported tail: its share of the rate for 2 s, times the query type's
# weight (1 of 6 for insert_user and delete_order).
LOST_BOUND=$(awk -v r="$RATE" -v a="$AGENTS" 'BEGIN { printf "%.0f", r / a * 2 / 6 + 1 }')
INS_OK=$(ok_of insert_user)
INS_CONN=$(conn_errors insert_user)
DEL_OK=$(ok_of delete_order)
DEL_CONN=$(conn_errors delete_order)
USERS_GAINED=$((USERS_AFTER - USERS_BEFORE))
ORDERS_LOST=$((ORDERS_BEFORE - ORDERS_AFTER))

# Memory: mean RSS of each process over the second and the last quarter of the run.
quarter_means() { # PROCESS -> "Q2_KIB Q4_KIB"
  awk -F, -v p="$1" -v d="$DURATION" 'NR > 1 && $2 == p && $3 != "" {
      if ($1 >= d / 4 && $1 < d / 2) { s2 += $3; n2++ }
      if ($1 >= 3 * d / 4 && $1 <= d) { s4 += $3; n4++ } }
    END { printf "%.0f %.0f", n2 ? s2 / n2 : 0, n4 ? s4 / n4 : 0 }' "$WORK/rss.csv"
}

{
  echo "### Soak: shop mixed at $RATE/s for $DURATION s, $AGENTS agents, PostgreSQL ($(date -u '+%Y-%m-%d %H:%M') UTC)"
  echo
  echo "\`DURATION=$DURATION RATE=$RATE AGENTS=$AGENTS bench/soak.sh\`; agent-2 SIGKILLed at ${killed} s and started again at ${restarted} s; PostgreSQL restarted at ${db_restarted} s."
  echo
  echo "| figure | value |"
  echo "|---|---|"
  echo "| state / end | $(q .state) / $(q .end_reason) |"
  echo "| executed, errors | $(q '.executed // 0'), $(q '.errors // 0') |"
  echo "| per agent (executed) | $(jq -r '[.agents[] | "\(.name) \(.executed)"] | join(", ")' "$REPORT") |"
  echo "| errors by class and code | $(jq -r '[.query_types[] | .name as $q | .error_counts[]? | "\($q) \(.error_class) \(.code) ×\(.count)"] | join(", ")' "$REPORT") |"
  echo "| wanted / actual rate | $(q '.wanted_rate') / $(q '.actual_rate') |"
  echo "| response time p50 / p99 / p99.9 / max ms | $(q '.response_time.p50_ms') / $(q '.response_time.p99_ms') / $(q '.response_time.p999_ms') / $(q '.response_time.max_ms') |"
  echo "| users gained (database) / insert_user ok (report) / connection errors | $USERS_GAINED / $INS_OK / $INS_CONN |"
  echo "| orders lost (database) / delete_order ok (report) / connection errors | $ORDERS_LOST / $DEL_OK / $DEL_CONN |"
  for p in coordinator $(seq -f 'agent-%g' 1 "$AGENTS"); do
    read -r m2 m4 <<<"$(quarter_means "$p")"
    echo "| RSS $p: 2nd quarter / last quarter mean (MiB) | $(awk -v a="$m2" -v b="$m4" 'BEGIN { printf "%.1f / %.1f", a / 1024, b / 1024 }') |"
  done
  echo
  check "$((SUBMIT_RC == 0))" "the submit exited 0 (it exited $SUBMIT_RC)"
  check "$(jq -r '(.end_reason // "") | test("^duration")' "$REPORT" | grep -c true)" "the run ended by its duration: $(q .end_reason)"
  check "$(jq -r '(.end_reason // "") | test("degraded: agent agent-2 lost")' "$REPORT" | grep -c true)" "the report says agent-2 was lost (degraded)"
  REJOINED=$(jq -r '[.agents[] | select(.name == "agent-2#2") | .executed | tonumber] | add // 0' "$REPORT")
  check "$((REJOINED > 0))" "the restarted agent-2 rejoined the run as agent-2#2 and executed $REJOINED transactions"
  check "$((USERS_GAINED >= INS_OK && USERS_GAINED <= INS_OK + INS_CONN + LOST_BOUND))" \
    "users gained $USERS_GAINED within [$INS_OK, $INS_OK + $INS_CONN connection errors + $LOST_BOUND unreported]"
  check "$((ORDERS_LOST >= DEL_OK && ORDERS_LOST <= DEL_OK + DEL_CONN + LOST_BOUND))" \
    "orders lost $ORDERS_LOST within [$DEL_OK, $DEL_OK + $DEL_CONN connection errors + $LOST_BOUND unreported]"
  for p in coordinator $(seq -f 'agent-%g' 1 "$AGENTS"); do
    [[ $p == agent-2 ]] && continue # restarted: its two lives are not one series
    read -r m2 m4 <<<"$(quarter_means "$p")"
    check "$(awk -v a="$m2" -v b="$m4" -v g="$GROWTH_MAX" 'BEGIN { print (a > 0 && (b <= a * (1 + g / 100) || b - a <= 8192)) ? 1 : 0 }')" \
      "$p memory flat: $(awk -v a="$m2" -v b="$m4" 'BEGIN { printf "%.1f -> %.1f MiB", a / 1024, b / 1024 }') (at most +$GROWTH_MAX % or +8 MiB)"
  done
} | tee "$WORK/summary.md"
[[ -z $OUT ]] || cat "$WORK/summary.md" >>"$OUT"
exit "$FAILED"
