"""The pinned installs agree with pyproject.toml (``make lock`` remakes them).

requirements/run.lock (``make run``) pins pyproject's dependencies and everything they need;
requirements/test.lock (``make test``, ``make setup``) adds the dev, postgres, ray and docs extras
at the same versions. A pyproject changed without ``make lock`` fails here: its dependency lists
no longer hash to the digest in the locks' header, or a range no longer holds its pin.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from conftest import ROOT
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]
LOCKS = {"run": ROOT / "requirements" / "run.lock", "test": ROOT / "requirements" / "test.lock"}
TEST_EXTRAS = ("dev", "postgres", "ray", "docs")
MAKE_LOCK = "pyproject.toml and the lock disagree: run `make lock`"


def read_lock(path: Path) -> dict[str, tuple[Requirement, list[str]]]:
    """{canonical name: (the pinned requirement with its marker, its hashes)} of a lock file."""
    entries, logical = {}, ""
    for line in path.read_text().splitlines():
        if line.strip().startswith("#") or not line.strip():
            continue
        logical += line.rstrip("\\").strip() + " "
        if line.rstrip().endswith("\\"):
            continue
        spec, *hashes = logical.split(" --hash=")
        requirement = Requirement(spec.strip())
        entries[canonicalize_name(requirement.name)] = (requirement, [h.strip() for h in hashes])
        logical = ""
    assert not logical, f"{path.name} ends inside an entry"
    return entries


def declared(lock: str) -> list[Requirement]:
    """What pyproject asks for in ``lock``: the dependencies, with the test extras for test.lock."""
    entries = list(PROJECT["dependencies"])
    if lock == "test":
        entries += [e for extra in TEST_EXTRAS for e in PROJECT["optional-dependencies"][extra]]
    return [Requirement(e) for e in entries]


def applies(requirement: Requirement, extra: str = "") -> bool:
    return requirement.marker is None or requirement.marker.evaluate({"extra": extra})


def test_the_locks_were_compiled_from_this_pyproject():
    # recomputed here, independently of requirements/lock.py: what the header's digest covers
    lists = {
        "requires-python": PROJECT.get("requires-python"),
        "dependencies": PROJECT.get("dependencies", []),
        "optional-dependencies": PROJECT.get("optional-dependencies", {}),
    }
    digest = hashlib.sha256(json.dumps(lists, sort_keys=True).encode()).hexdigest()
    for name, path in LOCKS.items():
        header = [x for x in path.read_text().splitlines() if x.startswith("# pyproject-sha256: ")]
        assert header == [f"# pyproject-sha256: {digest}"], f"{name}.lock: {MAKE_LOCK}"


@pytest.mark.parametrize("lock", sorted(LOCKS))
def test_every_declared_requirement_is_pinned_within_its_range(lock):
    pins = read_lock(LOCKS[lock])
    for requirement in declared(lock):
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement} is not in {lock}.lock: {MAKE_LOCK}"
        (version,) = [s.version for s in pins[name][0].specifier]
        assert requirement.specifier.contains(version, prereleases=True), (
            f"{lock}.lock pins {name}=={version}, outside {requirement}: {MAKE_LOCK}"
        )


@pytest.mark.parametrize("lock", sorted(LOCKS))
def test_every_pin_is_one_exact_version_with_the_hashes_of_its_files(lock):
    pins = read_lock(LOCKS[lock])
    assert len(pins) >= 50, len(pins)  # the transitive packages too, not only pyproject's
    for name, (requirement, hashes) in pins.items():
        (spec,) = requirement.specifier
        assert spec.operator == "==" and "*" not in spec.version, requirement
        assert hashes and all(h.startswith("sha256:") and len(h) == 71 for h in hashes), name


def test_the_run_lock_is_the_test_locks_run_set_without_the_extras():
    run, test = read_lock(LOCKS["run"]), read_lock(LOCKS["test"])
    for name, (requirement, _) in run.items():
        assert name in test, (name, MAKE_LOCK)
        pinned = test[name][0]
        # the same version; installed wherever run.lock installs it (the test set may need it on
        # more platforms: MkDocs asks for colorama everywhere, the run set on Windows only)
        assert pinned.specifier == requirement.specifier, (name, MAKE_LOCK)
        assert pinned.marker in (None, requirement.marker), (name, MAKE_LOCK)
    extras_only = {canonicalize_name(r.name) for r in declared("test")} - {
        canonicalize_name(r.name) for r in declared("run")
    }
    assert {"pytest", "selenium", "river", "ray", "psycopg"} & extras_only  # a lean run set ...
    assert not extras_only & set(run)  # ... that installs none of the extras
    assert "ray" not in run and "hydra-ray-launcher" not in run


def test_the_test_lock_holds_every_package_the_installed_ones_need_at_its_versions():
    """Walk the declared requirements through the installed packages' metadata: each package
    reached (on this platform) is pinned in test.lock, and installed at that version."""
    pins = read_lock(LOCKS["test"])
    todo = [(r, "") for r in declared("test")]
    seen: set[tuple[str, str]] = set()
    while todo:
        requirement, extra = todo.pop()
        if not applies(requirement, extra):
            continue
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{name} ({requirement}) is needed but not in test.lock: {MAKE_LOCK}"
        (version,) = [s.version for s in pins[name][0].specifier]
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            pytest.fail(f"{name} is not installed: make setup installs test.lock")
        assert installed == version, f"{name} {installed} installed, test.lock pins {version}"
        for wanted in ["", *sorted(requirement.extras)]:
            if (name, wanted) in seen:
                continue
            seen.add((name, wanted))
            for entry in metadata.requires(name) or []:
                todo.append((Requirement(entry), wanted))
    assert len({n for n, _ in seen}) >= 100, len(seen)
