"""What the runs table's search and the compare page give a researcher: the view's first screen
leaves out the runs built to meet their bound, the filters the docs offer are ones MLflow's search
accepts, and the compare page's default axes are MLflow's choice, as the docs say."""

from __future__ import annotations

import re
from pathlib import Path

import mlflow
import pytest
from conftest import ROOT, run_cli
from mlflow.tracking import MlflowClient

from lincls import registry, tracking
from lincls.tracking import view
from lincls.tracking.experiment_note import EXPERIMENT_NOTE

UI_DOC = ROOT / "docs" / "howto" / "ui.md"
TINY = ["dataset.n=40", "dataset.d=2", "dataset.n_test=10", "certificates.svm=false", "passes=2"]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    """A store with a run on certified data and a run of the orthogonal game (ratio 1 by proof)."""
    tmp = tmp_path_factory.mktemp("search")
    uri = f"sqlite:///{tmp / 'mlflow.db'}"
    for args in (TINY, ["dataset=orthogonal_game", "learner.bias=none", "dataset.margin=0.1"]):
        done = run_cli([*args, f"tracking.uri={uri}"], cwd=tmp)
        assert done.returncode == 0, done.stderr[-3000:]
    return uri


def _search(uri: str, text: str) -> list:
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("lincls").experiment_id
    return client.search_runs(
        [experiment], text, order_by=[f"{view.view_ui_state()['orderByKey']} DESC"]
    )


def test_the_view_s_first_screen_leaves_out_the_runs_built_to_meet_their_bound(store):
    state = view.view_ui_state()
    assert state["searchFilter"] == view.RUNS_FILTER and not state["orderByAsc"]
    assert set(view.FORCED_DATASETS) <= set(registry.DATASETS)
    everything = _search(store, "tags.`lincls.role` = 'run'")
    ratios = [(r.data.tags["dataset"], r.data.metrics["bound_ratio.tightest"]) for r in everything]
    assert ratios[0] == ("orthogonal_game", 1.0) and ratios[1][1] < 1  # unfiltered: first
    shown = _search(store, view.RUNS_FILTER)
    assert [r.data.tags["dataset"] for r in shown] == ["separable"]


def test_the_filters_the_docs_offer_are_accepted_by_mlflow_s_search(store):
    doc = UI_DOC.read_text()
    for example in view.SEARCH_EXAMPLES:
        found = {r.data.tags["dataset"] for r in _search(store, example)}
        assert found, example  # accepted, and it finds runs
        assert f"`` {example} ``" in doc or f"`{example}`" in doc, example
        assert f"`` {example} ``" in EXPERIMENT_NOTE or f"`{example}`" in EXPERIMENT_NOTE
    assert {r.data.tags["dataset"] for r in _search(store, "tags.dataset LIKE '%game'")} == {
        "orthogonal_game"
    }
    # a bare word is no filter: MLflow refuses it (the UI's HTTP 400, sent again every 30 s)
    with pytest.raises(mlflow.exceptions.MlflowException, match="Invalid"):
        _search(store, "perceptron")


def test_the_compare_page_plots_the_first_param_against_the_first_metric_as_the_docs_say(store):
    # MLflow's compare page: its scatter's x is the first param by name, its y the first metric
    # (keys sorted), whatever the runs are; lincls's names are stored values, kept as they are
    chunks = Path(mlflow.__file__).parent / "server/js/build/static/js"
    bundle = "".join(path.read_text(errors="replace") for path in chunks.glob("*.js"))
    assert "x:this.paramKeys.length>0?{key:this.paramKeys[0],isMetric:!1}" in bundle
    assert "y:this.metricKeys.length>0?{key:this.metricKeys[0],isMetric:!0}" in bundle
    assert re.search(r"getKeys\(e,t\)\{.{0,200}\.sort\(\)", bundle)
    (run,) = _search(store, "tags.dataset = 'separable'")
    first_param, first_metric = min(run.data.params), min(run.data.metrics)
    assert first_param == "certificates.best" and first_metric.startswith("bound.")
    doc = " ".join(UI_DOC.read_text().split())
    assert "`certificates.best` (the first param by name)" in doc
    assert "a `bound.*` (the first metric by name)" in doc


def test_every_view_filter_is_one_mlflow_parses():
    from mlflow.utils.search_utils import SearchUtils

    for text in (view.RUNS_FILTER, *view.SEARCH_EXAMPLES):
        assert SearchUtils.parse_search_filter(text)
    assert tracking.view_ui_state()["searchFilter"].count(" AND ") == len(view.FORCED_DATASETS)
