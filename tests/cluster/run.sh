#!/usr/bin/env bash
# Several instances, one agent: two real `a2a serve --conformance --store postgres://…`
# processes on one PostgreSQL database, driven over HTTP by tests/cluster/test_cluster.py
# (Python standard library only): streaming, cancel, multi-turn, Last-Event-ID resume across
# instances, a lost LISTEN connection, kill -9 of the instance running a task, concurrent
# follow-ups, a PostgreSQL outage, SIGTERM of an instance whose streams follow the other's task.
#   tests/cluster/run.sh [unittest arguments, e.g. -k cancel]
# Environment:
#   A2A_TEST_POSTGRES_URL  the database (if unset, tests/pg.sh start provides one, and it is
#                          stopped at exit if this script started it)
#   A2A_BIN                server binary (default: target/debug/a2a, built here)
# Server logs: target/cluster/<test>-<A|B>.log. Exits non-zero on failure; the last line is
# `cluster: N passed, N failed, N skipped`.
set -uo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
mkdir -p target/cluster
summary="target/cluster/summary.txt"
rm -f "$summary"

give_up() { # reason
  echo "cluster: $1" >&2
  echo "cluster: 0 passed, 1 failed, 0 skipped"
  exit 1
}

if [ -z "${A2A_BIN:-}" ]; then
  cargo build -p a2a-native-cli --locked --quiet || give_up "the CLI does not build"
fi

if [ -z "${A2A_TEST_POSTGRES_URL:-}" ]; then
  pg_err="$(mktemp)"
  pg_out="$(tests/pg.sh start 2>"$pg_err")" || { cat "$pg_err" >&2; rm -f "$pg_err"; give_up "PostgreSQL did not start"; }
  cat "$pg_err" >&2
  # Stop it at exit only if it was not running before.
  if ! grep -q "already running" "$pg_err"; then
    trap 'tests/pg.sh stop >/dev/null 2>&1 || true' EXIT
  fi
  rm -f "$pg_err"
  eval "$pg_out"
  export A2A_TEST_POSTGRES_URL
fi

rc=0
# Every wait in the tests is bounded; this bounds the whole run too (SIGTERM: servers killed).
CLUSTER_SUMMARY_FILE="$summary" timeout -k 10 600 python3 -B "$here/test_cluster.py" "$@" || rc=$?
if [ ! -s "$summary" ]; then
  give_up "the test runner stopped before its summary (exit $rc)"
fi
exit "$rc"
