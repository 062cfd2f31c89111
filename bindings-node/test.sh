#!/usr/bin/env bash
# Installs the npm package's dev dependencies (npm ci, from package-lock.json), builds the native
# module (dev profile, like bindings-python/test.sh: a fraction of a release build's time on 2
# cores, one target/ with cargo), checks that the generated files are current and that the
# declarations type-check, packs the npm tarballs (tools/package.mjs), then runs the node:test
# suites (__test__/*.test.mjs), the installed tarballs' smoke test among them.
# Ends with one line: `node binding: N passed, M failed, K skipped`; exits non-zero on failure.
#   A2A_BUILD_LOCK=/tmp/a2a-build.lock bindings-node/test.sh   # serialise the build with others
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
report="$here/../target/node-binding.tap"
mkdir -p "$(dirname "$report")"
rm -f "$report"

summary() { # passed failed skipped
  echo "node binding: $1 passed, $2 failed, $3 skipped"
}
fail_setup() {
  echo "node binding: $1 failed" >&2
  summary 0 1 0
  exit 1
}

if [ ! -d node_modules/@napi-rs/cli ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  # npm ci refuses a lock that lacks optional platform packages a partial registry mirror does
  # not carry (@napi-rs/cli's wasm tools for darwin, windows, ...; never used here). npm install
  # --no-save then installs the same locked versions without rewriting the lock.
  npm ci --no-audit --no-fund --loglevel=error 2>/dev/null \
    || npm install --no-save --no-audit --no-fund --loglevel=error \
    || fail_setup "npm ci / npm install"
fi
lock=()
[ -n "${A2A_BUILD_LOCK:-}" ] && lock=(flock "$A2A_BUILD_LOCK")
"${lock[@]}" npm run --silent build || fail_setup "the native build"
# The npm tarballs (napi's layout: a2a-native plus its linux-x64-gnu platform package), from the
# dev build above; __test__/dist.test.mjs installs them into a fresh project.
node tools/package.mjs || fail_setup "tools/package.mjs"
export A2A_REQUIRE_DIST=1
# The generated models and errors must match the proto and core's error table.
python3 ../tools/generate.py --check --only node || fail_setup "tools/generate.py --check"
# The declarations must type-check against a typed usage file (strict).
npx --no-install tsc -p __test__/tsconfig.json || fail_setup "tsc --noEmit"

node --test --test-concurrency=1 \
  --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination="$report" \
  __test__/*.test.mjs
rc=$?
count() { awk -v k="# $1" '$0 ~ "^"k" [0-9]+$" { n = $3 } END { print n + 0 }' "$report" 2>/dev/null || echo 0; }
passed=$(count pass)
failed=$(( $(count fail) + $(count cancelled) ))
skipped=$(( $(count skipped) + $(count todo) ))
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
  failed=1
fi
summary "$passed" "$failed" "$skipped"
[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ]
