"""A SQLite store one process holds open stays readable there while other processes use it.

SQLite's locks are POSIX record locks, held per process: closing any descriptor of the database
file drops all of them, even one opened by ``open()`` to read its header. A process that had its
connection's lock dropped so looked, to the next process closing the store (``lincls report``'s
check of it), like no reader at all: that process checkpointed and deleted the WAL the first one
still mapped, which from then on read the store as it had been (a small store) or "database disk
image is malformed" (a large one), in a new engine too.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, run_cli
from mlflow.tracking import MlflowClient

from lincls import tracking
from lincls.errors import LinclsInputError
from lincls.figures import shows_figure
from lincls.tracking import reader
from lincls.tracking.schema import check_store
from lincls.tracking.tags import NOTE_TAG

CHEAP = ["dataset.n=100", "dataset.d=5", "passes=2", "certificates.svm=false"]
# SQLite's unix locking: a reader's SHARED lock is a read lock on 510 bytes past 1 GiB + 2.
SHARED_FIRST, SHARED_SIZE = 2**30 + 2, 510
PROBE = (
    "import fcntl, os, struct, sys; fd = os.open(sys.argv[1], os.O_RDONLY); "
    "lock = struct.pack('hhqqi4x', fcntl.F_WRLCK, 0, int(sys.argv[2]), int(sys.argv[3]), 0); "
    "print(struct.unpack('hhqqi4x', fcntl.fcntl(fd, fcntl.F_GETLK, lock))[0])"
)


def _readers_locked(db: Path) -> bool:
    """Whether some process holds a SQLite reader's lock on ``db`` (asked from another process:
    a process never sees its own locks conflict)."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(db), str(SHARED_FIRST), str(SHARED_SIZE)],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    return int(done.stdout) != fcntl.F_UNLCK


def _held(uri: str) -> tuple[MlflowClient, str, list[str]]:
    """An MLflow client of ``uri`` with a query made (its pooled connection open), its experiment
    id and the ids of the runs it found."""
    client = MlflowClient(tracking_uri=uri)
    experiment_id = client.get_experiment_by_name("lincls").experiment_id
    runs = client.search_runs([experiment_id], max_results=1000)
    return client, experiment_id, sorted(r.info.run_id for r in runs)


def test_checking_a_store_this_process_holds_keeps_its_readers_lock(store, tmp_path):
    db = Path(store[len("sqlite:///") :])
    with sqlite3.connect(db) as connection:  # as lincls leaves a store it wrote
        assert connection.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
    connection.close()
    tracking.open_experiment(store)  # the lincls experiment, made by MLflow's client
    _, _, ids = _held(store)
    assert ids == [] and _readers_locked(db)
    check_store(store)  # the check every opening of the store by lincls makes
    assert _readers_locked(db)
    tracking.open_experiment(store, "another")
    assert _readers_locked(db)


@pytest.mark.parametrize("size", [1, 8192])
def test_a_file_that_is_not_sqlite_is_still_refused_and_left_as_it_was(size, tmp_path):
    target = tmp_path / "notes.db"
    target.write_bytes((b"a,b\n1,2\n" * size)[:size])
    with pytest.raises(LinclsInputError) as caught:
        check_store(f"sqlite:///{target}")
    assert str(caught.value) == (
        f"tracking.uri: {target} is not a SQLite database; refused (lincls writes an MLflow "
        "store or a new file): give another file"
    )
    assert target.read_bytes() == (b"a,b\n1,2\n" * size)[:size]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.db"]


def _sweep(tmp_path: Path) -> str:
    """The URI of a store holding a real sweep of three cheap runs."""
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    done = run_cli(["-m", "seed=0,1,2", *CHEAP, "study=shared", f"tracking.uri={uri}",
                    f"certificates.cache_dir={tmp_path / 'certificates'}",
                    f"hydra.sweep.dir={tmp_path / 'sweep'}"], cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return uri


def _lincls_report(uri: str, target: str, out: Path) -> subprocess.CompletedProcess:
    lincls = Path(sys.executable).with_name("lincls")
    command = [str(lincls)] if lincls.exists() else [sys.executable, "-m", "lincls.experiments.cli"]
    return subprocess.run(
        [*command, "report", target, "--tracking-uri", uri, "--out", str(out)],
        cwd=out.parent, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip


@pytest.mark.slow
def test_a_process_holding_the_store_reads_it_after_lincls_report_ran_on_it(tmp_path):
    uri = _sweep(tmp_path)
    db = tmp_path / "mlflow.db"
    client, experiment_id, ids = _held(uri)
    assert len(ids) == 4  # the sweep's parent and its three runs
    # as a notebook running a config does: lincls opens (and checks) the store in this process
    tracking.open_experiment(uri)
    parent = client.search_runs([experiment_id], "tags.`lincls.role` = 'sweep'")[0].info.run_id
    done = _lincls_report(uri, parent, tmp_path / "report")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "(3 runs of study 'shared'" in done.stdout and "run colours set: 3" in done.stdout
    # this process still reads, and sees what the report wrote: when the report's connection,
    # seeing no reader, deleted the WAL this process maps, it read the store as it was before
    # (a small store) or "database disk image is malformed" (a large one)
    after = client.search_runs([experiment_id], max_results=1000)
    assert sorted(r.info.run_id for r in after) == ids
    shown = [r for r in after if r.data.tags.get("lincls.role") == "run"]
    assert len(shown) == 3 and all(r.data.tags.get("mlflow.runColor") for r in shown)
    assert db.with_name("mlflow.db-wal").exists()
    assert all(shows_figure(r.data.tags[NOTE_TAG], r.info.run_id) for r in shown)
    assert len(reader.runs(uri, status=None, role="run")) == 3  # a new engine here reads it too
    with sqlite3.connect(db) as check:
        assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    check.close()
