#!/usr/bin/env bash
# The Kotlin/Swift binding's tests: build the cdylib, the bindgen and the `a2a` CLI; check the
# generated records (src/models_gen.rs) and the committed Swift sources are up to date; generate
# the Kotlin sources; run the Kotlin suite (Maven, JUnit 5) on the JVM. Swift is generated and
# checked here but not compiled (no swiftc on this machine; see README.md for `swift test`).
# Last line: `kotlin binding: N passed, M failed, K skipped`.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
cd "$repo"

summary() { echo "kotlin binding: $1 passed, $2 failed, $3 skipped"; }
fail() { echo "$1" >&2; summary 0 1 0; exit 1; }

flock /tmp/a2a-build.lock cargo build -p a2a-native-uniffi -p a2a-native-cli --bins --lib || fail "cargo build failed"
python3 bindings-uniffi/tools/generate.py --check || fail "src/models_gen.rs is stale: run python3 bindings-uniffi/tools/generate.py"
bindings-uniffi/gen.sh --check-swift || fail "the committed Swift sources are stale: run bindings-uniffi/gen.sh"

# Online on purpose: a fresh machine downloads the Kotlin compiler and libraries once.
rm -rf bindings-uniffi/kotlin/target/surefire-reports
(cd bindings-uniffi/kotlin && flock /tmp/a2a-build.lock mvn -B -q -Dstyle.color=never test "$@")
mvn_rc=$?

echo  # mvn -q may leave a colour reset without a newline: the summary needs its own line
python3 - bindings-uniffi/kotlin/target/surefire-reports <<'EOF_PY'
import sys, glob, xml.etree.ElementTree as ET
t = f = e = s = 0
for path in glob.glob(f"{sys.argv[1]}/TEST-*.xml"):
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
