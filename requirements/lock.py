"""Remake the pinned installs from pyproject.toml: ``make lock`` (``make lock UPGRADE=1``).

``test.lock`` is pyproject's dependencies with the dev, postgres, ray and docs extras;
``run.lock`` the dependencies alone, at test.lock's versions. uv's resolver pins every package,
transitive ones included, for every platform and Python the project supports (markers where they
differ), with the hashes of their files, so ``pip install -r`` installs exactly these. A pin
already in a lock is kept while it still satisfies pyproject (``--upgrade`` takes the newest the
ranges allow).

Each lock starts with the sha256 of pyproject's dependency lists; tests/test_lock.py recomputes it,
so a pyproject changed without ``make lock`` fails the suite.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUN_LOCK = ROOT / "requirements" / "run.lock"
TEST_LOCK = ROOT / "requirements" / "test.lock"
TEST_EXTRAS = ("dev", "postgres", "ray", "docs")
DIGEST_LINE = "# pyproject-sha256: "
HEADERS = {
    RUN_LOCK: "make run's packages: pyproject.toml's dependencies and all they need, pinned.",
    TEST_LOCK: "make test's packages: run.lock's with the dev, postgres, ray and docs extras.",
}


def dependency_digest(pyproject: dict) -> str:
    """The sha256 of pyproject's requires-python, dependencies and optional dependencies (in a
    canonical JSON form): what a lock is compiled from."""
    project = pyproject["project"]
    lists = {
        "requires-python": project.get("requires-python"),
        "dependencies": project.get("dependencies", []),
        "optional-dependencies": project.get("optional-dependencies", {}),
    }
    return hashlib.sha256(json.dumps(lists, sort_keys=True).encode()).hexdigest()


def compile_lock(
    uv: str, out: Path, extras: Sequence[str], constraints: Path | None, upgrade: bool
) -> None:
    """Resolve pyproject.toml with ``extras`` into ``out`` through ``uv pip compile``."""
    python = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    command = [
        uv, "pip", "compile", "pyproject.toml", "--universal",
        "--python-version", python.removeprefix(">="), "--generate-hashes",
        "--custom-compile-command", "make lock", "--quiet", "-o", str(out.relative_to(ROOT)),
    ]  # fmt: skip
    command += [f"--extra={extra}" for extra in extras]
    if constraints is not None:
        command += ["-c", str(constraints.relative_to(ROOT))]  # relative: the lock names it
    if upgrade:
        command.append("--upgrade")
    subprocess.run(command, cwd=ROOT, check=True)


def stamp(out: Path, digest: str) -> None:
    """Put the lock's header (what it holds, the digest of what it was compiled from) first."""
    lines = [x for x in out.read_text().splitlines() if not x.startswith(DIGEST_LINE)]
    if lines and lines[0] in {f"# {h}" for h in HEADERS.values()}:
        lines = lines[1:]
    out.write_text("\n".join([f"# {HEADERS[out]}", DIGEST_LINE + digest, *lines]) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Compile test.lock, then run.lock constrained to it; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uv", default="uv", help="the uv executable")
    parser.add_argument("--upgrade", action="store_true", help="newest versions, not kept pins")
    args = parser.parse_args(argv)
    digest = dependency_digest(tomllib.loads((ROOT / "pyproject.toml").read_text()))
    compile_lock(args.uv, TEST_LOCK, TEST_EXTRAS, None, args.upgrade)
    stamp(TEST_LOCK, digest)
    compile_lock(args.uv, RUN_LOCK, (), TEST_LOCK, args.upgrade)
    stamp(RUN_LOCK, digest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
