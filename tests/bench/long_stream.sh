#!/usr/bin/env bash
# Long artifact streams with a Python agent, side by side in one run: a message "N" makes the
# agent append N chunks (~40-byte text parts, one event each) to one artifact, then complete.
#   ours     the agent as an `async def` executor on our server through the Python binding
#            (tests/bench/ref/python_native/long_stream.py; the release build of bindings-python
#            in target/bench/pyours-venv, as tests/bench/run.sh makes it), store memory and
#            sqlite (a fresh file)
#   a2a-sdk  the same agent on the official a2a-sdk 1.3.0 on uvicorn, DatabaseTaskStore on
#            SQLite through sqlite+aiosqlite (tests/bench/ref/python/long_stream.py, a fresh file)
# Blocking JSON-RPC SendMessages timed until the completed task is back (the median of 7 per
# point on ours, one on a2a-sdk)
# (tests/bench/client/long_stream.py, stdlib only), after one warm-up turn of N=100.
# Points: N = 1000, 2000, 8000 on ours; 1000, 2000 on a2a-sdk (8000 too with SDK_8000=1: the
# SDK rewrites the whole task on every event, so that point takes minutes). On SQLite also the
# stored and written bytes per event (see the client). Results: target/bench/long_stream.md.
#
#   tests/bench/long_stream.sh              (a few minutes plus the release build)
#   SKIP_BUILD=1 tests/bench/long_stream.sh reuse target/bench/pyours-venv
#   SDK_8000=1 tests/bench/long_stream.sh
# Not a test: it never fails on numbers (it does fail on a turn that does not complete with
# all N parts). Loopback only.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
out="$root/target/bench"
mkdir -p "$out"
ours_ns="1000 2000 8000"
sdk_ns="1000 2000"
[ "${SDK_8000:-0}" = 1 ] && sdk_ns="$sdk_ns 8000"

tests/bench/ref/setup.sh >&2
sdk_py="$root/tests/bench/ref/.venv/bin/python"
# Same venv and build as tests/bench/run.sh's pyours: a release build (maturin's default).
pyours_venv="$root/target/bench/pyours-venv"
[ -x "$pyours_venv/bin/python" ] || python3 -m venv "$pyours_venv"
if [ "${SKIP_BUILD:-0}" != 1 ] || ! "$pyours_venv/bin/python" -c 'import a2a_native' 2>/dev/null; then
  "$pyours_venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall ./bindings-python >&2
fi

tmp="$(mktemp -d)"
pid=""
stop() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  pid=""
}
trap 'stop; rm -rf "$tmp"' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

start() { # log command... (the command ends with "$port") -> $pid; not in a subshell: `stop` needs it
  local log="$1"; shift
  # `exec`: $pid must be the server itself (for /proc/$pid/io, and so that `stop` ends it).
  (exec "$@") > "$out/$log.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 300); do
    curl -sf "http://127.0.0.1:$port/.well-known/agent-card.json" >/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || { echo "$log exited; log:" >&2; tail -20 "$out/$log.log" >&2; exit 1; }
    sleep 0.1
  done
  echo "$log did not start on $port" >&2
  exit 1
}

client() { # server store "ns" repeat [db]
  local db="${5:-}"
  # shellcheck disable=SC2086 # $3: one argument per point
  python3 tests/bench/client/long_stream.py "http://127.0.0.1:$port/" "$1" "$2" $3 --repeat "$4" \
    ${db:+--db "$db" --pid "$pid"} >> "$results"
}

results="$out/long_stream.jsonl"
: > "$results"
native="tests/bench/ref/python_native/long_stream.py"
echo "== ours, memory" >&2
port="$(free_port)"
start long_stream-ours-memory "$pyours_venv/bin/python" "$native" "$port" memory
client ours memory "$ours_ns" 7
stop
echo "== ours, sqlite" >&2
port="$(free_port)"
start long_stream-ours-sqlite "$pyours_venv/bin/python" "$native" "$port" "sqlite:$tmp/ours.db"
client ours sqlite "$ours_ns" 7 "$tmp/ours.db"
stop
echo "== a2a-sdk, sqlite" >&2
port="$(free_port)"
start long_stream-sdk-sqlite "$sdk_py" tests/bench/ref/python/long_stream.py "$port" "$tmp/sdk.db"
client a2a-sdk sqlite "$sdk_ns" 1 "$tmp/sdk.db"
stop

# Nothing of ours may outlive the run.
if pgrep -af 'ref/python(_native)?/long_stream\.py' >&2; then echo "server processes left behind" >&2; fi

python3 - "$results" > "$out/long_stream.md" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
t = {(r["server"], r["store"], r["n"]): r["seconds"] for r in rows}
b = lambda r, k: f'{r[k]:.0f}' if k in r else "-"
print("Long artifact streams: one blocking SendMessage, a Python agent appends N chunks (~40 B text part each) to one artifact, then completes.\n")
print("| server | store | N | seconds | ms per event | stored B/event | written B/event |")
print("|---|---|---|---|---|---|---|")
for r in rows:
    print(f'| {r["server"]} | {r["store"]} | {r["n"]} | {r["seconds"]:.3f} | {r["seconds"] * 1000 / r["n"]:.3f} | {b(r, "stored_per_event")} | {b(r, "written_per_event")} |')
print()
for st in ("memory", "sqlite"):
    if ("ours", st, 8000) in t and ("ours", st, 1000) in t:
        print(f'- ours, {st}: time(8000) / time(1000) = {t["ours", st, 8000] / t["ours", st, 1000]:.2f} (linear: 8; target: at most 9)')
for n in (1000, 2000, 8000):
    if ("a2a-sdk", "sqlite", n) in t and ("ours", "sqlite", n) in t:
        print(f'- N={n}: a2a-sdk time / ours (sqlite) time = {t["a2a-sdk", "sqlite", n] / t["ours", "sqlite", n]:.1f}x')
print()
print("stored: growth of the SQLite file plus its -wal over the turn, both read after PRAGMA wal_checkpoint(TRUNCATE), / N."
      " written: bytes through write syscalls for the turn (the server's /proc/PID/io wchar up to 0.5 s after the reply,"
      " plus the client's checkpoint that folds the rest of the WAL in), / N. A fresh database file per server.")
EOF
cat "$out/long_stream.md"
