#!/usr/bin/env bash
# A throwaway PostgreSQL for the store suite (core/tests/suite/store_suite.rs).
#   tests/pg.sh start   install if missing, initdb if needed, start, create database a2a_test;
#                       prints `A2A_TEST_POSTGRES_URL=...` on stdout (eval it), all else on stderr
#   tests/pg.sh stop    stop the server (the data directory is kept for the next start)
# Idempotent; works as root (the server runs as the `postgres` OS user, which PostgreSQL insists
# on) or as an ordinary user with PostgreSQL installed. Env: A2A_PG_PORT (54329), A2A_PG_DIR.
set -euo pipefail

port="${A2A_PG_PORT:-54329}"
dir="${A2A_PG_DIR:-/tmp/a2a-pg-$port}"
db=a2a_test
url="postgres://postgres@127.0.0.1:$port/$db"

log() { echo "pg.sh: $*" >&2; }

find_bin() {
  # The newest installed major version wins.
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -n -r); do
    if [ -x "$d/pg_ctl" ] && [ -x "$d/initdb" ]; then echo "$d"; return 0; fi
  done
  if command -v pg_ctl >/dev/null 2>&1; then dirname "$(command -v pg_ctl)"; return 0; fi
  return 1
}

is_root() { [ "$(id -u)" = 0 ]; }

# Runs a command as the server's OS user: `postgres` when we are root, else ourselves.
as_pg() {
  if is_root; then
    if command -v runuser >/dev/null 2>&1; then
      (cd /tmp && runuser -u postgres -- "$@")
    else
      (cd /tmp && su postgres -s /bin/sh -c "$(printf '%q ' "$@")")
    fi
  else
    (cd /tmp && "$@")
  fi
}

install_pg() {
  if ! is_root; then
    log "PostgreSQL binaries not found; install PostgreSQL (or run as root to let this script do it)"
    exit 1
  fi
  log "installing PostgreSQL with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq </dev/null >&2
  apt-get install -y -qq postgresql </dev/null >&2
}

running() { [ -f "$dir/PG_VERSION" ] && as_pg "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; }

start() {
  bin="$(find_bin)" || { install_pg; bin="$(find_bin)" || { log "no PostgreSQL binaries after install"; exit 1; }; }
  if is_root; then
    id postgres >/dev/null 2>&1 || useradd --system --home-dir /var/lib/postgresql --shell /bin/sh postgres
    mkdir -p "$dir"
    chown -R postgres: "$dir"
  else
    mkdir -p "$dir"
  fi
  chmod 700 "$dir"
  if [ ! -f "$dir/PG_VERSION" ]; then
    log "initdb $dir"
    # trust auth: a local, throwaway test server; C locale: byte order, like the other stores.
    as_pg "$bin/initdb" -D "$dir" -U postgres --auth=trust --encoding=UTF8 --locale=C --no-sync >&2
  fi
  if running; then
    log "already running on port $port"
  else
    log "starting on 127.0.0.1:$port"
    # fsync off: test data only. The socket lives in the data dir (the default may not exist).
    as_pg "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 60 \
      -o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$dir -c fsync=off -c max_connections=200" \
      start >&2 || { log "start failed; server log:"; tail -n 30 "$dir/server.log" >&2 || true; exit 1; }
  fi
  local i
  for i in $(seq 1 60); do
    if as_pg "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -U postgres; then break; fi
    [ "$i" = 60 ] && { log "server not ready after 30 s"; exit 1; }
    sleep 0.5
  done
  local exists
  exists="$(as_pg "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -tAc \
    "SELECT 1 FROM pg_database WHERE datname = '$db'" </dev/null)"
  if [ "$exists" != 1 ]; then
    log "creating database $db"
    as_pg "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres "$db" </dev/null >&2
  fi
  echo "A2A_TEST_POSTGRES_URL=$url"
}

stop() {
  if ! bin="$(find_bin)"; then log "PostgreSQL not installed; nothing to stop"; return 0; fi
  if running; then
    as_pg "$bin/pg_ctl" -D "$dir" -m fast -w stop >&2
  else
    log "not running"
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
