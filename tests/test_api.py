"""The Python API (``lincls.run``, ``sweep``, ``studies``, ``study``): the same numbers as the
evaluation and the store, nothing written without a store, typed study tables, and the
docstrings' examples run as written."""

from __future__ import annotations

import doctest
import importlib
import os
import subprocess
import sys

import pandas as pd
import pytest
from conftest import ROOT, compose_config, runs_of

import lincls
from lincls.errors import LinclsInputError
from lincls.evaluation import measure
from lincls.tracking import reader

SMALL = {"n": 100, "n_test": 50}
GRID = {"dataset.n": [40, 60], "learner.lr": [0.5, 1.0]}
DOCTEST_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@pytest.fixture
def no_default_store(tmp_path, monkeypatch):
    """An empty working directory and home, no MLFLOW_TRACKING_URI: what a run writes shows."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LINCLS_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    return tmp_path


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """A 2 × 2 sweep, study ``demo``, in a store of its own: (store path, its Study)."""
    home = tmp_path_factory.mktemp("api_home")
    saved = os.environ.get("LINCLS_HOME")
    os.environ["LINCLS_HOME"] = str(home)  # the sweep's Hydra folders go there
    try:
        store = str(home / "mlflow.db")
        found = lincls.sweep(GRID, dataset={"n_test": 20}, study="demo", store=store)
    finally:
        if saved is None:
            os.environ.pop("LINCLS_HOME")
        else:
            os.environ["LINCLS_HOME"] = saved
    return store, found


def test_import_lincls_loads_no_api_and_no_mlflow():
    code = "import sys, lincls; print(sorted(m for m in sys.modules if m.startswith(('mlflow', "
    code += "'lincls.experiments', 'hydra', 'pandas'))), callable(lincls.run))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "[] True"


def test_run_gives_the_evaluations_numbers_and_writes_nothing(no_default_store):
    result = lincls.run(dataset=SMALL)
    config = compose_config(["dataset.n=100", "dataset.n_test=50"])
    config["certificates"]["cache_dir"] = str(no_default_store / "cache")
    outcome = measure(config)
    assert result.mistakes == outcome.metrics["mistakes"] == 20.0
    assert result.tightest == outcome.tags["bound.tightest"] == "freund_schapire"
    assert result.tightest_value == pytest.approx(73.33, abs=0.005)
    assert list(result.bounds.index) == ["freund_schapire", "novikoff_bias", "mohri_rostamizadeh"]
    for name, row in result.bounds.iterrows():
        assert row["value"] == outcome.metrics[f"bound.{name}"]
        assert row["ratio"] == outcome.metrics[f"bound_ratio.{name}"]
        assert row["ratio"] == pytest.approx(20.0 / row["value"])
    assert result.bounds["family"].tolist() == ["a_priori", "a_priori", "a_posteriori"]
    assert not result.bounds["vacuous"].any()
    curve = result.curves["cumulative_mistakes"]
    assert curve["step"].dtype == "int64" and curve["value"].iloc[-1] == 20.0
    assert result.run_id is None and result.store is None
    assert sorted(p.name for p in no_default_store.iterdir()) == ["cache"]  # measure's, not ours


def test_run_with_a_store_logs_the_same_run(tmp_path, monkeypatch):
    monkeypatch.setenv("LINCLS_HOME", str(tmp_path))
    result = lincls.run(dataset=SMALL, store=tmp_path / "runs.db")
    uri = f"sqlite:///{tmp_path / 'runs.db'}"
    assert result.store == uri
    (logged,) = runs_of(uri)
    assert logged.info.run_id == result.run_id
    assert logged.data.metrics["mistakes"] == result.mistakes == 20.0
    assert logged.data.metrics["bound.freund_schapire"] == result.bounds.loc["freund_schapire",
                                                                             "value"]  # fmt: skip
    assert logged.data.params["dataset.n"] == "100"


def test_keywords_dicts_and_hydra_lines_compose_one_config(no_default_store):
    result = lincls.run(
        learner={"name": "margin_perceptron", "tau": 0.5},
        dataset={"n": 60},
        passes=3,
        certificates={"svm": False, "best": False},
        overrides=["dataset.n_test=10", "seed=4"],
    )
    assert result.config["learner"]["name"] == "margin_perceptron"
    assert result.config["learner"]["tau"] == 0.5
    assert (result.config["dataset"]["n"], result.config["dataset"]["n_test"]) == (60, 10)
    assert (result.config["passes"], result.config["seed"]) == (3, 4)
    assert result.config["dataset"]["seed"] == 4  # follows the run's seed, as on the CLI
    assert list(no_default_store.iterdir()) == []


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"learner": "nosuch"}, "learner"),
        ({"dataset": {"n": "abc"}}, "dataset.n"),
        ({"learner": {"foo": 1}}, "learner.foo"),
        ({"certificates": {"svm": 2}}, "certificates.svm"),
        ({"passes": 0}, "passes"),
        ({"overrides": ["dataset.n=2.5"]}, "dataset.n"),
        ({"experiment": "nope"}, "experiment"),
        ({"tracking": {"uri": "sqlite:///x.db"}}, "tracking.uri"),
        ({"store": "runs.txt"}, "store"),
    ],
)
def test_bad_input_raises_naming_the_field(arguments, field, no_default_store):
    with pytest.raises(LinclsInputError) as raised:
        lincls.run(**arguments)
    assert raised.value.field == field
    assert list(no_default_store.iterdir()) == []


def test_sweep_gives_a_study_with_typed_columns(demo):
    _, found = demo
    assert found.name == "demo" and len(found.parents) == 1
    runs = found.runs()
    assert len(runs) == 4
    assert sorted(zip(runs["n"], runs["lr"], strict=True)) == [(40, 0.5), (40, 1.0), (60, 0.5),
                                                               (60, 1.0)]  # fmt: skip
    assert str(runs["n"].dtype) == "int64" and str(runs["lr"].dtype) == "float64"
    assert str(runs["passes"].dtype) == "int64" and str(runs["shuffle"].dtype) == "bool"
    assert str(runs["mistakes"].dtype) == "float64"
    assert set(runs["learner"]) == {"perceptron"} and set(runs["study"]) == {"demo"}
    # plain names where unambiguous, whole keys where another column has the last part
    assert {"dataset.margin", "margin", "dataset.seed", "seed"} <= set(runs.columns)
    assert not [c for c in runs.columns if c.startswith(("params.", "metrics.", "tags."))]
    assert sorted(runs.groupby("n")["mistakes"].first().tolist()) == [10.0, 24.0]


def test_studies_lists_the_sweep_and_study_refuses_an_unknown_name(demo):
    store, found = demo
    listed = lincls.studies(store)
    assert listed[["study", "parent_run_id", "runs", "finished", "status"]].values.tolist() == [
        ["demo", found.parents[0], 4, 4, "FINISHED"]
    ]
    with pytest.raises(LinclsInputError, match=r"^study: .*'nope'.*the studies: demo$"):
        lincls.study("nope", store)
    again = lincls.study(found.parents[0], store)
    assert sorted(again.runs()["run_id"]) == sorted(found.runs()["run_id"])


def test_a_known_study_is_opened_without_listing_the_studies(demo, monkeypatch):
    """A study's name or a sweep's id is found by two lookups (``reader.is_study``); the
    studies are listed (every run read: ~30 s at a million) only to name them for a wrong one."""
    store, found = demo
    listed = []
    study_rows = reader.study_rows
    monkeypatch.setattr(reader, "study_rows", lambda *a: listed.append(1) or study_rows(*a))
    assert lincls.study("demo", store).runs()["run_id"].tolist() == found.runs()["run_id"].tolist()
    assert len(lincls.study(found.parents[0], store).runs()) == 4
    assert listed == []
    run_id = found.runs()["run_id"].iloc[0]  # a run, not a sweep: not a study's id
    with pytest.raises(LinclsInputError, match=r"^study: .*the studies: demo$"):
        lincls.study(run_id, store)
    assert listed == [1]


def test_studies_are_listed_in_sql_as_from_the_runs_themselves(demo, tmp_path):
    """``studies`` aggregates in SQL (``reader.study_rows``): the same rows as counting the runs
    read whole, for a sweep, a run of a named study outside any sweep and one of no study."""
    import sqlite3

    study_module = importlib.import_module("lincls.api.study")
    store = tmp_path / "copy.db"
    with sqlite3.connect(demo[0]) as source, sqlite3.connect(store) as copy:
        source.backup(copy)
    for extra in ({"study": "solo"}, {"study": "solo", "seed": 1}, {}):
        lincls.run(dataset=SMALL, store=str(store), **extra)
    _, client, experiment_id = study_module._open(str(store), "lincls")
    listed = study_module._studies(client, experiment_id)
    read = study_module._studies_read(client, experiment_id)
    read = [(s, p, r, f, pd.Timestamp(t, unit="ms", tz="UTC"), status)
            for s, p, r, f, t, status in read]  # fmt: skip

    def cells(rows):  # pandas gives a missing text as NaN or None: both None here
        return sorted((tuple(None if pd.isna(v) else v for v in row) for row in rows), key=str)

    assert cells(listed.values.tolist()) == cells(read)
    assert sorted(listed["runs"]) == [1, 2, 4]
    assert set(listed["study"]) == {"demo", "solo", "adhoc"}
    assert listed["started"].is_monotonic_decreasing


def test_curves_are_long_one_row_a_logged_point(demo):
    _, found = demo
    curves = found.curves("cumulative_mistakes")
    assert curves.columns.tolist() == ["run", "step", "value"]
    assert set(curves["run"]) == set(found.runs()["run_id"])
    last = curves.groupby("run")["value"].last()
    assert sorted(last.tolist()) == sorted(found.runs()["mistakes"].tolist())
    assert (curves.groupby("run")["step"].apply(lambda s: s.is_monotonic_increasing)).all()
    with pytest.raises(LinclsInputError, match="its runs' curves: cumulative_mistakes, "):
        found.curves("no_such_curve")


def test_figures_draw_on_the_axes_given(demo):
    from matplotlib.figure import Figure

    _, found = demo
    ax = Figure().add_subplot()
    assert found.plot_mistakes_vs_bound(ax) is ax
    assert ax.get_xlabel() == "tightest a priori mistake bound"
    assert sum(len(c.get_offsets()) for c in ax.collections) == 4  # a marker a run
    assert "mistakes = bound" in ax.get_legend_handles_labels()[1]
    ax = Figure().add_subplot()
    assert found.plot_decision_boundaries(ax) is ax  # 20-D data: the reason, in the axes
    assert "no run on 2-D data" in ax.texts[0].get_text()


def test_a_failing_sweep_raises_its_error_line(tmp_path, monkeypatch):
    monkeypatch.setenv("LINCLS_HOME", str(tmp_path))
    with pytest.raises(LinclsInputError, match=r"must be an integer in \[2, inf\), got -1"):
        lincls.sweep({"dataset.n": [40, -1]}, store=tmp_path / "runs.db")
    assert not (tmp_path / "runs.db").exists()


def _doctests(module, **globs) -> tuple[int, int]:
    """(failed, attempted) of ``module``'s docstring examples, with ``globs`` as globals."""
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=DOCTEST_FLAGS)
    for test in finder.find(module, globs={"lincls": lincls, "pd": pd, **globs}):
        runner.run(test)
    return runner.failures, runner.tries


def test_the_run_docstrings_run_as_written(no_default_store):
    from lincls.api import result

    failed, tried = _doctests(result)
    assert (failed, tried) == (0, 8)


def test_the_study_docstrings_run_as_written(demo, tmp_path, monkeypatch):
    study = importlib.import_module("lincls.api.study")  # the package's is a function
    monkeypatch.setenv("MPLBACKEND", "Agg")
    store, found = demo
    failed, tried = _doctests(study, store=store, demo=found)
    assert (failed, tried) == (0, 6)


@pytest.mark.slow
def test_the_sweep_docstring_runs_as_written(tmp_path, monkeypatch):
    sweep = importlib.import_module("lincls.api.sweep")
    monkeypatch.setenv("LINCLS_HOME", str(tmp_path))
    failed, tried = _doctests(sweep, store=str(tmp_path / "mlflow.db"))
    assert (failed, tried) == (0, 2)
