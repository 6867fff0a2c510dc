"""The frontier's verdict per theorem and what it lists as searched, on runs made up to cover each
case: attained, attained in the limit (a closed form → 1), the game's value, looks loose (only
over a searched domain) and the searched best."""

from __future__ import annotations

import math

import pandas as pd

from lincls.experiments.report.frontier import frontier_section, frontier_table


def runs(*rows: dict) -> pd.DataFrame:
    frame = pd.DataFrame(list(rows))
    frame["run_id"] = [f"r{k}" for k in range(len(frame))]
    frame["params.seed"] = "0"
    frame["params.order"] = frame["tags.order"] = "fixed"
    frame["tags.learner"] = frame["params.learner.name"]
    frame["tags.dataset"] = frame["params.dataset.name"]
    return frame


def run(theorem: str, ratio: float, dataset: str, learner: str, **options) -> dict:
    row = {"params.dataset.name": dataset, "params.learner.name": learner,
           f"metrics.bound.{theorem}": 10.0, f"metrics.bound_ratio.{theorem}": ratio}  # fmt: skip
    row.update({f"params.learner.{k}": v for k, v in options.items()})
    return row


def test_each_verdict():
    frame = runs(
        run("novikoff", 1.0, "search", "perceptron", bias="none"),
        run("cw", 1.0, "orthogonal_game", "confidence_weighted", eta="0.5000001", bias="none"),
        run("cw", 0.0098, "search", "confidence_weighted", eta="0.9", bias="feature"),
        run("alma", 0.4975, "orthogonal_game", "alma", alpha="1.0"),
        run("winnow2", 0.9, "search", "winnow", alpha="2.0", threshold="2.0"),
        run("winnow2", 0.73, "search", "winnow", alpha="1.5", threshold=None),
        run("winnow1", 0.8, "search", "winnow", alpha="2.0", threshold="2.0"),
        run("pa1", 0.99, "search", "passive_aggressive", C="1.0"),
        run("margin_perceptron", 0.3, "separable", "margin_perceptron", tau="1.0"),
    )
    table = frontier_table(frame).set_index("theorem")
    verdicts = table["verdict"].to_dict()
    assert verdicts["novikoff"] == "attained"
    # 1 to rounding, but the closed form is below 1 at every η: attained only in the limit
    assert verdicts["cw"] == "attained in the limit (best run 1)"
    assert verdicts["alma"] == "the game gives ½; best run 0.497"
    assert verdicts["margin_perceptron"] == "best run 0.300 (no search or game ran)"
    assert verdicts["winnow2"] == "looks loose by ×1.11 (domain searched)"
    assert table.loc["winnow2", "loose by"] == 1 / 0.9
    # one value of α and θ: not the domain, so not loose, however low
    assert verdicts["winnow1"] == "searched best 0.800 (domain not searched)"
    assert math.isnan(table.loc["winnow1", "loose by"])
    assert verdicts["pa1"] == "searched best 0.990 (domain not searched)"
    assert table.loc["cw", "searched over"] == (
        "2 learner settings; eta: 0.5000001, 0.9; bias: feature, none; 1 game run; 1 search"
    )
    assert table.loc["winnow2", "searched over"] == (
        "2 learner settings; alpha: 1.5, 2.0; threshold: 2.0, null; 0 game runs; 2 searches"
    )
    assert table.loc["cw", "reached on"] == (
        "confidence_weighted (bias=none, eta=0.5000001) on orthogonal_game s0 "
        "(constructive game, run r1)"
    )
    text = frontier_section(frame)
    assert "- winnow2 looks loose by ×1.11 (its best ratio 0.9, on winnow" in text
    assert "- winnow1 looks loose" not in text and "- alma looks loose" not in text
    assert "- cw: 2 learner settings; eta: 0.5000001, 0.9;" in text
