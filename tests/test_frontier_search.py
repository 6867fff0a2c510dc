"""The frontier with the searches in it: ``dataset=search`` runs stored by a sweep through the
CLI, the report's "searched" column, and a run's saved instance replayed through ``dataset=csv``
(Winnow's with the certificate saved beside it)."""

from __future__ import annotations

import json
import re
import warnings

import pandas as pd
import pytest
import yaml
from conftest import CONF, compose_config
from test_cli import lincls_command
from test_report import table_rows

from lincls import tracking
from lincls.errors import LinclsInputError
from lincls.evaluation import measure
from lincls.experiments import report
from lincls.experiments.report.collect import artifact_uri
from lincls.search.game import make_search_game

HEADER = "| theorem | runs | fixed data | restricted game | constructive game | searched |"
BOUNDS = ("novikoff", "second_order", "winnow2")


def small_study(folder) -> list[dict]:
    """A study of frontier.yaml's grids for ``BOUNDS`` only, in ``folder``/experiment."""
    study = yaml.safe_load((CONF / "experiment" / "frontier.yaml").read_text())
    grids = [g for g in study["hydra"]["sweeper"]["grids"] if g.get("dataset.bound") in BOUNDS]
    study["study"] = "frontier_small"
    study["hydra"]["sweeper"]["grids"] = grids
    (folder / "experiment").mkdir(parents=True)
    text = "# @package _global_\n" + yaml.safe_dump(study)
    (folder / "experiment" / "frontier_small.yaml").write_text(text)
    return grids


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("frontier_search")
    grids = small_study(tmp / "conf")
    uri = f"sqlite:///{tmp / 'mlflow.db'}"
    done = lincls_command(["run", "-m", "experiment=frontier_small", "dataset=search",
                           "hydra.launcher.n_jobs=2",
                           f"hydra.sweep.dir={tmp / 'sweep'}", "--config-dir", str(tmp / "conf"),
                           "--store", uri], tmp)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    out = tmp / "report"
    assert report.main(["frontier_small", "--tracking-uri", uri, "--out", str(out)]) == 0
    runs = report.select_runs(*report.open_store(uri, "lincls"), "frontier_small").runs
    return {"runs": runs, "text": (out / "report.md").read_text(), "uri": uri, "tmp": tmp,
            "grids": grids}  # fmt: skip


def _run_of(runs, bound: str):
    return runs[runs["params.dataset.bound"] == bound].iloc[0]


def _best_of(runs, bound: str):
    """The run of ``bound``'s searches with the largest ratio."""
    searched = runs[runs["params.dataset.bound"] == bound]
    return searched.loc[searched[f"metrics.bound_ratio.{bound}"].idxmax()]


@pytest.mark.slow
def test_the_study_stores_one_searched_run_per_bound(swept):
    runs = swept["runs"]
    assert len(swept["grids"]) == 3
    # Winnow2 over its domain: α ∈ {1.5, 2} × θ ∈ {n, 2}, one search each
    assert runs["params.dataset.bound"].value_counts().to_dict() == {
        "winnow2": 4,
        "novikoff": 1,
        "second_order": 1,
    }
    assert (runs["status"] == "FINISHED").all()
    novikoff = _run_of(runs, "novikoff")
    # fresh coordinates meet Novikoff's bound exactly, in 3 s of search
    assert novikoff["metrics.bound_ratio.novikoff"] == 1.0
    assert _run_of(runs, "second_order")["metrics.bound_ratio.second_order"] > 0.9
    assert _run_of(runs, "winnow2")["params.dataset.method"] == "boolean"


@pytest.mark.slow
def test_the_report_shows_the_searched_column_with_the_logged_numbers(swept):
    runs, text = swept["runs"], swept["text"]
    rows = {r[0]: r for r in table_rows(text, HEADER)}
    for bound in BOUNDS:
        run = _best_of(runs, bound)
        ratio = run[f"metrics.bound_ratio.{bound}"]
        shown = "1" if ratio == 1.0 else f"{ratio:.3f}"
        method = "boolean" if bound == "winnow2" else "adaptive"
        assert rows[bound][5] == f"{shown} by {method}, run {run['run_id']}", bound
        assert rows[bound][2:5] == ["—", "—", "—"]  # no other kind of run in this study
    winnow = _best_of(runs, "winnow2")["metrics.bound_ratio.winnow2"]
    # the disjunction adversary's best over Winnow2's domain, α = 2, θ = 2: 63 mistakes against
    # 70, below 0.95, and the domain was searched (two values of α and of θ): it looks loose
    assert winnow == pytest.approx(0.9, abs=1e-12)
    assert f"- winnow2 looks loose by ×{1 / winnow:.3g} (its best ratio {winnow:.4g}" in text
    assert "- novikoff looks loose" not in text
    assert "- winnow2: 4 learner settings; alpha: 1.5, 2.0; threshold: 2.0, null; " in text
    rows = {r[0]: r for r in table_rows(text, HEADER)}
    assert rows["novikoff"][-1] == "attained"
    assert rows["winnow2"][-1] == f"looks loose by ×{1 / winnow:.3g} (domain searched)"


def _replayed(swept, bound: str, certificate: bool = True):
    """The run's saved instance, downloaded and replayed through dataset=csv."""
    runs = swept["runs"]
    run = _run_of(runs, bound)
    client = report.open_store(swept["uri"], "lincls")[0]
    local = tracking.local_artifacts(artifact_uri(client, run["run_id"])) / "dataset"
    folder = swept["tmp"] / f"replay-{bound}"
    record = json.loads((local / "search.json").read_text())
    name = run["params.learner.name"]
    options = compose_config([f"learner={name}"])["learner"]  # the run's config, not what it logs
    logged = {k: run.get(f"params.learner.{k}") for k in options if k != "name"}
    # an option logged as null (Winnow's threshold: n) is left to its default
    learner = [f"learner={name}"] + [f"learner.{k}={v}" for k, v in logged.items() if pd.notna(v)]
    replay = [o.replace("=instance.csv", f"={local}/instance.csv")
              .replace("=certificate.json", f"={local}/certificate.json")
              for o in record["replay"] if certificate or "certificate" not in o]  # fmt: skip
    config = compose_config([*learner, *replay, f"seed={run['params.seed']}"])
    config["certificates"]["cache_dir"] = str(folder / "cache")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return run, record, measure(config)


@pytest.mark.slow
@pytest.mark.parametrize("bound", ["second_order", "winnow2"])
def test_a_saved_instance_replays_to_the_same_mistakes_and_bound(swept, bound):
    run, record, outcome = _replayed(swept, bound)
    assert outcome.metrics["mistakes"] == run["metrics.mistakes"] == record["mistakes"]
    assert outcome.metrics[f"bound.{bound}"] == run[f"metrics.bound.{bound}"]
    assert outcome.metrics[f"bound_ratio.{bound}"] == run[f"metrics.bound_ratio.{bound}"]
    assert record["ratio"] == run[f"metrics.bound_ratio.{bound}"]


@pytest.mark.slow
def test_winnow_s_instance_needs_its_certificate_to_keep_its_bound(swept):
    run, record, outcome = _replayed(swept, "winnow2", certificate=False)
    assert outcome.metrics["mistakes"] == run["metrics.mistakes"]
    assert "bound.winnow2" not in outcome.metrics  # the SVM's separator is no disjunction
    assert len(record["replay"]) == 6 and record["replay"][-1].startswith("dataset.certificate")


def test_the_search_option_refuses_what_it_cannot_search():
    with pytest.raises(LinclsInputError, match="bound"):
        make_search_game(bound="nosuch")
    with pytest.raises(LinclsInputError, match="winnow2 is searched by boolean"):
        make_search_game(bound="winnow2", method="adaptive")
    config = compose_config(["learner=arow", "dataset=search", "dataset.bound=novikoff"])
    with pytest.raises(LinclsInputError, match="novikoff is a bound of learner=perceptron"):
        measure(config)


@pytest.mark.slow
@pytest.mark.parametrize("bound", ["novikoff", "winnow2"])
def test_the_report_s_replay_command_gives_the_best_run_again(swept, bound):
    line = re.search(rf"^- {bound}: .*; its best: `lincls run (.*)`$", swept["text"], re.M)
    assert line, swept["text"][-3000:]
    best = _best_of(swept["runs"], bound)
    config = compose_config(line[1].split())
    config["certificates"]["cache_dir"] = str(swept["tmp"] / f"replay-best-{bound}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        outcome = measure(config)
    assert outcome.metrics["mistakes"] == best["metrics.mistakes"]
    assert outcome.metrics[f"bound_ratio.{bound}"] == best[f"metrics.bound_ratio.{bound}"]
