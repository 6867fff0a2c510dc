"""Runs written as PostgreSQL rows (``tracking.postgres_runs``) are the rows MLflow's own store
writes, and sweeps writing at once to one PostgreSQL database lose and duplicate nothing.

A throwaway PostgreSQL server (``tests/clusters/postgres.py``) holds a pair of databases per
case, each made by MLflow: the same runs go through ``MlflowClient`` into one and through the
writer into the other, and every table of the two is compared row by row (only generated ids
named alike), as ``tests/test_sqlite_runs.py`` compares two SQLite files. The reader
(``lincls.tracking.reader``) is compared with ``mlflow.search_runs`` on a 1,200-run database.
"""

from __future__ import annotations

import itertools
import subprocess
import time
from contextlib import ExitStack
from pathlib import Path

import pytest
from clusters import tail_of
from mlflow.tracking import MlflowClient
from test_clusters import check_store, cli_env, query, sweep_command
from test_reader import RUNS, assert_same, by_mlflow, write_runs
from test_sqlite_runs import DATASET, METRICS, PARAMS, T0, T1, TAGS, TS, _by_mlflow

from lincls import tracking
from lincls.tracking import reader
from lincls.tracking.postgres_runs import PostgresRuns, open_rows

psycopg = pytest.importorskip("psycopg", reason="the `postgres` extra is not installed")
pytestmark = pytest.mark.slow
_numbers = itertools.count()
# PostgreSQL holds a tag value to its column's 8,000 characters (SQLite does not: MLflow's own
# write of SQLite's 9,000 fails here too)
TAGS = {**TAGS, "long": "t" * 8000}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A PostgreSQL server for the module; yields a maker of fresh MLflow databases."""
    artifacts = (tmp_path_factory.mktemp("artifacts")).as_uri()
    from clusters import Unavailable
    from clusters.postgres import postgres_server

    try:
        context = postgres_server()
        uri = context.__enter__()
    except Unavailable as exc:
        pytest.skip(str(exc))
    base = uri.rsplit("/", 1)[0]

    def database(experiment: str | None = "e", tables: bool = True) -> str:
        """A new database; MLflow's tables made in it (and ``experiment``) when ``tables``."""
        name = f"db{next(_numbers)}"
        with psycopg.connect(uri, autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {name}")
        made = f"{base}/{name}"
        if not tables:
            return made
        client = MlflowClient(made)  # MLflow makes and migrates its tables
        if experiment is not None:
            client.create_experiment(experiment, artifact_location=artifacts)
        else:
            client.search_experiments()
        return made

    try:
        yield database
    finally:
        context.__exit__(None, None, None)


def _by_rows(uri: str, name: str, tags, params, metrics, final_tags, dataset, status) -> str:
    writer = open_rows(uri)
    assert isinstance(writer, PostgresRuns)
    experiment_id = MlflowClient(uri).get_experiment_by_name("e").experiment_id
    run_id, _ = writer.create(experiment_id, name, tags, start_time=T0)
    writer.finish(run_id, params, metrics, final_tags, dataset, status, end_time=T1)
    writer.close()
    return run_id


def _tables(uri: str, run_ids: list[str]) -> dict[str, list[tuple]]:
    """Every table's rows, sorted; run ids, dataset and input uuids named alike in both."""
    with psycopg.connect(uri) as db:
        names = {run_id: f"run{k}" for k, run_id in enumerate(run_ids)}
        rows = db.execute("SELECT dataset_uuid FROM datasets ORDER BY name").fetchall()
        for k, (uuid,) in enumerate(rows):
            names[uuid] = f"dataset{k}"
        for uuid, run_id in db.execute("SELECT input_uuid, destination_id FROM inputs"):
            names[uuid] = f"input of {names[run_id]}"

        def named(value):
            if isinstance(value, str):
                for uuid, name in names.items():
                    value = value.replace(uuid, name)
            return value

        tables = {}
        listed = db.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchall()
        for (table,) in listed:
            cursor = db.execute(f'SELECT * FROM "{table}"')
            columns = [c.name for c in cursor.description]
            skip = ("creation_time", "last_update_time")
            keep = [i for i, c in enumerate(columns) if c not in skip]
            tables[table] = sorted((tuple(named(row[i]) for i in keep) for row in cursor), key=repr)
    return tables


def _both(server, *runs) -> tuple[dict, dict]:
    mlflow_uri, rows_uri = server(), server()
    ids_mlflow = [_by_mlflow(mlflow_uri, *run) for run in runs]
    ids_rows = [_by_rows(rows_uri, *run) for run in runs]
    return _tables(mlflow_uri, ids_mlflow), _tables(rows_uri, ids_rows)


def test_a_run_is_the_rows_mlflow_writes(server):
    ours, theirs = _both(
        server, ("r1", TAGS, PARAMS, METRICS, {"done": "yes"}, DATASET, "FINISHED")
    )
    assert ours == theirs
    assert len(ours["metrics"]) == 12  # 14 points: the NaN and a curve point came twice
    latest = {row[0]: row[1:5] for row in ours["latest_metrics"]}
    assert latest["curve"] == (0.5, TS + 1, 2, False)
    assert latest["tie"] == (5.0, TS, 1, False)
    assert latest["top"][0] == 1.7976931348623157e308
    assert len({row[0]: row[1] for row in ours["params"]}["long"]) == 6000


def test_runs_sharing_a_dataset_share_its_row(server):
    ours, theirs = _both(
        server,
        ("r1", TAGS, PARAMS, METRICS[:3], {}, DATASET, "FINISHED"),
        ("r2", {"a": "b"}, {"x": "1"}, METRICS[3:], {"mlflow.runName": "renamed"}, DATASET,
         "FAILED"),
        ("r3", {}, {}, [], {}, None, None),  # left RUNNING
    )  # fmt: skip
    assert ours == theirs
    assert len(ours["datasets"]) == 1 and len(ours["inputs"]) == 2
    assert sorted(row[6] for row in ours["runs"]) == ["FAILED", "FINISHED", "RUNNING"]


def test_a_failed_write_leaves_nothing_and_the_connection_usable(server, monkeypatch):
    from mlflow.exceptions import MlflowException

    from lincls.tracking import run_rows

    uri = server()
    writer = open_rows(uri)
    experiment_id = MlflowClient(uri).get_experiment_by_name("e").experiment_id
    run_id, _ = writer.create(experiment_id, "r", {})
    writer.finish(run_id, {"a": "1"}, status=None)
    with pytest.raises(MlflowException, match="Changing param values is not allowed"):
        writer.finish(run_id, {"b": "2", "a": "3"}, [("m", 1.0, TS, 0)])
    with monkeypatch.context() as patch:  # the database fails half-way through the write
        patch.setattr(run_rows, "_upsert_tags", lambda db, *_: db.execute("SELECT 1 / 0"))
        with pytest.raises(psycopg.errors.DivisionByZero):
            writer.finish(run_id, {"b": "2"}, [("m", 1.0, TS, 0)], {"t": "x"})
    tables = _tables(uri, [run_id])
    assert tables["params"] == [("a", "1", "run0")] and tables["metrics"] == []
    assert [row[6] for row in tables["runs"]] == ["RUNNING"]
    writer.finish(run_id, {"b": "2"}, [("m", 1.0, TS, 0)])
    assert sorted(_tables(uri, [run_id])["params"]) == [("a", "1", "run0"), ("b", "2", "run0")]


def test_a_lost_connection_fails_transiently_and_the_retry_connects_again(server):
    from lincls.tracking.store import transient

    uri = server()
    writer = open_rows(uri)
    experiment_id = MlflowClient(uri).get_experiment_by_name("e").experiment_id
    run_id, _ = writer.create(experiment_id, "r", {})
    pid = writer.connection().raw.info.backend_pid
    with psycopg.connect(uri, autocommit=True) as other:  # the server drops the connection
        other.execute("SELECT pg_terminate_backend(%s)", (pid,))
    with pytest.raises(psycopg.OperationalError) as lost:
        writer.finish(run_id, {"a": "1"}, [("m", 1.0, TS, 0)])
    assert transient(lost.value)  # the client's budget retries it
    writer.finish(run_id, {"a": "1"}, [("m", 1.0, TS, 0)])
    assert writer.connection().raw.info.backend_pid != pid
    tables = _tables(uri, [run_id])
    assert tables["params"] == [("a", "1", "run0")]
    assert [row[6] for row in tables["runs"]] == ["FINISHED"]


def test_open_experiment_writes_a_postgresql_store_as_rows(server, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # MLflow's default artifact root of a database store: ./mlruns
    uri = server(experiment=None)
    tracking._OPENED.clear()
    try:
        client, experiment_id = tracking.open_experiment(uri, "pg", retry_seconds=5)
        assert isinstance(tracking._rows(client), PostgresRuns)
        run_id = tracking.start_run(client, experiment_id, "r", {"lincls.role": "run"})
        # a plain path, written as files where MLflow's log_text puts them, without its calls
        artifact_uri = MlflowClient(uri).get_run(run_id).info.artifact_uri
        assert artifact_uri.startswith(str(tmp_path / "mlruns")), artifact_uri
        monkeypatch.setattr(type(client.client), "log_text", None)  # MLflow's call would fail
        tracking.log_texts(client, run_id, {"dataset/columns.json": '["x0"]'})
        tracking.end_run(client, run_id)
        assert MlflowClient(uri).get_run(run_id).info.status == "FINISHED"
        monkeypatch.undo()
        [listed] = MlflowClient(uri).list_artifacts(run_id, "dataset")
        assert listed.path == "dataset/columns.json"
        assert (Path(artifact_uri) / "dataset" / "columns.json").read_text() == '["x0"]'
    finally:
        tracking._OPENED.clear()
    with psycopg.connect(uri, autocommit=True) as db:
        db.execute("ALTER TABLE metrics ADD COLUMN extra INTEGER")
    assert open_rows(uri) is None  # another schema: MLflow's calls
    assert open_rows("postgresql+psycopg://nobody@127.0.0.1:1/x") is None


def test_the_reader_equals_search_runs_on_postgresql(server):
    uri = server(experiment=None)
    client = MlflowClient(uri)
    experiment_id = client.create_experiment("lincls", artifact_location="/artifacts")
    other_id = client.create_experiment("other", artifact_location="/elsewhere")
    writer = open_rows(uri)
    ids = write_runs(writer, experiment_id, other_id)
    writer.close()
    client.delete_run(ids[10])
    ours = reader.runs(uri, status=None, role=None)
    assert len(ours) == RUNS - 1
    assert set(ours["status"]) == {"FINISHED", "FAILED", "KILLED", "RUNNING"}
    assert_same(ours, by_mlflow(uri))
    filtered = reader.runs(uri, study="s1", learner="pa", dataset="noisy")
    assert len(filtered) > 10
    assert_same(
        filtered,
        by_mlflow(
            uri,
            "tags.`lincls.study` = 's1' and tags.learner = 'pa' and tags.dataset = 'noisy' "
            "and tags.`lincls.role` = 'run' and attributes.status = 'FINISHED'",
        ),
    )


def _sweeps_at_once(uri: str, studies: dict[str, tuple[str, int]], tmp_path, timeout: float):
    """One sweep per study (name → learner.lr, seeds) on the store ``uri``, all started before
    any is waited for; each must exit 0 (its log's tail otherwise)."""
    with ExitStack() as stack:
        sweeps = {}
        for study, (lr, n) in studies.items():
            args = [f"study={study}", f"learner.lr={lr}", f"seed=range(0,{n})",
                    f"tracking.uri={uri}"]  # fmt: skip
            log = stack.enter_context(open(tmp_path / f"{study}.log", "wb"))
            sweeps[study] = subprocess.Popen(sweep_command(args, tmp_path, study), cwd=tmp_path,
                                             env=cli_env(), stdout=subprocess.DEVNULL,
                                             stderr=log)  # fmt: skip
            stack.callback(sweeps[study].kill)  # a no-op once it has exited
        for study, sweep in sweeps.items():
            assert sweep.wait(timeout=timeout) == 0, tail_of(tmp_path / f"{study}.log")


@pytest.mark.timeout(1200)
def test_four_sweeps_at_once_on_one_postgresql_database_lose_and_duplicate_nothing(
    server, tmp_path
):
    uri = server(experiment=None)
    studies = {f"pg{k}": (str(float(k + 1)), 30) for k in range(4)}
    began = time.monotonic()
    _sweeps_at_once(uri, studies, tmp_path, timeout=900)
    per_hash = check_store(lambda: psycopg.connect(uri), studies)
    assert len(per_hash) == 120
    assert query(lambda: psycopg.connect(uri), "SELECT COUNT(*) FROM datasets")[0][0] >= 1
    print(f"\n[postgres] 4 sweeps × 30 configs as rows: {time.monotonic() - began:.0f} s")


@pytest.mark.timeout(900)
def test_three_sweeps_started_at_once_on_a_new_postgresql_database_all_finish(server, tmp_path):
    """A database with no tables yet: the first sweep makes MLflow's tables while the others
    wait for it (they used to break PostgreSQL's unique index of type names, making them too)."""
    uri = server(tables=False)
    studies = {f"new{k}": (str(float(k + 1)), 3) for k in range(3)}
    _sweeps_at_once(uri, studies, tmp_path, timeout=600)
    assert len(check_store(lambda: psycopg.connect(uri), studies)) == 9
