#!/usr/bin/env bash
# SendMessage throughput by task store, side by side in one run: `a2a serve --echo` on the
# memory store, on SQLite (a fresh file), on PostgreSQL (tests/pg.sh's throwaway server), and
# two instances on that one PostgreSQL database behind the same load split over both, all
# driven by `a2a bench` (closed loop, JSON-RPC SendMessage, keep-alive). Ratios to memory in
# target/bench/stores.md. Not a test: it never fails on numbers; loopback only.
#
#   tests/bench/stores.sh                  (about 2 minutes)
#   DURATION=5 CONNECTIONS=16 tests/bench/stores.sh
#   SKIP_BUILD=1 tests/bench/stores.sh     reuse target/release/a2a
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
out="$root/target/bench"
mkdir -p "$out"
duration="${DURATION:-10}"
warmup="${WARMUP:-2}"
connections="${CONNECTIONS:-16}"
a2a="$root/target/release/a2a"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  cargo build --release --locked -p a2a-native-cli --quiet
fi
eval "$(tests/pg.sh start)"
pg="$A2A_TEST_POSTGRES_URL"
db="$(mktemp -d)/bench.db"

pids=()
stop_all() {
  for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  pids=()
}
trap 'stop_all; rm -rf "$(dirname "$db")"' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

port=""
serve() { # store -> sets $port (not in a subshell: $pids must keep the server's pid)
  port="$(free_port)"
  "$a2a" serve --echo --store "$1" --port "$port" > "$out/stores-$port.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 200); do
    curl -sf "http://127.0.0.1:$port/.well-known/agent-card.json" >/dev/null && return 0
    sleep 0.1
  done
  echo "a2a serve --store $1 did not start" >&2
  exit 1
}

bench() { # url connections
  "$a2a" bench --url "$1" --connections "$2" --duration "$duration" --warmup "$warmup" --json
}

results="$out/stores.jsonl"
: > "$results"
for store in memory "sqlite:$db" "postgres:$pg"; do
  serve "$store"
  r="$(bench "http://127.0.0.1:$port/" "$connections")"
  name="${store%%:*}"
  echo "$name: $r" >&2
  python3 -c 'import json,sys; d=json.loads(sys.argv[2]); d["store"]=sys.argv[1]; print(json.dumps(d))' "$name" "$r" >> "$results"
  stop_all
done

# Two instances on one database, each given half of the connections, at the same time.
serve "postgres:$pg"; a="$port"
serve "postgres:$pg"; b="$port"
bench "http://127.0.0.1:$a/" $((connections / 2)) > "$out/stores-a.json" &
ja=$!
bench "http://127.0.0.1:$b/" $((connections / 2)) > "$out/stores-b.json"
wait "$ja"
python3 - "$out/stores-a.json" "$out/stores-b.json" >> "$results" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
print(json.dumps({"store": "postgres x2", "rps": a["rps"] + b["rps"], "p50_ms": max(a["p50_ms"], b["p50_ms"]),
                  "p99_ms": max(a["p99_ms"], b["p99_ms"]), "errors": a["errors"] + b["errors"]}))
EOF
stop_all

python3 - "$results" "$connections" > "$out/stores.md" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
base = next(r["rps"] for r in rows if r["store"] == "memory")
print(f"SendMessage, `a2a serve --echo`, {sys.argv[2]} connections\n")
print("| store | req/s | x memory | p50 ms | p99 ms | errors |")
print("|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r['store']} | {r['rps']:.0f} | {r['rps'] / base:.2f} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} | {r['errors']} |")
EOF
cat "$out/stores.md"
