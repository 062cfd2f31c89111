#!/usr/bin/env python3
"""Checks that each build the test scripts run (maturin's, napi's, the uniffi/CLI one, the CLI
alone) resolves the shared dependencies with the features `cargo test --workspace` uses, so none
of them compiles core and its dependencies again (see tools/workspace-hack/Cargo.toml).

Reads cargo's resolution only (`cargo tree`, no compilation). A package can be resolved twice,
for build scripts (host) and for the target, with different features; `cargo tree` does not
say which is which. So a selection passes when each of its feature sets is one the workspace
uses, and it has the workspace's largest set of each package it builds (the target's, as the
host's never has more). Exits 1 naming each package that differs: add its features to the
workspace-hack crate.
"""

import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SELECTIONS = [
    ["-p", "a2a-native-python"],
    ["-p", "a2a-native-node"],
    ["-p", "a2a-native-uniffi", "-p", "a2a-native-cli"],
    ["-p", "a2a-native-cli"],
]


def resolved(*selection: str) -> dict[str, set[frozenset[str]]]:
    """Package "name version" -> the feature sets it is built with."""
    out = subprocess.run(
        ["cargo", "tree", "--locked", *selection, "-e", "normal,build", "-f", "{p}\t{f}", "--prefix", "none"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    packages: dict[str, set[frozenset[str]]] = defaultdict(set)
    for line in out.splitlines():
        line = line.removesuffix(" (*)")
        if not line.strip():
            continue
        package, _, features = line.partition("\t")
        name, version = package.split()[:2]
        packages[f"{name} {version}"].add(frozenset(f for f in features.split(",") if f))
    return packages


def show(sets: set[frozenset[str]]) -> str:
    return " | ".join(sorted(",".join(sorted(s)) for s in sets))


workspace = resolved("--workspace", "-e", "dev")
failed = False
for selection in SELECTIONS:
    for package, sets in sorted(resolved(*selection).items()):
        theirs = workspace.get(package, set())
        largest = max(theirs, key=len, default=frozenset())
        if not sets <= theirs or largest not in sets:
            failed = True
            print(f"cargo build {' '.join(selection)}: {package} with [{show(sets)}], "
                  f"but [{show(theirs)}] in cargo test --workspace")
if failed:
    sys.exit(1)
print("feature sets: every binding build resolves as cargo test --workspace does")
