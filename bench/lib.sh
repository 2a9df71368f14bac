# bench/lib.sh — what the bench scripts share; sourced, never run. Before sourcing, a script
# sets BENCH_NAME (its messages' prefix); before start_servers, also DBENV, DBDIR and WORK
# (server_ticks needs DBENV and DBDIR too).
# shellcheck shell=bash

note() { echo "$BENCH_NAME: $*" >&2; }
die() {
  echo "$BENCH_NAME: error: $*" >&2
  exit 1
}
load1() { cut -d' ' -f1 /proc/loadavg; }
# Interrupts CPU N has taken (/proc/interrupts): "LOC CAL RES" — local timer, function-call IPIs
# (a wake-up sent from another CPU), rescheduling IPIs.
cpu_interrupts() {
  awk -v cpu="CPU$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == cpu) col = i + 1; next }
    $1 == "LOC:" { l = $col } $1 == "CAL:" { c = $col } $1 == "RES:" { r = $col }
    END { print l + 0, c + 0, r + 0 }' /proc/interrupts
}
utc() { date -u +%H:%M:%S; }

# A command line as it could be typed again: arguments quoted where needed, and every string of
# the array SECRETS (the servers' passwords, once start_servers has run) masked.
SECRETS=()
show_cmd() {
  local line="" arg shown s
  for arg in "$@"; do
    shown=$arg
    for s in "${SECRETS[@]}"; do shown=${shown//$s/***}; done
    if [[ $shown =~ [[:space:]\'\"\$] ]]; then shown="'${shown//\'/\'\\\'\'}'"; fi
    line+="${line:+ }$shown"
  done
  echo "$line"
}

# For scripts whose clients all run in the foreground: on exit (also on Ctrl-C and TERM) the
# servers in DBDIR are stopped and WORK is removed, unless KEEP=1.
stop_servers_on_exit() {
  trap stop_servers_and_clean_up EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}
stop_servers_and_clean_up() {
  local rc=$?
  trap - EXIT INT TERM
  "$DBENV" stop "$DBDIR" >/dev/null 2>&1 || note "dbenv stop $DBDIR failed"
  if ((KEEP)); then note "work directory kept: $WORK"; else rm -rf "$WORK"; fi
  exit "$rc"
}

# Everything this script prints from now on also goes to FILE (emptied first), when one is named.
tee_output_to() { # FILE
  [[ -n $1 ]] || return 0
  : >"$1"
  exec > >(tee -a "$1") 2>&1
}

# Busy CPU ticks of the whole machine (user+nice+system+irq+softirq+steal).
machine_busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat; }

# Cumulative CPU ticks of a server: for each process utime+stime, plus cutime+cstime of the
# first one (postmaster/mariadbd), which collects its exited children (PostgreSQL backends).
server_ticks() { # SERVICE
  local pids first=1 total=0 pid stat f
  pids=$("$DBENV" pids "$DBDIR" "$1" 2>/dev/null) || {
    echo 0
    return
  }
  for pid in $pids; do
    { IFS= read -r stat <"/proc/$pid/stat"; } 2>/dev/null || continue
    stat=${stat##*) }
    read -ra f <<<"$stat"
    total=$((total + f[11] + f[12]))
    if ((first)); then total=$((total + f[13] + f[14])); fi
    first=0
  done
  echo "$total"
}

# start_servers FAST(0/1): PostgreSQL and MariaDB from tests/harness/dbenv in DBDIR (stopped by
# dbenv's guard should this script die), their settings sourced (PG_PORT, MARIADB_PORT …),
# PG_PW and MY_PW read, exported as PGPASSWORD and MYSQL_PWD, and kept in SECRETS.
start_servers() {
  local args=(start "$DBDIR" postgres mariadb --owner-pid $$)
  (($1)) && args+=(--fast)
  "$DBENV" "${args[@]}" >"$WORK/env" 2>"$WORK/dbenv.log" ||
    die "dbenv start failed: $(tail -n 20 "$WORK/dbenv.log")"
  # shellcheck disable=SC1091
  source "$WORK/env"
  PG_PW=$(<"$PG_PASSWORD_FILE")
  MY_PW=$(<"$MARIADB_PASSWORD_FILE")
  SECRETS=("$PG_PW" "$MY_PW")
  export PGPASSWORD=$PG_PW MYSQL_PWD=$MY_PW
}
pg_sql() { psql -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d "$PG_DATABASE" -Atq -c "$1"; }
my_sql() { mariadb --protocol=tcp -h "$MARIADB_HOST" -P "$MARIADB_PORT" -u "$MARIADB_USER" "$MARIADB_DATABASE" -N -B -e "$1"; }
my_root() { env -u MYSQL_PWD mariadb -S "$MARIADB_SOCKET" -u root -N -B -e "$1"; }

# MariaDB's buffer pool (MY_BUFFER_POOL bytes) and isolation level (MY_ISOLATION), each set as
# root over its socket when not empty; the resize runs in the server's background, so this waits
# (at most 60 s) for it.
tune_mariadb() {
  if [[ -n $MY_BUFFER_POOL ]]; then
    my_root "SET GLOBAL innodb_buffer_pool_size = $MY_BUFFER_POOL" || die "cannot resize the MariaDB buffer pool"
    for _ in $(seq 1 60); do
      [[ $(my_sql 'SELECT @@innodb_buffer_pool_size') == "$MY_BUFFER_POOL" ]] &&
        my_sql "SHOW STATUS LIKE 'Innodb_buffer_pool_resize_status'" | grep -qiv 'resizing' && break
      sleep 1
    done
  fi
  [[ -z $MY_ISOLATION ]] || my_root "SET GLOBAL tx_isolation = '$MY_ISOLATION'" || die "cannot set the MariaDB isolation level"
}

# Waits (checking every 30 s, at most WAIT_MAX s) until WAIT_FILE exists, when one is named;
# prints a line saying how it went either way.
wait_for_file() {
  [[ -n $WAIT_FILE ]] || return 0
  local waited=0
  while [[ ! -e $WAIT_FILE ]] && ((waited < WAIT_MAX)); do
    if ((waited % 300 == 0)); then note "waiting for $WAIT_FILE ($waited s so far, load $(load1))"; fi
    sleep 30
    waited=$((waited + 30))
  done
  if [[ -e $WAIT_FILE ]]; then
    echo "# $(utc) UTC: $WAIT_FILE exists (waited $waited s); load average $(load1)"
  else
    echo "# $(utc) UTC: $WAIT_FILE did not appear within $WAIT_MAX s: proceeding; load average $(load1)"
  fi
}
