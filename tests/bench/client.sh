#!/usr/bin/env bash
# Client benchmark: per-call cost of SendMessage through a client, against OUR server
# (`a2a serve --echo --store memory`, release), side by side in one run:
#   raw      `a2a bench --via raw`     hand-built JSON-RPC over hyper: the server's floor
#   ours     `a2a bench --via client`  the a2a-native client
#   python   the official a2a-sdk client (httpx), tests/bench/client/official_client.py
# at 1 and 16 calls in flight. Client overhead = latency minus the raw floor; the ratio is
# python's per-call time over ours. Results: target/bench/client.md.
#
#   tests/bench/client.sh            (DURATION=10 by default; SKIP_BUILD=1 reuses the build)
# Not a test: it never fails on numbers. Loopback only.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
out="$root/target/bench"
mkdir -p "$out"
duration="${DURATION:-10}"
warmup="${WARMUP:-2}"
a2a="$root/target/release/a2a"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  cargo build --release --locked -p a2a-native-cli --quiet
fi
tests/bench/ref/setup.sh >&2
py="$root/tests/bench/ref/.venv/bin/python"

port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$a2a" serve --echo --store memory --port "$port" > "$out/client-server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do curl -fsS -o /dev/null "http://127.0.0.1:$port/.well-known/agent-card.json" 2>/dev/null && break; sleep 0.1; done
url="http://127.0.0.1:$port"

results="$out/client.jsonl"
: > "$results"
for c in 1 16; do
  for via in raw client; do
    r="$("$a2a" bench --url "$url/" --via "$via" --connections "$c" --duration "$duration" --warmup "$warmup" --json)"
    echo "   $via c=$c: $r" >&2
    echo "$r" >> "$results"
  done
  r="$("$py" tests/bench/client/official_client.py "$url" "$c" "$duration" "$warmup")"
  echo "   a2a-sdk c=$c: $r" >&2
  echo "$r" >> "$results"
done

python3 - "$results" "$out/client.md" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def find(via, c):
    return next(r for r in rows if r["via"] == via and r["connections"] == c)
lines = ["| in flight | raw floor p50 ms | a2a-native client req/s | p50 ms | p99 ms | a2a-sdk client req/s | p50 ms | p99 ms | throughput ratio | p50 overhead ours / theirs (ms) |",
         "|---|---|---|---|---|---|---|---|---|---|"]
for c in (1, 16):
    raw, ours, py = find("raw", c), find("client", c), find("a2a-sdk client", c)
    over_ours = max(ours["p50_ms"] - raw["p50_ms"], 0.0)
    over_py = max(py["p50_ms"] - raw["p50_ms"], 0.0)
    lines.append(f'| {c} | {raw["p50_ms"]:.3f} | {ours["rps"]:.0f} | {ours["p50_ms"]:.3f} | {ours["p99_ms"]:.3f} | '
                 f'{py["rps"]:.0f} | {py["p50_ms"]:.3f} | {py["p99_ms"]:.3f} | {ours["rps"] / py["rps"]:.1f}x | '
                 f'{over_ours:.3f} / {over_py:.3f} |')
errors = sum(r["errors"] for r in rows)
lines.append("")
lines.append(f"errors across all runs: {errors}")
text = "\n".join(lines) + "\n"
open(sys.argv[2], "w").write(text)
print(text)
EOF
