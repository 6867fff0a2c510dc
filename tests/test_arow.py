"""AROW: the scikit-learn checks, the paper's update in numpy against the kernels on 24 streams
(dense and CSR, full and diagonal, with and without a bias), the recorded update rounds, the
bound by hand and at random comparators, bad input, a run with its bound."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import compose_config
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls import evaluation
from lincls.bounds.arow import arow_bound
from lincls.errors import LinclsInputError
from lincls.learners.arow import AROW


@parametrize_with_checks([AROW(), AROW(diagonal=True, r=0.1, bias="none", shuffle=True)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def direct_arow(X, y, r, passes, c=1.0, diagonal=False):
    """Crammer, Kulesza & Dredze (2009), Figure 1, in numpy (the diagonal variant: Σ⁻¹'s
    diagonal gains x_j²/r). Returns (mistakes, rows of the updates, μ on (x, c), the least
    distance of y m from 0 or 1 over the size of its terms, Σ|μ_j x_j| or 1)."""
    Xb = np.hstack([X, np.full((X.shape[0], 1), c)]) if c else X
    mu, cov, sigma = np.zeros(Xb.shape[1]), np.eye(Xb.shape[1]), np.ones(Xb.shape[1])
    mistakes, updated, least = 0, [], np.inf
    for _ in range(passes):
        for row, (x, label) in enumerate(zip(Xb, y, strict=True)):
            m = mu @ x
            spread = float(np.abs(mu * x).sum())
            if spread > 0.0:  # else m = 0 exactly
                least = min(least, abs(m) / spread, abs(label * m - 1) / max(spread, 1.0))
            mistakes += label * m <= 0
            if label * m >= 1:
                continue
            if diagonal:
                beta = 1 / (sigma @ (x * x) + r)
                mu = mu + (1 - label * m) * beta * label * sigma * x
                sigma = np.where(x != 0, 1 / (1 / sigma + x * x / r), sigma)
            else:
                sx = cov @ x
                beta = 1 / (x @ sx + r)
                mu = mu + (1 - label * m) * beta * label * sx
                cov = cov - beta * np.outer(sx, sx)
            updated.append(row)
    return mistakes, updated, mu, least


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
    return X, y, float(rng.choice([0.1, 1.0, 10.0]))


@pytest.mark.parametrize("diagonal", [False, True])
@pytest.mark.parametrize("bias", ["feature", "none"])
def test_equals_the_papers_update_dense_and_csr(diagonal, bias):
    worst, least = 0.0, np.inf
    for seed in range(24):
        X, y, r = stream(seed)
        params = {"r": r, "diagonal": diagonal, "bias": bias, "max_passes": 3}
        dense = AROW(**params, stop_when_converged=False).fit(X, y)
        csr = AROW(**params, stop_when_converged=False).fit(sp.csr_matrix(X), y)
        np.testing.assert_array_equal(dense.coef_, csr.coef_)
        np.testing.assert_array_equal(dense.intercept_, csr.intercept_)
        np.testing.assert_array_equal(dense.update_indices_, csr.update_indices_)
        found = direct_arow(X, y, r, 3, 1.0 if bias == "feature" else 0, diagonal)
        mistakes, updated, mu, gap = found
        least = min(least, gap)
        assert (dense.mistakes_, dense.update_indices_.tolist()) == (mistakes, updated)
        assert dense.updates_ == len(updated)
        ours = np.r_[dense.coef_[0], dense.intercept_] if bias == "feature" else dense.coef_[0]
        worst = max(worst, float(np.abs(ours - mu).max() / np.abs(mu).max()))
    assert worst < 1e-12  # measured: 4.7e-15
    # Away from ties on any processor: the loop's decisions (BLAS products) lie at least this
    # far from their thresholds, the learner's agree with them to ~1e-14 (measured: 3.4e-6)
    assert least > 1e-7


def test_partial_fit_chunks_equal_one_pass_and_keep_the_update_rounds():
    X, y, _ = stream(6)
    for diagonal in (False, True):
        parts = AROW(diagonal=diagonal)
        for chunk in np.array_split(np.arange(X.shape[0]), 3):
            parts.partial_fit(X[chunk], y[chunk], classes=[-1.0, 1.0])
        whole = AROW(diagonal=diagonal, max_passes=1).fit(X, y)
        np.testing.assert_array_equal(parts.coef_, whole.coef_)
        assert (parts.mistakes_, parts.updates_) == (whole.mistakes_, whole.updates_)
        # each chunk's rows are numbered within it, as mistake_indices_ are
        assert parts.update_indices_.shape == whole.update_indices_.shape == (whole.updates_,)


def test_bound_by_hand_and_at_u_zero():
    # one update at x = (1, 0), a mistake (U = 0), r = 1: ln det = ln 2; u = (2, 0): g = 0
    value = arow_bound(1.0, 4.0, [2.0], [0.0], math.log(2.0), 0)
    assert value == pytest.approx(math.sqrt(8.0 * math.log(2.0)), rel=1e-15)
    # u = 0: every g_t = 1, the bound is M + U − U = M, whatever the rounds
    assert arow_bound(0.5, 0.0, [0.0] * 7, [1.0] * 7, 3.0, 4) == pytest.approx(3.0, rel=1e-15)


def test_bound_holds_at_random_comparators():
    """Theorem 2 holds for every u: checked at 8 comparators (directions and scales) of 200
    runs, the update rounds being the learner's own record."""
    rng = np.random.default_rng(9)
    checked = 0
    while checked < 200:
        X, y, r = stream(int(rng.integers(2**31)))
        if np.unique(y).shape[0] < 2:
            continue
        checked += 1
        model = AROW(r=r, bias="none", max_passes=2, stop_when_converged=False).fit(X, y)
        rows = model.update_indices_
        XA, yA = X[rows], y[rows]
        log_det = float(np.linalg.slogdet(np.eye(X.shape[1]) + XA.T @ XA / r)[1])
        errors = model.updates_ - model.mistakes_
        for scale in (0.1, 1.0, 10.0, 100.0):
            for _ in range(2):
                u = rng.standard_normal(X.shape[1])
                u *= scale / np.linalg.norm(u)
                margins = yA * (XA @ u)
                bound = arow_bound(r, u @ u, margins, np.maximum(1 - margins, 0), log_det, errors)
                assert model.mistakes_ <= bound * (1 + 1e-9)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: AROW(r=-1.0), "r: must be a number in (0, inf), got -1.0"),
        (lambda: AROW(diagonal=1), "diagonal: must be true or false, got 1"),
        (lambda: AROW(bias="sklearn"), "bias: must be one of 'feature', 'none', got 'sklearn'"),
    ],
)
def test_bad_parameters_are_one_line_errors(make, message):
    with pytest.raises(LinclsInputError) as info:
        make().fit([[1.0, 0.0], [0.0, 1.0]], [0, 1])
    assert str(info.value) == message


@pytest.mark.parametrize("overrides", [[], ["dataset=noisy", "dataset.flip=0.1"]])
def test_run_logs_the_a_posteriori_bound(overrides):
    config = compose_config(["learner=arow", "dataset.n=300", "dataset.n_test=50", *overrides])
    outcome = evaluation.measure(config)
    m, tags = outcome.metrics, outcome.tags
    assert tags["bound_violated"] == "false"
    assert 1 <= m["mistakes"] <= m["bound.arow"] == m["bound.tightest_a_posteriori"]
    assert m["bound_param.arow.margin_errors"] == m["updates"] - m["mistakes"]
    diagonal = evaluation.measure({**config, "learner": {**config["learner"], "diagonal": True}})
    assert "bound.arow" not in diagonal.metrics
