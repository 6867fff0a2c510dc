"""MaxEnt: GIS against L-BFGS, the iterations and seconds each needs to reach the same likelihood.

For each data set the best log-likelihood L* is that of a tight L-BFGS run (gradient ≤ 1e-10);
a solver has reached tolerance ε when its log-likelihood is within ε nats per example of it,
L ≥ L* − ε·n. Each solver runs once with a budget, its ``log_likelihood_`` record gives the
first iteration at the target, and a fit stopped at exactly that many iterations is timed. GIS
gets a budget of iterations; where it falls short, the row gives the budget's time (a lower
bound) and the tolerance it did reach. The ratio is L-BFGS seconds / GIS seconds: below 1, GIS
is slower.

The data are non-negative, as GIS needs: scikit-learn's digits with pixels scaled to [0, 1]
(10 classes; separable, so L* is a supremum near 0 that no finite model attains) and a
synthetic 5-class set (Gaussian rows labelled by the argmax of 5 random rows, 10% relabelled,
each feature min-max scaled to [0, 1]; overlapping classes, a finite maximum). A last row per
data set times our L-BFGS against scikit-learn's ``LogisticRegression(C=inf)`` (lbfgs) run to
the same gradient tolerance.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from lincls.experiments.bench import Row, best_time
from lincls.experiments.benchmarks.multiclass import multiclass_problem
from lincls.learners import MaxEnt

TOLERANCES = (1e-2, 1e-3)  # nats per example
PEER_TOL = 1e-6


def iterations_to_reach(history: np.ndarray, target: float) -> int | None:
    """The first iteration whose log-likelihood is ≥ ``target``, or None."""
    reached = np.flatnonzero(history >= target)
    return int(reached[0]) if reached.size else None


def _fit(solver: str, X, y, max_iter: int, tol: float = 1e-15) -> MaxEnt:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return MaxEnt(solver=solver, max_iter=max_iter, tol=tol).fit(X, y)


def _timed_fit(solver: str, X, y, max_iter: int, tol: float = 1e-15) -> tuple[MaxEnt, float]:
    start = time.perf_counter()
    model = _fit(solver, X, y, max_iter, tol)
    return model, time.perf_counter() - start


def _seconds(solver: str, X, y, iterations: int) -> float:
    """Best wall time of a fit stopped after ``iterations`` (one run if it takes > 1 s)."""
    once = _timed_fit(solver, X, y, iterations)[1]
    if once > 1.0:
        return once
    return min(once, best_time(lambda: _fit(solver, X, y, iterations), repeat=3, warmup=0))


def _data(quick: bool) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    digits_X, digits_y = load_digits(return_X_y=True)
    n_digits = 400 if quick else digits_X.shape[0]
    X, y = multiclass_problem(600 if quick else 5000, 20, 5, seed=1)
    X = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    return {
        f"digits {n_digits}×64 /16, 10 classes": (digits_X[:n_digits] / 16.0, digits_y[:n_digits]),
        f"synthetic {X.shape[0]}×20 in [0,1], 5 classes": (X, y),
    }


def _gis_against_lbfgs(name: str, X, y, gis_budget: int) -> list[Row]:
    n = X.shape[0]
    best = _fit("lbfgs", X, y, 100_000, tol=1e-10).log_likelihood_[-1]
    gis, budget_seconds = _timed_fit("gis", X, y, gis_budget)
    lbfgs = _fit("lbfgs", X, y, 100_000)
    rows = []
    for eps in TOLERANCES:
        target = best - eps * n
        lbfgs_iters = iterations_to_reach(lbfgs.log_likelihood_, target)
        lbfgs_seconds = _seconds("lbfgs", X, y, lbfgs_iters)
        gis_iters = iterations_to_reach(gis.log_likelihood_, target)
        if gis_iters is None:
            reached = (best - gis.log_likelihood_[-1]) / n
            gis_seconds = budget_seconds
            note = (
                f"GIS NOT there after {gis_budget:,} iterations (within {reached:.2g}·n; its "
                f"time is the budget's, a lower bound: > {gis_seconds / lbfgs_seconds:,.0f}× "
                f"L-BFGS's); L-BFGS {lbfgs_iters} iterations"
            )
        else:
            gis_seconds = _seconds("gis", X, y, gis_iters)
            note = (
                f"iterations GIS {gis_iters:,}, L-BFGS {lbfgs_iters}; GIS takes "
                f"{gis_seconds / lbfgs_seconds:,.0f}× L-BFGS's time"
            )
        rows.append(
            Row("maxent", f"GIS vs L-BFGS: {name}, L within {eps:g}·n of L*", gis_seconds,
                lbfgs_seconds, "MaxEnt lbfgs", note=f"{note}; V = {gis.feature_sum_:.3g}")
        )  # fmt: skip
    return rows


def _lbfgs_against_sklearn(name: str, X, y) -> Row:
    n = X.shape[0]

    def peer():
        return LogisticRegression(C=np.inf, tol=PEER_TOL, max_iter=100_000).fit(X, y)

    def ours():
        return _fit("lbfgs", X, y, 100_000, tol=PEER_TOL)

    ours_seconds, peer_seconds = best_time(ours, repeat=3), best_time(peer, repeat=3)
    ours_model, peer_model = ours(), peer()
    peer_ll = np.log(peer_model.predict_proba(X)[np.arange(n), y]).sum()
    note = (
        f"both to gradient ≤ {PEER_TOL:g}: iterations ours {ours_model.n_iter_}, "
        f"peer {int(peer_model.n_iter_[0])}; L/n ours {ours_model.log_likelihood_[-1] / n:.4g}, "
        f"peer {peer_ll / n:.4g}"
    )
    return Row("maxent", f"L-BFGS to convergence: {name}", ours_seconds, peer_seconds,
               "LogisticRegression(C=inf)", note=note)  # fmt: skip


def run(quick: bool = False) -> list[Row]:
    """GIS and L-BFGS to the same log-likelihood tolerance; our L-BFGS against scikit-learn's."""
    gis_budget = 2_000 if quick else 20_000
    rows = []
    for name, (X, y) in _data(quick).items():
        rows.extend(_gis_against_lbfgs(name, X, y, gis_budget))
        rows.append(_lbfgs_against_sklearn(name, X, y))
    return rows
