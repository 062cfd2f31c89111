#!/usr/bin/env bash
# Kotlin-binding overhead vs Rust-only, N sequential SendMessage round trips on one connection:
#   client:   the Kotlin client vs the Rust client (`a2a bench --via client`), both against the
#             Rust echo agent (`a2a serve`);
#   executor: `a2a bench` (raw JSON-RPC) against a Kotlin echo executor vs the Rust echo agent.
# Prints p50 for each and the ratio. Usage: bench.sh [N=2000]. Debug builds (the machine's rule):
# ratios, not absolute figures, are what to read.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
n="${1:-2000}"
cd "$repo"
flock /tmp/a2a-build.lock cargo build -q -p a2a-native-uniffi -p a2a-native-cli --bins --lib
bindings-uniffi/gen.sh  # always: the Kotlin sources must carry gen.sh's patch
(cd bindings-uniffi/kotlin && flock /tmp/a2a-build.lock mvn -B -q -Dstyle.color=never test-compile \
  && mvn -B -q -Dstyle.color=never dependency:build-classpath -Dmdep.outputFile=target/cp.txt)
kt=(java -Djna.library.path="$repo/target/debug" -cp "bindings-uniffi/kotlin/target/classes:bindings-uniffi/kotlin/target/test-classes:$(cat bindings-uniffi/kotlin/target/cp.txt)" a2anative.BenchKt)

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
target/debug/a2a serve --store memory --port "$port" >/dev/null 2>&1 &
rust_server=$!
coproc KT { "${kt[@]}" serve; }
trap 'kill $rust_server 2>/dev/null; exec {KT[1]}>&-; wait' EXIT
read -r kt_url <&"${KT[0]}"
sleep 0.5
rust_url="http://127.0.0.1:$port"
p50() { python3 -c 'import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])["p50_ms"])'; }

rust_client=$(target/debug/a2a bench --url "$rust_url" --connections 1 --requests "$n" --via client --json | p50)
kotlin_client=$("${kt[@]}" client "$rust_url" "$n" | p50)
rust_exec=$(target/debug/a2a bench --url "$rust_url" --connections 1 --requests "$n" --json | p50)
kotlin_exec=$(target/debug/a2a bench --url "$kt_url" --connections 1 --requests "$n" --json | p50)
python3 - "$rust_client" "$kotlin_client" "$rust_exec" "$kotlin_exec" "$n" <<'EOF_PY'
import sys
rc, kc, re_, ke, n = map(float, sys.argv[1:])
print(f"SendMessage round trip, p50 over {int(n)} sequential calls (debug build):")
print(f"  client:   Rust {rc:.3f} ms, Kotlin {kc:.3f} ms, overhead x{kc / rc:.2f}")
print(f"  executor: Rust {re_:.3f} ms, Kotlin {ke:.3f} ms, overhead x{ke / re_:.2f}")
EOF_PY
