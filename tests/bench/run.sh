#!/usr/bin/env bash
# Server benchmark, side by side in one run: the same echo agent on
#   ours     `a2a serve --echo --store memory` (release build)
#   rust     the official Rust crates a2a-lf / a2a-server-lf from crates.io (tests/bench/ref/rust)
#   python   the official a2a-sdk 1.x on uvicorn (tests/bench/ref/python)
#   js       the official @a2a-js/sdk on express (tests/bench/ref/js)
#   pyours   the same agent as an `async def` Python executor on our server through the Python
#            binding (tests/bench/ref/python_native; release wheel of bindings-python), to set
#            beside `python` (issue 5's comparison) and `ours` (the Python round trip's cost)
#   pycompat the a2a-sdk reference agent of `python`, its executor and card unchanged, on our server
#            through the Python binding (tests/bench/ref/python_compat; issue 19's comparison)
#   jscompat the @a2a-js/sdk reference agent of `js`, its executor and card unchanged, on our server
#            through the Node binding (tests/bench/ref/js_compat; issue 19's comparison)
#   floor    a bare hyper server that reads the body, parses the JSON and writes a fixed
#            SendMessage result (cli/examples/bench_floor.rs): what no A2A server can beat, so
#            `ours` is also reported as a fraction of it
#   jsours   the same agent as an async JavaScript executor on our server through the Node
#            binding (tests/bench/ref/js_native; release build of bindings-node), to set beside
#            `js` (issue 6's comparison) and `ours` (the JavaScript round trip's cost)
# all driven by one load generator, `a2a bench` (closed loop, keep-alive HTTP/1.1, JSON-RPC,
# A2A-Version 1.0). Measured per server:
#   - SendMessage throughput and p50/p99 latency at 1, 16 and 64 connections;
#   - SendStreamingMessage latency to the first event (1 connection);
#   - resident memory (VmRSS) idle, after exactly TASKS SendMessage calls (default 100000), and at
#     the end of all runs (flat for a bounded store);
# Results: target/bench/results.md (table with ratios to ours) and target/bench/results.jsonl.
#
#   tests/bench/run.sh                     everything (about 15-25 minutes on 2 cores)
#   DURATION=5 TASKS=20000 tests/bench/run.sh
#   SERVERS="ours rust" tests/bench/run.sh
#   SKIP_BUILD=1 tests/bench/run.sh        reuse target/release/a2a and the Rust reference as built
#   BENCH_PYTHON=python3.12 tests/bench/run.sh   every Python server (python, pyours, pycompat) on
#                                          that interpreter, each in a venv of its own
# Not a test: it never fails on numbers. It only uses loopback.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
out="$root/target/bench"
mkdir -p "$out"
duration="${DURATION:-10}"
warmup="${WARMUP:-2}"
tasks="${TASKS:-100000}"
servers="${SERVERS:-ours floor rust python js pyours pycompat jsours jscompat}"
has() { [[ " $servers " == *" $1 "* ]]; }

a2a="$root/target/release/a2a"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  echo "== building (release)" >&2
  cargo build --release --locked -p a2a-native-cli --quiet
  has floor && cargo build --release --locked -p a2a-native-cli --example bench_floor --quiet
fi
if has rust && { [ "${SKIP_BUILD:-0}" != 1 ] || [ ! -x "$root/target/bench-ref/release/bench-ref-rust" ]; }; then
  cargo build --release --quiet --manifest-path tests/bench/ref/rust/Cargo.toml --target-dir "$root/target/bench-ref"
fi
if has python || has js; then
  tests/bench/ref/setup.sh >&2
fi
ref_venv="$root/tests/bench/ref/.venv${BENCH_PYTHON:+-${BENCH_PYTHON##*/}}"
pyours_venv="$root/target/bench/pyours-venv${BENCH_PYTHON:+-${BENCH_PYTHON##*/}}"
if has pyours || has pycompat; then
  # A release build of the Python package (maturin's default profile), in its own venv; with
  # the reference's a2a-sdk beside it for `pycompat`.
  [ -x "$pyours_venv/bin/python" ] || "${BENCH_PYTHON:-python3}" -m venv "$pyours_venv"
  if [ "${SKIP_BUILD:-0}" != 1 ] || ! "$pyours_venv/bin/python" -c 'import a2a_native' 2>/dev/null; then
    "$pyours_venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall ./bindings-python >&2
  fi
  if has pycompat && ! "$pyours_venv/bin/python" -c 'import a2a.server' 2>/dev/null; then
    "$pyours_venv/bin/pip" install --quiet --disable-pip-version-check -r tests/bench/ref/python/requirements.txt >&2
  fi
fi

jsours_node="$root/target/bench/jsours/a2a-native.node"
if has jsours || has jscompat; then
  # A release build of the Node binding, loaded through A2A_NATIVE_MODULE (the package's own
  # debug build stays in place). Dev dependencies as bindings-node/test.sh installs them.
  [ -d bindings-node/node_modules/@napi-rs/cli ] || (cd bindings-node && { npm ci --no-audit --no-fund --loglevel=error 2>/dev/null \
    || npm install --no-save --no-audit --no-fund --loglevel=error; }) >&2
  if [ "${SKIP_BUILD:-0}" != 1 ]; then
    (cd bindings-node && npx --no-install napi build --platform --release --no-js --no-dts-header \
      --dts "$root/target/bench/jsours/native.d.ts" --output-dir "$root/target/bench/jsours") >&2
    mv "$root"/target/bench/jsours/a2a-native.*.node "$jsours_node"
  fi
  # SKIP_BUILD=1 and no release build yet: the package's own (dev profile) build.
  if [ ! -f "$jsours_node" ]; then
    jsours_node="$(ls "$root"/bindings-node/a2a-native.*.node | head -1)"
    echo "jsours: no release build; measuring the dev build $jsours_node" >&2
  fi
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

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
trap stop EXIT

start() { # name port
  local name="$1" port="$2"
  # `exec`: $pid must be the server itself (for its RSS, and so that `stop` ends it).
  case "$name" in
    ours) exec "$a2a" serve --echo --store memory --port "$port" ;;
    floor) exec "$root/target/release/examples/bench_floor" "$port" ;;
    rust) exec "$root/target/bench-ref/release/bench-ref-rust" "$port" ;;
    python) PORT="$port" exec "$ref_venv/bin/python" tests/bench/ref/python/server.py "$port" ;;
    js) PORT="$port" exec node tests/bench/ref/js/server.mjs "$port" ;;
    pyours) exec "$pyours_venv/bin/python" tests/bench/ref/python_native/server.py "$port" ;;
    pycompat) exec "$pyours_venv/bin/python" tests/bench/ref/python_compat/server.py "$port" ;;
    jsours) A2A_NATIVE_MODULE="$jsours_node" exec node tests/bench/ref/js_native/server.mjs "$port" ;;
    jscompat) A2A_NATIVE_MODULE="$jsours_node" exec node tests/bench/ref/js_compat/server.mjs "$port" ;;
  esac > "$out/$name.log" 2>&1 &
  pid=$!
  # The Rust reference serves JSON-RPC only (no card route): wait for the port instead.
  for _ in $(seq 1 200); do
    if python3 -c "import socket,sys; s=socket.socket(); s.settimeout(0.2); sys.exit(s.connect_ex(('127.0.0.1', $port)))"; then
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || { echo "$name exited; log:" >&2; tail -20 "$out/$name.log" >&2; return 1; }
    sleep 0.1
  done
  echo "$name did not listen on $port" >&2
  return 1
}

results="$out/results.jsonl"
: > "$results"
record() { # server what json
  python3 -c 'import json,sys; d=json.loads(sys.argv[3]); d["server"]=sys.argv[1]; d["what"]=sys.argv[2]; print(json.dumps(d))' "$1" "$2" "$3" >> "$results"
}

for name in ours floor rust python js pyours pycompat jsours jscompat; do
  has "$name" || continue
  port="$(free_port)"
  echo "== $name on :$port" >&2
  start "$name" "$port"
  url="http://127.0.0.1:$port/"
  # One request first: a server that does not answer correctly is not measured.
  check="$("$a2a" bench --url "$url" --requests 1 --connections 1 --json || true)"
  if [ "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["errors"])' "$check")" != 0 ]; then
    echo "$name: the check request failed: $check" >&2
    stop
    continue
  fi
  record "$name" "rss_idle" "{\"rss_kib\": $(rss_kib "$pid")}"
  # Memory first, at the same task count for every server: TASKS SendMessage calls.
  r="$("$a2a" bench --url "$url" --connections 16 --requests "$tasks" --json)"
  record "$name" "fill" "$r"
  sleep 1
  record "$name" "rss_after" "{\"rss_kib\": $(rss_kib "$pid"), \"tasks\": $tasks}"
  for c in 1 16 64; do
    r="$("$a2a" bench --url "$url" --connections "$c" --duration "$duration" --warmup "$warmup" --json)"
    echo "   send c=$c: $r" >&2
    record "$name" "send_c$c" "$r"
  done
  if [ "$name" != floor ]; then # the floor answers SendMessage only
    r="$("$a2a" bench --url "$url" --mode stream --connections 1 --duration "$duration" --warmup "$warmup" --json)"
    echo "   stream c=1: $r" >&2
    record "$name" "stream_c1" "$r"
  fi
  # Memory again after everything: flat for a bounded store, growing for an unbounded one.
  total="$(python3 -c '
import json,sys
print(sum(d.get("requests",0) for d in map(json.loads, open(sys.argv[1])) if d["server"]==sys.argv[2]))' "$results" "$name")"
  record "$name" "rss_end" "{\"rss_kib\": $(rss_kib "$pid"), \"tasks\": $total}"
  stop
done

# The interpreter the Python servers ran on, for the report.
python_version="$("${BENCH_PYTHON:-python3}" -c 'import platform; print(platform.python_version())')"
python3 - "$results" "$out/results.md" "$python_version" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in rows:
    by.setdefault(r["server"], {})[r["what"]] = r
names = [n for n in ["ours", "floor", "rust", "python", "js", "pyours", "pycompat", "jsours", "jscompat"] if n in by]
label = {"ours": "a2a-native", "floor": "floor (bare hyper, fixed reply)", "rust": "a2a-server-lf (Rust)", "python": "a2a-sdk (Python, uvicorn)", "js": "@a2a-js/sdk (express)",
         "pyours": "a2a-native, Python executor (binding)", "pycompat": "a2a-native, the a2a-sdk executor unchanged (binding)", "jsours": "a2a-native, JavaScript executor (binding)", "jscompat": "a2a-native, the @a2a-js/sdk executor unchanged (binding)"}
def get(n, what, key):
    return by.get(n, {}).get(what, {}).get(key)
lines = ["| server | " + " | ".join(
    [f"send c={c} req/s | p50 ms | p99 ms" for c in (1, 16, 64)] + ["stream first event p50 ms | p99 ms", "RSS idle MiB", "RSS after TASKS tasks MiB", "RSS at end MiB (tasks)", "errors"]) + " |"]
lines.append("|---" * (1 + 9 + 2 + 4) + "|")
for n in names:
    cells = [label[n]]
    errors = 0
    for c in (1, 16, 64):
        cells += [f'{get(n, f"send_c{c}", "rps") or 0:.0f}', f'{get(n, f"send_c{c}", "p50_ms") or 0:.2f}', f'{get(n, f"send_c{c}", "p99_ms") or 0:.2f}']
        errors += get(n, f"send_c{c}", "errors") or 0
    cells += [f'{get(n, "stream_c1", "p50_ms") or 0:.2f}', f'{get(n, "stream_c1", "p99_ms") or 0:.2f}']
    errors += (get(n, "stream_c1", "errors") or 0) + (get(n, "fill", "errors") or 0)
    cells += [f'{(get(n, "rss_idle", "rss_kib") or 0) / 1024:.1f}',
              f'{(get(n, "rss_after", "rss_kib") or 0) / 1024:.1f}',
              f'{(get(n, "rss_end", "rss_kib") or 0) / 1024:.1f} ({get(n, "rss_end", "tasks")})', str(errors)]
    lines.append("| " + " | ".join(cells) + " |")
lines.append("")
lines.append("Ratios (a2a-native ÷ reference; throughput: higher is better for us when > 1; latency and memory: reference ÷ ours, so > 1 also means we are better):")
lines.append("")
lines.append("| reference | send c=1 | send c=16 | send c=64 | p99 c=64 | stream first event p50 | RSS after TASKS tasks |")
lines.append("|---|---|---|---|---|---|---|")
for n in names:
    if n in ("ours", "pyours", "pycompat", "jsours", "jscompat"):
        continue
    def ratio(a, b):
        return f"{a / b:.2f}x" if a and b else "n/a"
    cells = [label[n]]
    for c in (1, 16, 64):
        cells.append(ratio(get("ours", f"send_c{c}", "rps"), get(n, f"send_c{c}", "rps")))
    cells.append(ratio(get(n, "send_c64", "p99_ms"), get("ours", "send_c64", "p99_ms")))
    cells.append(ratio(get(n, "stream_c1", "p50_ms"), get("ours", "stream_c1", "p50_ms")))
    cells.append(ratio(get(n, "rss_after", "rss_kib"), get("ours", "rss_after", "rss_kib")))
    lines.append("| " + " | ".join(cells) + " |")
if "pyours" in by and "python" in by:
    lines.append("")
    lines.append("The same `async def` echo agent in Python: hosted by a2a-native through the binding ÷ hosted by a2a-sdk on uvicorn:")
    lines.append("")
    lines.append("| send c=1 | send c=16 | send c=64 | p99 c=64 | stream first event p50 |")
    lines.append("|---|---|---|---|---|")
    r = lambda a, b: f"{a / b:.2f}x" if a and b else "n/a"
    lines.append("| " + " | ".join([r(get("pyours", f"send_c{c}", "rps"), get("python", f"send_c{c}", "rps")) for c in (1, 16, 64)]
                 + [r(get("python", "send_c64", "p99_ms"), get("pyours", "send_c64", "p99_ms")),
                    r(get("python", "stream_c1", "p50_ms"), get("pyours", "stream_c1", "p50_ms"))]) + " |")
def compat_table(ours, ref, title):
    """The same unchanged SDK executor on our server (`ours`) ÷ on the SDK's own (`ref`)."""
    if ours not in by or ref not in by:
        return
    r = lambda a, b: f"{a / b:.2f}x" if a and b else "n/a"
    lines.extend(["", title, "", "| send c=1 | send c=16 | send c=64 | p50 c=1 | p50 c=16 | stream first event p50 |", "|---|---|---|---|---|---|"])
    lines.append("| " + " | ".join([r(get(ours, f"send_c{c}", "rps"), get(ref, f"send_c{c}", "rps")) for c in (1, 16, 64)]
                 + [r(get(ref, f"send_c{c}", "p50_ms"), get(ours, f"send_c{c}", "p50_ms")) for c in (1, 16)]
                 + [r(get(ref, "stream_c1", "p50_ms"), get(ours, "stream_c1", "p50_ms"))]) + " |")
compat_table("pycompat", "python", "The same a2a-sdk executor, unchanged: hosted by a2a-native (a2a_native.compat) ÷ hosted by the SDK's own server on uvicorn:")
if "pyours" in by and "ours" in by:
    d = (get("pyours", "send_c1", "p50_ms") or 0) - (get("ours", "send_c1", "p50_ms") or 0)
    lines.append("")
    lines.append(f"Python executor round trip (Rust -> Python coroutine -> Rust), p50 at 1 connection, Python echo minus Rust echo: {d * 1000:.0f} µs.")
if "jsours" in by and "js" in by:
    lines.append("")
    lines.append("The same async echo agent in JavaScript: hosted by a2a-native through the binding ÷ hosted by @a2a-js/sdk on express:")
    lines.append("")
    lines.append("| send c=1 | send c=16 | send c=64 | p50 c=1 | p99 c=1 | p50 c=16 | p99 c=16 | p50 c=64 | p99 c=64 | stream first event p50 |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    r = lambda a, b: f"{a / b:.2f}x" if a and b else "n/a"
    lat = []
    for c in (1, 16, 64):
        lat += [r(get("js", f"send_c{c}", "p50_ms"), get("jsours", f"send_c{c}", "p50_ms")),
                r(get("js", f"send_c{c}", "p99_ms"), get("jsours", f"send_c{c}", "p99_ms"))]
    lines.append("| " + " | ".join([r(get("jsours", f"send_c{c}", "rps"), get("js", f"send_c{c}", "rps")) for c in (1, 16, 64)]
                 + lat + [r(get("js", "stream_c1", "p50_ms"), get("jsours", "stream_c1", "p50_ms"))]) + " |")
compat_table("jscompat", "js", "The same @a2a-js/sdk executor, unchanged: hosted by a2a-native (Node binding) ÷ hosted by the SDK's own server on express:")
if "jsours" in by and "ours" in by:
    d = (get("jsours", "send_c1", "p50_ms") or 0) - (get("ours", "send_c1", "p50_ms") or 0)
    lines.append("")
    lines.append(f"JavaScript executor round trip (Rust -> JS executor -> Rust), p50 at 1 connection, JS echo minus Rust echo: {d * 1000:.0f} µs.")
if any(n in by for n in ("python", "pyours", "pycompat")):
    lines.append("")
    lines.append(f"The Python servers ran on CPython {sys.argv[3]}.")
lines.append("")
lines.append(f"TASKS = {by['ours'].get('rss_after', {}).get('tasks', '?') if 'ours' in by else '?'}; every server has had exactly that many SendMessage calls when 'RSS after TASKS tasks' is read.")
text = "\n".join(lines) + "\n"
open(sys.argv[2], "w").write(text)
print(text)
EOF
