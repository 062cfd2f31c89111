#!/usr/bin/env bash
# Runs every test of the project: the README's test command, and what .ci/run calls: the Rust
# suites, the Python binding's (bindings-python/test.sh), the Node binding's
# (bindings-node/test.sh), the Kotlin/Swift binding's (bindings-uniffi/test.sh), then the
# interop suites.
#   tests/run-all.sh          all suites (starts a throwaway PostgreSQL on 127.0.0.1:54329), then
#                             the interop suites: the official Python and JS clients against
#                             `a2a serve` (installs a2a-sdk from PyPI and @a2a-js/sdk from npm)
#                             then tests/cluster/run.sh: two `a2a serve` on that PostgreSQL as one agent
#   tests/run-all.sh --fuzz   also runs each cargo-fuzz target briefly (needs nightly + cargo-fuzz)
set -euo pipefail
cd "$(dirname "$0")/.."

fuzz=0
for arg in "$@"; do
  case "$arg" in
    --fuzz) fuzz=1 ;;
    *) echo "unknown option: $arg" >&2; exit 2 ;;
  esac
done

# PostgreSQL store suite runs against a real server; tests fail (not skip) if it is missing.
if [ -x tests/pg.sh ]; then
  eval "$(tests/pg.sh start)"
  export A2A_TEST_POSTGRES_URL A2A_REQUIRE_POSTGRES=1
  trap 'tests/pg.sh stop >/dev/null 2>&1 || true' EXIT
fi
mkdir -p target
# Each section's start prints the minutes since the run began, to see where CI's time goes.
section() { echo "== $* [$(date +%T), +$((SECONDS / 60))m$((SECONDS % 60))s]"; }

section "cargo test (workspace)"
# The fuzz targets' bodies are built and run here too (core/tests/suite/fuzz_bodies.rs).
# A hung test (libtest names it: "has been running for over 60 seconds") fails the run at 40
# minutes instead of holding CI to its limit; the build and the suites take about 10.
timeout --kill-after=30 2400 cargo test --workspace --locked 2>&1 | tee target/test-output.txt \
  || { rc=$?; [ "$rc" -ne 124 ] || echo "cargo test did not finish within 40 minutes: a test hung"; exit "$rc"; }

section "style, lints, generated files, and the server-only and client-only builds of core"
if cargo fmt --version >/dev/null 2>&1; then
  cargo fmt --all --check || { echo "cargo fmt --check: run cargo fmt --all"; exit 1; }
else
  echo "rustfmt is not installed: format check skipped"
fi
if cargo clippy --version >/dev/null 2>&1; then
  cargo clippy --workspace --all-targets --locked --quiet -- -D warnings || { echo "clippy found warnings"; exit 1; }
else
  echo "clippy is not installed: lint check skipped"
fi
tools/feature-sets.py || { echo "a binding build resolves other features: see tools/workspace-hack"; exit 1; }
# Every generated file (the bindings' models and errors, core's proto digest) matches the proto
# and core's error table; each binding's test.sh checks its own again.
python3 tools/generate.py --check || { echo "generated files are out of date: run python3 tools/generate.py"; exit 1; }
for features in server client sqlite; do
  cargo check -p a2a-native --no-default-features --features "$features" --locked --quiet \
    || { echo "core does not build with only the $features feature"; exit 1; }
done

if [ "$fuzz" = 1 ]; then
  for target in jsonrpc_request sse_decoder jws_verify grpc_request; do
    (cd core/fuzz && cargo +nightly fuzz run "$target" -- -max_total_time=30)
  done
fi

# The suite runs on the oldest CPython the package supports (3.11, the machine's python3), then
# again on the newest present: from 3.12, executors start as eager tasks (a path of their own).
# A runnable CPython of version $1 (a pyenv shim of a version pyenv has not selected does not run).
find_python() {
  local p
  for p in "python$1" "${PYENV_ROOT:-$HOME/.pyenv}/versions/$1".*/bin/"python$1"; do
    if "$p" -c '' 2>/dev/null; then echo "$p"; return 0; fi
  done
  return 1
}
interpreters="$(find_python 3.11 || echo python3)"
newest="$(find_python 3.13 || find_python 3.12 || true)"
[ -n "$newest" ] && interpreters="$interpreters $newest"
python_rc=0
: > target/python-output.txt
for interpreter in $interpreters; do
  section "python binding on $interpreter (bindings-python/test.sh: build, stub checks, pytest)"
  name="${interpreter##*/}"
  venv=.venv
  [ "$interpreter" = "${interpreters%% *}" ] || venv=".venv-$name"
  xml="$PWD/target/python-binding-$name.xml"
  rc=0
  PYTHON="$interpreter" VENV="$venv" bindings-python/test.sh --junitxml="$xml" 2>&1 | tee -a target/python-output.txt || rc=$?
  python3 - "$xml" >> target/python-output.txt <<'EOF_PY' || rc=1
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
s = r if r.tag == 'testsuite' else r.find('testsuite')
t, f, e, k = (int(s.get(a, 0)) for a in ('tests', 'failures', 'errors', 'skipped'))
print(f"python binding: {t - f - e - k} passed, {f + e} failed, {k} skipped")
EOF_PY
  if [ "$rc" -ne 0 ]; then
    python_rc=$rc
    tail -1 target/python-output.txt | grep -q "^python binding: [0-9]* passed, [1-9]" \
      || echo "python binding: 0 passed, 1 failed, 0 skipped" >> target/python-output.txt
  fi
done

section "node binding (bindings-node/test.sh: npm ci, build, generated-file and type checks, node --test)"
node_rc=0
bindings-node/test.sh 2>&1 | tee target/node-output.txt || node_rc=$?
if [ "$node_rc" -ne 0 ] && ! grep -q "^node binding: [0-9]* passed, [1-9]" target/node-output.txt; then
  echo "node binding: 0 passed, 1 failed, 0 skipped" >> target/node-output.txt
fi

section "kotlin binding (bindings-uniffi/test.sh: build, generated-file checks incl. Swift, mvn test)"
kotlin_rc=0
bindings-uniffi/test.sh 2>&1 | tee target/kotlin-output.txt || kotlin_rc=$?
if [ "$kotlin_rc" -ne 0 ] && ! grep -q "^kotlin binding: [0-9]* passed, [1-9]" target/kotlin-output.txt; then
  echo "kotlin binding: 0 passed, 1 failed, 0 skipped" >> target/kotlin-output.txt
fi

section "interop: official clients against a2a serve"
cargo build -p a2a-native-cli --locked --quiet
interop_rc=0
tests/interop/run.sh 2>&1 | tee target/interop-output.txt || interop_rc=$?

section "cluster: two a2a serve instances on one PostgreSQL (tests/cluster/run.sh)"
cluster_rc=0
tests/cluster/run.sh 2>&1 | tee target/cluster-output.txt || cluster_rc=$?

section "done"
# One closing line over every suite, for humans and for CI's log reader.
awk '/^test result:/ { p += $4; f += $6; s += $8 }
     /^interop: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$/ { p += $2; f += $4; s += $6 }
     /^python binding: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$/ { p += $3; f += $5; s += $7 }
     /^node binding: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$/ { p += $3; f += $5; s += $7 }
     /^kotlin binding: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$/ { p += $3; f += $5; s += $7 }
     /^cluster: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$/ { p += $2; f += $4; s += $6 }
     END { printf "all suites: %d passed, %d failed, %d skipped\n", p, f, s; exit (f > 0) }' \
  target/test-output.txt target/python-output.txt target/node-output.txt target/kotlin-output.txt target/interop-output.txt \
  target/cluster-output.txt
[ "$python_rc" -eq 0 ] || exit "$python_rc"
[ "$node_rc" -eq 0 ] || exit "$node_rc"
[ "$kotlin_rc" -eq 0 ] || exit "$kotlin_rc"
[ "$interop_rc" -eq 0 ] || exit "$interop_rc"
exit "$cluster_rc"
