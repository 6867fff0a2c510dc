"""The write path's store settings: a SQLite store lincls opens is in WAL mode, others untouched."""

from __future__ import annotations

import shutil
import sqlite3

from mlflow.tracking import MlflowClient

from lincls import tracking


def _journal_mode(path) -> str:
    with sqlite3.connect(path) as connection:
        return connection.execute("PRAGMA journal_mode").fetchone()[0]


def test_a_store_lincls_opens_is_written_in_wal_mode_and_another_is_not(tmp_path, _migrated_store):
    opened, other = tmp_path / "opened.db", tmp_path / "other.db"
    shutil.copyfile(_migrated_store, opened)
    shutil.copyfile(_migrated_store, other)
    assert _journal_mode(opened) == _journal_mode(other) == "delete"
    client, experiment_id = tracking.open_experiment(f"sqlite:///{opened}")
    run_id = tracking.start_run(client, experiment_id, "r", {"k": "v"})
    tracking.finish_run(client, run_id, {"p": "1"}, {"m": 2.0}, {"c": [(1, 1.0), (5, 3.0)]}, {})
    MlflowClient(tracking_uri=f"sqlite:///{other}").search_experiments()
    assert _journal_mode(opened) == "wal"
    assert _journal_mode(other) == "delete"
    # another process's plain client reads what was written, in WAL mode or not
    run = MlflowClient(tracking_uri=f"sqlite:///{opened}").get_run(run_id)
    assert run.info.status == "FINISHED" and run.data.metrics == {"m": 2.0, "c": 3.0}
