"""Each bound at its best comparator, against minima computed here independently.

- Novikoff with a bias: the max margin of (x, c) from Lawson and Hanson's least-distance program
  solved by non-negative least squares (scipy's nnls, an active-set method: no interior point);
- Freund–Schapire: its convex objective minimised by BFGS from several starts, and a dense γ grid
  at the generator's u (which the best comparator may never exceed);
- the kernel perceptron's feature-space bound (RBF and polynomial) against its mistakes, and
  against the lifted input-space separator on polynomial kernels;
- PA-I and PA-II against BFGS on their objectives, the multiclass bound against the generator's U.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from _instances import batch, facts, multiclass_batch, run, run_kernel, run_multiclass, stand_in
from scipy.optimize import minimize, nnls

from lincls import bounds
from lincls.geometry import certify_multiclass, comparators

INSTANCES = 200


def least_distance(G: np.ndarray) -> np.ndarray | None:
    """min ‖x‖ s.t. Gx ≥ 1 by NNLS (Lawson & Hanson, ch. 23): None when infeasible."""
    n, p = G.shape
    E = np.vstack([G.T, np.ones((1, n))])
    f = np.zeros(p + 1)
    f[-1] = 1.0
    weights, _ = nnls(E, f, maxiter=50 * n)
    r = E @ weights - f
    if abs(r[-1]) < 1e-12:
        return None
    return -r[:-1] / r[-1]


def _with_data(run_facts, X, y):
    return replace(run_facts, X=X, y=y)


def test_comparator_solutions_meet_their_gap_on_small_problems():
    # two points (1, 0) and (0, 1), both +1: v* = (1, 1), ‖v*‖² = 2 exactly
    solution = comparators.hard_margin(np.eye(2))
    assert solution.value == pytest.approx(2.0, rel=1e-9) and solution.gap <= 1e-6
    assert comparators.hard_margin(np.array([[1.0], [-1.0]])) is None  # x and −x, same label
    # Freund–Schapire at a single point z = 1 (radius 1) shown k times: min_v |v| + √k(1 − v)₊
    # is 1 at v = 1 for k ≥ 1 (slope 1 − √k ≤ 0)
    assert comparators.deficit(np.ones((1, 1)), np.array([4.0])).value == pytest.approx(1.0)


def test_novikoff_with_a_bias_is_the_max_margin_of_the_augmented_vectors():
    rng = np.random.default_rng(20260)
    checked, tighter = 0, []
    while checked < INSTANCES:
        n, d = int(rng.integers(3, 30)), int(rng.integers(1, 6))
        scale = float(rng.choice([0.01, 1.0, 100.0]))
        (X,), (y,), (u,), (b,) = batch(rng, 1, n, d, scale, 0.9, float(rng.uniform(0.0, 0.2)))
        if len(set(y)) < 2:
            continue
        mistakes, made, rows = run(
            X, y, "perceptron", bias_feature=1.0, passes=int(rng.integers(1, 5))
        )
        learner = stand_in("perceptron", 1.0, lr=1.0, radius_=None)
        run_facts = _with_data(facts(X, y, u, b, learner, made, rows), X, y)
        evaluation = bounds.evaluate(run_facts)
        logged = evaluation.values["novikoff_bias"]
        G = y[:, None] * np.hstack([X, np.ones((n, 1))])
        v = least_distance(G)
        radius = np.sqrt(run_facts.radius**2 + 1.0)
        margin = (G @ v).min() / np.linalg.norm(v)
        expected = (radius / margin) ** 2
        assert logged == pytest.approx(expected, rel=1e-4)
        assert logged >= expected * (1 - 1e-6)
        assert evaluation.sources["novikoff_bias"] == "best"
        assert evaluation.details["novikoff_bias"]["gap"] <= comparators.GAP_TOLERANCE
        assert evaluation.details["novikoff_bias"]["margin"] == pytest.approx(margin, rel=1e-4)
        assert bounds.holds(mistakes, logged)
        generator = bounds.novikoff_bias(run_facts.radius, run_facts.certificate.margin, b, 1.0)
        tighter.append(generator / logged)
        checked += 1
    assert min(tighter) >= 1 - 1e-9  # never above the generator's (u, b) carried over


def _fs_objective(Z, counts, radius):
    """R'‖v‖ + ‖√k(1 − Zv)₊‖ and its gradient (away from v = 0 and a zero deficit)."""

    def value(v):
        short = np.maximum(1.0 - Z @ v, 0.0)
        norm, deficit = np.linalg.norm(v), np.sqrt(np.sum(counts * short**2))
        grad = radius * v / max(norm, 1e-300)
        if deficit > 0:
            grad -= Z.T @ (counts * short) / deficit
        return radius * norm + deficit, grad

    return value


def test_freund_schapire_is_the_minimum_over_every_comparator_on_noisy_data():
    rng = np.random.default_rng(7)
    checked, over_grid = 0, []
    while checked < INSTANCES:
        n, d = int(rng.integers(4, 30)), int(rng.integers(1, 6))
        scale = float(rng.choice([0.01, 1.0, 100.0]))
        passes = int(rng.integers(1, 6))
        (X,), (y,), (u,), (b,) = batch(rng, 1, n, d, scale, 0.8, 0.05, flip=0.25)
        mistakes, made, rows = run(X, y, "perceptron", bias_feature=1.0, passes=passes)
        learner = stand_in("perceptron", 1.0, lr=1.0, radius_=None)
        run_facts = _with_data(facts(X, y, u, b, learner, made, rows), X, y)
        if "novikoff_bias" in bounds.evaluate(replace(run_facts, X=None)).values:
            continue  # the flips left the data separable by the generator: not this test
        logged = bounds.evaluate(run_facts).values["freund_schapire"]
        counts = run_facts.presentations.astype(np.float64)
        radius = np.sqrt(run_facts.radius**2 + 1.0)
        Z = y[:, None] * np.hstack([X, np.ones((n, 1))])
        objective = _fs_objective(Z, counts, radius)
        unit = np.append(u, b) / np.hypot(1.0, b)
        starts = [unit / (0.5 * radius), unit / (0.05 * radius), np.full(d + 1, 0.1 / radius),
                  *(rng.standard_normal((4, d + 1)) / radius)]  # fmt: skip
        results = [
            minimize(objective, s, jac=True, method="BFGS", options={"gtol": 1e-12}) for s in starts
        ]
        polish = minimize(lambda v, f=objective: f(v)[0], min(results, key=lambda r: r.fun).x,
                          method="Nelder-Mead", options={"xatol": 1e-12, "fatol": 1e-14,
                                                         "maxiter": 20_000})  # fmt: skip
        found = min(polish.fun, *(r.fun for r in results))
        independent = min(found, np.sqrt(counts.sum())) ** 2  # v = 0: the trivial count
        assert logged == pytest.approx(independent, rel=1e-4)
        assert logged <= independent * (1 + 1e-6)
        # a dense γ grid at the generator's u (augmented) never beats the best comparator
        margins = Z @ unit
        gammas = radius * np.geomspace(1e-5, 1.0, 4000)
        short = np.maximum(gammas[:, None] - margins[None, :], 0.0)
        grid = ((radius + np.sqrt((counts * short**2).sum(axis=1))) / gammas) ** 2
        assert logged <= grid.min() * (1 + 1e-9)
        assert bounds.holds(mistakes, logged)
        over_grid.append(grid.min() / logged)
        checked += 1
    assert max(over_grid) > 1.01  # the best comparator is strictly better somewhere


KERNELS = {"rbf": ("rbf", 1, 1.0), "poly 2, bias 1": ("poly", 2, 1.0),
           "poly 3, no bias": ("poly", 3, 0.0)}  # fmt: skip


@pytest.mark.parametrize("case", list(KERNELS))
def test_kernel_perceptron_gets_a_feature_space_bound(case):
    kernel, degree, bias_sq = KERNELS[case]
    rng = np.random.default_rng(degree + int(bias_sq))
    checked = violations = 0
    ratios = []
    while checked < 1000:
        n, d = int(rng.integers(2, 20)), int(rng.integers(1, 5))
        scale = float(rng.choice([0.3, 1.0, 3.0]))
        offset = 0.0 if bias_sq == 0.0 and kernel == "rbf" else 0.7
        (X,), (y,), (u,), (b,) = batch(rng, 1, n, d, scale, offset, float(rng.uniform(0, 0.2)))
        mistakes, made, rows = run_kernel(X, y, kernel, degree, bias_sq=bias_sq,
                                          passes=int(rng.integers(1, 5)))  # fmt: skip
        learner = stand_in("kernel_perceptron", np.sqrt(bias_sq), kernel=kernel, degree=degree,
                           gamma=1.0)  # fmt: skip
        run_facts = facts(X, y, u, b, learner, made, rows)
        evaluation = bounds.evaluate(_with_data(run_facts, X, y))
        value = evaluation.values["kernel_novikoff"]
        assert evaluation.sources["kernel_novikoff"] == "best"
        assert evaluation.details["kernel_novikoff"]["gap"] <= comparators.GAP_TOLERANCE
        violations += not bounds.holds(mistakes, value)
        if kernel == "poly":
            lifted = bounds.evaluate(run_facts).values["kernel_novikoff"]
            assert value <= lifted * (1 + 1e-9)
            ratios.append(lifted / value)
        checked += 1
    assert violations == 0
    if ratios:
        assert max(ratios) > 2.0  # the lifted separator is far from the feature-space optimum


def soft_margin(Z, counts, C, squared, start):
    """min ‖v‖² + 2C Σ k ξ (or Σ k ξ²) s.t. ξ ≥ 0, ξ ≥ 1 − Zv, by SLSQP on (v, ξ)."""
    n, p = Z.shape

    def value(x):
        v, xi = x[:p], x[p:]
        return v @ v + 2 * C * np.sum(counts * (xi**2 if squared else xi))

    def grad(x):
        v, xi = x[:p], x[p:]
        return np.concatenate((2 * v, 2 * C * counts * (2 * xi if squared else 1.0)))

    A = np.hstack([Z, np.eye(n)])  # Zv + ξ − 1 ≥ 0
    constraints = [
        {"type": "ineq", "fun": lambda x: A @ x - 1.0, "jac": lambda x: A},
        {"type": "ineq", "fun": lambda x: x[p:], "jac": lambda x: np.eye(n, n + p, p)},
    ]
    x0 = np.concatenate((start, np.maximum(1.0 - Z @ start, 0.0)))
    result = minimize(value, x0, jac=grad, constraints=constraints, method="SLSQP",
                      options={"ftol": 1e-14, "maxiter": 2000})  # fmt: skip
    v = result.x[:p]
    loss = np.maximum(1.0 - Z @ v, 0.0)  # re-measured at the solution's v
    return v @ v + 2 * C * np.sum(counts * (loss**2 if squared else loss))


@pytest.mark.parametrize("variant", ["pa1", "pa2"])
def test_pa_bounds_at_the_soft_margin_minimum(variant):
    rng = np.random.default_rng(11 if variant == "pa1" else 12)
    squared = variant == "pa2"
    for _ in range(100):
        n, d = int(rng.integers(3, 25)), int(rng.integers(1, 5))
        C = float(rng.choice([0.01, 0.3, 5.0]))
        (X,), (y,), (u,), (b,) = batch(rng, 1, n, d, 1.0, 0.8, 0.05, flip=0.15)
        mistakes, made, rows = run(X, y, variant, bias_feature=1.0, passes=int(rng.integers(1, 4)),
                                   C=C)  # fmt: skip
        learner = stand_in("passive_aggressive", 1.0, variant=variant, C=C, bias="feature")
        run_facts = _with_data(facts(X, y, u, b, learner, made, rows), X, y)
        evaluation = bounds.evaluate(run_facts)
        value = evaluation.values[variant]
        counts = run_facts.presentations.astype(np.float64)
        Z = y[:, None] * np.hstack([X, np.ones((n, 1))])
        starts = [np.zeros(d + 1), np.append(u, b) * 3.0]
        independent = min(soft_margin(Z, counts, C, squared, s) for s in starts)
        r2 = run_facts.radius**2 + 1.0
        factor = max(r2, 1 / C) if variant == "pa1" else r2 + 0.5 / C
        assert value == pytest.approx(factor * independent, rel=1e-4)
        assert value <= factor * independent * (1 + 1e-6)
        assert evaluation.details[variant]["gap"] <= comparators.GAP_TOLERANCE
        assert bounds.holds(mistakes, value)


@pytest.mark.parametrize("rule", ["multiclass_perceptron", "mira"])
def test_multiclass_bounds_at_the_multiclass_svm(rule):
    rng = np.random.default_rng(5)
    theorem = "multiclass_perceptron" if rule == "multiclass_perceptron" else "mira_pa1_kesler"
    for _ in range(100):
        n, d, k = int(rng.integers(3, 20)), int(rng.integers(1, 5)), int(rng.integers(2, 5))
        (X,), (y,), (U,), (b,) = multiclass_batch(rng, 1, n, d, k, 1.0, 0.8, 0.1)
        mistakes, _, _ = run_multiclass(X, y, rule, bias_feature=1.0, passes=3, max_step=0.5, k=k)
        cert = certify_multiclass(X, y, U, b, "generator")
        learner = stand_in(rule, 1.0, max_step=0.5, classes_=np.arange(k))
        radius = float(np.sqrt(np.einsum("ij,ij->i", X, X).max()))
        plain = bounds.RunFacts(learner, radius, cert, certificates=(cert,))
        best = bounds.evaluate(replace(plain, X=X, y=y))
        value = best.values[theorem]
        assert best.details[theorem]["gap"] <= comparators.GAP_TOLERANCE
        assert value <= bounds.evaluate(plain).values[theorem] * (1 + 1e-9)
        assert bounds.holds(mistakes, value)
