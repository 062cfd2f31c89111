#!/usr/bin/env bash
# The Kotlin/Swift binding's tests: build the cdylib, the bindgen and the `a2a` CLI; check the
# generated records (src/models_gen.rs) and the committed Swift sources are up to date; generate
# the Kotlin sources; run the Kotlin suite (Maven, JUnit 5) on the JVM and install the jar
# (package.sh --dev --test); then a fresh Maven project that depends only on that jar (smoke/)
# runs an agent and a client. Swift is generated and checked here but not compiled (no swiftc on
# this machine; see README.md for `swift test`).
# Last line: `kotlin binding: N passed, M failed, K skipped`.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
cd "$repo"

summary() { echo "kotlin binding: $1 passed, $2 failed, $3 skipped"; }
fail() { echo "$1" >&2; summary 0 1 0; exit 1; }

flock /tmp/a2a-build.lock cargo build -p a2a-native-uniffi -p a2a-native-cli --bins --lib || fail "cargo build failed"
python3 tools/generate.py --check --only uniffi || fail "src/models_gen.rs is stale: run python3 tools/generate.py"

# package.sh: the Kotlin sources and the Swift check (gen.sh), the Kotlin suite (mvn install runs
# it), then the jar with the library inside, installed in the local Maven repository.
rm -rf bindings-uniffi/kotlin/target/surefire-reports bindings-uniffi/kotlin/target/smoke
bindings-uniffi/package.sh --dev --test "$@"
mvn_rc=$?
# A fresh project elsewhere that depends only on that jar runs an agent and a client.
if [ "$mvn_rc" -eq 0 ]; then
  smoke="$(mktemp -d)"
  cp -r bindings-uniffi/smoke/. "$smoke/"
  (cd "$smoke" && flock /tmp/a2a-build.lock mvn -B -q -Dstyle.color=never test)
  mvn_rc=$?
  mkdir -p bindings-uniffi/kotlin/target/smoke
  cp "$smoke"/target/surefire-reports/TEST-*.xml bindings-uniffi/kotlin/target/smoke/ 2>/dev/null
  rm -rf "$smoke"
fi

echo  # mvn -q may leave a colour reset without a newline: the summary needs its own line
python3 - bindings-uniffi/kotlin/target/surefire-reports bindings-uniffi/kotlin/target/smoke <<'EOF_PY'
import sys, glob, xml.etree.ElementTree as ET
t = f = e = s = 0
for path in [p for d in sys.argv[1:] for p in glob.glob(f"{d}/TEST-*.xml")]:
    r = ET.parse(path).getroot()
    t += int(r.get("tests", 0)); f += int(r.get("failures", 0)); e += int(r.get("errors", 0)); s += int(r.get("skipped", 0))
failed = f + e
if t == 0:
    failed = 1  # no report: the build itself failed
print(f"kotlin binding: {t - failed - s if t else 0} passed, {failed} failed, {s} skipped")
sys.exit(1 if failed else 0)
EOF_PY
py_rc=$?
[ "$mvn_rc" -eq 0 ] && [ "$py_rc" -eq 0 ]
