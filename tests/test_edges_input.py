"""Bad input at the edges a user meets: one line naming the field and the fix, exit 2, and
nothing made first (no folder, lock file, store or run); the home, a store's folder, the
certificate cache, a path given as a tracking URI, the UI's address, a store of no scheme, a
study's curves, a sweeper's grid outside a named study, and a report piped into ``head``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

SMALL = ["dataset.n=30", "dataset.n_test=10", "certificates.svm=false"]
FIX = "set LINCLS_HOME to a folder this user can write"


def cli(*arguments: str, cwd: Path, env: dict[str, str] | None = None, prefix=(), **kw):
    """``lincls ARGUMENTS`` (``lincls.experiments.cli``) in ``cwd``, MLFLOW_TRACKING_URI unset
    unless ``env`` sets it; the CompletedProcess."""
    base = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    return subprocess.run(
        [*prefix, sys.executable, "-m", "lincls.experiments.cli", *arguments], cwd=cwd,
        env={**base, "PYTHONPATH": str(ROOT), **(env or {})}, text=True, timeout=300, **kw,
    )  # fmt: skip


def refused(done: subprocess.CompletedProcess, start: str) -> str:
    """The one line of a refusal that exits 2 and starts ``error: <start>``."""
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"error: {start}"), lines[0]
    return lines[0]


@pytest.fixture
def work(tmp_path) -> Path:
    """An empty working folder."""
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def test_an_empty_lincls_home_is_unset_so_everything_goes_to_results(work):
    root_hydra = Path("/hydra").exists()
    done = cli("run", *SMALL, cwd=work, env={"LINCLS_HOME": ""}, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert (work / "results" / "mlflow.db").is_file()  # the default store makes its own folder
    assert (work / "results" / "hydra" / "runs").is_dir()  # was /hydra/runs/…
    assert Path("/hydra").exists() == root_hydra


@pytest.mark.parametrize("kind", ["a file", "under a file", "unmakeable"])
def test_a_home_that_cannot_be_written_is_one_line(kind, work, tmp_path):
    (tmp_path / "file").write_text("x")
    home = {"a file": tmp_path / "file", "under a file": tmp_path / "file" / "home",
            "unmakeable": Path("/proc/lincls-home")}[kind]  # fmt: skip
    if kind == "unmakeable" and not Path("/proc/self").is_dir():
        pytest.skip("needs /proc")
    done = cli("run", *SMALL, cwd=work, env={"LINCLS_HOME": str(home)}, capture_output=True)
    line = refused(done, "LINCLS_HOME: ")
    assert str(home) in line and line.endswith(FIX)
    assert not home.exists() or home.is_file()
    assert sorted(os.listdir(tmp_path)) == ["file", "work"] and os.listdir(work) == []


def test_a_read_only_home_is_one_line(read_only_dir, work):
    locked, prefix = read_only_dir
    inside = locked / "home"
    for home, says in ((locked, f"{locked} is not writable by this user"),
                       (inside, f"cannot create {inside} (Permission denied)")):  # fmt: skip
        done = cli("run", *SMALL, cwd=work, env={"LINCLS_HOME": str(home)}, prefix=prefix,
                      capture_output=True)  # fmt: skip
        assert refused(done, "LINCLS_HOME: ") == f"error: LINCLS_HOME: {says}; {FIX}"
        assert os.listdir(locked) == [] and os.listdir(work) == []


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc")
def test_a_cache_folder_that_cannot_be_made_is_one_line_before_any_run(work, tmp_path):
    db = tmp_path / "store.db"
    done = cli("run", "--store", str(db), "certificates.cache_dir=/proc/nope", *SMALL,
                  "certificates.svm=true", cwd=work, env={"LINCLS_HOME": str(tmp_path / "home")},
                  capture_output=True)  # fmt: skip
    line = refused(done, "certificates.cache_dir: ")
    assert line.endswith(": cannot create /proc/nope (No such file or directory)")
    assert sorted(os.listdir(tmp_path)) == ["work"] and os.listdir(work) == []  # no store, no run
