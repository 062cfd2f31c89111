#!/usr/bin/env bash
# gRPC benchmark, side by side in one run: SendMessage throughput and p50/p99 latency at 1, 16
# and 64 connections (closed loop, `a2a bench`, one HTTP/2 connection per worker for gRPC and
# one keep-alive HTTP/1.1 connection for JSON-RPC) of the same echo agent on
#   ours-grpc      `a2a serve --echo --store memory` (release build), over gRPC
#   ours-jsonrpc   the same server over JSON-RPC
#   sdk-grpc       the official a2a-sdk 1.3 gRPC server (grpcio; tests/bench/ref/python/grpc_server.py)
#   rust-grpc      the official Rust crates' gRPC server: the echo agent of tests/bench/ref/rust
#                  (a2a-server-lf 0.5.3) behind a2a-grpc 0.3.11's tonic service
#   floor-grpc     the floor: a bare hyper server that decodes the request and writes a fixed
#   floor-jsonrpc  answer, over gRPC and JSON-RPC (cli/examples/bench_floor.rs)
# Results: target/bench/grpc.md (with ratios to ours-grpc) and target/bench/grpc.jsonl.
#
#   tests/bench/grpc.sh                  DURATION=5 (s per point) SKIP_BUILD=1 (reuse target/release/a2a)
# Not a test: it never fails on numbers. Loopback only.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
out="$root/target/bench"
mkdir -p "$out"
duration="${DURATION:-5}"
warmup="${WARMUP:-1}"
a2a="$root/target/release/a2a"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  cargo build --release --locked -p a2a-native-cli --quiet
  cargo build --release --locked -p a2a-native-cli --example bench_floor --quiet
fi
tests/bench/ref/setup.sh >&2
if [ "${SKIP_BUILD:-0}" != 1 ] || [ ! -x "$root/target/bench-ref/release/bench-ref-rust" ]; then
  cargo build --release --quiet --manifest-path tests/bench/ref/rust/Cargo.toml --target-dir "$root/target/bench-ref"
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
wait_port() { # port
  for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "nothing listens on $1" >&2
  return 1
}

ours=$(free_port)
"$a2a" serve --echo --store memory --port "$ours" > "$out/grpc-ours.log" 2>&1 &
pids+=($!)
sdk=$(free_port)
(cd tests/bench/ref/python && exec ../.venv/bin/python grpc_server.py "$sdk") > "$out/grpc-sdk.log" 2>&1 &
pids+=($!)
floor=$(free_port)
"$root/target/release/examples/bench_floor" "$floor" > "$out/grpc-floor.log" 2>&1 &
pids+=($!)
# Its JSON-RPC port is not measured here (tests/bench/run.sh measures it).
rust_jsonrpc=$(free_port)
rust=$(free_port)
"$root/target/bench-ref/release/bench-ref-rust" "$rust_jsonrpc" "$rust" > "$out/grpc-rust.log" 2>&1 &
pids+=($!)
wait_port "$ours"
wait_port "$sdk"
wait_port "$floor"
wait_port "$rust"

results="$out/grpc.jsonl"
: > "$results"
for c in 1 16 64; do
  for target in "ours-grpc grpc 127.0.0.1:$ours" "ours-jsonrpc 1.0 http://127.0.0.1:$ours/" "sdk-grpc grpc 127.0.0.1:$sdk" \
    "rust-grpc grpc 127.0.0.1:$rust" "floor-grpc grpc 127.0.0.1:$floor" "floor-jsonrpc 1.0 http://127.0.0.1:$floor/"; do
    read -r name protocol url <<< "$target"
    echo "== $name, $c connections" >&2
    line=$("$a2a" bench --json --url "$url" --protocol "$protocol" --connections "$c" --duration "$duration" --warmup "$warmup")
    echo "{\"server\": \"$name\", \"result\": $line}" >> "$results"
  done
done

python3 - "$results" > "$out/grpc.md" <<'EOF_PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {(r['server'], r['result']['connections']): r['result'] for r in rows}
servers = ['ours-grpc', 'ours-jsonrpc', 'sdk-grpc', 'rust-grpc', 'floor-grpc', 'floor-jsonrpc']
print('| server | connections | req/s | p50 ms | p99 ms | errors | req/s vs ours-grpc |')
print('|---|---|---|---|---|---|---|')
for c in (1, 16, 64):
    base = by.get(('ours-grpc', c), {}).get('rps') or 0
    for s in servers:
        r = by.get((s, c))
        if not r:
            continue
        ratio = f"{r['rps'] / base:.2f}x" if base else '-'
        print(f"| {s} | {c} | {r['rps']:.0f} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} | {r['errors']} | {ratio} |")
EOF_PY
cat "$out/grpc.md"
