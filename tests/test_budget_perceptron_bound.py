"""The Randomized Budget Perceptron's expected-mistake bound holds for the mean over seeds.

``lincls/bounds/budget_perceptron.py``: 0 violations.

The bound is on E[M] over the random discards of runs on one sequence, so each instance (data,
budget, bias rule, passes, fixed or shuffled order) is run with many seeds and the mean of their
mistakes is compared with it: 300 instances × 20 seeds in ``make test``, 10,000 instances × 16
seeds in ``make bench`` (section ``studies``: separable and noisy data with offsets, every bias
rule, budgets 1 to 50).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from lincls.bounds import holds
from lincls.bounds.budget_perceptron import rbp_bound_at_certificate, rbp_expected_bound
from lincls.data import make_noisy, make_separable
from lincls.geometry import augmented_scale
from lincls.learners.budget_perceptron import BudgetPerceptron

BLOCKS = 8  # the slow instances run in this many tests of 1,250


def test_the_bound_by_hand():
    assert rbp_expected_bound(0.0, 5.0, 1.0, 10) == 5.0  # w = 0: the presentations' count
    assert math.isinf(rbp_expected_bound(4.0, 0.0, 1.0, 4))  # R'‖w‖ = √B
    # ‖w‖ = R' = 1, L = 0, B = 100: min over q of q/(2 − 2/q − q/200), by scipy's bounded Brent
    exact = minimize_scalar(
        lambda q: q / (2.0 - 2.0 / q - q / 200.0), bounds=(1.0 + 1e-9, 100.0), method="bounded",
        options={"xatol": 1e-12},
    ).fun  # fmt: skip
    found = rbp_expected_bound(1.0, 0.0, 1.0, 100)
    assert exact <= found <= exact * (1 + 1e-3)
    assert found == pytest.approx(2.0202, abs=1e-4)  # → 2R'²‖w‖² as B → ∞: twice Novikoff's


def _instance(seed: int) -> dict:
    rng = np.random.default_rng([seed, 2007])
    radius = float(rng.choice([0.1, 1.0, 10.0]))
    margin = radius * float(rng.choice([0.05, 0.1, 0.3, 0.5]))
    bias = str(rng.choice(["feature", "none", "r2"]))
    offset = (
        0.0
        if bias == "none" or rng.random() < 0.3
        else float(rng.uniform(-0.5, 0.5)) * (radius - margin)
    )
    n, d = int(rng.integers(5, 50)), int(rng.integers(1, 5))
    if rng.random() < 0.4:
        data = make_noisy(n, d, margin, radius, offset, flip=float(rng.choice([0.05, 0.2])),
                          overlap=int(rng.integers(0, 3)), seed=seed, n_test=0)  # fmt: skip
    else:
        data = make_separable(n, d, margin, radius, offset, seed=seed, n_test=0)
    learner = {
        "budget": int(rng.choice([1, 2, 3, 5, 10, 20, 50])),
        "bias": bias,
        "max_passes": int(rng.integers(1, 5)),
        "shuffle": bool(rng.random() < 0.5),
        "stop_when_converged": False,  # every example presented max_passes times
    }
    return {"data": data, "learner": learner}


def _check(seeds: range, runs: int) -> tuple[list, int, float]:
    """(instances whose mean over ``runs`` seeds broke the bound, instances with a finite bound
    below the presentations' count, the largest mean / bound)."""
    broke, informative, worst = [], 0, 0.0
    for seed in seeds:
        case = _instance(seed)
        data, options = case["data"], case["learner"]
        models = [BudgetPerceptron(**options, random_state=s).fit(data.X, data.y) for s in
                  range(runs)]  # fmt: skip
        mean = float(np.mean([m.mistakes_ for m in models]))
        model = models[0]
        c = model.bias_feature_
        signed = np.where(data.y == model.classes_[1], 1.0, -1.0)
        # the generator's (u, b) as the unit separator on (x, c) (b = 0 without a bias)
        margins = signed * (data.X @ data.u + data.b) / augmented_scale(data.b, c)
        radius = float(np.sqrt(np.max(np.sum(data.X**2, axis=1)) + c * c))
        presentations = np.full(data.X.shape[0], float(options["max_passes"]))
        bound, _ = rbp_bound_at_certificate(margins, presentations, radius, options["budget"])
        if not holds(mean, bound):
            broke.append((seed, mean, bound))
        if bound < presentations.sum():
            informative += 1
            worst = max(worst, mean / bound)
    return broke, informative, worst


def test_mean_mistakes_within_the_bound_on_three_hundred_instances():
    broke, informative, worst = _check(range(300), 20)
    assert broke == []
    assert informative >= 80 and worst > 0.4, (informative, worst)


@pytest.mark.study
@pytest.mark.parametrize("block", range(BLOCKS))
def test_mean_mistakes_within_the_bound_on_ten_thousand_instances(block):
    per_block = 10_000 // BLOCKS
    broke, informative, _ = _check(range(block * per_block, (block + 1) * per_block), 16)
    assert broke == []
    assert informative >= per_block // 5
