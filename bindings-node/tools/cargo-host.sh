#!/usr/bin/env bash
# Stands in for cargo under `napi build` (package.json sets CARGO to this file). napi always passes
# `--target <triple>`; for the host's own triple that makes cargo build every dependency again in
# target/<triple>/ instead of sharing target/debug (or target/release) with the workspace's other
# builds: four minutes of CI on 2 cores. This drops a `--target` naming the host, runs cargo, and
# links the library where napi then looks for it. Any other target is passed through unchanged.
set -euo pipefail
unset CARGO
host="$(rustc -vV | sed -n 's/^host: //p')"
args=() profile=debug target="" next=""
for arg in "$@"; do
  case "$next" in
    target) target="$arg"; next=""; continue ;;
    profile) profile="$arg"; [ "$arg" = dev ] && profile=debug; next="" ;;
  esac
  case "$arg" in
    --target) next=target; continue ;;
    --profile) next=profile ;;
    --release) profile=release ;;
  esac
  args+=("$arg")
done
if [ -n "$target" ] && [ "$target" != "$host" ]; then
  exec cargo "${args[@]}" --target "$target"
fi
cargo "${args[@]}"
[ -z "$target" ] && exit 0
dir="$(cargo metadata --format-version 1 --no-deps | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).target_directory))')"
mkdir -p "$dir/$host/$profile"
for lib in "$dir/$profile"/liba2a_native_node.{so,dylib}; do
  if [ -e "$lib" ]; then cp -f "$lib" "$dir/$host/$profile/"; fi
done
