"""The second-order perceptron: the scikit-learn checks, the paper's prediction (a linear solve
with the current instance in the matrix) against the kernels on 24 streams (dense and CSR, full
and diagonal, with and without a bias), the bound by hand, bad input, a run with its bound."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import compose_config
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls import evaluation
from lincls.bounds.second_order import mistake_log_det, second_order_bound
from lincls.errors import LinclsInputError
from lincls.learners.second_order import SecondOrderPerceptron as SOP


@parametrize_with_checks([SOP(), SOP(diagonal=True, a=0.5, bias="none", shuffle=True)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def direct_sop(X, y, a, passes, c=1.0, diagonal=False):
    """Cesa-Bianchi, Conconi & Gentile (2005), Figure 2, in numpy: ŷ = sign(vᵀA⁻¹x) with
    A = aI + Σ_mistakes x xᵀ + x xᵀ solved afresh each round (its diagonal alone for the
    diagonal variant). Returns (mistakes, w = M⁻¹v on (x, c))."""
    Xb = np.hstack([X, np.full((X.shape[0], 1), c)]) if c else X
    v = np.zeros(Xb.shape[1])
    M = a * np.eye(Xb.shape[1])
    mistakes = 0
    for _ in range(passes):
        for x, label in zip(Xb, y, strict=True):
            A = M + np.outer(x, x)
            prediction = v @ (x / np.diag(A)) if diagonal else v @ np.linalg.solve(A, x)
            if label * prediction <= 0:
                mistakes += 1
                v = v + label * x
                M = A
    return mistakes, (v / np.diag(M) if diagonal else np.linalg.solve(M, v))


def stream(seed):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(20, 150)), int(rng.integers(1, 12))
    X = rng.standard_normal((n, d)) * rng.uniform(0.1, 3)
    if seed % 3 == 0:
        X[rng.random(X.shape) < 0.5] = 0.0
    u = rng.standard_normal(d)
    y = np.where(X @ u + (0.3 if seed % 2 else 0.0) >= 0, 1.0, -1.0)
    if seed % 4 == 1:
        y[rng.random(n) < 0.1] *= -1
    return X, y, float(rng.choice([0.5, 1.0, 2.0]))


@pytest.mark.parametrize("diagonal", [False, True])
@pytest.mark.parametrize("bias", ["feature", "none"])
def test_equals_the_papers_prediction_dense_and_csr(diagonal, bias):
    worst = 0.0
    for seed in range(24):
        X, y, a = stream(seed)
        params = {"a": a, "diagonal": diagonal, "bias": bias, "max_passes": 3}
        dense = SOP(**params, stop_when_converged=False).fit(X, y)
        csr = SOP(**params, stop_when_converged=False).fit(sp.csr_matrix(X), y)
        np.testing.assert_array_equal(dense.coef_, csr.coef_)
        np.testing.assert_array_equal(dense.intercept_, csr.intercept_)
        np.testing.assert_array_equal(dense.mistake_steps_, csr.mistake_steps_)
        mistakes, w = direct_sop(X, y, a, 3, 1.0 if bias == "feature" else 0.0, diagonal)
        assert dense.mistakes_ == dense.updates_ == mistakes
        ours = np.r_[dense.coef_[0], dense.intercept_] if bias == "feature" else dense.coef_[0]
        worst = max(worst, float(np.abs(ours - w).max() / np.abs(w).max()))
    assert worst < 1e-12  # measured: 2.4e-14 (Sherman–Morrison against a fresh solve)


def test_inverse_is_the_mistakes_matrix():
    X, y, a = stream(4)
    model = SOP(a=a, max_passes=2, stop_when_converged=False).fit(X, y)
    Xb = np.hstack([X, np.ones((X.shape[0], 1))])[model.mistake_indices_]
    np.testing.assert_allclose(
        model.inverse_ @ (a * np.eye(Xb.shape[1]) + Xb.T @ Xb), np.eye(Xb.shape[1]), atol=1e-12
    )


def test_partial_fit_chunks_equal_one_pass():
    X, y, _ = stream(6)
    for diagonal in (False, True):
        parts = SOP(diagonal=diagonal)
        for chunk in np.array_split(np.arange(X.shape[0]), 3):
            parts.partial_fit(X[chunk], y[chunk], classes=[-1.0, 1.0])
        whole = SOP(diagonal=diagonal, max_passes=1).fit(X, y)
        np.testing.assert_array_equal(parts.coef_, whole.coef_)
        assert parts.mistakes_ == whole.mistakes_


def test_bound_by_hand():
    # two mistakes on x = (1, 0) and (0, 2), a = 1: λ = 1 and 4, ln det = ln 2 + ln 5; u = (1, 0)
    # with margins 1 and 0 there, γ = 0.5: D = 0.5, a‖u‖² + Σ (u·x)² = 2
    X = np.array([[1.0, 0.0], [0.0, 2.0]])
    log_det = mistake_log_det(X, np.array([0, 1]), 0.0, 1.0)
    assert log_det == pytest.approx(math.log(10.0), rel=1e-14)
    value = second_order_bound(0.5, 0.5, 1.0, 1.0, [1.0, 0.0], log_det)
    assert value == pytest.approx((0.5 + math.sqrt(2 * math.log(10.0))) / 0.5, rel=1e-14)
    assert mistake_log_det(sp.csr_matrix(X), np.array([0, 1, 1]), 1.0, 2.0) == pytest.approx(
        np.linalg.slogdet(np.eye(3) + np.array([[1, 0, 1], [0, 2, 1], [0, 2, 1]]).T
                          @ np.array([[1, 0, 1], [0, 2, 1], [0, 2, 1]]) / 2.0)[1], rel=1e-14
    )  # fmt: skip


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: SOP(a=0.0), "a: must be a number in (0, inf), got 0.0"),
        (lambda: SOP(diagonal="no"), "diagonal: must be true or false, got 'no'"),
        (lambda: SOP(bias="r2"), "bias: must be one of 'feature', 'none', got 'r2'"),
    ],
)
def test_bad_parameters_are_one_line_errors(make, message):
    with pytest.raises(LinclsInputError) as info:
        make().fit([[1.0, 0.0], [0.0, 1.0]], [0, 1])
    assert str(info.value) == message


def test_full_matrix_refused_on_wide_data():
    X = sp.csr_matrix((np.ones(2), ([0, 1], [0, 20_000])), shape=(2, 20_001))
    with pytest.raises(LinclsInputError) as info:
        SOP().fit(X, [0, 1])
    assert str(info.value) == (
        "diagonal: must be true above 10000 features (the full matrix of 20001 would need "
        "3.2 GB), got false"
    )
    assert SOP(diagonal=True).fit(X, [0, 1]).mistakes_ == 2


@pytest.mark.parametrize("overrides", [[], ["dataset=noisy", "dataset.flip=0.1"]])
def test_run_logs_the_a_posteriori_bound(overrides):
    config = compose_config(
        ["learner=second_order_perceptron", "dataset.n=300", "dataset.n_test=50", *overrides]
    )
    outcome = evaluation.measure(config)
    m, tags = outcome.metrics, outcome.tags
    assert tags["bound_violated"] == "false"
    assert 1 <= m["mistakes"] <= m["bound.second_order"] == m["bound.tightest_a_posteriori"]
    diagonal = evaluation.measure({**config, "learner": {**config["learner"], "diagonal": True}})
    assert "bound.second_order" not in diagonal.metrics
