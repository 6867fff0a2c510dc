"""The report's learner labels, vacuity and curve sample name each run as they always have:
checked on a table with label groups whose params vary (missing values among them), runs
logged before the label tag existed, and ties of the tightest ratio."""

from __future__ import annotations

import numpy as np
import pandas as pd

from lincls.experiments.report.plots import curve_sample
from lincls.experiments.report.tables import learner_labels, vacuous


def _frame() -> pd.DataFrame:
    rows = 12
    return pd.DataFrame({
        "run_id": [f"r{k:02d}" for k in range(rows)],
        "tags.learner": pd.array(["perceptron"] * 6 + ["romma"] * 4 + [None] * 2, dtype="str"),
        "params.learner.name": pd.array(["perceptron"] * 6 + ["romma"] * 6, dtype="str"),
        "tags.learner_label": pd.array(["perceptron (bias=none)"] * 6 + ["romma"] * 4
                                       + [None] * 2, dtype="str"),
        "params.learner.bias": pd.array(["none"] * 6 + ["feature"] * 6, dtype="str"),
        "params.learner.lr": pd.array(["0.5", "1.0", "0.5", None, "1.0", "2.0"] + ["1"] * 6,
                                      dtype="str"),
        "params.learner.aggressive": pd.array([None] * 6 + ["True", "False"] * 3, dtype="str"),
        "tags.bounds.vacuous": pd.array(["novikoff, tightest", None, "novikoff", "x"] * 3,
                                        dtype="str"),
        "metrics.bound_ratio.tightest": [0.5, 0.5, np.nan, 0.25, 0.5, 1.0] * 2,
        "metrics.mistakes": [1.0] * 11 + [np.nan],
    })  # fmt: skip


def test_labels_name_the_params_that_vary_within_a_label():
    labels = learner_labels(_frame()).tolist()
    assert labels[:6] == [
        "perceptron (bias=none, lr=0.5)", "perceptron (bias=none, lr=1.0)",
        "perceptron (bias=none, lr=0.5)", "perceptron (bias=none, lr=nan)",
        "perceptron (bias=none, lr=1.0)", "perceptron (bias=none, lr=2.0)",
    ]  # fmt: skip
    assert labels[6:10] == ["romma (aggressive=True)", "romma (aggressive=False)"] * 2
    # no label tag: the learner's name (from the param) and every varying param
    assert labels[10:] == ["romma (aggressive=True)", "romma (aggressive=False)"]


def test_vacuity_is_read_from_each_runs_list_of_bounds():
    assert vacuous(_frame(), "novikoff").tolist() == [True, False, True, False] * 3
    assert vacuous(_frame(), "tightest").tolist() == [True, False, False, False] * 3
    assert vacuous(_frame().drop(columns="tags.bounds.vacuous"), "novikoff").sum() == 0


def test_the_curve_sample_is_spread_over_the_sorted_ratios():
    frame = _frame().set_index(pd.Index(range(100, 112)))
    everyone = curve_sample(frame, count=50)
    # runs with a ratio and mistakes, by ratio then run id, with their own index
    assert everyone["run_id"].tolist() == ["r03", "r09", "r00", "r01", "r04", "r06", "r07",
                                           "r10", "r05"]  # fmt: skip
    assert everyone.index.tolist() == [103, 109, 100, 101, 104, 106, 107, 110, 105]
    assert curve_sample(frame, count=3)["run_id"].tolist() == ["r03", "r04", "r05"]
