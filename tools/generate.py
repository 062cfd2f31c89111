#!/usr/bin/env python3
"""Generates every file of the bindings' typed surface that must never be kept by hand, from the
vendored proto (``spec/1.0.1/a2a.proto``) and core's error table (``core/error-table.json``),
both read once (``codegen/proto.py``):

- Python: ``bindings-python/python/a2a_native/{models,errors}.py`` (``codegen/python.py``);
- Node: ``bindings-node/{models.d.ts,errors.js,errors.d.ts}`` (``codegen/typescript.py``);
- Kotlin and Swift: ``bindings-uniffi/src/models_gen.rs``, uniffi records (``codegen/uniffi.py``);
- core's test data: ``core/tests/data/proto-model.json``, the proto as data (``proto_model.rs``
  checks core's Rust model against it).

Usage: ``python3 tools/generate.py [--check] [--only python,node,uniffi,core]``; ``--check`` writes
nothing and fails (exit 1) naming each generated file that is out of date.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from codegen import proto, python, typescript, uniffi  # noqa: E402

TARGETS = {
    "python": python.outputs,
    "node": typescript.outputs,
    "uniffi": uniffi.outputs,
    "core": lambda digest, errors: {proto.DIGEST: proto.render_digest(digest)},
}


def main() -> int:
    ap = argparse.ArgumentParser(description="Generates the bindings' models and errors from the proto and core's error table.")
    ap.add_argument("--check", action="store_true", help="fail when a generated file is out of date")
    ap.add_argument("--only", default=",".join(TARGETS), help="comma-separated targets (default: all)")
    args = ap.parse_args()
    targets = [t.strip() for t in args.only.split(",") if t.strip()]
    if not targets:
        ap.error(f"--only names no target: choose from {', '.join(TARGETS)}")
    if unknown := [t for t in targets if t not in TARGETS]:
        ap.error(f"unknown target(s) {', '.join(unknown)}: choose from {', '.join(TARGETS)}")
    model = proto.read()
    errors = proto.error_rows()
    outputs: dict[Path, str] = {}
    for t in targets:
        outputs.update(TARGETS[t](model, errors))
    stale = [p for p, text in outputs.items() if not p.exists() or p.read_text(encoding="utf-8") != text]
    name = lambda p: p.relative_to(proto.REPO)  # noqa: E731
    if args.check:
        for p in stale:
            print(f"generate.py: {name(p)} is out of date; run python3 tools/generate.py", file=sys.stderr)
        return 1 if stale else 0
    for p in stale:
        p.write_text(text := outputs[p], encoding="utf-8")
        print(f"wrote {name(p)} ({len(text.splitlines())} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
