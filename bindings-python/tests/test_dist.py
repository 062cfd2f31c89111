"""The distributions package.sh builds (target/dist/python): the wheel installs into a fresh venv
with no Rust toolchain on PATH and runs an agent and a client there; the sdist holds the whole
workspace it builds from. test.sh builds them first and sets A2A_REQUIRE_DIST, so a missing
wheel fails there; a bare `pytest` skips."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
DIST = Path(os.environ.get("A2A_DIST_DIR", HERE.parents[1] / "target" / "dist" / "python"))


def _one(pattern: str) -> Path:
    found = sorted(DIST.glob(pattern))
    if not found:
        if os.environ.get("A2A_REQUIRE_DIST"):
            pytest.fail(f"no {pattern} in {DIST}: run bindings-python/package.sh")
        pytest.skip(f"no {pattern} in {DIST} (bindings-python/package.sh builds it)")
    assert len(found) == 1, found
    return found[0]


def test_the_wheel_runs_an_agent_and_a_client_in_a_fresh_venv(tmp_path: Path) -> None:
    wheel = _one("*.whl")
    assert "-cp311-abi3-manylinux_" in wheel.name, wheel.name
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # No index: the wheel must need nothing else.
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-index",
                    "--disable-pip-version-check", str(wheel)], check=True)
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    run = subprocess.run([str(venv / "bin" / "python"), str(HERE.parent / "smoke" / "agent_and_client.py")],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    line = run.stdout.strip().splitlines()[-1]
    # The package came from the venv's site-packages, not from this source tree.
    assert line.startswith(f"smoke ok: {venv}/lib/"), line
    assert "site-packages/a2a_native/" in line, line


def test_the_wheel_carries_the_typed_package_and_one_native_module() -> None:
    import zipfile

    names = zipfile.ZipFile(_one("*.whl")).namelist()
    assert "a2a_native/py.typed" in names
    assert "a2a_native/_native.pyi" in names
    native = [n for n in names if n.startswith("a2a_native/_native") and n.endswith(".so")]
    assert native == ["a2a_native/_native.abi3.so"], native


def test_the_sdist_holds_the_workspace_it_builds_from(tmp_path: Path) -> None:
    sdist = _one("*.tar.gz")
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp_path, filter="data")
    root = tmp_path / sdist.name.removesuffix(".tar.gz")
    for member in ("pyproject.toml", "Cargo.toml", "Cargo.lock", "core/Cargo.toml", "core/error-table.json",
                   "bindings-python/Cargo.toml", "bindings-python/src/lib.rs", "python/a2a_native/__init__.py",
                   "tools/workspace-hack/Cargo.toml"):
        assert (root / member).is_file(), member
    # The unpacked workspace resolves offline from its own lock file: every path dependency is
    # inside it. (Not --locked: the lock still lists the CLI's and the other bindings' crates,
    # which the sdist's smaller workspace drops; every version it keeps stays as locked.)
    meta = subprocess.run(["cargo", "metadata", "--offline", "--format-version", "1"],
                          cwd=root, capture_output=True, text=True, timeout=120)
    assert meta.returncode == 0, meta.stderr
    assert '"name":"a2a-native-python"' in meta.stdout
