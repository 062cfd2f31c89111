#!/usr/bin/env bash
# Instructions per SendMessage, counted by callgrind, for our server beside the floor
# (cli/examples/bench_floor.rs), over JSON-RPC and gRPC, in one run:
#   ours-jsonrpc / ours-grpc      `a2a serve --echo --store memory` (release build)
#   floor-jsonrpc / floor-grpc    the bare hyper server that reads the request and writes a fixed answer
# Each server runs under valgrind twice, driven by `a2a bench` with SMALL and then LARGE requests
# (4 connections); the difference divided by LARGE - SMALL is the cost of one request, free of
# start-up and shutdown. Unlike req/s on a shared 2-core machine, where one run differs from the
# next by tens of percent, these counts repeat to within a fraction of a percent, so a change of
# a few percent in the hot path shows. They count work, not waiting: wake-ups and the kernel are
# not in them (tests/bench/run.sh and grpc.sh measure time).
# Results: target/bench/instructions.md.
#
#   tests/bench/instructions.sh           SKIP_BUILD=1 (reuse the release builds) SMALL=500 LARGE=2500
# Not a test: it never fails on numbers. Loopback only. Needs valgrind.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
out="$root/target/bench"
mkdir -p "$out"
small="${SMALL:-500}"
large="${LARGE:-2500}"
a2a="$root/target/release/a2a"
floor="$root/target/release/examples/bench_floor"
command -v valgrind > /dev/null || { echo "valgrind is not installed" >&2; exit 1; }
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  cargo build --release --locked -p a2a-native-cli --quiet
  cargo build --release --locked -p a2a-native-cli --example bench_floor --quiet
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_port() { # port
  for _ in $(seq 1 300); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "nothing listens on $1" >&2
  return 1
}

# Total instructions of one server process that answered `requests` requests.
# Usage: count SERVER PROTOCOL REQUESTS
count() {
  local port pid file url
  port=$(free_port)
  file="$out/callgrind.$1.$3.out"
  case "$1" in
    ours) valgrind --tool=callgrind --callgrind-out-file="$file" "$a2a" serve --echo --store memory --port "$port" > /dev/null 2>&1 & ;;
    floor) valgrind --tool=callgrind --callgrind-out-file="$file" "$floor" "$port" > /dev/null 2>&1 & ;;
  esac
  pid=$!
  wait_port "$port"
  if [ "$2" = grpc ]; then url="127.0.0.1:$port"; else url="http://127.0.0.1:$port/"; fi
  "$a2a" bench --url "$url" --protocol "$2" --connections 4 --requests "$3" > /dev/null
  # TERM, not INT: a background job of a script starts with SIGINT ignored.
  kill -TERM "$pid"
  wait "$pid" || true
  awk '/^(summary|totals):/ { print $2; exit }' "$file"
  rm -f "$file"
}

{
  echo "| server | protocol | instructions per SendMessage | ours / floor |"
  echo "|---|---|---|---|"
  for protocol in 1.0 grpc; do
    declare -A per=()
    for server in ours floor; do
      echo "== $server, $protocol" >&2
      a=$(count "$server" "$protocol" "$small")
      b=$(count "$server" "$protocol" "$large")
      per[$server]=$(( (b - a) / (large - small) ))
    done
    name=$([ "$protocol" = grpc ] && echo gRPC || echo JSON-RPC)
    ratio=$(python3 -c "print(f'{${per[ours]} / ${per[floor]}:.2f}x')")
    echo "| ours | $name | ${per[ours]} | $ratio |"
    echo "| floor | $name | ${per[floor]} | 1.00x |"
  done
} | tee "$out/instructions.md"
