"""The command a user typed, typed again, completes its study: a config that has a FINISHED run in
the study is skipped by default, in every sweep; ``tracking.skip_finished=false`` runs it again
on purpose. Counted in the store's own tables, by config hash."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

SMALL = ["dataset.n=30", "dataset.n_test=10", "certificates.svm=false"]


def sweep(home: Path, *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lincls.experiments.run", "-m", *arguments, *SMALL],
        cwd=home, env=environment(home),
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def environment(home: Path) -> dict[str, str]:
    """This process's environment with ``home`` as LINCLS_HOME and no MLFLOW_TRACKING_URI, so
    the sweep's store is ``home/mlflow.db``."""
    kept = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    return {**kept, "LINCLS_HOME": str(home)}


def runs_by_status(home: Path) -> Counter:
    """(status, config hash) → runs, of the sweeps' child runs in the store."""
    with sqlite3.connect(home / "mlflow.db") as db:
        rows = db.execute(
            "select r.status, h.value from runs r "
            "join tags role on role.run_uuid = r.run_uuid and role.key = 'lincls.role' "
            "join tags h on h.run_uuid = r.run_uuid and h.key = 'lincls.config_hash' "
            "where role.value = 'run' and r.lifecycle_stage = 'active'"
        ).fetchall()
    return Counter(rows)


def test_the_same_command_again_skips_what_finished(tmp_path):
    first = sweep(tmp_path, "seed=0,1,2")
    assert first.returncode == 0, first.stderr
    again = sweep(tmp_path, "seed=0,1,2")
    assert again.returncode == 0, again.stderr
    assert ": 3 jobs: 0 finished, 0 failed, 3 skipped in " in again.stderr.splitlines()[-1]
    counts = runs_by_status(tmp_path)
    assert len(counts) == 3 and set(counts.values()) == {1}  # one FINISHED run a config
    wider = sweep(tmp_path, "seed=0,1,2,3")  # another command: another study, all four run
    assert ": 4 jobs: 4 finished, 0 failed, 0 skipped in " in wider.stderr.splitlines()[-1]
    repeat = sweep(tmp_path, "seed=0,1,2", "tracking.skip_finished=false")  # on purpose
    assert repeat.returncode == 0, repeat.stderr
    assert ": 3 jobs: 3 finished, 0 failed, 0 skipped in " in repeat.stderr.splitlines()[-1]


def _progress(home: Path) -> int:
    return sum(len(p.read_text().splitlines()) for p in home.glob("hydra/**/progress.log"))


@pytest.mark.slow
def test_a_killed_sweep_typed_again_leaves_one_finished_run_a_config(tmp_path):
    """kill -9 of a two-worker sweep mid-way, then the identical command: every config has one
    FINISHED run, none twice, none left RUNNING."""
    command = [sys.executable, "-m", "lincls.experiments.run", "-m", "seed=range(0,24)", *SMALL,
               "hydra.launcher.n_jobs=2"]  # fmt: skip
    env = environment(tmp_path)
    log = tmp_path / "killed.log"
    with log.open("w") as out:
        killed = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=out, stderr=out,
                                  start_new_session=True)  # fmt: skip
    started = time.monotonic()
    try:
        while _progress(tmp_path) < 8 and time.monotonic() - started < 600:  # a hang's guard
            time.sleep(0.1)
        assert killed.poll() is None, "the sweep ended before it could be killed"
    finally:
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait()
    waited = time.monotonic() - started
    assert _progress(tmp_path) >= 8, f"8 configs not done in {waited:.0f} s: {log.read_text()}"
    before = runs_by_status(tmp_path)
    finished_before = sum(n for (status, _), n in before.items() if status == "FINISHED")
    assert 8 <= finished_before < 24
    again = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=600)  # fmt: skip
    assert again.returncode == 0, again.stderr
    last = again.stderr.splitlines()[-1]
    assert f"{24 - finished_before} finished, 0 failed, {finished_before} skipped" in last
    after = runs_by_status(tmp_path)
    finished = Counter(
        h for (status, h), n in after.items() if status == "FINISHED" for _ in range(n)
    )
    assert len(finished) == 24 and set(finished.values()) == {1}
    assert not [key for key in after if key[0] == "RUNNING"]
