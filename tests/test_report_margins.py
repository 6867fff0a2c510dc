"""The report's hyperplane margins: per learner, the learned margin over the maximum margin."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from conftest import compose_config
from mlflow.entities import RunTag

from lincls import runner
from lincls.experiments import report
from lincls.experiments.report.collect import dataset_config, select_runs
from lincls.experiments.report.plots import PlotInput, plot_margin_to_max
from lincls.experiments.report.tables import hyperplane_table

LEARNERS = (
    ("perceptron", []),
    ("averaged_perceptron", []),
    ("voted_perceptron", []),
    ("margin_perceptron", ["learner.tau=2"]),
)


@pytest.fixture(scope="module")
def margin_study(tmp_path_factory):
    """The last, averaged, voted and margin perceptrons, two seeds each, as one sweep."""
    tmp = tmp_path_factory.mktemp("margins")
    uri = f"sqlite:///{tmp / 'mlflow.db'}"
    client, experiment_id = runner.tracking.open_experiment(uri)
    parent = client.create_run(
        experiment_id, run_name="margins", tags={"lincls.role": "sweep", "lincls.study": "m"}
    ).info.run_id
    outcomes = {}
    for name, extra in LEARNERS:
        for seed in (0, 1):
            config = compose_config(
                [f"learner={name}", *extra, "dataset.n=150", "dataset.d=5", "dataset.n_test=0",
                 "passes=50", f"seed={seed}", f"tracking.uri={uri}",
                 f"certificates.cache_dir={tmp / 'certificates'}"]
            )  # fmt: skip
            outcome = runner.execute(config)
            tags = {"mlflow.parentRunId": parent, "lincls.role": "run", "lincls.study": "m"}
            client.log_batch(outcome.run_id, tags=[RunTag(k, v) for k, v in tags.items()])
            outcomes[(name, seed)] = outcome
    client.set_terminated(parent, "FINISHED")
    selection = select_runs(client, experiment_id, None)
    out = tmp / "report"
    out.mkdir()
    report.write_report(client, selection, out)
    return {"outcomes": outcomes, "selection": selection, "out": out}


def test_the_table_holds_each_learners_ratios(margin_study):
    table = hyperplane_table(margin_study["selection"].runs)
    assert table.shape[0] == 4 and set(table["runs"]) == {2}
    for row in table.itertuples(index=False):
        name = row.learner.split(" ")[0]
        ratios = [
            margin_study["outcomes"][(name, s)].metrics["hyperplane.margin_to_max"] for s in (0, 1)
        ]
        assert row.median_ratio == pytest.approx(sum(ratios) / 2, rel=1e-12)
        assert (row.min_ratio, row.max_ratio) == (min(ratios), max(ratios))
        assert row.max_ratio <= 1.0 + 1e-6


def test_the_report_draws_the_plot_and_prints_the_table(margin_study):
    out = margin_study["out"]
    assert (out / "margin_to_max.png").stat().st_size > 10_000
    text = (out / "report.md").read_text()
    assert "## How close the learned hyperplanes come to the maximum margin" in text
    assert "![Learned margin against the maximum margin, per learner](margin_to_max.png)" in text
    table = hyperplane_table(margin_study["selection"].runs)
    for row in table.itertuples(index=False):
        assert f"| {row.learner} | 2 | " in text


def test_without_ratios_the_plot_says_why(tmp_path):
    frame = pd.DataFrame(
        {"run_id": ["a"], "tags.learner": ["perceptron"], "tags.learner_label": ["perceptron"]}
    )
    why = plot_margin_to_max(PlotInput(frame), tmp_path / "m.png")
    assert why.startswith("no run has the maximum-margin certificate of separable data")
    assert not (tmp_path / "m.png").exists()
    assert hyperplane_table(frame).empty


def test_a_hand_made_frame_gives_its_medians():
    frame = pd.DataFrame(
        {
            "run_id": list("abcd"),
            "tags.learner": ["perceptron", "perceptron", "perceptron", "winnow"],
            "tags.learner_label": ["perceptron (bias=feature)"] * 3 + ["winnow"],
            "metrics.hyperplane.margin_to_max": [0.2, 0.5, 0.8, math.nan],
            "metrics.hyperplane.nonpositive": [0.0, 0.0, 0.1, 0.3],
        }
    )
    table = hyperplane_table(frame)
    assert table.to_dict("records") == [
        {"learner": "perceptron (bias=feature)", "runs": 3, "median_ratio": 0.5,
         "min_ratio": 0.2, "max_ratio": 0.8, "median_nonpositive": 0.0}
    ]  # fmt: skip


def test_a_csv_runs_column_map_is_not_a_loader_argument():
    run = pd.Series(
        {"params.dataset.name": "csv", "params.dataset.path": "d.csv",
         "params.dataset.columns": '["a=x", "b"]', "params.dataset.test_fraction": "0.25"}
    )  # fmt: skip
    assert dataset_config(run) == {"name": "csv", "path": "d.csv", "test_fraction": 0.25}
