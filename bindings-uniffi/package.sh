#!/usr/bin/env bash
# Builds the Kotlin binding's jar with the native library inside it (JNA's class-path resource,
# linux-x86-64/liba2a_native_uniffi.so), installs it in the local Maven repository
# (dev.a2a-native:a2a-native-kotlin) and copies it to target/dist/kotlin.
#   bindings-uniffi/package.sh                release library: what an application ships
#   bindings-uniffi/package.sh --dev          dev-profile library (what test.sh smoke-tests)
#   bindings-uniffi/package.sh --dev --test [MVN_ARGS...]
#                                             runs the Kotlin suite before installing (test.sh)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
profile=release cargo_profile=(--release) goals=(-DskipTests install)
while [ $# -gt 0 ]; do
  case "$1" in
    --dev) profile=debug cargo_profile=() ;;
    --test) goals=(install) ;;
    *) break ;;
  esac
  shift
done
cd "$repo"
flock /tmp/a2a-build.lock cargo build --locked -p a2a-native-uniffi --lib "${cargo_profile[@]}"
lib="target/$profile/liba2a_native_uniffi.so"
# The Kotlin sources (and a check of the committed Swift ones) from that library.
A2A_UNIFFI_LIB="$repo/$lib" bindings-uniffi/gen.sh --check-swift
# JNA's resource prefix for this machine: <os>-<arch> as com.sun.jna.Platform names it.
case "$(uname -m)" in
  x86_64) arch=x86-64 ;;
  *) arch="$(uname -m)" ;;
esac
resources=target/uniffi/jna
rm -rf "$resources" && mkdir -p "$resources/linux-$arch"
cp "$lib" "$resources/linux-$arch/"
(cd bindings-uniffi/kotlin && flock /tmp/a2a-build.lock mvn -B -q -Dstyle.color=never "${goals[@]}" "$@")
mkdir -p target/dist/kotlin
cp bindings-uniffi/kotlin/target/a2a-native-kotlin-0.1.0.jar target/dist/kotlin/
echo "target/dist/kotlin: a2a-native-kotlin-0.1.0.jar (installed as dev.a2a-native:a2a-native-kotlin:0.1.0)"
