"""The two ways the reader gathers runs' long rows (``lincls.tracking.long_rows``): the whole
tables streamed in batches by the ADBC driver, and the chosen runs' rows read by id, give the
same columns, value for value: records decoded (one of several tags among them), a row of a
name a record holds kept over the record's value, the runs not chosen left out."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from lincls.tracking import long_rows, reader
from lincls.tracking.record import RECORD_TAG, written
from lincls.tracking.sqlite_runs import SqliteRuns

T0 = 1_700_000_000_000
LONG_RUN = 4  # its curve makes a record of several tags
LATER = 6  # a tag of a name its record holds, set as a row too


def _write(store: str) -> list[str]:
    """30 runs with records; their ids."""
    experiment_id = MlflowClient(store).create_experiment("lincls")
    writer = SqliteRuns.open(store)
    ids = []
    for k in range(30):
        points = 3 + (3000 if k == LONG_RUN else 0)
        curves = {"cumulative_mistakes": [(s, float(s * k)) for s in range(1, points + 1)]}
        stored = written({"margin": k / 10, "mistakes": float(k)},
                         {"order": "fixed", "seed.text": f"s{k}"}, curves, {})  # fmt: skip
        assert (RECORD_TAG + ".1" in stored.tags) == (k == LONG_RUN)
        tags = {**stored.tags, **({"order": "set later"} if k == LATER else {})}
        metrics = [(name, value, T0, 0) for name, value in stored.metrics.items()]
        run_id, _ = writer.create(experiment_id, f"r{k}", {"lincls.study": "s"}, T0 + k)
        writer.finish(run_id, {"seed": str(k)}, metrics, tags, None, "FINISHED", end_time=T0 + k)
        ids.append(run_id)
    writer.close()
    return ids


def _unheld_copy(store: str, target: Path) -> Path:
    """A copy of ``store`` no connection of this process holds (MLflow's holds ``store``)."""
    source = sqlite3.connect(store.removeprefix("sqlite:///"))
    copy = sqlite3.connect(target)
    source.backup(copy)
    copy.close()
    source.close()
    return target


@pytest.mark.parametrize("tag_keys", [None, ["order", "lincls.study"]])
def test_streamed_whole_tables_and_reads_by_id_give_the_same_columns(
    store, tmp_path, monkeypatch, tag_keys
):
    ids = _write(store)
    copy = _unheld_copy(store, tmp_path / "copy.db")
    chosen = ids[::2]  # every other run: the rest are left out
    monkeypatch.setattr(long_rows, "BATCH_ROWS", 7)  # many batches, a run's rows across two
    whole = long_rows.whole_tables(copy, chosen, tag_keys)
    assert whole is not None
    engine = reader.engine_for(f"sqlite:///{copy}")
    try:
        with engine.connect() as db:
            by_id = long_rows.by_id(db, chosen, tag_keys)
    finally:
        engine.dispose()
    for streamed, read in zip(whole, by_id, strict=True):
        pd.testing.assert_frame_equal(streamed, read, check_exact=True)
    params, metrics, tags = whole
    runs = range(0, 30, 2)
    assert params["params.seed"].tolist() == [str(k) for k in runs]
    assert metrics["metrics.margin"].tolist() == [k / 10 for k in runs]
    # a curve's latest value: its last point, the long record's too
    assert metrics["metrics.cumulative_mistakes"].tolist() == [
        float((3 + (3000 if k == LONG_RUN else 0)) * k) for k in runs
    ]
    assert tags["tags.order"].tolist() == ["set later" if k == LATER else "fixed" for k in runs]
    assert ("tags.seed.text" in tags.columns) == (tag_keys is None)
    assert not [c for c in tags.columns if RECORD_TAG in c]
