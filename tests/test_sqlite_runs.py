"""Runs written as SQLite rows (``tracking.sqlite_runs``) are the rows MLflow's own store writes.

Each case writes the same runs twice into two fresh stores — once through ``MlflowClient``
(create_run, log_batch, log_inputs, set_terminated), once through ``SqliteRuns`` — and compares
every table of the two files, row by row, with only the generated ids named alike.
"""

from __future__ import annotations

import math
import shutil
import sqlite3
from pathlib import Path

import pytest
from mlflow.entities import Dataset, DatasetInput, InputTag, Metric, Param, RunTag
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

from lincls.tracking.sqlite_runs import SqliteRuns, schema_matches

T0, T1, TS = 1_700_000_000_000, 1_700_000_009_000, 1_700_000_005_000

TAGS = {"lincls.role": "run", "mlflow.user": "ada", "note": "γ = 0.1 · ünïcode", "long": "t" * 9000}
PARAMS = {"learner.name": "perceptron", "seed": "3", "long": "p" * 7000, "empty": ""}
METRICS = [
    ("mistakes", 12.0, TS, 0),
    ("ratio", math.nan, TS, 0),
    ("ratio", math.nan, TS, 0),  # the same NaN point twice: stored once
    ("top", math.inf, TS, 0),
    ("bottom", -math.inf, TS, 0),
    ("curve", 1.0, TS, 0),
    ("curve", 3.0, TS, 2),
    ("curve", 2.0, TS, 1),
    ("curve", 3.0, TS, 2),  # a duplicate point
    ("curve", 0.5, TS + 1, 2),  # a later timestamp at the same step is the latest
    ("tie", 5.0, TS, 1),
    ("tie", 4.0, TS, 1),  # (step, timestamp) tie: the larger value is the latest
    ("zero", 0.0, TS, 0),
    ("zero", math.nan, TS, 0),  # NaN is stored as 0: a point of its own (is_nan), not latest
]
DATASET = {"name": "separable 100×5", "digest": "abc123", "source": '{"n": 100}',
           "profile": '{"rows": 100}'}  # fmt: skip


@pytest.fixture
def stores(tmp_path, _migrated_store) -> tuple[str, str]:
    """Two fresh stores with one experiment each (the same name and artifact location)."""
    uris = []
    for name in ("mlflow", "rows"):
        path = tmp_path / name / "mlflow.db"
        path.parent.mkdir()
        shutil.copyfile(_migrated_store, path)
        uri = f"sqlite:///{path}"
        MlflowClient(uri).create_experiment("e", artifact_location=str(tmp_path / "artifacts"))
        uris.append(uri)
    return uris[0], uris[1]


def _by_mlflow(uri: str, name: str, tags, params, metrics, final_tags, dataset, status) -> str:
    client = MlflowClient(uri)
    experiment_id = client.get_experiment_by_name("e").experiment_id
    run_id = client.create_run(experiment_id, start_time=T0, tags=tags, run_name=name).info.run_id
    client.log_batch(
        run_id,
        metrics=[Metric(k, v, t, s) for k, v, t, s in metrics],
        params=[Param(k, v) for k, v in params.items()],
        tags=[RunTag(k, v) for k, v in final_tags.items()],
    )
    if dataset:
        entity = Dataset(dataset["name"], dataset["digest"], "code", dataset["source"],
                         profile=dataset["profile"])  # fmt: skip
        context = [InputTag("mlflow.data.context", "train")]
        client.log_inputs(run_id, datasets=[DatasetInput(entity, tags=context)])
    if status:
        client.set_terminated(run_id, status=status, end_time=T1)
    return run_id


def _by_rows(uri: str, name: str, tags, params, metrics, final_tags, dataset, status) -> str:
    writer = SqliteRuns.open(uri)
    assert writer is not None
    experiment_id = MlflowClient(uri).get_experiment_by_name("e").experiment_id
    run_id, _ = writer.create(experiment_id, name, tags, start_time=T0)
    writer.finish(run_id, params, metrics, final_tags, dataset, status, end_time=T1)
    writer.close()
    return run_id


def _tables(uri: str, run_ids: list[str]) -> dict[str, list[tuple]]:
    """Every table's rows, sorted; run ids, dataset and input uuids named alike in both stores."""
    db = sqlite3.connect(uri[len("sqlite:///") :])
    names = {run_id: f"run{k}" for k, run_id in enumerate(run_ids)}
    for k, (uuid,) in enumerate(db.execute("SELECT dataset_uuid FROM datasets ORDER BY name")):
        names[uuid] = f"dataset{k}"
    for uuid, run_id in db.execute("SELECT input_uuid, destination_id FROM inputs"):
        names[uuid] = f"input of {names[run_id]}"

    def named(value):
        if isinstance(value, str):
            for uuid, name in names.items():
                value = value.replace(uuid, name)
        return value

    tables = {}
    for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        cursor = db.execute(f"SELECT * FROM {table}")
        columns = [c[0] for c in cursor.description]
        keep = [i for i, c in enumerate(columns) if c not in ("creation_time", "last_update_time")]
        rows = [tuple(named(row[i]) for i in keep) for row in cursor]
        tables[table] = sorted(rows, key=repr)
    db.close()
    return tables


def _both(stores, *runs) -> tuple[dict, dict]:
    mlflow_uri, rows_uri = stores
    ids_mlflow = [_by_mlflow(mlflow_uri, *run) for run in runs]
    ids_rows = [_by_rows(rows_uri, *run) for run in runs]
    return _tables(mlflow_uri, ids_mlflow), _tables(rows_uri, ids_rows)


def test_a_run_is_the_rows_mlflow_writes(stores):
    ours, theirs = _both(
        stores, ("r1", TAGS, PARAMS, METRICS, {"done": "yes"}, DATASET, "FINISHED")
    )
    assert ours == theirs
    assert len(ours["metrics"]) == 12  # 14 points: the NaN and a curve point came twice
    latest = {row[0]: row[1:5] for row in ours["latest_metrics"]}
    assert latest["curve"] == (0.5, TS + 1, 2, 0)
    assert latest["tie"] == (5.0, TS, 1, 0)
    assert latest["zero"] == (0.0, TS, 0, 0)
    assert latest["top"][0] == 1.7976931348623157e308
    params = dict((row[0], row[1]) for row in ours["params"])
    assert len(params["long"]) == 6000  # truncated as MLflow truncates
    assert len({row[0]: row[1] for row in ours["tags"]}["long"]) == 9000  # kept at creation


def test_runs_sharing_a_dataset_share_its_row(stores):
    ours, theirs = _both(
        stores,
        ("r1", TAGS, PARAMS, METRICS[:3], {}, DATASET, "FINISHED"),
        ("r2", {"a": "b"}, {"x": "1"}, METRICS[3:], {"mlflow.runName": "renamed"}, DATASET,
         "FAILED"),
        ("r3", {}, {}, [], {}, None, None),  # left RUNNING
    )  # fmt: skip
    assert ours == theirs
    assert len(ours["datasets"]) == 1 and len(ours["inputs"]) == 2
    assert sorted(row[1] for row in ours["runs"]) == ["r1", "r3", "renamed"]
    assert sorted(row[6] for row in ours["runs"]) == ["FAILED", "FINISHED", "RUNNING"]


def test_runs_written_at_once_are_the_rows_mlflow_writes(stores):
    """``write_many``: runs created and closed in one transaction, as each alone."""
    runs = [
        ("r1", TAGS, PARAMS, METRICS[:3], {"done": "yes"}, DATASET, "FINISHED"),
        ("r2", {"a": "b"}, {"x": "1"}, METRICS[3:], {"error": "E: no"}, DATASET, "FAILED"),
        ("r3", {"mlflow.runName": "r3"}, {}, [], {}, None, "FINISHED"),
    ]
    mlflow_uri, rows_uri = stores
    theirs = _tables(mlflow_uri, [_by_mlflow(mlflow_uri, *run) for run in runs])
    writer = SqliteRuns.open(rows_uri)
    experiment_id = MlflowClient(rows_uri).get_experiment_by_name("e").experiment_id
    keys = ("run_name", "tags", "params", "metrics", "final_tags", "dataset_input", "status")
    given = [
        {**dict(zip(keys, run, strict=True)), "start_time": T0, "end_time": T1} for run in runs
    ]
    given[2]["run_id"] = "0" * 32  # an id made before the write is kept
    ids = writer.write_many(experiment_id, given)
    assert ids[2] == "0" * 32 and len(set(ids)) == 3
    assert _tables(rows_uri, ids) == theirs
    refused = [{**given[0], "run_id": None}, {**given[1], "params": {"x": "y" * 9000}}]
    refused[1]["metrics"] = [("m", "x", TS, 0)]
    with pytest.raises(MlflowException, match="Invalid value"):
        writer.write_many(experiment_id, refused)
    assert _tables(rows_uri, ids) == theirs  # the first of them was not written either


def test_what_mlflow_refuses_is_refused_and_nothing_is_written(stores):
    _, rows_uri = stores
    writer = SqliteRuns.open(rows_uri)
    experiment_id = MlflowClient(rows_uri).get_experiment_by_name("e").experiment_id
    run_id, _ = writer.create(experiment_id, "r", {})
    writer.finish(run_id, {"a": "1"}, status=None)
    with pytest.raises(MlflowException, match="Changing param values is not allowed"):
        writer.finish(run_id, {"b": "2", "a": "3"}, [("m", 1.0, TS, 0)])
    with pytest.raises(MlflowException, match='Invalid value "x" for parameter \'metrics'):
        writer.finish(run_id, {}, [("m", "x", TS, 0)])
    with pytest.raises(MlflowException, match="different values"):
        writer.create(experiment_id, "r", {"mlflow.runName": "s"})
    tables = _tables(rows_uri, [run_id])
    assert tables["params"] == [("a", "1", "run0")]  # the failed parts left nothing
    assert tables["metrics"] == [] and tables["latest_metrics"] == []
    assert [row[6] for row in tables["runs"]] == ["RUNNING"]
    MlflowClient(rows_uri).delete_run(run_id)
    with pytest.raises(MlflowException, match="must be in the 'active' state"):
        writer.finish(run_id, {}, [])


def test_a_store_of_another_schema_gets_no_writer(tmp_path, _migrated_store):
    path = tmp_path / "mlflow.db"
    shutil.copyfile(_migrated_store, path)
    assert SqliteRuns.open(f"sqlite:///{path}") is not None
    db = sqlite3.connect(path)
    assert schema_matches(db)
    db.execute("ALTER TABLE metrics ADD COLUMN dataset_uuid VARCHAR(36)")
    db.commit()
    db.close()
    assert SqliteRuns.open(f"sqlite:///{path}") is None
    assert SqliteRuns.open(f"sqlite:///{tmp_path / 'none.db'}") is None  # not made yet
    assert SqliteRuns.open("http://127.0.0.1:5000") is None
    assert not Path(tmp_path / "none.db").exists()


def test_a_locked_store_fails_the_write_whole_and_transiently(stores):
    from lincls.tracking.store import transient

    _, rows_uri = stores
    path = rows_uri[len("sqlite:///") :]
    experiment_id = MlflowClient(rows_uri).get_experiment_by_name("e").experiment_id
    writer = SqliteRuns(path, timeout=0.2)
    run_id, _ = writer.create(experiment_id, "r", {})
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process writing
    with pytest.raises(sqlite3.OperationalError, match="locked") as locked:
        writer.finish(run_id, {"a": "1"}, [("m", 1.0, TS, 0)])
    assert transient(locked.value)  # the client's budget retries it
    holder.execute("ROLLBACK")
    writer.finish(run_id, {"a": "1"}, [("m", 1.0, TS, 0)])  # the connection is usable again
    tables = _tables(rows_uri, [run_id])
    assert tables["params"] == [("a", "1", "run0")]
    assert [row[6] for row in tables["runs"]] == ["FINISHED"]


def test_the_write_ahead_log_is_cut_back_after_a_reader_held_it(stores, monkeypatch):
    """A reader's snapshot keeps checkpoints from reaching the log's end, so the log grows while
    it reads; once it is copied back, the writer's next commit cuts the log to the limit (SQLite
    keeps a log at its peak size unless given ``journal_size_limit``)."""
    from lincls.tracking import sqlite_runs

    monkeypatch.setattr(sqlite_runs, "CHECKPOINT_PAGES", 20)
    monkeypatch.setattr(sqlite_runs, "JOURNAL_LIMIT_BYTES", 64 * 1024)
    _, rows_uri = stores
    writer = SqliteRuns.open(rows_uri)
    experiment_id = MlflowClient(rows_uri).get_experiment_by_name("e").experiment_id
    db = Path(rows_uri.removeprefix("sqlite:///"))
    wal = db.with_name(db.name + "-wal")

    def write(count: int) -> None:
        for k in range(count):
            run = {"run_name": f"r{k}", "tags": TAGS, "params": {f"p{j}": "v" * 200 for j in
                   range(50)}, "metrics": METRICS, "final_tags": {}, "dataset_input": None,
                   "status": "FINISHED", "start_time": T0, "end_time": T1}  # fmt: skip
            writer.write_many(experiment_id, [run])

    reader = sqlite3.connect(db)
    reader.execute("BEGIN")
    reader.execute("SELECT COUNT(*) FROM runs").fetchone()  # holds its snapshot
    write(30)
    grown = wal.stat().st_size
    reader.rollback()
    reader.close()
    write(30)  # a checkpoint reaches the end; the next commit starts the log anew, cut back
    assert grown > 2_000_000  # bytes: ~60 runs' pages
    assert wal.stat().st_size < grown / 5  # the limit, then the last commit's pages (~300 KB)


def test_a_new_run_id_is_a_uuid7_in_time_order():
    """Ids in time order put a sweep's new rows at the end of MLflow's (key, run id) indexes."""
    import time
    import uuid

    from lincls.tracking.run_rows import new_run_id

    ids = []
    for _ in range(5):
        ids.append(new_run_id())
        time.sleep(0.002)  # a millisecond apart at least: the ids' order is the time's
    assert ids == sorted(ids) and len(set(ids)) == 5
    parsed = [uuid.UUID(i) for i in ids]
    assert all(u.version == 7 and u.variant == uuid.RFC_4122 and len(u.hex) == 32 for u in parsed)
    now = time.time_ns() // 1_000_000
    assert 0 <= now - (parsed[-1].int >> 80) < 60_000  # its first 48 bits: the time in ms
    assert len({new_run_id() for _ in range(10_000)}) == 10_000  # 74 random bits a millisecond
