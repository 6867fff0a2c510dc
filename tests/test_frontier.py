"""The tightness frontier (experiments/report/frontier.py) in the bound_verification report."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import CONF
from test_report import record_sweep, table_rows

from lincls.experiments import report
from lincls.experiments.report.frontier import frontier_table, instance_kinds

HEADER = "| theorem | runs | fixed data | restricted game | constructive game |"


def logged_theorems(runs: pd.DataFrame) -> set[str]:
    """Every theorem with a logged value (``metrics.bound.<theorem>``), by its own reading."""
    found = {m.group(1) for c in runs.columns if (m := re.match(r"metrics\.bound\.(\w+)$", c))}
    return {t for t in found if runs[f"metrics.bound.{t}"].notna().any()} - {
        "tightest", "tightest_a_posteriori"
    }  # fmt: skip


def study_configs() -> list[list[str]]:
    """One config of each grid of the bound_verification study: each key's first value."""
    study = yaml.safe_load((CONF / "experiment" / "bound_verification.yaml").read_text())
    configs = []
    for grid in study["hydra"]["sweeper"]["grids"]:
        overrides = [f"{key}={str(value).split(',')[0]}" for key, value in grid.items()]
        configs.append([*overrides, f"passes={study['passes']}", "seed=0"])
    return configs


@pytest.fixture(scope="module")
def frontier_study(tmp_path_factory, _migrated_store):
    tmp = tmp_path_factory.mktemp("frontier")
    uri = f"sqlite:///{tmp / 'mlflow.db'}"
    (tmp / "mlflow.db").write_bytes(_migrated_store.read_bytes())
    configs = study_configs()
    configs.append(["learner=passive_aggressive", "dataset=separable", "dataset.n=60",
                    "dataset.margin=0.2", "order=adversarial", "passes=20"])  # fmt: skip
    record_sweep(uri, tmp, "frontier_test", configs)
    out = tmp / "report"
    assert report.main(["frontier_test", "--tracking-uri", uri, "--out", str(out)]) == 0
    runs = report.select_runs(*report.open_store(uri, "lincls"), "frontier_test").runs
    return {"runs": runs, "text": (out / "report.md").read_text(), "configs": configs}


def test_the_study_plays_the_orthogonal_and_the_disjunction_game():
    datasets = {o for config in study_configs() for o in config if o.startswith("dataset=")}
    assert {"dataset=orthogonal_game", "dataset=disjunction_game"} <= datasets


def test_the_frontier_lists_every_theorem_the_study_logs(frontier_study):
    runs = frontier_study["runs"]
    rows = table_rows(frontier_study["text"], HEADER)
    listed = [row[0] for row in rows]
    expected = logged_theorems(runs)
    assert len(expected) >= 6 and {"novikoff", "winnow2", "pa1"} <= expected
    assert sorted(listed) == sorted(expected)  # none missing, none extra, each once
    assert len(listed) == len(set(listed))


def test_novikoff_on_the_orthogonal_game_is_exactly_one(frontier_study):
    runs = frontier_study["runs"]
    game = runs[runs["params.dataset.name"] == "orthogonal_game"]
    assert (game["metrics.mistakes"] == 100).all()  # ⌊(1/0.1)²⌋ on d = 100
    row = {r[0]: r for r in table_rows(frontier_study["text"], HEADER)}["novikoff"]
    assert row[4] == "1" and row[7] == "1"  # the constructive game reached the attainable 1
    table = frontier_table(runs).set_index("theorem")
    kinds = instance_kinds(runs)
    on_game = runs["metrics.bound_ratio.novikoff"][kinds == "constructive game"]
    assert on_game.max() == 1.0 and table.loc["novikoff", "largest"] == 1.0


def test_the_frontier_names_the_kinds_and_what_is_unknown(frontier_study):
    rows = {r[0]: r for r in table_rows(frontier_study["text"], HEADER)}
    assert rows["pa1"][3] != "—"  # the adversarial order's PA run: a restricted game
    assert rows["pa1"][7] == "unknown"  # below 1 here, and no construction known
    winnow = rows["winnow2"]
    lower = 1 * int(np.log2(64))  # Littlestone at N = 64, k = 1: 6 mistakes
    assert winnow[4] != "—" and "N=64, k=1" in winnow[8]
    assert float(winnow[7]) == pytest.approx(lower / _bound(frontier_study["runs"]), abs=5e-4)


def _bound(runs: pd.DataFrame) -> float:
    winnow = runs[runs["params.dataset.name"] == "disjunction_game"]
    return float(winnow["metrics.bound.winnow2"].iloc[0])
