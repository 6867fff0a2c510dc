"""A run's record (``lincls.tracking.record``): what goes in it and what stays an MLflow row, the
values read back as the rows they stand for (latest metrics, histories, exactly, NaN and ±inf
as MLflow stores them), a record longer than a tag, the frozen dictionary, the two readers
(SQL and MLflow's client) giving one table, and the UI serving a run's figure and histogram."""

from __future__ import annotations

import hashlib
import json
import math
import shutil

import pytest
from conftest import compose_config
from test_reader import assert_same

from lincls import runner
from lincls.figures import FIGURE_FILE, draw_run_figure
from lincls.tracking import reader, record
from lincls.tracking.record import (
    LARGEST,
    RECORD_KEYS,
    RECORD_TAG,
    STORED_METRICS,
    STORED_TAGS,
    Record,
    written,
)
from lincls.tracking.record_dictionary import DICTIONARY

# Format 1's dictionary: a record is inflated with the one it was deflated with, so it never
# changes (another dictionary is another format)
DICTIONARY_SHA256 = "77e034b399e908530f48cc1bac17226c84bb446188df8c1841290430b60975c2"
CURVES = ["cumulative_mistakes", "lemma.progress", "mistakes_per_pass", "mistakes", "fit_seconds"]


def test_a_run_writes_the_views_values_as_rows_and_the_rest_in_its_record():
    metrics = {"mistakes": 20.0, "bound.tightest": 73.3, "bound_ratio.tightest": 0.27,
               "margin": 0.1, "gone": math.inf, "nan": math.nan, "support_size": 4.0}  # fmt: skip
    tags = {
        "bound.tightest": "freund_schapire",
        "bound_violated": "false",
        "ratio": "0.27",
        "mlflow.note.content": "note",
        "order": "fixed",
        "bounds.skipped": "x" * 9000,
    }
    curves = {"cumulative_mistakes": [(1, 1.0), (200, 20.0)], "support_size": [(1, 1.0), (9, 3.0)]}
    artifacts = {"hyperplane/margin_histogram.json": "{}", "dataset/columns.json": "[]"}
    stored = written(metrics, tags, curves, artifacts)
    # the view's sort and chart as metrics (never a value that is not finite: MLflow has none)
    assert stored.metrics == {"mistakes": 20.0, "bound.tightest": 73.3,
                              "bound_ratio.tightest": 0.27}  # fmt: skip
    # the view's columns and the description as tags; a value longer than a tag stays a row,
    # for MLflow's own check to refuse or cut as before
    rows = {k: v for k, v in stored.tags.items() if k not in RECORD_KEYS}
    assert rows == {k: tags[k] for k in ("bound.tightest", "bound_violated", "ratio",
                                         "mlflow.note.content", "bounds.skipped")}  # fmt: skip
    assert stored.artifacts == {"dataset/columns.json": "[]"}
    found = record.read(stored.tags)
    assert found.metrics == {"margin": 0.1, "support_size": 4.0}
    assert found.tags == {"order": "fixed"} and found.curves == curves
    assert found.files == {"hyperplane/margin_histogram.json": "{}"}
    # read back as MLflow's rows: a curve's latest point is its latest metric, a metric of the
    # same name a point at step 0 of its history
    assert found.latest() == {"margin": 0.1, "support_size": 3.0, "cumulative_mistakes": 20.0}
    assert found.history("support_size") == [(0, 4.0), (1, 1.0), (9, 3.0)]
    assert found.history("margin") == [(0, 0.1)] and found.history("nothing") == []


def test_the_record_holds_the_margin_histogram_and_reading_it_imports_no_learner():
    import subprocess
    import sys

    from lincls.evaluation.hyperplane import HISTOGRAM_ARTIFACT

    assert record.RECORD_FILES == (HISTOGRAM_ARTIFACT,)
    code = "import sys, lincls.tracking.record_rows; print('sklearn' in sys.modules)"
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert found.stdout.strip() == "False", found.stderr


def test_a_stored_metric_that_is_also_a_curve_goes_to_the_record_whole():
    stored = written({"mistakes": 5.0}, {}, {"mistakes": [(1, 1.0), (3, 5.0)]}, {})
    assert stored.metrics == {}
    assert record.read(stored.tags).latest() == {"mistakes": 5.0}


def test_curve_points_keep_nan_and_hold_infinities_as_mlflow_stores_them():
    curves = {"c": [(1, math.nan), (2, math.inf), (3, -math.inf)], "d": [(5, 2.0), (5, math.nan)]}
    found = record.read(written({}, {}, curves, {}).tags)
    (nan, top, bottom) = found.curves["c"]
    assert math.isnan(nan[1]) and top == (2, LARGEST) and bottom == (3, -LARGEST)
    assert found.latest()["c"] == -LARGEST
    # at one step a NaN counts as 0 (MLflow stores it so): the greater point is the latest
    assert found.latest()["d"] == 2.0


def test_floats_come_back_exactly():
    values = [0.1, 1 / 3, 2.0**-1074, 1.7976931348623157e308, 7.999999999999998, -0.0]
    curves = {"x": [(k, v) for k, v in enumerate(values)]}
    found = record.read(written({"m": 1 / 7}, {}, curves, {}).tags)
    assert found.curves["x"] == curves["x"] and found.metrics["m"] == 1 / 7
    assert math.copysign(1, found.curves["x"][-1][1]) == -1.0


def test_a_record_longer_than_a_tag_goes_on_in_numbered_tags():
    import random

    rng = random.Random(0)
    curves = {f"c{j}": [(k, rng.random()) for k in range(400)] for j in range(4)}
    tags = written({}, {}, curves, {}).tags
    parts = [k for k in RECORD_KEYS if k in tags]
    assert parts == [RECORD_TAG, f"{RECORD_TAG}.1", f"{RECORD_TAG}.2"][: len(parts)]
    assert len(parts) >= 2 and all(len(tags[k]) <= 8000 for k in parts)
    assert record.read(tags).curves == curves
    with pytest.raises(ValueError, match="more than 16 tags"):
        Record(curves={"c": [(k, rng.random()) for k in range(20_000)]}).encode()


def _format_1(found: Record) -> dict[str, str]:
    """``found``'s tag as format 1 wrote it: one payload, every name, step, tag and file in its
    head, then the metrics' values and each curve's."""
    import base64
    import zlib

    import numpy as np

    steps = {name: [s for s, _ in points] for name, points in found.curves.items()}
    head = {"v": 1, "m": list(found.metrics), "t": found.tags, "f": found.files, "c": steps}
    numbers = [*found.metrics.values(), *(v for ps in found.curves.values() for _, v in ps)]
    payload = json.dumps(head, separators=(",", ":"), ensure_ascii=False).encode()
    payload += b"\n" + np.asarray(numbers, dtype="<f8").tobytes()
    deflate = zlib.compressobj(9, zdict=DICTIONARY)
    return {RECORD_TAG: base64.b64encode(deflate.compress(payload) + deflate.flush()).decode()}


# a metric that is also a curve (its latest value is its curve's greatest step, then value)
BOTH = Record(
    metrics={"margin": 0.5, "mistakes": 3.0},
    tags={"order": "fixed", "note": "ünïcode γ"},
    curves={"mistakes": [(0, 1.0), (2, 4.0), (2, 6.0)], "cumulative_mistakes": [(1, 1.0)]},
    files={"hyperplane/margin_histogram.json": '{"counts": [1, 2]}'},
)


def test_records_of_format_1_are_read_as_they_were_written():
    old, new = _format_1(BOTH), BOTH.encode()
    assert "." not in old[RECORD_TAG] and "." in new[RECORD_TAG]
    assert record.read(old) == record.read(new) == BOTH
    latest = ({"margin": 0.5, "mistakes": 6.0, "cumulative_mistakes": 1.0}, BOTH.tags)
    assert record.summary(old.values()) == record.summary(new.values()) == latest


def test_a_table_of_runs_inflates_only_a_records_first_payload():
    table, _, points = BOTH.encode()[RECORD_TAG].partition(".")
    broken = f"{table}.{points[:-8]}AAAAAAAA"  # the curves' payload damaged
    assert record.summary([broken]) == record.summary([f"{table}.{points}"])
    with pytest.raises(Exception, match=r"Error -3|numbers where"):
        record.decode([broken])
    with pytest.raises(ValueError, match="of format 3"):
        record.summary([_packed_head(3)])


def _table_rows(records: list[list[str]], tag_keys=None) -> list[tuple[dict, dict]]:
    """Each run's (latest values, tags) as ``RecordTable`` reads them, NaN as a string."""
    from lincls.tracking.record_table import RecordTable

    table = RecordTable(tag_keys)
    for row, parts in enumerate(records):
        table.add(row, parts)
    found = [({}, {}) for _ in records]
    for name, parts in table.numbers().items():
        for rows, values in parts:
            for row, value in zip(rows.tolist(), values.tolist(), strict=True):
                found[row][0][name] = "nan" if math.isnan(value) else value
    for name, (rows, texts) in table.texts().items():
        for row, text in zip(rows.tolist(), texts, strict=True):
            found[row][1][name] = text
    return found


def test_a_table_of_records_reads_each_as_summary_does():
    import random

    rng = random.Random(1)
    odd = Record(metrics={"m": math.nan, "inf": math.inf}, tags={"why": 'a ,"t":{ b', "é": "γ"},
                 curves={"c": [(0, -math.inf)]})  # fmt: skip
    kinds = [BOTH, odd, Record(), Record(metrics={"x": 1.0}), Record(tags={"only": "tags"})]
    same_names = [
        Record(metrics={"a": rng.random(), "b": rng.random()},
               tags={"dataset.fingerprint": str(k % 3), "order": "fixed"},
               curves={"mistakes": [(0, 1.0), (1, float(k))]})
        for k in range(40)
    ]  # fmt: skip
    long = Record(curves={f"c{j}": [(k, rng.random()) for k in range(400)] for j in range(4)},
                  metrics={"a": 2.0})  # fmt: skip
    records = [[*r.encode().values()] for r in [*kinds, *same_names, long]]
    records += [[*_format_1(BOTH).values()], [*_format_1(odd).values()]]
    assert len(records[-3]) > 1  # a record in several tags
    expected = []
    for parts in records:
        latest, tags = record.summary(parts)
        expected.append(({k: "nan" if math.isnan(v) else v for k, v in latest.items()}, tags))
    assert _table_rows(records) == expected
    assert _table_rows(records, {"order"}) == [(m, {k: v for k, v in t.items() if k == "order"})
                                               for m, t in expected]  # fmt: skip
    with pytest.raises(ValueError, match="of format 3"):
        _table_rows([[_packed_head(3)]])
    table, _, points = BOTH.encode()[RECORD_TAG].partition(".")
    short = record._opened(table)  # a head naming more numbers than the record holds
    import base64
    import zlib

    deflate = zlib.compressobj(9, zdict=DICTIONARY)
    payload = json.dumps(short[0], separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
    packed = base64.b64encode(deflate.compress(payload) + deflate.flush()).decode()
    with pytest.raises(ValueError, match="numbers where"):
        _table_rows([[f"{packed}.{points}"]])


def _packed_head(version: int) -> str:
    import base64
    import zlib

    deflate = zlib.compressobj(9, zdict=DICTIONARY)
    payload = json.dumps({"v": version}).encode() + b"\n"
    return base64.b64encode(deflate.compress(payload) + deflate.flush()).decode()


def test_the_dictionary_of_format_1_is_frozen():
    digest = hashlib.sha256(DICTIONARY).hexdigest()
    assert digest == DICTIONARY_SHA256
    assert len(DICTIONARY) <= 32 * 1024  # deflate's window: more would never be referred to


def test_a_default_runs_record_is_small(tmp_path):
    from lincls import evaluation
    from lincls.config.run import RunConfig

    config = RunConfig.of(compose_config(["dataset.n=100", f"certificates.cache_dir={tmp_path}"]))
    outcome = evaluation.measure(config)
    runner._describe(config, outcome)
    stored = written(outcome.metrics, outcome.tags, outcome.curves, outcome.artifacts)
    size = len(stored.tags[RECORD_TAG])
    assert RECORD_TAG + ".1" not in stored.tags and size < 2_200, size
    # all of it: 52 metrics, 15 tags, 6 curves of 78 points, the histogram
    found = record.read(stored.tags)
    assert (len(found.metrics), len(found.tags)) == (52, 15)
    assert sum(map(len, found.curves.values())) == 78 and len(found.files) == 1
    assert set(outcome.tags) - set(found.tags) == set(STORED_TAGS)
    assert set(outcome.metrics) - set(found.metrics) == set(STORED_METRICS)


@pytest.fixture(scope="module")
def recorded_store(tmp_path_factory, _migrated_store):
    """Four runs with records: two written in one process, two as a pool's worker measures."""
    from lincls import tracking
    from lincls.config.run import RunConfig

    tmp = tmp_path_factory.mktemp("record")
    shutil.copyfile(_migrated_store, tmp / "mlflow.db")
    uri = f"sqlite:///{tmp / 'mlflow.db'}"
    for seed in range(4):
        config = compose_config([f"seed={seed}", "dataset.n=40", "dataset.d=3", "passes=3",
                                 f"tracking.uri={uri}", "study=rec"])  # fmt: skip
        if seed < 2:
            runner.execute(config)
            continue
        client, experiment_id = tracking.open_experiment(uri)
        payload = runner.execute_deferred(RunConfig.of(config), {}, experiment_id)
        tracking.write_payload(client, experiment_id, payload)
    return uri


def test_the_sql_reader_and_mlflows_client_give_a_records_values_alike(recorded_store):
    ours = reader.runs(recorded_store, study="rec", curves=CURVES)
    theirs = reader._by_mlflow(
        recorded_store, "lincls", {"lincls.study": "rec", "lincls.role": "run"}, "FINISHED", CURVES
    )
    assert len(ours) == 4 and not [c for c in ours.columns if RECORD_TAG in c]
    assert {"metrics.margin", "metrics.cumulative_mistakes", "tags.order"} <= set(ours.columns)
    assert_same(ours, theirs)
    for points in ours["curves.mistakes"]:  # a single value: one point at step 0
        assert len(points) == 1 and points[0][0] == 0
    # a tag set on a run afterwards, of a name its record holds: the row's value is read
    from mlflow.tracking import MlflowClient

    changed = ours["run_id"][0]
    MlflowClient(recorded_store).set_tag(changed, "order", "set later")
    again = reader.runs(recorded_store, study="rec")
    by_id = dict(zip(again["run_id"], again["tags.order"], strict=True))
    assert by_id.pop(changed) == "set later" and set(by_id.values()) == {"fixed"}
    theirs = reader._by_mlflow(
        recorded_store, "lincls", {"lincls.study": "rec", "lincls.role": "run"}, "FINISHED", ()
    )
    assert dict(zip(theirs["run_id"], theirs["tags.order"], strict=True))[changed] == "set later"


def test_the_ui_serves_a_runs_figure_and_histogram_from_its_record(recorded_store, monkeypatch):
    from mlflow.server import BACKEND_STORE_URI_ENV_VAR, app, handlers

    from lincls.experiments.ui_app import create_app, listed
    from lincls.tracking.record_rows import latest_of

    monkeypatch.setenv(BACKEND_STORE_URI_ENV_VAR, recorded_store)
    monkeypatch.setattr(handlers, "_tracking_store", None)
    create_app()
    run_id = reader.runs(recorded_store, study="rec")["run_id"][0]
    client = app.test_client()
    answer = client.get(f"/get-artifact?path={FIGURE_FILE}&run_uuid={run_id}")
    assert answer.status_code == 200 and answer.mimetype == "image/svg+xml"
    assert answer.headers["X-Content-Type-Options"] == "nosniff"
    assert "attachment" in answer.headers["Content-Disposition"]
    from mlflow.tracking import MlflowClient

    run = MlflowClient(recorded_store).get_run(run_id)
    curves = record.read(run.data.tags).curves
    assert answer.get_data(as_text=True) == draw_run_figure(curves, run.data.tags["bound.tightest"])
    histogram = client.get(f"/get-artifact?path=hyperplane/margin_histogram.json&run_id={run_id}")
    assert json.loads(histogram.get_data())["examples"] == 40
    assert (
        json.loads(histogram.get_data())["margin"]
        == latest_of(run.data.tags)[0]["hyperplane.margin"]
    )
    # the run's artifact tree lists them: the figure and a folder at the root, the histogram in it
    root = client.get(f"/ajax-api/2.0/mlflow/artifacts/list?run_id={run_id}").get_json()
    assert [(f["path"], f["is_dir"]) for f in root["files"]] == [
        ("hyperplane", True), (FIGURE_FILE, False)]  # fmt: skip
    inner = client.get(f"/ajax-api/2.0/mlflow/artifacts/list?run_id={run_id}&path=hyperplane")
    (entry,) = inner.get_json()["files"]
    assert entry["path"] == "hyperplane/margin_histogram.json" and entry["file_size"] > 100
    # a file of the run's own is listed once
    assert listed([{"path": FIGURE_FILE, "is_dir": False}], {FIGURE_FILE: "x"}, "") == [
        {"path": FIGURE_FILE, "is_dir": False}]  # fmt: skip
