"""ROMMA and aggressive ROMMA: the scikit-learn checks, the paper's update against a direct loop
that solves each step's two-constraint program itself (24 streams, dense and CSR, both variants,
with and without a bias), the bound by hand and where it does not apply, bad input, a run."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import compose_config
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls import bounds, evaluation
from lincls.bounds.romma import romma_bound
from lincls.errors import LinclsInputError
from lincls.geometry import certify
from lincls.learners.romma import ROMMA


@parametrize_with_checks([ROMMA(), ROMMA(aggressive=True, bias="none", shuffle=True)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def direct_romma(X, y, aggressive, passes, c=1.0):
    """Li & Long (2002), one example at a time: w' = argmin ‖v‖ s.t. v·w ≥ ‖w‖², y v·x ≥ 1.

    The program is solved by its active sets: the second constraint alone (y x/‖x‖²) when it
    meets the first, else both as equalities (a 2 × 2 system in v = αw + βx).
    Returns (mistakes, updates, w on (x, c)).
    """
    Xb = np.hstack([X, np.full((X.shape[0], 1), c)]) if c else X
    w = np.zeros(Xb.shape[1])
    mistakes = updates = 0
    for _ in range(passes):
        for x, label in zip(Xb, y, strict=True):
            a = w @ x
            mistakes += label * a <= 0
            if label * a >= 1 - 1e-9 or (label * a > 0 and not aggressive) or not x.any():
                continue
            alone = label * x / (x @ x)
            gram = np.array([[w @ w, w @ x], [w @ x, x @ x]])
            if alone @ w >= w @ w or np.linalg.det(gram) <= 1e-12 * gram[0, 0] * gram[1, 1]:
                w = alone
            else:
                alpha, beta = np.linalg.solve(gram, [w @ w, label])
                w = alpha * w + beta * x
            updates += 1
    return mistakes, updates, w


def stream(seed):
    """Rows of random scale and length, some sparse, labelled by a hyperplane (some flipped)."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(20, 150)), int(rng.integers(1, 12))
    X = rng.standard_normal((n, d)) * rng.uniform(0.1, 10)
    if seed % 3 == 0:
        X[rng.random(X.shape) < 0.5] = 0.0
    u = rng.standard_normal(d)
    y = np.where(X @ u + (0.3 if seed % 2 else 0.0) >= 0, 1.0, -1.0)
    if seed % 4 == 1:
        y[rng.random(n) < 0.1] *= -1
    return X, y


@pytest.mark.parametrize("aggressive", [False, True])
@pytest.mark.parametrize("bias", ["feature", "none"])
def test_equals_the_papers_program_dense_and_csr(aggressive, bias):
    worst = 0.0
    for seed in range(24):
        X, y = stream(seed)
        params = {"aggressive": aggressive, "bias": bias, "max_passes": 4}
        dense = ROMMA(**params, stop_when_converged=False).fit(X, y)
        csr = ROMMA(**params, stop_when_converged=False).fit(sp.csr_matrix(X), y)
        np.testing.assert_array_equal(dense.coef_, csr.coef_)
        np.testing.assert_array_equal(dense.intercept_, csr.intercept_)
        np.testing.assert_array_equal(dense.mistake_steps_, csr.mistake_steps_)
        mistakes, updates, w = direct_romma(X, y, aggressive, 4, 1.0 if bias == "feature" else 0)
        assert (dense.mistakes_, dense.updates_) == (mistakes, updates)
        ours = np.r_[dense.coef_[0], dense.intercept_] if bias == "feature" else dense.coef_[0]
        worst = max(worst, float(np.abs(ours - w).max() / np.abs(w).max()))
    assert worst < 1e-12  # measured: 4e-15


def test_first_update_and_both_constraints_tight():
    model = ROMMA(bias="none").partial_fit([[2.0, 0.0], [0.0, -1.0]], [1, 1], classes=[-1, 1])
    # w₂ = x₁/‖x₁‖² = (0.5, 0); at x₂ = (0, −1) (a zero activation, a mistake) both constraints
    # hold as equalities: v·w₂ = 0.25 and −v₂ = 1
    np.testing.assert_allclose(model.coef_[0], [0.5, -1.0], rtol=1e-15)
    assert (model.mistakes_, model.updates_) == (2, 2)


def test_aggressive_updates_inside_the_margin_only():
    X = np.array([[1.0, 0.0], [0.5, 0.1]])
    conservative = ROMMA(bias="none").partial_fit(X, [1, 1], classes=[-1, 1])
    aggressive = ROMMA(aggressive=True, bias="none").partial_fit(X, [1, 1], classes=[-1, 1])
    # w = (1, 0) after the first row; the second has y·w·x = 0.5: right, inside the margin
    assert (conservative.mistakes_, conservative.updates_) == (1, 1)
    assert (aggressive.mistakes_, aggressive.updates_) == (1, 2)
    assert aggressive.coef_[0] @ X[1] == pytest.approx(1.0, rel=1e-15)


def test_partial_fit_chunks_equal_one_pass():
    X, y = stream(5)
    parts = ROMMA(aggressive=True)
    for chunk in np.array_split(np.arange(X.shape[0]), 4):
        parts.partial_fit(X[chunk], y[chunk], classes=[-1.0, 1.0])
    whole = ROMMA(aggressive=True, max_passes=1).fit(X, y)
    np.testing.assert_array_equal(parts.coef_, whole.coef_)
    assert (parts.mistakes_, parts.updates_) == (whole.mistakes_, whole.updates_)


def test_bound_by_hand_and_outside_the_theorem():
    assert romma_bound(2.0, 0.1) == pytest.approx(400.0, rel=1e-15)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 3))
    u = np.array([1.0, 0.0, 0.0])
    X[:, 0] += np.sign(X[:, 0]) * 0.2
    y = np.sign(X[:, 0])
    model = ROMMA().fit(X, y, coef_init=[0.1, 0.0, 0.0])
    cert = certify(X, y, u, 0.0, "generator")
    found = bounds.evaluate(bounds.RunFacts(model, 1.0, cert, X=X, y=y))
    assert found.skipped["romma"] == "the learner did not start from w = 0"
    model = ROMMA(bias="none").fit(X, y)
    found = bounds.evaluate(bounds.RunFacts(model, float(np.linalg.norm(X, axis=1).max()), cert))
    assert found.values["romma"] == pytest.approx((found_radius(X) / cert.margin) ** 2)
    assert model.mistakes_ <= found.values["romma"]


def found_radius(X):
    return float(np.linalg.norm(X, axis=1).max())


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: ROMMA(aggressive="yes"), "aggressive: must be true or false, got 'yes'"),
        (lambda: ROMMA(bias="r2"), "bias: must be one of 'feature', 'none', got 'r2'"),
        (lambda: ROMMA(max_passes=0), "max_passes: must be an integer in [1, inf), got 0"),
    ],
)
def test_bad_parameters_are_one_line_errors(make, message):
    with pytest.raises(LinclsInputError) as info:
        make().fit([[1.0, 0.0], [0.0, 1.0]], [0, 1])
    assert str(info.value) == message


def test_run_with_its_bound_at_the_best_comparator():
    config = compose_config(
        ["learner=romma", "learner.aggressive=true", "dataset.n=300", "dataset.n_test=50"]
    )
    outcome = evaluation.measure(config)
    m, tags = outcome.metrics, outcome.tags
    assert tags["bound_violated"] == "false" and tags["bound.romma.certificate"] == "best"
    assert 1 <= m["mistakes"] <= m["bound.romma"] and m["updates"] >= m["mistakes"]
    with pytest.raises(LinclsInputError) as info:
        evaluation.prepare(compose_config(["learner=romma", "learner.bias=r2"]))
    assert str(info.value) == "learner.bias: must be one of 'feature', 'none', got 'r2'"
