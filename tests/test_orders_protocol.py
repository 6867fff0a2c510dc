"""LIBOL's protocol: a config over k seeded random orders (``order=shuffled orders=k``) logs the
mean and std of mistakes and updates, and of each bound's ratio, beside its worst ordering."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone

from lincls.evaluation import RunPlan, fit_and_evaluate
from lincls.learners.perceptron import Perceptron
from lincls.registry import build_dataset


def test_twenty_random_orders_log_mean_and_std_of_mistakes_updates_and_ratios(tmp_path):
    data = build_dataset({"name": "separable", "n": 100, "d": 5, "margin": 0.1, "radius": 1.0,
                          "offset": 0.2, "n_test": 10, "seed": 0})  # fmt: skip
    learner = Perceptron(max_passes=3, random_state=0)
    plan = RunPlan(order="shuffled", orders=20, seed=0, svm=False, cache_dir=str(tmp_path))
    outcome = fit_and_evaluate(clone(learner), data, plan)
    m = outcome.metrics
    assert m["orders"] == 20 and m["mistakes_std"] > 0 and m["updates_std"] == m["mistakes_std"]
    for name in ("novikoff_bias", "freund_schapire", "mohri_rostamizadeh"):
        mean, std = m[f"bound_ratio_mean.{name}"], m[f"bound_ratio_std.{name}"]
        assert 0 < std < mean <= m[f"bound_ratio.{name}"] <= 1.0  # the worst ordering is logged
    # Novikoff's bound does not depend on the order: its ratios are the mistakes over one value
    ratio = m["bound_ratio_mean.novikoff_bias"] / (m["mistakes"] / m["bound.novikoff_bias"])
    assert ratio == pytest.approx(1.0, rel=1e-12)
    assert np.isclose(
        m["bound_ratio_std.novikoff_bias"], m["mistakes_std"] / m["bound.novikoff_bias"]
    )
