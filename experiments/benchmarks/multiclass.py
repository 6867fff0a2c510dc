"""Multiclass learners against scikit-learn's multiclass Perceptron (one-vs-rest).

There is no peer for Kesler's multiclass perceptron or MIRA: scikit-learn's ``Perceptron`` on k
classes trains k binary perceptrons one-vs-rest, a different rule with the same k dot products per
example and pass. The rows time both side by side for orientation (no target). An epoch is the
difference of a 5-pass and a 1-pass fit, divided by 4, as in the other sections.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron as SkPerceptron

from lincls.experiments.bench import Row, best_time
from lincls.learners import MIRA, MulticlassPerceptron


def multiclass_problem(n: int, d: int, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian rows labelled by the argmax of k random rows, 10% relabelled at random."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.argmax(X @ rng.standard_normal((k, d)).T, axis=1)
    noisy = rng.random(n) < 0.1
    y[noisy] = rng.integers(0, k, int(noisy.sum()))
    return X, y


def _epoch(make: Callable[[int], object], X, y, repeat: int) -> tuple[float, float]:
    """(seconds per epoch, seconds of a 1-pass fit) of ``make(passes).fit(X, y)``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        one = best_time(lambda: make(1).fit(X, y), repeat=repeat)
        five = best_time(lambda: make(5).fit(X, y), repeat=repeat)
    return (five - one) / 4, one


def run(quick: bool = False) -> list[Row]:
    """MulticlassPerceptron and MIRA, dense 100k×100 with 5 classes, against sklearn's OvR."""
    scale = 20 if quick else 1
    repeat = 2 if quick else 5
    X, y = multiclass_problem(100_000 // scale, 100, 5)

    def peer(k):
        return SkPerceptron(shuffle=False, tol=None, max_iter=k)

    learners = {
        "multiclass perceptron": lambda k: MulticlassPerceptron(
            max_passes=k, stop_when_converged=False
        ),
        "MIRA": lambda k: MIRA(max_passes=k, stop_when_converged=False),
    }
    peer_epoch, peer_fit = _epoch(peer, X, y, repeat)
    rows = []
    for name, ours in learners.items():
        ours_epoch, ours_fit = _epoch(ours, X, y, repeat)
        case = f"{name}, dense 100k×100, 5 classes"
        note = "peer is a different rule (one-vs-rest)"
        rows.append(Row("multiclass", f"epoch, {case}", ours_epoch, peer_epoch, "Perceptron OvR",
                        note=note))  # fmt: skip
        rows.append(Row("multiclass", f"1-pass fit, {case}", ours_fit, peer_fit, "Perceptron OvR",
                        note="includes input validation"))  # fmt: skip
    return rows
