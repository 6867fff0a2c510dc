"""CW, SCW-I and SCW-II: the scikit-learn checks, the papers' updates in numpy (the full Σ by
inverting Σ⁻¹ + k·x xᵀ afresh) against the kernels on 24 streams per variant (dense and CSR, full
and diagonal, with and without a bias), the steps by hand, bad input, a run."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import compose_config
from scipy.stats import norm
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls import evaluation
from lincls.errors import LinclsInputError
from lincls.learners.confidence_weighted import ConfidenceWeighted as CW
from lincls.learners.confidence_weighted import cw_step, uncovered


@parametrize_with_checks(
    [CW(), CW(variant="cw", diagonal=True, bias="none", shuffle=True), CW(variant="scw2", C=0.1)]
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def step(variant, M, V, phi, C):
    """(α, k): Dredze et al. (2008)'s variance update for CW, Wang et al. (2012)'s α and β for
    SCW-I / SCW-II with k = β/(1 − βV); (0, 0) where the example meets its constraint."""
    psi, zeta = 1 + phi**2 / 2, 1 + phi**2
    if variant == "cw":
        if M >= phi * V * (1 - 1e-9):
            return 0.0, 0.0
        b = 1 + 2 * phi * M
        alpha = (-b + math.sqrt(b * b - 8 * phi * (M - phi * V))) / (4 * phi * V)
        return alpha, 2 * alpha * phi
    if M >= phi * math.sqrt(V) * (1 - 1e-9):
        return 0.0, 0.0
    if variant == "scw1":
        root = math.sqrt(M * M * phi**4 / 4 + V * phi**2 * zeta)
        alpha = min(C, max(0.0, (-M * psi + root) / (V * zeta)))
    else:
        n = V + 1 / (2 * C)
        gamma = phi * math.sqrt(phi**2 * M**2 * V**2 + 4 * n * V * (n + V * phi**2))
        alpha = max(0.0, (-(2 * M * n + phi**2 * M * V) + gamma) / (2 * (n**2 + n * V * phi**2)))
    u = 0.25 * (-alpha * V * phi + math.sqrt(alpha**2 * V**2 * phi**2 + 4 * V)) ** 2
    beta = alpha * phi / (math.sqrt(u) + V * alpha * phi)
    return alpha, beta / (1 - beta * V)


def direct_cw(X, y, variant, eta, C, passes, c=1.0, diagonal=False):
    """The three rules in numpy: (mistakes, updates, μ on (x, c), the least distance of a
    decision from its threshold over the size of its terms Σ|μ_j x_j| (+ the threshold))."""
    Xb = np.hstack([X, np.full((X.shape[0], 1), c)]) if c else X
    mu, cov, sigma = np.zeros(Xb.shape[1]), np.eye(Xb.shape[1]), np.ones(Xb.shape[1])
    phi = norm.ppf(eta)
    mistakes = updates = 0
    least = np.inf
    for _ in range(passes):
        for x, label in zip(Xb, y, strict=True):
            sx = sigma * x if diagonal else cov @ x
            V, M = x @ sx, label * (mu @ x)
            spread = float(np.abs(mu * x).sum())
            if spread > 0.0:  # else M = 0 exactly
                least = min(least, abs(M) / spread)
            if V > 0:
                met = (phi * V if variant == "cw" else phi * math.sqrt(V)) * (1 - 1e-9)
                least = min(least, abs(M - met) / (spread + met))
            mistakes += M <= 0
            alpha, k = step(variant, M, V, phi, C) if V > 0 else (0.0, 0.0)
            if alpha <= 0:
                continue
            mu = mu + alpha * label * sx
            if diagonal:
                sigma = np.where(x != 0, 1 / (1 / sigma + k * x * x), sigma)
            else:
                cov = np.linalg.inv(np.linalg.inv(cov) + k * np.outer(x, x))
            updates += 1
    return mistakes, updates, mu, least


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
    return X, y, float(rng.choice([0.6, 0.8, 0.95])), float(rng.choice([0.1, 1.0, 10.0]))


@pytest.mark.parametrize("variant", ["cw", "scw1", "scw2"])
@pytest.mark.parametrize("diagonal", [False, True])
def test_equals_the_papers_updates_dense_and_csr(variant, diagonal):
    worst, least = 0.0, np.inf
    for seed in range(24):
        X, y, eta, C = stream(seed)
        for bias in ("feature", "none"):
            params = {"variant": variant, "eta": eta, "C": C, "diagonal": diagonal, "bias": bias}
            dense = CW(**params, max_passes=3, stop_when_converged=False).fit(X, y)
            csr = CW(**params, max_passes=3, stop_when_converged=False).fit(sp.csr_matrix(X), y)
            np.testing.assert_array_equal(dense.coef_, csr.coef_)
            np.testing.assert_array_equal(dense.intercept_, csr.intercept_)
            c = 1.0 if bias == "feature" else 0.0
            mistakes, updates, mu, gap = direct_cw(X, y, variant, eta, C, 3, c, diagonal)
            least = min(least, gap)
            assert (dense.mistakes_, dense.updates_) == (mistakes, updates)
            ours = np.r_[dense.coef_[0], dense.intercept_] if c else dense.coef_[0]
            worst = max(worst, float(np.abs(ours - mu).max() / np.abs(mu).max()))
    assert worst < 1e-12  # measured: 4.2e-15 at most
    # Away from ties on any processor: the loop's decisions (LAPACK's inverse, BLAS products)
    # lie at least this far from their thresholds, the learner's agree with them to ~1e-14.
    # Measured: 5.0e-10 (an example a step left on its constraint sits SLACK/2 from it), and
    # 5.7e-6 for SCW-II (its step stops short of the constraint).
    assert least > 4e-10


def test_steps_by_hand():
    phi = norm.ppf(0.9)
    # SCW-I at M = 0, V = 1: α = φ√ζ/ζ = φ/√(1 + φ²), below C = 1
    alpha, beta, _ = cw_step(1, 0.0, 1.0, phi, 1.0)
    assert alpha == pytest.approx(phi / math.sqrt(1 + phi**2), rel=1e-15)
    assert cw_step(1, 0.0, 1.0, phi, 0.1)[0] == 0.1  # capped at C
    # CW at M = 0, V = 1: α = (−1 + √(1 + 8φ²))/(4φ), k = 2αφ, β = k/(1 + k)
    alpha, beta, k = cw_step(0, 0.0, 1.0, phi, 1.0)
    assert alpha == pytest.approx((-1 + math.sqrt(1 + 8 * phi**2)) / (4 * phi), rel=1e-15)
    assert (k, beta) == pytest.approx((2 * alpha * phi, k / (1 + k)), rel=1e-15)
    # SCW-II at M = 0, V = 1, C = 1: α = φ/√(n(n + φ²)), n = 3/2, short of the constraint by
    # α/(2C); an update with c = α + k(M + αV) < 0 (M = −10, C = 0.01) is counted as uncovered
    alpha, beta, k = cw_step(2, 0.0, 1.0, phi, 1.0)
    assert alpha == pytest.approx(phi / math.sqrt(1.5 * (1.5 + phi**2)), rel=1e-15)
    s = math.sqrt(1.0 / (1.0 + k))
    assert alpha + alpha / 2 == pytest.approx(phi * s, rel=1e-12)
    assert uncovered(2, 0.0, 1.0, alpha, k, 1.0) == 0
    alpha, beta, k = cw_step(2, -10.0, 1.0, phi, 0.01)
    assert alpha + k * (-10.0 + alpha) < 0 and uncovered(2, -10.0, 1.0, alpha, k, 0.01) == 1
    assert (
        uncovered(1, 0.0, 1.0, 0.1, 1.0, 0.1) == 1 and uncovered(0, -5.0, 1.0, 1.0, 9.0, 1.0) == 0
    )
    # on or past the constraint, and at V = 0: no step
    assert cw_step(2, phi, 1.0, phi, 1.0) == (0.0, 0.0, 0.0)
    assert cw_step(0, 2 * phi, 2.0, phi, 1.0) == (0.0, 0.0, 0.0)
    assert cw_step(1, -1.0, 0.0, phi, 1.0) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: CW(variant="arow"), "variant: must be one of 'cw', 'scw1', 'scw2', got 'arow'"),
        (lambda: CW(eta=0.5), "eta: must be a number in (0.5, 1), got 0.5"),
        (lambda: CW(eta=1.0), "eta: must be a number in (0.5, 1), got 1.0"),
        (lambda: CW(C=0), "C: must be a number in (0, inf), got 0"),
        (lambda: CW(diagonal=None), "diagonal: must be true or false, got None"),
    ],
)
def test_bad_parameters_are_one_line_errors(make, message):
    with pytest.raises(LinclsInputError) as info:
        make().fit([[1.0, 0.0], [0.0, 1.0]], [0, 1])
    assert str(info.value) == message


@pytest.mark.parametrize("variant", ["cw", "scw1", "scw2"])
def test_run_logs_the_derived_bound_where_it_applies(variant):
    """CW and SCW-II log their derived bounds (``lincls.bounds.confidence_weighted``); SCW-I at
    C = 1 caps some steps on these data, so its bound does not apply."""
    config = compose_config(
        ["learner=confidence_weighted", f"learner.variant={variant}", "dataset.n=300"]
    )
    outcome = evaluation.measure(config)
    m, tags = outcome.metrics, outcome.tags
    assert ("bound.cw" in m) == (variant == "cw")
    assert ("bound.scw2" in m) == (variant == "scw2")
    assert "bound.scw1" not in m
    if variant == "scw1":
        assert tags["bounds.none"].startswith("no mistake bound applies to this run")
    else:
        assert m["mistakes"] <= m[f"bound.{variant}"]
    assert (outcome.learner.clipped_steps_ > 0) == (variant == "scw1")
    assert m["updates"] >= 1 and m["train_accuracy"] > 0.9
