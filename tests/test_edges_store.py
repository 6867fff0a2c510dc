"""What a user does with a store after a command: copy it, report on it as the command said.

A single run ends without closing its connections; what it wrote must be in ``mlflow.db``
itself, not only in the write-ahead log beside it. A sweep on a store other than the default
prints a report command that names that store."""

from __future__ import annotations

import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

SMALL = ["dataset.n=30", "dataset.n_test=10", "certificates.svm=false"]


def lincls(home: Path, *arguments: str, module: str = "lincls.experiments.run"):
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    return subprocess.run(
        [sys.executable, "-m", module, *arguments], cwd=home,
        env={**env, "LINCLS_HOME": str(home)}, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def test_a_single_runs_store_copied_without_its_log_keeps_the_run(tmp_path):
    done = lincls(tmp_path, *SMALL)
    assert done.returncode == 0, done.stderr
    wal = tmp_path / "mlflow.db-wal"
    assert not wal.exists() or wal.stat().st_size == 0  # everything is in the file itself
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copyfile(tmp_path / "mlflow.db", copy / "mlflow.db")  # the file alone, no -wal
    with sqlite3.connect(copy / "mlflow.db") as db:
        assert db.execute("select status from runs").fetchall() == [("FINISHED",)]


def test_a_sweep_on_another_store_prints_a_report_command_that_works(tmp_path):
    other = f"sqlite:///{tmp_path / 'other.db'}"
    done = lincls(tmp_path, "-m", "seed=0,1", f"tracking.uri={other}", *SMALL)
    assert done.returncode == 0, done.stderr
    (line,) = [k for k in done.stderr.splitlines() if "its report: " in k]
    command = line.split("its report: ", 1)[1]
    assert command.startswith("lincls report adhoc-seed-") and f"--store {other}" in command
    report = lincls(tmp_path, *shlex.split(command)[1:], module="lincls.experiments.cli")
    assert report.returncode == 0, report.stderr
    default = lincls(tmp_path, "-m", "seed=0,1", *SMALL)  # the default store: no --store
    (line,) = [k for k in default.stderr.splitlines() if "its report: " in k]
    assert line.split("its report: ", 1)[1].startswith("lincls report adhoc-seed-")
    assert "--store" not in line.split("its report: ", 1)[1]
