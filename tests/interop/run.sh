#!/usr/bin/env bash
# Interop, both directions.
# The OFFICIAL A2A clients against `a2a serve --conformance --advertise-v03` (a card declaring
# 1.0 and 0.3, so the 0.3 client resolves it too):
#   - python/          a2a-sdk 1.x (A2A 1.0), JSON-RPC and HTTP+JSON      (pytest)
#   - python/compat03/ a2a-sdk 0.3.x (A2A 0.3, no A2A-Version header)      (pytest, own venv)
#   - js/              @a2a-js/sdk 1.x (A2A 1.0) JSON-RPC, HTTP+JSON, and its 0.3 transport
# OUR client (the `a2a` CLI) against the OFFICIAL servers (suite "client"):
#   - client/          peers on a2a-sdk 1.x, @a2a-js/sdk 1.x and a2a-sdk 0.3 (0.3 fallback)
#
#   tests/interop/run.sh
# Environment:
#   A2A_BIN           server binary (default: target/debug/a2a; build: cargo build -p a2a-native-cli)
#   A2A_INTEROP_URL   if set, no server is started: the suites run against this URL
#   INTEROP_SUITES    space-separated subset of "python python03 js client" (default: all four)
#   INTEROP_VENV_DIR  where the venvs go (default: tests/interop/.venv, gitignored)
# Exits non-zero if any suite fails; the last lines are a summary.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$root/target/interop"
mkdir -p "$out"
venvs="${INTEROP_VENV_DIR:-$here/.venv}"
suites="${INTEROP_SUITES:-python python03 js client}"
has() { [[ " $suites " == *" $1 "* ]]; }

# ---------------------------------------------------------------- dependencies
# A venv per requirements file, rebuilt only when that file changes.
ensure_venv() { # name requirements-file
  local dir="$venvs/$1" req="$2" stamp
  stamp="$(sha256sum "$req" | cut -d' ' -f1)"
  if [ ! -x "$dir/bin/python" ] || [ "$(cat "$dir/.stamp" 2>/dev/null)" != "$stamp" ]; then
    echo "== interop: installing $req into $dir" >&2
    rm -rf "$dir"
    python3 -m venv "$dir"
    "$dir/bin/pip" install --quiet --disable-pip-version-check -r "$req" >&2
    echo "$stamp" > "$dir/.stamp"
  fi
}
has python && ensure_venv v1 "$here/python/requirements.txt"
has python03 && ensure_venv v03 "$here/python/compat03/requirements.txt"
if has client; then
  ensure_venv v1 "$here/python/requirements.txt"
  ensure_venv peers-v1 "$here/peers/requirements-v1.txt"
  ensure_venv peers-v03 "$here/peers/requirements-v03.txt"
fi
if has js || has client; then
  lock="$here/js/package-lock.json"
  if [ ! -d "$here/js/node_modules/@a2a-js/sdk" ] || [ "$lock" -nt "$here/js/node_modules/.package-lock.json" ]; then
    echo "== interop: npm ci in tests/interop/js" >&2
    (cd "$here/js" && npm ci --no-audit --no-fund --loglevel=error >&2)
  fi
fi

# ---------------------------------------------------------------- server
server_pid=""
stop_server() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  server_pid=""
}
trap stop_server EXIT

if [ -z "${A2A_INTEROP_URL:-}" ]; then
  bin="${A2A_BIN:-$root/target/debug/a2a}"
  if [ ! -x "$bin" ]; then
    echo "interop: server binary $bin not found (cargo build -p a2a-native-cli, or set A2A_BIN)" >&2
    exit 1
  fi
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  "$bin" serve --conformance --advertise-v03 --store memory --port "$port" > "$out/server.log" 2>&1 &
  server_pid=$!
  export A2A_INTEROP_URL="http://127.0.0.1:$port"
  for _ in $(seq 1 150); do
    if ! kill -0 "$server_pid" 2>/dev/null; then
      echo "interop: server exited before serving its card; log:" >&2
      tail -n 50 "$out/server.log" >&2
      exit 1
    fi
    curl -fsS -o /dev/null "$A2A_INTEROP_URL/.well-known/agent-card.json" 2>/dev/null && break
    sleep 0.2
  done
  curl -fsS -o /dev/null "$A2A_INTEROP_URL/.well-known/agent-card.json" || {
    echo "interop: no agent card at $A2A_INTEROP_URL after 30 s; log:" >&2
    tail -n 50 "$out/server.log" >&2
    exit 1
  }
fi
echo "== interop: server at $A2A_INTEROP_URL" >&2

# ---------------------------------------------------------------- suites
declare -A passed failed skipped
failures=0

junit_counts() { # junit.xml -> "passed failed skipped"
  python3 - "$1" <<'EOF'
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
s = r if r.tag == 'testsuite' else r.find('testsuite')
t, f, e, k = (int(s.get(a, 0)) for a in ('tests', 'failures', 'errors', 'skipped'))
print(t - f - e - k, f + e, k)
EOF
}

run_pytest() { # label venv dir
  local label="$1" py="$venvs/$2/bin/python" dir="$3" xml="$out/$1.xml" rc=0
  echo "== interop: $label ($dir)" >&2
  (cd "$dir" && "$py" -m pytest -q -rfEs --tb=short --junitxml="$xml") || rc=$?
  if [ -f "$xml" ]; then
    read -r passed[$label] failed[$label] skipped[$label] < <(junit_counts "$xml")
  else
    passed[$label]=0; failed[$label]=1; skipped[$label]=0
  fi
  if [ "$rc" -ne 0 ] && [ "${failed[$label]}" -eq 0 ]; then failed[$label]=1; fi
  [ "$rc" -eq 0 ] || failures=$((failures + 1))
}

# Suites that start servers of their own (compat03's signed card, the client suite) run this CLI.
export A2A_BIN="${A2A_BIN:-$root/target/debug/a2a}"
has python && run_pytest python v1 "$here/python"
has python03 && run_pytest python03 v03 "$here/python/compat03"
if has client; then
  export PEER_JS_DIR="$here/js"
  export PEER_V1_PYTHON="$venvs/peers-v1/bin/python" PEER_V03_PYTHON="$venvs/peers-v03/bin/python"
  run_pytest client v1 "$here/client"
fi

if has js; then
  echo "== interop: js ($here/js)" >&2
  rc=0
  (cd "$here/js" && node --test --test-concurrency=1 --test-reporter=tap interop.test.mjs) \
    > "$out/js.tap" 2>&1 || rc=$?
  grep -E '^\s*(not ok|# Subtest)|^# (tests|pass|fail|skipped)' "$out/js.tap" | grep -v '# Subtest' || true
  if [ "$rc" -ne 0 ]; then
    grep -A 30 -E '^\s*not ok' "$out/js.tap" | head -n 120 || true
  fi
  passed[js]="$(awk '/^# pass /{print $3}' "$out/js.tap" | tail -n1)"
  failed[js]="$(awk '/^# fail /{print $3}' "$out/js.tap" | tail -n1)"
  skipped[js]="$(awk '/^# skipped /{print $3}' "$out/js.tap" | tail -n1)"
  passed[js]="${passed[js]:-0}"; failed[js]="${failed[js]:-0}"; skipped[js]="${skipped[js]:-0}"
  if [ "$rc" -ne 0 ] && [ "${failed[js]}" -eq 0 ]; then failed[js]=1; fi
  [ "$rc" -eq 0 ] || failures=$((failures + 1))
fi

stop_server
if [ "$failures" -ne 0 ] && [ -s "$out/server.log" ]; then
  echo "== interop: last server log lines" >&2
  tail -n 40 "$out/server.log" >&2
fi

# ---------------------------------------------------------------- summary
parts=()
tp=0; tf=0; ts=0
for s in python python03 js client; do
  has "$s" || continue
  parts+=("$s ${passed[$s]} passed")
  tp=$((tp + passed[$s])); tf=$((tf + failed[$s])); ts=$((ts + skipped[$s]))
  [ "${failed[$s]}" -eq 0 ] || parts[-1]+=" (${failed[$s]} FAILED)"
done
summary="$(IFS=,; echo "${parts[*]}")"
echo "interop: ${summary//,/, }"
echo "interop: $tp passed, $tf failed, $ts skipped"
[ "$failures" -eq 0 ]
