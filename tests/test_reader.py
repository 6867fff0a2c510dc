"""The reader (``tracking.reader``) gives the table ``mlflow.search_runs`` gives, value for value.

A store of 1,200 runs (written as rows: seconds, not minutes) holds three studies, sweeps'
parent runs and their children, every status, NaN and infinite metrics, curves, params and tags
some runs lack, two deleted runs and a run of another experiment; the reader's table of every
run, and of runs filtered by study, learner, dataset and status, must equal ``search_runs``'.
"""

from __future__ import annotations

import math
import shutil
import sqlite3

import mlflow
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient
from mlflow.tracking._tracking_service.utils import _use_tracking_uri

from lincls.errors import LinclsInputError
from lincls.tracking import long_rows, reader
from lincls.tracking.indexes import TAG_INDEXES
from lincls.tracking.sqlite_runs import SqliteRuns

RUNS = 1200
T0 = 1_700_000_000_000
STATUSES = ("FINISHED", "FINISHED", "FINISHED", "FAILED", "KILLED", None)  # None: left RUNNING
LEARNERS = ("perceptron", "romma", "pa")
DATASETS = ("separable", "noisy")


def write_runs(writer, experiment_id: str, other_experiment_id: str, runs: int = RUNS) -> list:
    """``runs`` runs through ``writer`` (``SqliteRuns`` or its PostgreSQL form); their ids."""
    ids = []
    parents = {}
    for study in ("s0", "s1", "s2"):
        tags = {"lincls.study": study, "lincls.role": "sweep", "mlflow.user": "ada"}
        parent, _ = writer.create(experiment_id, f"sweep {study}", tags, start_time=T0)
        writer.finish(parent, {"study": study}, [("runs", 400.0, T0, 0)], {}, None, "FINISHED",
                      end_time=T0 + 10)  # fmt: skip
        parents[study] = parent
        ids.append(parent)
    for k in range(runs - len(ids)):
        study = f"s{k % 3}"
        learner, dataset = LEARNERS[k % 3 if k % 7 else (k + 1) % 3], DATASETS[k % 2]
        tags = {
            "lincls.study": study,
            "lincls.role": "run",
            "mlflow.parentRunId": parents[study],
            "learner": learner,
            "dataset": dataset,
        }
        if k % 5 == 0:
            tags["note"] = f"ünïcode γ={k}"
        start = T0 + 1000 + k // 2  # pairs share a start time: ordered by run id then
        run_id, _ = writer.create(experiment_id, None if k % 11 else f"run {k}", tags, start)
        params = {"learner.name": learner, "seed": str(k), "dataset.n": str(100 + k % 13)}
        if k % 4 == 0:
            params["learner.lr"] = str(0.5 * (k % 3 + 1))
        ts = T0 + 5000 + k
        metrics = [
            ("mistakes", float(k % 17), ts, 0),
            ("ratio", math.nan if k % 9 == 0 else k / 7, ts, 0),
            ("top", math.inf if k % 10 == 0 else 1.0, ts, 0),
            ("bottom", -math.inf, ts, 0),
            ("curve", 3.0, ts, 2),
            ("curve", 1.0, ts, 0),
            ("curve", 0.5, ts + 1, 2),  # the latest: a later timestamp at the same step
            ("curve", 2.0, ts + 2, 1),
        ]
        if k % 6 == 0:
            metrics.append(("only_some", -float(k), ts, 0))
        status = STATUSES[k % len(STATUSES)]
        dataset_input = {"name": dataset, "digest": f"d{k % 2}", "source": "{}", "profile": "{}"}
        writer.finish(run_id, params, metrics, {"done": str(k)}, dataset_input, status,
                      end_time=ts + 3)  # fmt: skip
        ids.append(run_id)
    other, _ = writer.create(other_experiment_id, "elsewhere", {"lincls.study": "s0"}, T0)
    writer.finish(other, {"seed": "0"}, [("mistakes", 1.0, T0, 0)], {}, None, "FINISHED", T0)
    return ids


def by_mlflow(uri: str, filter_string: str = "", experiment: str = "lincls") -> pd.DataFrame:
    """``mlflow.search_runs`` over every run of ``experiment`` matching ``filter_string``."""
    experiment_id = MlflowClient(uri).get_experiment_by_name(experiment).experiment_id
    with _use_tracking_uri(uri):
        return mlflow.search_runs([experiment_id], filter_string=filter_string, max_results=10**6)


def assert_same(ours: pd.DataFrame, theirs: pd.DataFrame) -> None:
    """Equal tables: the same columns (in any order: search_runs' follow a set's), the same
    rows in the same order, the same values and dtypes, exactly."""
    assert sorted(ours.columns) == sorted(theirs.columns)
    pd.testing.assert_frame_equal(
        ours.reset_index(drop=True),
        theirs[list(ours.columns)].reset_index(drop=True),
        check_exact=True,
    )


@pytest.fixture(scope="module")
def big_store(tmp_path_factory, _migrated_store) -> str:
    """A store of 1,200 runs written as rows, two of them then deleted."""
    path = tmp_path_factory.mktemp("reader") / "mlflow.db"
    shutil.copyfile(_migrated_store, path)
    uri = f"sqlite:///{path}"
    client = MlflowClient(uri)
    experiment_id = client.create_experiment("lincls", artifact_location="/artifacts")
    other_id = client.create_experiment("other", artifact_location="/elsewhere")
    writer = SqliteRuns.open(uri)
    ids = write_runs(writer, experiment_id, other_id)
    writer.close()
    client.delete_run(ids[10])
    client.delete_run(ids[11])
    return uri


def test_the_reader_equals_search_runs_on_every_run(big_store):
    ours = reader.runs(big_store, status=None, role=None)
    theirs = by_mlflow(big_store)
    assert len(ours) == RUNS - 2  # the deleted runs and the other experiment's are left out
    assert {"params.learner.lr", "metrics.only_some", "tags.note", "tags.mlflow.parentRunId",
            "start_time", "end_time"} <= set(ours.columns)  # fmt: skip
    assert set(ours["status"]) == {"FINISHED", "FAILED", "KILLED", "RUNNING"}
    assert ours["metrics.top"].max() == 1.7976931348623157e308  # MLflow's stored +inf
    assert ours["metrics.ratio"].isna().sum() == theirs["metrics.ratio"].isna().sum() > 100
    assert (
        ours["metrics.curve"].dropna() == 0.5
    ).sum() == RUNS - 5  # the latest: greatest (step, timestamp)
    assert_same(ours, theirs)


def test_one_differing_value_is_caught(big_store):
    theirs = by_mlflow(big_store)
    for column, value in (("params.seed", "x"), ("metrics.ratio", 0.25), ("tags.done", None)):
        changed = theirs.copy()
        changed.loc[len(changed) // 2, column] = value
        with pytest.raises(AssertionError):
            assert_same(reader.runs(big_store, status=None, role=None), changed)


@pytest.mark.parametrize(
    ("filters", "filter_string"),
    [
        ({"study": "s1"}, "tags.`lincls.study` = 's1' and tags.`lincls.role` = 'run' "
         "and attributes.status = 'FINISHED'"),
        ({"study": "s2", "learner": "pa", "dataset": "noisy", "status": "RUNNING"},
         "tags.`lincls.study` = 's2' and tags.learner = 'pa' and tags.dataset = 'noisy' "
         "and tags.`lincls.role` = 'run' and attributes.status = 'RUNNING'"),
        ({"role": "sweep", "status": None}, "tags.`lincls.role` = 'sweep'"),
    ],
)  # fmt: skip
def test_filters_equal_search_runs_filters(big_store, filters, filter_string):
    ours = reader.runs(big_store, **filters)
    assert len(ours) > 2
    assert_same(ours, by_mlflow(big_store, filter_string))


def _copy(big_store: str, path) -> str:
    """A copy of ``big_store`` at ``path`` (no connection of this process holds it)."""
    with sqlite3.connect(big_store.removeprefix("sqlite:///")) as source:
        with sqlite3.connect(path) as target:
            source.backup(target)
    target.close()
    source.close()
    return f"sqlite:///{path}"


@pytest.mark.parametrize("share", [0.0, 2.0])
def test_whole_tables_and_runs_by_id_read_the_same(big_store, tmp_path, monkeypatch, share):
    """0: every long table read whole as Arrow (the ADBC driver), in batches, and cut to the
    chosen runs; 2: the chosen runs' rows read by id, as tuples, a chunk of ids a query; both
    equal ``search_runs``. The reader reads a copy no connection of this process holds (MLflow's
    holds ``big_store``: the driver is not used on a file open here)."""
    copy = _copy(big_store, tmp_path / "mlflow.db")
    whole = long_rows.whole_tables
    seen: list = []
    monkeypatch.setattr(reader, "WHOLE_TABLE_SHARE", share)
    monkeypatch.setattr(long_rows, "whole_tables", lambda *a: seen.append(whole(*a)) or seen[-1])
    monkeypatch.setattr(long_rows, "IDS_PER_QUERY", 50)  # ~400 runs: 8 queries a table by id
    monkeypatch.setattr(long_rows, "BATCH_ROWS", 1000)  # a table in many batches
    filter_string = "tags.`lincls.study` = 's2' and tags.`lincls.role` = 'run'"
    ours = reader.runs(copy, study="s2", status=None, curves=("curve",))
    assert_same(ours.drop(columns="curves.curve"), by_mlflow(big_store, filter_string))
    # more runs than IDS_PER_QUERY: the curves of every run of the metric, kept by id
    assert all(c == [(0, 1.0), (1, 2.0), (2, 3.0), (2, 0.5)] for c in ours["curves.curve"])
    assert [found is not None for found in seen] == ([True] if share < 1 else [])


@pytest.mark.parametrize("indexed", [True, False])
@pytest.mark.parametrize(
    ("filters", "filter_string"),
    [
        ({"study": "s1"}, "tags.`lincls.study` = 's1' and tags.`lincls.role` = 'run' "
         "and attributes.status = 'FINISHED'"),
        ({"role": "sweep", "status": None}, "tags.`lincls.role` = 'sweep'"),
        ({"study": "s0", "status": "KILLED"}, "tags.`lincls.study` = 's0' and "
         "tags.`lincls.role` = 'run' and attributes.status = 'KILLED'"),
        ({"study": "s2", "learner": "pa"}, "tags.`lincls.study` = 's2' and tags.learner = 'pa' "
         "and tags.`lincls.role` = 'run' and attributes.status = 'FINISHED'"),
        ({"study": "s1", "status": "FAILED", "role": "sweep"},
         "tags.`lincls.study` = 's1' and tags.`lincls.role` = 'sweep' "
         "and attributes.status = 'FAILED'"),
    ],
)  # fmt: skip
def test_runs_found_by_their_tags_index_are_the_runs_sql_finds(
    big_store, tmp_path, monkeypatch, indexed, filters, filter_string
):
    """With the tags' own indexes (``indexes.TAG_INDEXES``) the driver lists the chosen runs;
    without them, or for a tag that has none (``learner``), SQL asks of each run: the same
    table as ``search_runs`` either way, the empty one included."""
    copy = _copy(big_store, tmp_path / "mlflow.db")
    if not indexed:
        with sqlite3.connect(copy.removeprefix("sqlite:///")) as db:
            for name in TAG_INDEXES.values():
                db.execute(f"DROP INDEX {name}")
        db.close()
    info = long_rows.whole_info
    seen: list = []
    monkeypatch.setattr(long_rows, "whole_info", lambda *a: seen.append(info(*a)) or seen[-1])
    ours = reader.runs(copy, **filters)
    theirs = by_mlflow(big_store, filter_string)
    if theirs.empty:
        assert list(ours.columns) == reader.INFO and ours.empty
    else:
        assert_same(ours, theirs)
    assert [found is not None for found in seen] == [indexed and "learner" not in filters]


def test_curves_are_every_logged_point(big_store):
    ours = reader.runs(big_store, study="s0", curves=("curve", "ratio"))
    client = MlflowClient(big_store)
    for _, run in ours.iloc[:20].iterrows():
        history = client.get_metric_history(run["run_id"], "curve")
        points = sorted((p.step, p.timestamp, p.value) for p in history)
        assert run["curves.curve"] == [(s, v) for s, _, v in points]
        assert run["curves.curve"] == [(0, 1.0), (1, 2.0), (2, 3.0), (2, 0.5)]
    nan_runs = [c for c in ours["curves.ratio"] if math.isnan(c[0][1])]
    assert len(nan_runs) == int(ours["metrics.ratio"].isna().sum()) > 0


def test_another_schema_revision_is_read_by_mlflow(big_store, tmp_path, monkeypatch):
    monkeypatch.setattr(reader, "SCHEMA_REVISION", "0123456789ab")
    calls, search_runs = [], mlflow.search_runs
    monkeypatch.setattr(mlflow, "search_runs", lambda *a, **k: calls.append(k) or search_runs(
        *a, **k))  # fmt: skip
    ours = reader.runs(big_store, study="s1", learner="pa")
    assert calls == [
        {"filter_string": "tags.`learner` = 'pa' and tags.`lincls.role` = 'run' and "
         "tags.`lincls.study` = 's1' and attributes.status = 'FINISHED'",
         "max_results": 2**31 - 1}
    ]  # fmt: skip
    assert len(ours) > 10 and set(ours["tags.learner"]) == {"pa"}


def test_an_empty_selection_has_search_runs_columns(big_store):
    ours = reader.runs(big_store, study="s0", status="KILLED")  # a known study, no such run
    assert list(ours.columns) == reader.INFO and ours.empty
    theirs = by_mlflow(big_store, "tags.`lincls.study` = 's0' and attributes.status = 'KILLED'")
    assert sorted(theirs.columns) == sorted(reader.INFO)


def test_a_file_of_another_kind_is_not_read_with_sql(tmp_path):
    path = tmp_path / "other.db"
    sqlite3.connect(path).execute("CREATE TABLE t (x)").connection.commit()
    assert reader.engine_for(f"sqlite:///{path}") is None
    assert reader.engine_for("http://127.0.0.1:5000") is None
    with pytest.raises(LinclsInputError, match=r"^uri: no MLflow store at "):
        reader.runs(f"sqlite:///{tmp_path / 'none.db'}")
    assert not (tmp_path / "none.db").exists()


@pytest.mark.parametrize(
    "tags",
    [{"lincls.role": "sweep"}, {"lincls.study": "s1", "lincls.role": "run"}, {"lincls.study": "x"}],
)
def test_the_report_reads_the_table_mlflow_runs_give(big_store, tags):
    from lincls.experiments.report.collect import read_runs, runs_frame, search_all

    client = MlflowClient(big_store)
    experiment_id = client.get_experiment_by_name("lincls").experiment_id
    filter_string = " and ".join(f"tags.`{k}` = '{v}'" for k, v in tags.items())
    theirs = runs_frame(search_all(client, experiment_id, filter_string))
    ours = read_runs(client, experiment_id, tags)
    assert list(ours.columns) == list(theirs.columns)
    pd.testing.assert_frame_equal(ours, theirs, check_exact=True)
    # s1: runs k = 1, 4, … of 1,197, less the deleted one
    assert len(ours) == {"sweep": 3, "s1": 398, "x": 0}[tags.get("lincls.study", "sweep")]


def test_a_tag_no_run_has_lists_no_run_through_its_index(big_store, tmp_path, monkeypatch):
    """No row of the tag (the driver then types its empty column int64): no run, no error."""
    copy = _copy(big_store, tmp_path / "mlflow.db")
    info = long_rows.whole_info
    seen: list = []
    monkeypatch.setattr(long_rows, "whole_info", lambda *a: seen.append(info(*a)) or seen[-1])
    engine = reader.engine_for(copy)
    try:
        experiment_id = reader.experiment_id_of(engine, "lincls")
        for tags in ({"lincls.study": "nope"}, {"lincls.role": "nope", "lincls.study": "s1"}):
            rows = reader.read_rows(engine, experiment_id, tags)
            assert rows.info.empty and list(rows.info.columns) == reader.INFO_ROWS
    finally:
        engine.dispose()
    assert [found is not None and found.empty for found in seen] == [True, True]


def test_the_reports_table_is_the_same_from_runs_read_in_either_order(big_store):
    """``rows_frame`` puts runs read newest first in the report's order (taking every column),
    and keeps the columns of runs read in it (``oldest_first``) as they are: the same table."""
    from lincls.experiments.report.collect import rows_frame

    engine = reader.engine_for(big_store)
    try:
        experiment_id = reader.experiment_id_of(engine, "lincls")
        chosen = {"lincls.study": "s2"}
        newest, oldest = (
            rows_frame(reader.read_rows(engine, experiment_id, chosen, oldest_first=first))
            for first in (False, True)
        )
        read = reader.read_rows(engine, experiment_id, chosen)
    finally:
        engine.dispose()
    assert read.info["start_ms"].is_monotonic_decreasing and len(read.info) > 300
    pd.testing.assert_frame_equal(newest, oldest, check_exact=True)
    assert oldest["start_time"].is_monotonic_increasing
