"""The reader's Arrow driver bundles its own SQLite: it reads a store only where this process has
no connection to it, so a process that writes runs and reads them keeps working."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from conftest import compose_config, run_cli

from lincls import runner
from lincls.tracking import long_rows, reader


def _run(uri: str, seed: int) -> str:
    config = compose_config([f"seed={seed}", "dataset.n=40", "dataset.d=3", "passes=1",
                             f"tracking.uri={uri}"])  # fmt: skip
    return runner.execute(config).run_id


def test_writing_after_reading_in_one_process_works(tmp_path, _migrated_store):
    db = tmp_path / "mlflow.db"
    shutil.copyfile(_migrated_store, db)
    uri = f"sqlite:///{db}"
    assert not reader.open_here(db)
    made = [_run(uri, seed) for seed in range(3)]
    assert reader.open_here(db)  # the writer's connection stays open between runs
    assert sorted(reader.runs(uri)["run_id"]) == sorted(made)
    made += [_run(uri, seed) for seed in range(3, 5)]  # the same connection writes on
    assert sorted(reader.runs(uri)["run_id"]) == sorted(made)
    with sqlite3.connect(db) as other:  # and a new connection reads every run
        assert other.execute("SELECT count(*) FROM runs").fetchone() == (5,)


def test_a_file_no_connection_holds_is_read_by_the_driver(tmp_path):
    db = tmp_path / "plain.db"
    sqlite3.connect(db).close()
    assert reader.open_here(Path(db)) is False
    held = sqlite3.connect(db)
    try:
        held.execute("CREATE TABLE t (x)")
        assert reader.open_here(Path(db)) is True
    finally:
        held.close()
    assert reader.open_here(Path(db)) is False


def test_a_store_nothing_here_holds_is_read_by_the_driver(tmp_path, monkeypatch):
    """The reader's own connection is closed before the driver is asked: a study read by a
    process holding nothing of the store goes through Arrow (at 100,000 runs ~10 s, where the
    sqlite3 module's tuples took ~28 s)."""
    db = tmp_path / "mlflow.db"
    uri = f"sqlite:///{db}"
    made = run_cli(["-m", "seed=0,1,2", "dataset.n=40", "dataset.d=3", "passes=1",
                    "certificates.svm=false", f"tracking.uri={uri}"], tmp_path)  # fmt: skip
    assert made.returncode == 0, made.stderr[-2000:]
    assert not reader.open_here(db)  # written by another process
    tables = []
    real = long_rows.whole_tables

    def spy(path, run_ids, tag_keys, *more):
        found = real(path, run_ids, tag_keys, *more)
        tables.append(None if found is None else [len(frame.columns) > 0 for frame in found])
        return found

    monkeypatch.setattr(long_rows, "whole_tables", spy)
    assert len(reader.runs(uri)) == 3
    assert tables == [[True, True, True]]  # params, metrics and tags, all by the driver
