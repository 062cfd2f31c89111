#!/usr/bin/env bash
# Builds every installable artifact, release profile, into target/dist/:
#   python/  the abi3 manylinux wheel (checked by auditwheel) and the sdist   bindings-python/package.sh
#   node/    a2a-native and a2a-native-linux-x64-gnu npm tarballs             bindings-node/tools/package.mjs
#   kotlin/  the jar with the native library inside, also `mvn install`ed     bindings-uniffi/package.sh
# The test suites build the same artifacts in the dev profile and smoke-test them from a clean
# directory (tests/run-all.sh); this is the build to publish.
set -euo pipefail
cd "$(dirname "$0")/.."
bindings-python/package.sh
(cd bindings-node && { [ -d node_modules/@napi-rs/cli ] || npm ci --no-audit --no-fund --loglevel=error; } \
  && npm run --silent build:release && node tools/package.mjs)
bindings-uniffi/package.sh
ls -l target/dist/*/
