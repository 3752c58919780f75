#!/usr/bin/env bash
# A throwaway PostgreSQL server on 127.0.0.1, for tests: its own cluster (initdb) under one
# directory, a port picked free at start, SCRAM password authentication for role spillway.
# The system's postgresql service (its clusters, /var/run/postgresql) is neither used nor touched.
#
#   server.sh start DIR        create DIR (absolute or relative; fresh, or empty), initdb, start,
#                              create database spillway owned by role spillway; prints the env lines
#                              and writes DIR/env.sh (source it: PGHOST PGPORT PGUSER PGDATABASE
#                              PGPASSFILE=DIR/pgpass SPILLWAY_PG_URL, a URL without the password)
#   server.sh stop DIR         stop the server (fast, bounded; then KILL); idempotent
#   server.sh status DIR       exit 0 when the server of DIR runs
#   server.sh psql DIR [ARGS]  psql -X -v ON_ERROR_STOP=1 ARGS on database spillway, as spillway
#
# Package (Debian 12): postgresql. The server refuses root: as root (the CI case) initdb, pg_ctl
# and the server run as nobody, who owns the data; DIR/pgpass (0600) and env.sh stay the caller's.
# Data and socket live in DIR/data and DIR/sock, or in a /tmp/spillway-pg.XXXXXX dir (removed by
# stop) when nobody cannot reach DIR (a 0700 parent: QTemporaryDir) or DIR is too long for a Unix
# socket path (107 bytes); DIR/base names the one used. Logs: DIR/log.
# Environment: PG_HARNESS_TIMEOUT (seconds to wait for start and for stop, default 60);
# PG_HARNESS_OWNER (a pid: the server is stopped once that process is gone, whatever ends it).
set -euo pipefail

die() { echo "server.sh: $*" >&2; exit 1; }

bindir() { # initdb and pg_ctl: pg_config's bindir, else the highest /usr/lib/postgresql/*/bin
  local b
  b="$(pg_config --bindir 2>/dev/null || true)"
  [ -n "$b" ] && [ -x "$b/initdb" ] && [ -x "$b/pg_ctl" ] && { echo "$b"; return; }
  b="$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
  [ -x "$b/initdb" ] && [ -x "$b/pg_ctl" ] && { echo "$b"; return; }
  die "initdb/pg_ctl not found (apt-get install postgresql)"
}

psql_bin() { command -v psql 2>/dev/null || echo "$(bindir)/psql"; }

absdir() { mkdir -p "$1" && (cd "$1" && pwd -P); }

is_root() { [ "$(id -u)" -eq 0 ]; }

# Run a PostgreSQL program: as nobody when root (no PAM, no groups, a clean environment), else
# as is. From /: the caller's cwd may be out of nobody's reach.
as_pg() {
  local -a su=()
  is_root && su=(setpriv --reuid=65534 --regid=65534 --clear-groups --reset-env)
  (cd / && "${su[@]}" "$@")
}

# A TCP port nobody uses, drawn from 10000-32767: below Linux's ephemeral range (32768-60999),
# so no outgoing connection holds it meanwhile.
free_port() {
  local used=" " p _ local_addr
  while read -r _ local_addr _; do
    [[ "$local_addr" == *:* ]] && used="$used$((16#${local_addr##*:})) "
  done < <(cat /proc/net/tcp /proc/net/tcp6 2>/dev/null)
  while :; do
    p=$((10000 + (RANDOM * 32768 + RANDOM) % 22768))
    case "$used" in *" $p "*) ;; *) echo "$p"; return ;; esac
  done
}

alive() { # a postgres process; a zombie (exited, not yet reaped, often by init) counts as gone
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  [[ "$stat" == *" (postgres) "* && "${stat##*) }" != Z* ]]
}

pid_of() { # the postmaster's pid (first line of its pid file), if that process is alive
  local pid
  [ -s "$1" ] && pid="$(head -n 1 "$1" | tr -dc 0-9)" && [ -n "$pid" ] && alive "$pid" && echo "$pid"
}

START_DIR=""
on_start_exit() { # on a failed start: print the logs and take down whatever started
  local rc=$? f
  [ "$rc" -ne 0 ] && [ -n "$START_DIR" ] || return 0
  for f in "$START_DIR"/log/*.log; do
    [ -f "$f" ] && { echo "===== $f (last 60 lines) =====" && tail -n 60 "$f"; } >&2
  done
  cmd_stop "$START_DIR" >/dev/null 2>&1 || true
}

# A test that dies before its cleanup (an abort, a kill) must not leave the server running: a
# detached watcher stops it once the owner process is gone.
watch_owner() {
  local owner="$1" dir="$2"
  setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; exec bash "$2" stop "$3"' \
    watch "$owner" "$(readlink -f "$0")" "$dir" </dev/null >/dev/null 2>&1 &
}

cmd_start() {
  local dir base bin pw port timeout try=0
  [ $# -eq 1 ] || die "usage: server.sh start DIR"
  dir="$(absdir "$1")"
  [ -z "$(ls -A "$dir")" ] || die "$dir is not empty (stop it, use a fresh dir)"
  bin="$(bindir)"
  timeout="${PG_HARNESS_TIMEOUT:-60}"
  START_DIR="$dir" && trap on_start_exit EXIT
  mkdir "$dir/log" "$dir/data" "$dir/sock"
  base="$dir"
  ! is_root || chown 65534:65534 "$dir/data" "$dir/sock"
  # "$base/sock/.s.PGSQL.NNNNN" must fit the 107 bytes of a Unix socket path.
  if [ $((${#dir} + 21)) -gt 107 ] || ! as_pg test -w "$dir/data" -a -w "$dir/sock"; then
    rmdir "$dir/data" "$dir/sock"
    base="$(mktemp -d /tmp/spillway-pg.XXXXXX)"
    mkdir "$base/data" "$base/sock"
    ! is_root || chown -R 65534:65534 "$base"
  fi
  echo "$base" >"$dir/base"

  pw="$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')"
  (umask 077 && echo "$pw" >"$base/sock/pwfile")
  ! is_root || chown 65534:65534 "$base/sock/pwfile"
  as_pg "$bin/initdb" -D "$base/data" -U spillway --pwfile="$base/sock/pwfile" -E UTF8 --no-locale \
    --auth-local=scram-sha-256 --auth-host=scram-sha-256 >"$dir/log/initdb.log" 2>&1 ||
    { rm -f "$base/sock/pwfile"; die "initdb failed"; }
  rm -f "$base/sock/pwfile"
  cat >>"$base/data/postgresql.conf" <<EOF
# Throwaway test server written by tests/peers/postgresql/server.sh
listen_addresses = '127.0.0.1'
unix_socket_directories = '$base/sock'
max_connections = 40
# Test data is thrown away: no durability wanted (a crash of the host loses it; that is fine).
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
  # The log file is opened here (by the caller, who can reach DIR); the server inherits it.
  # A port taken between the pick and the bind: pick another (3 tries).
  while :; do
    port="$(free_port)"
    echo "port = $port" >>"$base/data/postgresql.conf"
    as_pg "$bin/pg_ctl" -D "$base/data" -w -t "$timeout" start >>"$dir/log/postgresql.log" 2>&1 && break
    try=$((try + 1))
    if [ "$try" -ge 3 ] || ! grep -q 'Address already in use' "$dir/log/postgresql.log"; then
      die "the server failed to start (waited up to ${timeout}s)"
    fi
  done

  (umask 077 && printf '127.0.0.1:%s:*:spillway:%s\n' "$port" "$pw" >"$dir/pgpass")
  PGPASSFILE="$dir/pgpass" "$(psql_bin)" -X -q -w -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" \
    -U spillway -d postgres -c 'CREATE DATABASE spillway OWNER spillway' </dev/null >/dev/null ||
    die "CREATE DATABASE spillway failed"
  cat >"$dir/env.sh" <<EOF
export PGHOST=127.0.0.1 PGPORT=$port PGUSER=spillway PGDATABASE=spillway PGPASSFILE=$(printf %q "$dir/pgpass")
export SPILLWAY_PG_URL=postgresql://spillway@127.0.0.1:$port/spillway
EOF
  trap - EXIT
  [ -z "${PG_HARNESS_OWNER:-}" ] || watch_owner "$PG_HARNESS_OWNER" "$dir"
  echo "server.sh: up on 127.0.0.1:$port (data $base/data)" >&2
  cat "$dir/env.sh"
}

cmd_stop() {
  local dir base pid i timeout
  [ $# -eq 1 ] || die "usage: server.sh stop DIR"
  [ -d "$1" ] || return 0
  dir="$(cd "$1" && pwd -P)"
  [ -s "$dir/base" ] || return 0
  base="$(cat "$dir/base")"
  timeout="${PG_HARNESS_TIMEOUT:-60}"
  if pid="$(pid_of "$base/data/postmaster.pid")"; then
    as_pg "$(bindir)/pg_ctl" -D "$base/data" -m fast -w -t "$timeout" stop \
      >>"$dir/log/postgresql.log" 2>&1 || true
    if alive "$pid"; then # KILL its children (backends and workers) too, not left to notice
      echo "server.sh: postmaster $pid still up after ${timeout}s: KILL" >&2
      # shellcheck disable=SC2046 # the children files hold space-separated pids
      kill -KILL "$pid" $(cat /proc/"$pid"/task/*/children 2>/dev/null) 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do alive "$pid" || break; sleep 0.1; done
    fi
  fi
  case "$base" in /tmp/spillway-pg.*) rm -rf "$base" ;; esac
  echo "server.sh: stopped $dir" >&2
}

cmd_status() {
  [ $# -eq 1 ] || die "usage: server.sh status DIR"
  [ -s "$1/base" ] || return 1
  as_pg "$(bindir)/pg_ctl" -D "$(cat "$1/base")/data" status >/dev/null 2>&1
}

cmd_psql() {
  [ $# -ge 1 ] || die "usage: server.sh psql DIR [ARGS...]"
  [ -f "$1/env.sh" ] || die "no $1/env.sh (server.sh start $1 first)"
  # shellcheck disable=SC1091
  source "$1/env.sh"
  shift
  exec "$(psql_bin)" -X -v ON_ERROR_STOP=1 "$@"
}

case "${1:-}" in
  start) shift; cmd_start "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  status) shift; cmd_status "$@" ;;
  psql) shift; cmd_psql "$@" ;;
  *) die "usage: server.sh start|stop|status|psql DIR [ARGS...]" ;;
esac
