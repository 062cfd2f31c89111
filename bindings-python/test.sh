#!/usr/bin/env bash
# Builds the Python package's wheel and sdist from this source tree (package.sh --dev), installs
# the wheel into bindings-python/.venv, then runs its pytest suite. Exits non-zero on failure.
#   PYTHON=python3.13 VENV=.venv-python3.13 test.sh   the same suite on another interpreter, in a
#                                                      venv of its own (run-all.sh does this for
#                                                      the newest CPython present)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null || PYTHON=python3
venv="${VENV:-.venv}"
if [ ! -x "$venv/bin/python" ]; then
    "$PYTHON" -m venv "$venv"
fi
py="$venv/bin/python"
export PATH="$here/$venv/bin:$PATH"
"$py" -m pip install --quiet --disable-pip-version-check "pytest==9.0.3" "mypy==2.4.1"
# The official SDK (client and server) for the interop tests, pinned as tests/interop pins it.
"$py" -m pip install --quiet --disable-pip-version-check -r "$here/../tests/interop/peers/requirements-v1.txt"
# Signed-card cross-checks: the SDK's signer/verifier (PyJWT, cryptography) and an independent
# RFC 8785 implementation; prometheus_client parses the metrics endpoint (OpenMetrics); the
# OpenTelemetry SDK records a Python executor's spans.
"$py" -m pip install --quiet --disable-pip-version-check "a2a-sdk[signing]==1.3.0" "rfc8785==0.1.4" "prometheus-client==0.26.0" "opentelemetry-sdk==1.45.2" "opentelemetry-exporter-otlp-proto-http==1.45.2"
# The generated models and errors must match the proto and core's error table.
python3 ../tools/generate.py --check --only python
# The wheel and sdist (package.sh, checked by auditwheel), in the dev profile: this workspace's
# [profile.dev] (deps at opt-level 1) builds in a fraction of a release build's time on 2 cores
# and shares target/ with cargo. Users get release (package.sh with no option). The suite runs
# on that wheel, installed here; tests/test_dist.py installs it again into a fresh venv.
# package.sh installs and runs `maturin` and `auditwheel` from .venv.
./package.sh --dev
"$py" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps ../target/dist/python/*.whl
export A2A_REQUIRE_DIST=1
# The typed surface: the native module's stub against the build, the package against its code.
(cd /tmp && "$here/$py" -m mypy.stubtest a2a_native --allowlist "$here/tools/stubtest-allowlist.txt")
(cd tests && "../$py" -m mypy --cache-dir "$here/$venv/mypy-cache" --strict -p a2a_native && "../$py" -m mypy --cache-dir "$here/$venv/mypy-cache" .)
cd tests
exec "../$py" -m pytest -q -p no:cacheprovider "$@"
