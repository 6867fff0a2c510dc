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


def test_a_results_folder_moved_elsewhere_opens_with_its_files(tmp_path):
    """A study's folder renamed (a copy elsewhere alike): its report reruns there and the report's
    files on the parent run are read from the new folder (the store named the old one)."""
    old, new = tmp_path / "made", tmp_path / "moved"
    old.mkdir()
    done = lincls(old, "-m", "seed=0,1", *SMALL)
    assert done.returncode == 0, done.stderr
    (line,) = [k for k in done.stderr.splitlines() if "its report: " in k]
    study = line.split("its report: lincls report ", 1)[1]
    report = lincls(old, "report", study, module="lincls.experiments.cli")
    assert report.returncode == 0, report.stderr
    old.rename(new)
    again = lincls(new, "report", study, module="lincls.experiments.cli")
    assert again.returncode == 0, again.stderr
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{new / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("lincls")
    assert experiment.artifact_location == (new / "mlartifacts").as_uri()
    parent = client.search_runs([experiment.experiment_id], "tags.`lincls.role` = 'sweep'")[0]
    assert parent.info.artifact_uri.startswith((new / "mlartifacts").as_uri())
    files = [f.path for f in client.list_artifacts(parent.info.run_id, "report")]
    assert "report/report.md" in files


def test_only_lincls_own_artifact_folder_is_pointed_beside_a_moved_store(tmp_path):
    from lincls.tracking.relocate import relocate

    db = tmp_path / "mlflow.db"
    here = (tmp_path / "mlartifacts").as_uri()
    kept = ["s3://bucket/mlartifacts/1", "file:///elsewhere/artifacts/2",
            "file:///elsewhere/mlartifacts2/3", here + "/4"]  # fmt: skip
    with sqlite3.connect(db) as connection:
        connection.execute("create table experiments (artifact_location text)")
        connection.execute("create table runs (artifact_uri text)")
        for location in [*kept, "file:///old/place/mlartifacts/5"]:
            connection.execute("insert into experiments values (?)", (location,))
        connection.execute(
            "insert into runs values ('file:///old/place/mlartifacts/5/r/artifacts')"
        )
    assert relocate(f"sqlite:///{db}") == 2
    with sqlite3.connect(db) as connection:
        locations = [r[0] for r in connection.execute("select * from experiments")]
        (run,) = connection.execute("select * from runs").fetchone()
    assert locations == [*kept, here + "/5"] and run == here + "/5/r/artifacts"
    assert relocate(f"sqlite:///{db}") == 0  # once pointed, nothing to do
