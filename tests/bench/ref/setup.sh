#!/usr/bin/env bash
# Installs the two benchmark reference servers' dependencies (idempotent):
#   tests/bench/ref/.venv          Python a2a-sdk 1.3.0 + uvicorn (gitignored); with
#                                  BENCH_PYTHON=python3.12, .venv-python3.12 on that interpreter
#   tests/bench/ref/js/node_modules  @a2a-js/sdk 1.3.0 + express (npm ci from the lock)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
req="$here/python/requirements.txt"
stamp="$(sha256sum "$req" | cut -d' ' -f1)"
venv="$here/.venv${BENCH_PYTHON:+-${BENCH_PYTHON##*/}}"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.stamp" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$venv"
  "${BENCH_PYTHON:-python3}" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req"
  echo "$stamp" > "$venv/.stamp"
fi
if [ ! -d "$here/js/node_modules/@a2a-js/sdk" ] || [ "$here/js/package-lock.json" -nt "$here/js/node_modules/.package-lock.json" ]; then
  (cd "$here/js" && npm ci --no-audit --no-fund --loglevel=error)
fi
echo "bench refs ready: $venv/bin/python $here/python/server.py PORT | node $here/js/server.mjs PORT"
