#!/usr/bin/env bash
# Self-test of tests/harness/dbenv: starts real throwaway servers on 127.0.0.1, talks to them,
# stops them and checks that nothing is left. Last line: "N passed, N failed".
#
# Every server it starts lives under a mktemp dir of its own and is stopped by PID at exit, also
# on failure; every wait is bounded.
set -uo pipefail # not -e: a failed check is counted, not fatal

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DBENV=$HERE/dbenv
PASSED=0
FAILED=0
DIRS=()     # every DIR we started something in, stopped again at exit
ALL_PIDS=() # every server PID we saw, checked gone at the end
OWNERS=()   # owner processes we spawned for the guardian tests

now_ms() {
  local t=${EPOCHREALTIME/./}
  echo $((t / 1000))
}

pass() {
  PASSED=$((PASSED + 1))
  echo "ok   - $1"
}
fail() {
  FAILED=$((FAILED + 1))
  echo "FAIL - $1"
  [[ -z ${2:-} ]] || while IFS= read -r line; do echo "       $line"; done <<<"$2"
}

# check DESCRIPTION CMD...: passes if CMD succeeds; shows its output otherwise.
check() {
  local desc=$1 out
  shift
  if out=$("$@" 2>&1); then pass "$desc"; else fail "$desc" "$out"; fi
}
# check_fails DESCRIPTION PATTERN CMD...: passes if CMD fails and its output matches PATTERN.
check_fails() {
  local desc=$1 pattern=$2 out
  shift 2
  if out=$("$@" 2>&1); then
    fail "$desc (command unexpectedly succeeded)" "$out"
  elif grep -qiE -- "$pattern" <<<"$out"; then
    pass "$desc"
  else
    fail "$desc (failed, but output lacks /$pattern/)" "$out"
  fi
}

# Alive = exists and is not a zombie. Orphaned servers are reaped by PID 1, which on some
# machines takes a second or two, and kill -0 succeeds on a zombie.
alive() {
  local stat
  { IFS= read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
  stat=${stat##*) }
  [[ ${stat:0:1} != Z ]]
}

# wait_dead TIMEOUT_MS PID...: true once all PIDs are gone.
wait_dead() {
  local deadline=$(($(now_ms) + $1)) pid any
  shift
  while :; do
    any=0
    for pid in "$@"; do alive "$pid" && any=1; done
    ((any)) || return 0
    (($(now_ms) < deadline)) || return 1
    sleep 0.1
  done
}

new_dir() {
  local d
  d=$(mktemp -d /tmp/dbenv-test.XXXXXX)
  DIRS+=("$d")
  REPLY=$d
}

# pids_of DIR SERVICE: sets PIDS (array) from `dbenv pids`, and remembers them for the final
# leak check (hence not called in $(...), whose subshell would forget).
pids_of() {
  PIDS=()
  mapfile -t PIDS < <("$DBENV" pids "$1" "$2")
  ((${#PIDS[@]} > 0)) || return 1
  ALL_PIDS+=("${PIDS[@]}")
}

cleanup() {
  local d pid
  for pid in "${OWNERS[@]}"; do alive "$pid" && kill "$pid" 2>/dev/null; done
  for d in "${DIRS[@]}"; do "$DBENV" stop "$d" >/dev/null 2>&1; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

env_val() { # FILE KEY
  sed -n "s/^$2=//p" "$1"
}

echo "# dbenv self-test ($DBENV)"

# ---- all four services in one call -------------------------------------------------------------
new_dir
D=$REPLY
# stdout and stderr go to a pipe, as with popen(cmd " 2>&1"): if any server kept the pipe open,
# the reader would never see EOF; `timeout` bounds that wait and turns it into a failure.
start_all() {
  "$DBENV" start "$D" postgres mariadb haproxy prometheus --scrape 127.0.0.1:9 2>&1 |
    timeout 60 cat >"$D.out"
}
t0=$(now_ms)
if start_all; then
  pass "start postgres mariadb haproxy prometheus, output to a pipe ($(($(now_ms) - t0)) ms)"
else
  fail "start postgres mariadb haproxy prometheus, output to a pipe (exit $?)" "$(cat "$D.out")"
fi
OUT=$(grep -v '^dbenv:' "$D.out") # stderr lines all start with "dbenv:" when nothing fails
rm -f "$D.out"
if [[ -r $D/env && $OUT == "$(cat "$D/env")" ]]; then pass "stdout equals DIR/env"; else fail "stdout equals DIR/env" "$OUT"; fi

E=$D/env
PG_PORT=$(env_val "$E" PG_PORT)
PG_PW_FILE=$(env_val "$E" PG_PASSWORD_FILE)
PG_SOCK=$(env_val "$E" PG_SOCKET_DIR)
MY_PORT=$(env_val "$E" MARIADB_PORT)
MY_PW_FILE=$(env_val "$E" MARIADB_PASSWORD_FILE)
MY_SOCK=$(env_val "$E" MARIADB_SOCKET)
HA_PG=$(env_val "$E" HAPROXY_PG_PORT)
HA_MY=$(env_val "$E" HAPROXY_MARIADB_PORT)
HA_STATS=$(env_val "$E" HAPROXY_STATS_SOCKET)
PROM_PORT=$(env_val "$E" PROMETHEUS_PORT)
PROM_CFG=$(env_val "$E" PROMETHEUS_CONFIG)
PG_BIN=$(env_val "$E" PG_BINDIR)
PG_PW=$(cat "$PG_PW_FILE" 2>/dev/null)
MY_PW=$(cat "$MY_PW_FILE" 2>/dev/null)

for key in PG_HOST PG_PORT PG_SOCKET_DIR PG_USER PG_PASSWORD_FILE PG_DATABASE MARIADB_HOST \
  MARIADB_PORT MARIADB_SOCKET MARIADB_USER MARIADB_PASSWORD_FILE MARIADB_DATABASE HAPROXY_PG_PORT \
  HAPROXY_MARIADB_PORT HAPROXY_STATS_SOCKET PROMETHEUS_PORT PROMETHEUS_CONFIG; do
  [[ -n $(env_val "$E" "$key") ]] || fail "env has $key"
done
check "password files are mode 600" test "$(stat -c %a "$PG_PW_FILE" "$MY_PW_FILE" | sort -u)" = 600

psql_tcp() { # PORT PASSWORD SQL
  PGPASSWORD=$2 PGCONNECT_TIMEOUT=5 "$PG_BIN/psql" -X -w -qAt -h 127.0.0.1 -p "$1" -U bench -d bench \
    -v ON_ERROR_STOP=1 -c "$3"
}
mariadb_tcp() { # PORT PASSWORD SQL
  MYSQL_PWD=$2 mariadb --no-defaults --protocol=tcp --connect-timeout=5 -h 127.0.0.1 -P "$1" \
    -u bench -N -B bench -e "$3"
}

check "psql over TCP with the password" test "$(psql_tcp "$PG_PORT" "$PG_PW" 'SELECT 41 + 1')" = 42
check "bench can create tables in bench" \
  psql_tcp "$PG_PORT" "$PG_PW" 'CREATE TABLE t (x int); INSERT INTO t VALUES (1); DROP TABLE t'
check_fails "psql over TCP with a wrong password is refused" "password authentication failed" \
  psql_tcp "$PG_PORT" wrong-password 'SELECT 1'
check "psql as superuser over the socket" \
  test "$("$PG_BIN/psql" -X -qAt -h "$PG_SOCK" -p "$PG_PORT" -U postgres -d bench -c 'SHOW max_connections')" = 300

check "mariadb over TCP with the password" test "$(mariadb_tcp "$MY_PORT" "$MY_PW" 'SELECT 41 + 1')" = 42
check "bench can create tables in bench (mariadb)" \
  mariadb_tcp "$MY_PORT" "$MY_PW" 'CREATE TABLE t (x int); INSERT INTO t VALUES (1); DROP TABLE t'
check_fails "mariadb over TCP with a wrong password is refused" "access denied" \
  mariadb_tcp "$MY_PORT" wrong-password 'SELECT 1'
check "mariadb root over the socket" \
  test "$(mariadb --no-defaults -S "$MY_SOCK" -uroot -N -B -e 'SELECT @@max_connections')" = 1000

check "query through HAProxy to PostgreSQL" test "$(psql_tcp "$HA_PG" "$PG_PW" 'SELECT 7')" = 7
check "query through HAProxy to MariaDB" test "$(mariadb_tcp "$HA_MY" "$MY_PW" 'SELECT 7')" = 7
check "HAProxy stats socket exists" test -S "$HA_STATS"

http_get() ( # PORT PATH -> response on stdout, via bash's /dev/tcp (no curl needed)
  exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
  printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$2" >&3
  timeout 5 cat <&3
)
check "prometheus /-/ready answers 200" grep -q '^HTTP/1.[01] 200' <(http_get "$PROM_PORT" /-/ready)
check "prometheus config has the --scrape target" grep -q "'127.0.0.1:9'" "$PROM_CFG"
# It scrapes itself every second: wait (bounded) for the first sample of up{job="prometheus"}.
prom_up() {
  local i
  for ((i = 0; i < 50; i++)); do
    http_get "$PROM_PORT" '/api/v1/query?query=up%7Bjob%3D%22prometheus%22%7D' |
      grep -q '"value":\[[0-9.]*,"1"\]' && return 0
    sleep 0.2
  done
  return 1
}
check "prometheus scrapes (up{job=prometheus} == 1)" prom_up

declare -A SVC_PIDS=()
for svc in postgres mariadb haproxy prometheus; do
  if pids_of "$D" "$svc"; then
    SVC_PIDS[$svc]=${PIDS[*]}
    pass "pids $svc: ${PIDS[*]}"
  else
    fail "pids $svc"
  fi
done
check_fails "starting a service twice in one DIR is refused" "already started" \
  "$DBENV" start "$D" postgres --no-guard
GUARD=$(cat "$D/guard.pid" 2>/dev/null)
check "guard is running" alive "${GUARD:-0}"
ALL_PIDS+=("${GUARD:-}")

# restart: a running server (fast shutdown) and a killed one come back on the same port with the
# same password; the new PIDs replace the old ones for the stop checks below.
check "restart postgres --down 0.2" "$DBENV" restart "$D" postgres --down 0.2
check "postgres answers on its port after restart" \
  test "$(psql_tcp "$PG_PORT" "$PG_PW" 'SELECT 41 + 1')" = 42
kill -KILL "${SVC_PIDS[mariadb]%% *}" 2>/dev/null
check "restart a SIGKILLed mariadb" "$DBENV" restart "$D" mariadb
check "mariadb answers on its port after restart" \
  test "$(mariadb_tcp "$MY_PORT" "$MY_PW" 'SELECT 41 + 1')" = 42
check_fails "restart of a service that is not supported is refused" "unsupported service" \
  "$DBENV" restart "$D" haproxy
for svc in postgres mariadb; do
  if pids_of "$D" "$svc"; then SVC_PIDS[$svc]=${PIDS[*]}; else fail "pids $svc after restart"; fi
done

t0=$(now_ms)
check "stop" "$DBENV" stop "$D"
STOP_MS=$(($(now_ms) - t0))
# shellcheck disable=SC2206 # PID lists: digits and newlines only
GONE=(${SVC_PIDS[*]} ${GUARD:-})
check "every recorded PID is gone after stop (${STOP_MS} ms)" wait_dead 3000 "${GONE[@]}"
check "DIR is removed by stop" test ! -e "$D"
check "stop is idempotent" "$DBENV" stop "$D"

# ---- incremental start: postgres first, haproxy later in another call -------------------------
new_dir
D2=$REPLY
# Like popen(cmd " 2>&1"): the reader must see EOF when dbenv exits, i.e. no server may keep the
# pipe open. `timeout cat` bounds the wait if one did.
start_through_pipe() {
  "$DBENV" start "$D2" postgres --fast --no-guard 2>&1 | timeout 60 cat >/dev/null
}
t0=$(now_ms)
check "start postgres --fast --no-guard, stdout+stderr to a pipe" start_through_pipe
check "the pipe reader got EOF promptly ($(($(now_ms) - t0)) ms)" test $(($(now_ms) - t0)) -lt 30000
check "fast mode sets fsync=off" test "$("$PG_BIN/psql" -X -qAt -h "$(env_val "$D2/env" PG_SOCKET_DIR)" \
  -p "$(env_val "$D2/env" PG_PORT)" -U postgres -d postgres -c 'SHOW fsync')" = off
check "then haproxy in a second call, two processes on one port" \
  env DBENV_HAPROXY_PROCESSES=2 "$DBENV" start "$D2" haproxy --no-guard
check "env keeps PG_ and gains HAPROXY_PG_PORT only" \
  bash -c "grep -q '^PG_PORT=' '$D2/env' && grep -q '^HAPROXY_PG_PORT=' '$D2/env' && ! grep -q '^HAPROXY_MARIADB_PORT=' '$D2/env'"
check "query through the later HAProxy" test "$(psql_tcp "$(env_val "$D2/env" HAPROXY_PG_PORT)" \
  "$(cat "$(env_val "$D2/env" PG_PASSWORD_FILE)")" 'SELECT 8')" = 8
pids_of "$D2" haproxy
check "pids lists both HAProxy processes" test "${#PIDS[@]}" -eq 2

# Tests SIGSTOP servers; stop must still get rid of them.
pids_of "$D2" postgres
STOPPED=("${PIDS[@]}")
pids_of "$D2" haproxy
STOPPED+=("${PIDS[@]}")
kill -STOP "${STOPPED[@]}"
t0=$(now_ms)
check "stop with SIGSTOPped servers" "$DBENV" stop "$D2"
check "SIGSTOPped servers are gone ($(($(now_ms) - t0)) ms)" wait_dead 3000 "${STOPPED[@]}"

# ---- failures are clean ------------------------------------------------------------------------
new_dir
D3=$REPLY
check_fails "haproxy without a database fails with a clear message" "needs postgres and/or mariadb" \
  "$DBENV" start "$D3" haproxy --no-guard
check_fails "DBENV_HAPROXY_PROCESSES out of range is refused" "must be 1 to 8" \
  env DBENV_HAPROXY_PROCESSES=9 "$DBENV" start "$D3" haproxy --no-guard
check "a failed start leaves nothing behind" test ! -e "$D3"
check_fails "unknown service is refused" "unknown argument" "$DBENV" start "$D3" oracle --no-guard
check_fails "non-loopback scrape target is refused" "loopback" \
  "$DBENV" start "$D3" prometheus --no-guard --scrape 10.0.0.1:9100
new_dir
D7=$REPLY
touch "$D7/someone-elses-file"
check_fails "non-empty foreign DIR is refused" "not empty" "$DBENV" start "$D7" postgres --no-guard
rm -f "$D7/someone-elses-file"
rmdir "$D7"

# ---- guardian: owner dies -> servers die -------------------------------------------------------
# The owner is a separate script (not a forked subshell of this one, which dbenv would skip as
# a transient wrapper) that starts postgres and then sleeps until killed. In "popen" mode it
# runs dbenv through `/bin/sh -c`, like popen()/system() do: that shell exits right after dbenv,
# so the guard must watch the shell's parent instead.
OWNER_SCRIPT=$(mktemp /tmp/dbenv-test-owner.XXXXXX)
cat >"$OWNER_SCRIPT" <<'EOF_OWNER'
dbenv=$1 dir=$2 mode=$3
if [ "$mode" = popen ]; then
  /bin/sh -c "$dbenv start $dir postgres" >/dev/null 2>"$dir.err"
else
  "$dbenv" start "$dir" postgres >/dev/null 2>"$dir.err"
fi
exec sleep 120
EOF_OWNER

wait_env() { # DIR: bounded wait for a start to finish
  local i
  for ((i = 0; i < 150; i++)); do
    [[ -s $1/env ]] && grep -q '^PG_PORT=' "$1/env" && return 0
    sleep 0.1
  done
  return 1
}

for mode in direct popen; do
  new_dir
  DG=$REPLY
  bash "$OWNER_SCRIPT" "$DBENV" "$DG" "$mode" &
  OWNER=$!
  OWNERS+=("$OWNER")
  if wait_env "$DG"; then
    pids_of "$DG" postgres
    PM=${PIDS[0]}
    GUARD=$(cat "$DG/guard.pid")
    ALL_PIDS+=("$GUARD")
    sleep 2.5 # a wrongly chosen short-lived owner would be gone by now; the guard polls at 1 Hz
    check "$mode: servers stay up while the owner lives" alive "$PM"
    kill "$OWNER"
    t0=$(now_ms)
    if wait_dead 8000 "$PM"; then
      pass "$mode: guardian stopped postgres $(($(now_ms) - t0)) ms after the owner died"
    else
      fail "$mode: guardian stopped postgres within 8 s of the owner's death" \
        "$(cat "$DG/guard.log" 2>/dev/null)"
    fi
    check "$mode: guardian exits" wait_dead 5000 "$GUARD"
    check "$mode: DIR removed by the guardian" \
      bash -c "for i in \$(seq 50); do [ -e '$DG' ] || exit 0; sleep 0.1; done; exit 1"
  else
    fail "$mode: start under the owner" "$(cat "$DG.err" 2>/dev/null)"
  fi
  rm -f "$DG.err"
done
rm -f "$OWNER_SCRIPT"

# ---- explicit --owner-pid ---------------------------------------------------------------------
new_dir
D6=$REPLY
sleep 120 &
OWNER=$!
OWNERS+=("$OWNER")
check "start mariadb with --owner-pid" "$DBENV" start "$D6" mariadb --owner-pid "$OWNER"
if pids_of "$D6" mariadb; then
  GUARD=$(cat "$D6/guard.pid")
  ALL_PIDS+=("$GUARD")
  kill "$OWNER"
  check "guardian stops mariadb when --owner-pid dies" wait_dead 15000 "${PIDS[@]}"
  # The guardian removes DIR after the server is gone: wait for that too, or the check for DIRs
  # left below can run while it is still at it (CI saw it once).
  check "guardian exits after --owner-pid died" wait_dead 5000 "$GUARD"
  check "DIR removed by the guardian after --owner-pid died" \
    bash -c "for i in \$(seq 50); do [ -e '$D6' ] || exit 0; sleep 0.1; done; exit 1"
fi

# ---- nothing we started may survive ----------------------------------------------------------
cleanup
LEFT=()
for pid in "${ALL_PIDS[@]}"; do
  [[ -n $pid ]] && alive "$pid" && LEFT+=("$pid")
done
if ((${#LEFT[@]} == 0)); then
  pass "no server or guard process left (${#ALL_PIDS[@]} PIDs checked)"
else
  fail "processes left running" "$(ps -o pid,args -p "$(
    IFS=,
    echo "${LEFT[*]}"
  )")"
fi
LEFT_DIRS=()
for d in "${DIRS[@]}"; do [[ -e $d ]] && LEFT_DIRS+=("$d"); done
if ((${#LEFT_DIRS[@]} == 0)); then pass "no test DIR left"; else fail "test DIRs left" "${LEFT_DIRS[*]}"; fi

echo "$PASSED passed, $FAILED failed"
((FAILED == 0))
