#!/usr/bin/env bash
# Generates the Kotlin sources (into target/uniffi/kotlin, not committed) and the Swift ones
# (into swift/Sources, committed) from the built library. `--check-swift` only compares.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
lib="${A2A_UNIFFI_LIB:-$repo/target/debug/liba2a_native_uniffi.so}"  # package.sh passes the release one
bindgen=(cargo run -q -p a2a-native-uniffi --bin uniffi-bindgen -- generate --library "$lib" --no-format)
cd "$repo"
rm -rf target/uniffi/kotlin target/uniffi/swift
flock /tmp/a2a-build.lock "${bindgen[@]}" --language kotlin --out-dir target/uniffi/kotlin
# uniffi's Kotlin catches only kotlin.Exception around a call into Kotlin (an executor, a
# credentials provider, ...): an Error that is no Exception (TODO()'s NotImplementedError,
# StackOverflowError) escaped it, so the Rust side never got an answer and the task hung. Catch
# every Throwable there (reported as an unexpected error: the task ends FAILED with its text).
# The four places are uniffiTraitInterfaceCall[Async][WithError]; stop if the template moved.
kt=target/uniffi/kotlin/a2anative/a2a_native_uniffi.kt
[ "$(grep -c 'catch(e: kotlin.Exception)' "$kt")" = 4 ] \
  || { echo "gen.sh: uniffi's Kotlin callback helpers changed; review the Throwable patch" >&2; exit 1; }
sed -i 's/catch(e: kotlin.Exception)/catch(e: kotlin.Throwable)/' "$kt"
flock /tmp/a2a-build.lock "${bindgen[@]}" --language swift --out-dir target/uniffi/swift
gen="$repo/target/uniffi/swift"
pairs=("A2ANative.swift:swift/Sources/A2ANative/A2ANative.swift"
       "A2ANativeFFI.h:swift/Sources/A2ANativeFFI/include/A2ANativeFFI.h"
       "A2ANativeFFI.modulemap:swift/Sources/A2ANativeFFI/include/module.modulemap")
stale=0
for pair in "${pairs[@]}"; do
  src="$gen/${pair%%:*}" dst="$here/${pair#*:}"
  if [ "${1:-}" = "--check-swift" ]; then
    if ! cmp -s "$src" "$dst"; then echo "stale: bindings-uniffi/${pair#*:} (run bindings-uniffi/gen.sh)" >&2; stale=1; fi
  else
    mkdir -p "$(dirname "$dst")" && cp "$src" "$dst"
  fi
done
exit "$stale"
