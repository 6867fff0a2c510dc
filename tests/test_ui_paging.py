"""The UI's runs search answered a page at a time (``lincls.experiments.ui_search``): every page
of every search it answers is MLflow's page, on a store made to trip it (ties of value and of
start time, NaN and missing metrics, missing tags, deleted runs, a second experiment); the
searches it does not answer go to MLflow; through the server's app, a page is MLflow's JSON with
a token that MLflow's next page reads."""

from __future__ import annotations

import io
import json
import math
import sqlite3

import pytest
import sqlalchemy
from mlflow.entities import Metric, RunTag
from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore
from mlflow.tracking import MlflowClient
from mlflow.utils.search_utils import SearchUtils

from lincls.experiments import ui_search
from lincls.tracking import sweep_runs
from lincls.tracking.indexes import INDEXES, add_indexes
from lincls.tracking.view import RUNS_FILTER

RATIO = "bound_ratio.tightest"
FILTERS = ("", "tags.`lincls.study` = 'a'", RUNS_FILTER, "tags.dataset != 'separable'")
ORDERS = ([], ["attributes.start_time DESC"], ["attributes.start_time ASC"], ["start_time DESC"],
          [f"metrics.`{RATIO}` DESC"], [f"metrics.`{RATIO}` ASC"])  # fmt: skip


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    """62 runs of experiment ``lincls`` and 5 of another: 4 ratios (ties), every 7th NaN, every
    5th without one; 6 start times (ties); datasets with a forced one, and some runs without the
    tag; two studies; three runs deleted."""
    tmp = tmp_path_factory.mktemp("paging")
    uri = f"sqlite:///{tmp / 'mlflow.db'}"
    client = MlflowClient(uri)
    ours = client.create_experiment("lincls", artifact_location=str(tmp / "artifacts"))
    other = client.create_experiment("other", artifact_location=str(tmp / "other"))
    datasets = ("separable", "orthogonal_game", "noisy")
    for k in range(67):
        experiment = ours if k < 62 else other
        run = client.create_run(experiment, start_time=1_000 + 10 * (k % 6))
        tags = [RunTag("lincls.role", "run" if k % 9 else "sweep"),
                RunTag("lincls.study", "a" if k % 3 else "b")]  # fmt: skip
        if k % 11:
            tags.append(RunTag("dataset", datasets[k % 3]))
        ratio = [0.25, 0.5, 0.5, 1.0][k % 4] if k % 7 else math.nan
        metrics = [] if k % 5 == 0 else [Metric(RATIO, ratio, 0, 0)]
        client.log_batch(run.info.run_id, metrics=metrics, tags=tags)
        if k in (3, 40, 63):
            client.delete_run(run.info.run_id)
    return uri


def execute(engine, sql: str) -> None:
    with engine.begin() as connection:
        connection.exec_driver_sql(sql)


def mlflow_pages(uri: str, request: dict, size: int) -> list[list[str]]:
    """Every page MLflow's own search gives for ``request``, ``size`` runs a page."""
    store = SqlAlchemyStore(uri, "/nonexistent")
    pages, token = [], None
    while True:
        found = store.search_runs([request["experiment_ids"][0]], request.get("filter", ""),
                                  1, size, request.get("order_by", []), token)  # fmt: skip
        pages.append([run.info.run_id for run in found])
        token = found.token
        if not token:
            return pages


def our_pages(engine, request: dict, size: int) -> list[list[str]]:
    search = ui_search.plan(request)
    assert search is not None, request
    pages, offset = [], 0
    with engine.connect() as connection:
        while True:
            ids = ui_search.page_ids(connection, search, offset, size + 1)
            pages.append(ids[:size])
            if len(ids) <= size:
                return pages
            offset += size


@pytest.mark.parametrize("indexed", [False, True])
def test_every_page_of_every_search_it_answers_is_mlflow_s(store, indexed):
    engine = sqlalchemy.create_engine(store)
    if indexed:
        assert add_indexes(lambda sql: execute(engine, sql))
    experiment = MlflowClient(store).get_experiment_by_name("lincls").experiment_id
    compared = 0
    for text in FILTERS:
        for order in ORDERS:
            request = {"experiment_ids": [experiment], "filter": text, "order_by": order}
            for size in (5, 100):
                theirs = mlflow_pages(store, request, size)
                assert our_pages(engine, request, size) == theirs, (text, order, size)
                compared += sum(map(len, theirs))
    assert compared > 1_000  # the pages compared hold runs, not only empty answers
    engine.dispose()


def test_the_indexes_are_made_once_and_used_for_a_page(store):
    db = store[len("sqlite:///") :]
    engine = sqlalchemy.create_engine(store)
    with engine.begin() as connection:
        for name in INDEXES:
            connection.exec_driver_sql(f"DROP INDEX IF EXISTS {name}")

    assert add_indexes(lambda sql: execute(engine, sql))
    assert add_indexes(lambda sql: execute(engine, sql))  # the second time, a no-op
    with sqlite3.connect(db) as plain:
        made = {
            row[0]
            for row in plain.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'lincls%'"
            )
        }
        assert made == set(INDEXES)
        search = ui_search.plan({"experiment_ids": ["1"], "filter": RUNS_FILTER,
                                 "order_by": [f"metrics.`{RATIO}` DESC"]})  # fmt: skip
        source, where, order, values = ui_search.segments(search)[0]
        sql = f"SELECT r.run_uuid FROM {source} WHERE {where} ORDER BY {order} LIMIT 10"
        for name, value in values.items():
            sql = sql.replace(f":{name}", repr(int(value) if isinstance(value, bool) else value))
        steps = " / ".join(row[3] for row in plain.execute(f"EXPLAIN QUERY PLAN {sql}"))
    assert "lincls_latest_metrics_key_value" in steps and "RIGHT PART OF ORDER BY" in steps, steps
    with sqlite3.connect(db) as plain:  # a sweep's RUNNING runs: from their index alone
        running = sweep_runs.RUNNING_SQL.format(parent=sweep_runs.OF_PARENT_SQL)
        plan = [
            row[3]
            for row in plain.execute(f"EXPLAIN QUERY PLAN {running}", ("h", "p", "a", "b", 1))
        ]
    assert plan[0] == "SEARCH r USING INDEX lincls_runs_running (experiment_id=?)", plan
    engine.dispose()

    def refuse(sql):
        raise sqlite3.OperationalError("attempt to write a readonly database")

    assert add_indexes(refuse) is False  # a store that cannot take them is read as before


@pytest.mark.parametrize(
    "request_",
    [
        {"experiment_ids": ["1", "2"]},
        {"experiment_ids": ["1"], "run_view_type": "ALL"},
        {"experiment_ids": ["1"], "filter": "metrics.`bound_ratio.tightest` > 0.5"},
        {"experiment_ids": ["1"], "filter": "tags.dataset LIKE '%game'"},
        {"experiment_ids": ["1"], "filter": "attributes.status = 'FINISHED'"},
        {"experiment_ids": ["1"], "order_by": ["params.seed DESC"]},
        {"experiment_ids": ["1"], "order_by": ["metrics.a DESC", "metrics.b DESC"]},
        {"experiment_ids": ["1"], "filter": "tags.x = "},
    ],
)
def test_a_search_it_does_not_answer_goes_to_mlflow(request_):
    assert ui_search.plan(request_) is None


def test_through_the_app_a_page_is_mlflow_s_json_and_its_token_reads_the_next(store):
    """The app is MLflow's server app in this process, on the fixture's store."""
    from mlflow.server import handlers

    experiment = MlflowClient(store).get_experiment_by_name("lincls").experiment_id
    engine = sqlalchemy.create_engine(store)
    handlers._tracking_store = SqlAlchemyStore(store, "/nonexistent")
    try:
        from mlflow.server import app

        def ask(app_, request):
            body = json.dumps(request).encode()
            environ = {"PATH_INFO": "/ajax-api/2.0/mlflow/runs/search", "REQUEST_METHOD": "POST",
                       "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(body)),
                       "wsgi.input": io.BytesIO(body), "SERVER_NAME": "x", "SERVER_PORT": "80",
                       "wsgi.url_scheme": "http"}  # fmt: skip
            status = []
            answered = ui_search.answer(app_.wsgi_app, environ, lambda s, h: status.append(s),
                                        body, engine)  # fmt: skip
            return status[0], json.loads(b"".join(answered))

        request = {"experiment_ids": [experiment], "filter": RUNS_FILTER, "max_results": 5,
                   "order_by": [f"metrics.`{RATIO}` DESC"]}  # fmt: skip
        theirs = mlflow_pages(store, request, 5)
        seen, token = [], None
        while True:
            status, page = ask(app, {**request, **({"page_token": token} if token else {})})
            assert status.startswith("200")
            seen.append([run["info"]["run_id"] for run in page.get("runs", [])])
            ratios = [run["data"].get("metrics", []) for run in page.get("runs", [])]
            assert all(isinstance(metrics, list) for metrics in ratios)  # MLflow's JSON shape
            token = page.get("next_page_token")
            if not token:
                break
            assert SearchUtils.parse_start_offset_from_page_token(token) == 5 * len(seen)
        assert seen == theirs
        # no run matches: an empty answer, as MLflow gives it
        status, page = ask(app, {**request, "filter": "tags.dataset = 'none such'"})
        assert (status, page) == ("200 OK", {})
    finally:
        handlers._tracking_store = None
        engine.dispose()
