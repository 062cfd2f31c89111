#!/usr/bin/env bash
# Builds the Python package's distributions into target/dist/python: one abi3 manylinux wheel,
# checked by auditwheel, and the sdist.
#   bindings-python/package.sh          release build: the wheel users install
#   bindings-python/package.sh --dev    dev profile: what test.sh installs and smoke-tests (a
#                                       release build of the core takes minutes more on 2 cores)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# maturin and auditwheel, pinned, from bindings-python/.venv (made here if missing).
[ -x "$here/.venv/bin/python" ] || "${PYTHON:-python3}" -m venv "$here/.venv"
export PATH="$here/.venv/bin:$PATH"
"$here/.venv/bin/python" -m pip install --quiet --disable-pip-version-check "maturin==1.16.0" "auditwheel==6.8.2"
out="$(cd "$here/.." && pwd)/target/dist/python"
profile=(--release)
case "${1:-}" in
  --dev) profile=(--profile dev) ;;
  "") ;;
  *) echo "usage: $0 [--dev]" >&2; exit 2 ;;
esac
cd "$here"
rm -rf "$out" && mkdir -p "$out"
maturin build --locked "${profile[@]}" --out "$out" --quiet
maturin sdist --out "$out" >/dev/null
wheels=("$out"/*.whl)
[ "${#wheels[@]}" -eq 1 ] || { echo "expected one wheel in $out, found ${#wheels[@]}" >&2; exit 1; }
wheel="${wheels[0]}"
case "$wheel" in
  *-cp311-abi3-manylinux_*_x86_64.whl | *-cp311-abi3-manylinux_*_aarch64.whl) ;;
  *) echo "not an abi3 manylinux wheel: $wheel" >&2; exit 1 ;;
esac
# auditwheel must find the wheel consistent with the manylinux tag it carries: only the system
# libraries the policy allows, at symbol versions no newer than the tag's glibc.
tag="$(basename "$wheel" .whl)"; tag="${tag##*-}"
report="$(auditwheel show "$wheel")"
echo "$report" | tr '\n' ' ' | grep -q "consistent with the following platform tag: \"$tag\"" \
  || { echo "$report" >&2; echo "auditwheel: $wheel is not consistent with $tag" >&2; exit 1; }
echo "$out: $(cd "$out" && ls | tr '\n' ' ')"
