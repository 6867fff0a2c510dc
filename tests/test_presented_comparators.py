"""Best comparators over the presented sequence: Novikoff's theorem is about the examples the
learner was shown, so on the adversarial order (which may never present some rows) its best
comparator is the hard-margin separator of the presented rows alone, with their radius.

The reference minimum is independent of ``lincls.geometry.comparators``: scipy's SLSQP on
min ‖v‖² s.t. y_t v·x'_t ≥ 1 over the presented rows, started from the generator's separator,
its point rescaled onto the constraints (so it is a feasible comparator's value, an upper bound).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.base import clone

from lincls.bounds import _best
from lincls.bounds._registry import RunFacts
from lincls.data import make_multiclass, make_separable
from lincls.evaluation import RunPlan, fit_and_evaluate
from lincls.geometry.certificates import CertificateCache, certificates_of, primary
from lincls.learners import MarginPerceptron, MulticlassPerceptron, PassiveAggressive, Perceptron
from lincls.orders import fit_in_order

INSTANCES = 210
RELATIVE = 1e-4


def independent_minimum(A: np.ndarray, start: np.ndarray) -> float:
    """min ‖v‖² s.t. A v ≥ 1 by SLSQP, its point scaled to min A v = 1 (feasible, on the margin)."""
    found = minimize(
        lambda v: v @ v,
        start,
        jac=lambda v: 2.0 * v,
        constraints=[{"type": "ineq", "fun": lambda v: A @ v - 1.0, "jac": lambda v: A}],
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 1000},
    )
    v = found.x / float(np.min(A @ found.x))
    return float(v @ v)


def _instance(index: int, rng: np.random.Generator):
    n, d = int(rng.integers(5, 30)), int(rng.integers(2, 5))
    radius = float(rng.uniform(0.5, 3.0))
    margin = float(rng.uniform(0.02, 0.3)) * radius
    bias = ("none", "feature", "r2")[index % 3]
    offset = 0.0 if bias == "none" else float(rng.uniform(-0.5, 0.5)) * (radius - margin)
    data = make_separable(n, d, margin, radius, offset, seed=index, n_test=0)
    return data, Perceptron(bias=bias, max_passes=int(rng.integers(1, 4)))


def _signed_vectors(data, learner) -> np.ndarray:
    """y_t x'_t, x' = (x, c) the vectors the learner sees."""
    c = learner.bias_feature_
    X = np.hstack([data.X, np.full((data.X.shape[0], 1), c)]) if c else data.X
    return np.where(data.y == learner.classes_[1], 1.0, -1.0)[:, None] * X


def test_the_adversarial_novikoff_comparator_is_the_minimum_over_the_presented_rows(tmp_path):
    rng = np.random.default_rng(2026)
    plan = RunPlan(order="adversarial", svm=True, cache_dir=str(tmp_path))
    partial = looser = 0
    for index in range(INSTANCES):
        data, learner = _instance(index, rng)
        outcome = fit_and_evaluate(learner, data, plan)
        # the run's ordering replayed on a clone, for the presentations the runner does not log
        replay = clone(learner)
        certs, _ = certificates_of(data, replay, True, str(tmp_path))
        counts = fit_in_order(replay, data.X, data.y, "adversarial", 0, 0, primary(certs))
        assert np.array_equal(replay.mistake_indices_, outcome.learner.mistake_indices_)
        shown = counts > 0
        partial += not shown.all()

        A = _signed_vectors(data, replay)
        c = replay.bias_feature_
        u = np.r_[data.u, data.b / c] if c else data.u
        radius_sq = float(np.max(np.sum(A[shown] ** 2, axis=1)))
        reference = radius_sq * independent_minimum(A[shown], u / np.min(A[shown] @ u))
        everywhere = float(np.max(np.sum(A**2, axis=1))) * independent_minimum(A, u / np.min(A @ u))
        looser += everywhere > reference * (1.0 + RELATIVE)

        name = "novikoff" if c == 0.0 else "novikoff_bias"
        logged = outcome.metrics[f"bound.{name}"]
        assert logged == pytest.approx(reference, rel=RELATIVE), (index, logged, reference)
        assert logged >= reference * (1.0 - RELATIVE), (index, logged, reference)
        assert outcome.metrics[f"bound_param.{name}.radius"] == pytest.approx(
            np.sqrt(radius_sq), rel=1e-12
        )
        facts = RunFacts(
            learner=outcome.learner, radius=data.radius, certificate=None, presentations=counts,
            X=data.X, y=data.y, data_key=data.fingerprint, cache_dir=str(tmp_path),
        )  # fmt: skip
        found = _best.separator(facts)
        assert found.solution.value == pytest.approx(reference, rel=RELATIVE)
        assert found.margins[shown].min() == pytest.approx(1.0, rel=1e-9)
    assert partial >= 200  # the adversary left some row unpresented (209 of the 210 here)
    assert looser >= 100  # the minimum over every row is larger (the old comparator; 159 here)


def _hard_keys(directory) -> list[str]:
    return [key for key in CertificateCache(directory).fits() if "-best-hard-" in key]


def test_an_order_that_presents_every_row_keeps_the_comparator_and_its_cache_key(tmp_path):
    data = make_separable(25, 3, 0.1, 1.0, 0.2, seed=5, n_test=0)
    learner = Perceptron(bias="feature", max_passes=3)
    counts = fit_in_order(learner, data.X, data.y, "fixed")
    assert (counts == learner.n_passes_).all()
    base = dict(
        learner=learner, radius=data.radius, certificate=None, X=data.X, y=data.y,
        data_key=data.fingerprint, cache_dir=str(tmp_path),
    )  # fmt: skip
    _best._memory.clear()
    unknown = _best.separator(RunFacts(**base))
    _best._memory.clear()
    every = _best.separator(RunFacts(**base, presentations=counts))
    assert every.solution.value == unknown.solution.value
    assert every.radius == unknown.radius == np.sqrt(data.radius**2 + 1.0)
    assert len(_hard_keys(tmp_path)) == 1  # one key: solved once, then read
    # a row never presented is left out: its own key, and a smaller radius when it was the
    # largest row (make_separable puts row 0, on the margin, at norm exactly R when d > 1)
    counts[0] = 0
    _best._memory.clear()
    fewer = _best.separator(RunFacts(**base, presentations=counts))
    assert len(_hard_keys(tmp_path)) == 2
    assert fewer.radius < every.radius
    assert fewer.solution.value <= every.solution.value * (1.0 + 1e-9)


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda: MarginPerceptron(tau=0.1, lr=0.5), "margin_perceptron"),
        (lambda: PassiveAggressive(variant="pa"), "pa"),
    ],
)
def test_the_margin_perceptron_and_pa_use_the_presented_rows_too(make, name, tmp_path):
    rng = np.random.default_rng(11)
    plan = RunPlan(order="adversarial", svm=True, cache_dir=str(tmp_path))
    for index in range(30):
        data, _ = _instance(3 * index + 1, rng)  # a bias feature: offsets allowed
        outcome = fit_and_evaluate(make(), data, plan)
        replay = make()
        certs, _ = certificates_of(data, replay, True, str(tmp_path))
        counts = fit_in_order(replay, data.X, data.y, "adversarial", 0, 0, primary(certs))
        assert np.array_equal(replay.mistake_indices_, outcome.learner.mistake_indices_)
        shown = counts > 0
        A = _signed_vectors(data, replay)
        u = np.r_[data.u, data.b / replay.bias_feature_]
        radius_sq = float(np.max(np.sum(A[shown] ** 2, axis=1)))
        reference = radius_sq * independent_minimum(A[shown], u / np.min(A[shown] @ u))
        if name == "margin_perceptron":  # (R'² + 2τ/η)‖v‖²
            reference *= 1.0 + 2.0 * 0.1 / 0.5 / radius_sq
        assert outcome.metrics[f"bound.{name}"] == pytest.approx(reference, rel=RELATIVE), index


def test_the_multiclass_comparator_meets_the_presented_rows_alone(tmp_path):
    data = make_multiclass(n=24, d=2, n_classes=3, margin=0.05, radius=1.0, seed=4, n_test=0)
    learner = MulticlassPerceptron(max_passes=20)
    counts = fit_in_order(learner, data.X, data.y, "adversarial", 0, 0)
    shown = counts > 0
    assert 0 < shown.sum() < 24
    X = np.hstack([data.X, np.ones((24, 1))])
    index = np.searchsorted(learner.classes_, data.y)
    # Kesler's rows by hand: e_y ⊗ x' − e_r ⊗ x' for every presented row and r ≠ y
    rows = []
    for t in np.flatnonzero(shown):
        for r in range(3):
            if r != index[t]:
                row = np.zeros((3, 3))
                row[index[t]], row[r] = X[t], -X[t]
                rows.append(row.ravel())
    A = np.array(rows)
    start = np.zeros((3, 3))
    start[:, :2] = data.U
    start = start.ravel() / np.min(A @ start.ravel())
    radius_sq = float(np.max(np.sum(X[shown] ** 2, axis=1)))
    reference = radius_sq * independent_minimum(A, start)
    facts = RunFacts(
        learner=learner, radius=data.radius, certificate=None, presentations=counts, X=data.X,
        y=data.y, data_key=data.fingerprint, cache_dir=str(tmp_path),
    )  # fmt: skip
    found = _best.multiclass_separator(facts)
    assert found.radius == pytest.approx(np.sqrt(radius_sq), rel=1e-12)
    assert found.solution.value == pytest.approx(reference, rel=RELATIVE)
    everywhere = _best.multiclass_separator(replace(facts, presentations=None))
    assert everywhere.solution.value > found.solution.value * (1.0 + RELATIVE)
