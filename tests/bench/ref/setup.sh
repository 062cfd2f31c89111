#!/usr/bin/env bash
# Installs the two benchmark reference servers' dependencies (idempotent):
#   tests/bench/ref/.venv          Python a2a-sdk 1.3.0 + uvicorn (gitignored)
#   tests/bench/ref/js/node_modules  @a2a-js/sdk 1.3.0 + express (npm ci from the lock)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
req="$here/python/requirements.txt"
stamp="$(sha256sum "$req" | cut -d' ' -f1)"
if [ ! -x "$here/.venv/bin/python" ] || [ "$(cat "$here/.venv/.stamp" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$here/.venv"
  python3 -m venv "$here/.venv"
  "$here/.venv/bin/pip" install --quiet --disable-pip-version-check -r "$req"
  echo "$stamp" > "$here/.venv/.stamp"
fi
if [ ! -d "$here/js/node_modules/@a2a-js/sdk" ] || [ "$here/js/package-lock.json" -nt "$here/js/node_modules/.package-lock.json" ]; then
  (cd "$here/js" && npm ci --no-audit --no-fund --loglevel=error)
fi
echo "bench refs ready: $here/.venv/bin/python $here/python/server.py PORT | node $here/js/server.mjs PORT"
