"""KernelPerceptron: the linear kernel is the perceptron, hand-computed poly/RBF runs, the
feature-space Novikoff bound, bad input, the config and one logged run."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from _online_cases import BOUND_SETTINGS, SEED001_X, SEED001_Y, bound_values, certified_data
from conftest import compose_config, runs_of
from hypothesis import given
from hypothesis import strategies as st
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls import bounds, runner
from lincls.data import make_separable
from lincls.errors import LinclsInputError
from lincls.evaluation import prepare
from lincls.experiments.benchmarks.perceptron import csr_problem, dense_problem
from lincls.geometry.certificates import certificate_of
from lincls.learners import KernelPerceptron, Perceptron


@parametrize_with_checks(
    [
        KernelPerceptron(),
        KernelPerceptron(kernel="poly", degree=3),
        KernelPerceptron(kernel="rbf", gamma=0.5, bias="none"),
    ]
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def _same_run(ours, peer, X, y, X_test):
    assert ours.mistakes_ == peer.mistakes_ > 0
    np.testing.assert_array_equal(ours.mistake_steps_, peer.mistake_steps_)
    np.testing.assert_array_equal(ours.mistake_indices_, peer.mistake_indices_)
    np.testing.assert_array_equal(ours.mistakes_per_pass_, peer.mistakes_per_pass_)
    np.testing.assert_array_equal(ours.predict(X), peer.predict(X))
    np.testing.assert_array_equal(ours.predict(X_test), peer.predict(X_test))
    scale = np.abs(peer.decision_function(X)).max()
    np.testing.assert_allclose(
        ours.decision_function(X), peer.decision_function(X), rtol=0, atol=1e-12 * scale
    )


@pytest.mark.parametrize("bias", ["feature", "r2", "none"])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("shuffle", [False, True])
def test_linear_kernel_is_the_perceptron(bias, sparse, shuffle):
    # 10% label noise: no convergence, so every pass errs and the runs are long.
    X, y = csr_problem(600, 400, 12, seed=2) if sparse else dense_problem(600, 8, seed=2)
    X_test, _ = csr_problem(300, 400, 12, seed=3) if sparse else dense_problem(300, 8, seed=3)
    params = dict(bias=bias, max_passes=4, shuffle=shuffle, random_state=7)
    ours = KernelPerceptron(kernel="linear", **params).fit(X, y)
    peer = Perceptron(**params).fit(X, y)
    assert ours.mistakes_ == ours.updates_ and ours.n_passes_ == 4
    _same_run(ours, peer, X, y, X_test)
    # w = Σ α_s y_s x_s: the dual coefficients rebuild the perceptron's weights
    w = np.asarray(ours.dual_coef_ @ ours.support_vectors_).ravel()
    np.testing.assert_allclose(w, peer.coef_[0], rtol=0, atol=1e-12 * np.abs(w).max())
    assert ours.intercept_[0] == pytest.approx(peer.intercept_[0], rel=1e-12)


def test_linear_kernel_from_seed001_start():
    # Seed 001's worked example starts from w = [−1, 0, 0] (bias −1): the primal start carries.
    ours = KernelPerceptron(max_passes=3).fit(
        SEED001_X, SEED001_Y, coef_init=[0.0, 0.0], intercept_init=[-1.0]
    )
    peer = Perceptron(max_passes=3).fit(
        SEED001_X, SEED001_Y, coef_init=[0.0, 0.0], intercept_init=[-1.0]
    )
    _same_run(ours, peer, SEED001_X, SEED001_Y, SEED001_X)
    assert not ours.zero_init_


# A 3-point set: x1 = (1, 0) positive, x2 = (0, 1) and x3 = (1, 1) negative.
TINY_X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
TINY_Y = np.array([1, -1, -1])


def test_poly_kernel_by_hand():
    # K = (1 + x·z)²: K11 = 4, K12 = 1, K13 = 4, K22 = 4, K23 = 4, K33 = 9; no bias.
    # Pass 1: g = 0 errs on x1 → g = [4, 1, 4]; x2 (y = −1, g = 1) errs → g = [3, −3, 0];
    # x3 (g = 0) errs → g = [−1, −7, −9]. Pass 2: x1 (g = −1) errs → g = [3, −6, −5]; pass 3 clean.
    model = KernelPerceptron(kernel="poly", degree=2, bias="none").fit(TINY_X, TINY_Y)
    np.testing.assert_array_equal(model.mistakes_per_pass_, [3, 1, 0])
    np.testing.assert_array_equal(model.mistake_steps_, [0, 1, 2, 3])
    np.testing.assert_array_equal(model.alpha_, [2, 1, 1])
    np.testing.assert_array_equal(model.dual_coef_, [2.0, -1.0, -1.0])
    np.testing.assert_array_equal(model.decision_function(TINY_X), [3.0, -6.0, -5.0])
    # at z = (2, 0): K(x1, z) = 9, K(x2, z) = 1, K(x3, z) = 9 → 2·9 − 1 − 9 = 8
    assert model.decision_function([[2.0, 0.0]])[0] == 8.0
    assert model.converged_ and model.n_passes_ == 3


def test_rbf_kernel_by_hand():
    # γ = ln 2: K = 2^(−‖x − z‖²), so K12 = 1/4, K13 = K23 = 1/2; bias feature 1 (K + 1).
    # Pass 1: x1 errs → g = [1, 1/4, 1/2], b = 1; x2 (1/4 + 1) errs → g = [3/4, −3/4, 0], b = 0;
    # x3 (0) errs → g = [1/4, −5/4, −1], b = −1. Pass 2: x1 (−3/4) errs → g = [5/4, −1, −1/2],
    # b = 0; x2, x3 correct. Pass 3 clean.
    model = KernelPerceptron(kernel="rbf", gamma=math.log(2.0)).fit(TINY_X, TINY_Y)
    np.testing.assert_array_equal(model.mistakes_per_pass_, [3, 1, 0])
    np.testing.assert_array_equal(model.dual_coef_, [2.0, -1.0, -1.0])
    assert model.intercept_[0] == 0.0
    np.testing.assert_allclose(model.decision_function(TINY_X), [1.25, -1.0, -0.5], rtol=1e-14)
    # at z = 0: K = 1/2, 1/2, 1/4 → 2·1/2 − 1/2 − 1/4 = 1/4
    assert model.decision_function([[0.0, 0.0]])[0] == pytest.approx(0.25, rel=1e-14)


@pytest.mark.parametrize(("kernel", "degree"), [("poly", 3), ("rbf", 2)])
def test_csr_equals_dense(kernel, degree):
    X, y = csr_problem(400, 300, 10, seed=4)
    dense = KernelPerceptron(kernel=kernel, degree=degree, gamma=0.3).fit(X.toarray(), y)
    csr = KernelPerceptron(kernel=kernel, degree=degree, gamma=0.3).fit(X, y)
    assert dense.mistakes_ == csr.mistakes_ > 0
    np.testing.assert_array_equal(dense.mistake_steps_, csr.mistake_steps_)
    np.testing.assert_array_equal(dense.dual_coef_, csr.dual_coef_)
    assert sp.issparse(csr.support_vectors_)
    np.testing.assert_allclose(
        dense.decision_function(X.toarray()), csr.decision_function(X), rtol=1e-12, atol=1e-9
    )


def test_row_cache_does_not_change_the_run():
    X, y = dense_problem(500, 6, seed=9)
    cached = KernelPerceptron(kernel="poly", degree=2, max_passes=5).fit(X, y)
    uncached = KernelPerceptron(kernel="poly", degree=2, max_passes=5, cache_size=1e-6).fit(X, y)
    assert cached.mistakes_ > cached.alpha_.astype(bool).sum()  # some rows erred again
    np.testing.assert_array_equal(cached.mistake_steps_, uncached.mistake_steps_)
    assert cached.decision_function(X).tobytes() == uncached.decision_function(X).tobytes()


def test_partial_fit_continues_the_dual_state():
    X, y = dense_problem(300, 5, seed=6)
    once = KernelPerceptron(kernel="rbf", gamma=0.5, max_passes=2, stop_when_converged=False)
    once.fit(X, y)
    twice = KernelPerceptron(kernel="rbf", gamma=0.5)
    twice.partial_fit(X, y).partial_fit(X, y)
    assert twice.mistakes_ == once.mistakes_
    np.testing.assert_array_equal(twice.mistake_steps_, once.mistake_steps_)
    np.testing.assert_allclose(
        twice.decision_function(X), once.decision_function(X), rtol=1e-12, atol=1e-12
    )


def test_same_seed_same_bits():
    X, y = dense_problem(300, 6, seed=8)
    runs = [
        KernelPerceptron(kernel="poly", degree=2, shuffle=True, random_state=5).fit(X, y)
        for _ in "ab"
    ]
    assert runs[0].dual_coef_.tobytes() == runs[1].dual_coef_.tobytes()
    assert runs[0].decision_function(X).tobytes() == runs[1].decision_function(X).tobytes()


def test_bound_values_by_hand():
    # R² = 4, γ = 0.5, ‖U‖² = 2: 4·2/0.25 = 32.
    assert bounds.kernel_novikoff(4.0, 0.5, 2.0) == pytest.approx(32.0)
    data = make_separable(60, 3, margin=0.2, radius=1.0, offset=0.3, seed=1, n_test=0)
    cert = lambda m: certificate_of(data, m)  # noqa: E731
    # linear kernel + bias feature 1: the perceptron's (R² + 1)(1 + b²)/γ²
    linear = KernelPerceptron().fit(data.X, data.y)
    value = bounds.evaluate(bounds.RunFacts(linear, data.radius, cert(linear))).values
    c = cert(linear)
    assert value["kernel_novikoff"] == pytest.approx(
        bounds.novikoff_bias(data.radius, c.margin, c.b, 1.0), rel=1e-12
    )
    # (1 + x·z)^p with no bias: R² = (1 + R²)^p, ‖U‖² = 1/p + b²
    poly = KernelPerceptron(kernel="poly", degree=3, bias="none").fit(data.X, data.y)
    value = bounds.evaluate(bounds.RunFacts(poly, data.radius, cert(poly))).values
    expected = (1 + data.radius**2) ** 3 * (1 / 3 + c.b**2) / c.margin**2
    assert value["kernel_novikoff"] == pytest.approx(expected, rel=1e-12)
    # and with the bias feature c = 1 the offset is split: ‖U‖² = 1/p + b²/2, R² + 1
    poly = KernelPerceptron(kernel="poly", degree=3).fit(data.X, data.y)
    value = bounds.evaluate(bounds.RunFacts(poly, data.radius, cert(poly))).values
    expected = ((1 + data.radius**2) ** 3 + 1) * (1 / 3 + c.b**2 / 2) / c.margin**2
    assert value["kernel_novikoff"] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("params", "offset", "reason"),
    [
        ({"kernel": "rbf"}, 0.0, "no certificate in the RBF feature space"),
        ({"bias": "none"}, 0.3, "the separator has an offset b ≠ 0 and the learner has no bias"),
    ],
)
def test_bound_skipped_with_its_reason(params, offset, reason):
    data = make_separable(60, 3, margin=0.2, radius=1.0, offset=offset, seed=1, n_test=0)
    model = KernelPerceptron(**params).fit(data.X, data.y)
    evaluation = bounds.evaluate(bounds.RunFacts(model, data.radius, certificate_of(data, model)))
    assert "kernel_novikoff" not in evaluation.values
    assert evaluation.skipped["kernel_novikoff"].startswith(reason)


@BOUND_SETTINGS
@given(
    case=st.tuples(
        st.sampled_from([("linear", 1), ("poly", 1), ("poly", 2), ("poly", 3)]),
        st.sampled_from(["feature", "r2", "none"]),
    ).flatmap(
        lambda kb: st.tuples(
            st.just(kb),
            # only the linear kernel without a bias needs a separator through the origin
            certified_data(homogeneous=kb == (("linear", 1), "none")),
        )
    ),
    shuffle=st.booleans(),
)
def test_mistakes_within_kernel_novikoff(case, shuffle):
    ((kernel, degree), bias), data = case
    model = KernelPerceptron(
        kernel=kernel, degree=degree, bias=bias, max_passes=30, shuffle=shuffle, random_state=3
    )
    assert set(bound_values(model, data)) == {"kernel_novikoff"}


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        ({"degree": 0}, "degree", "degree: must be an integer in [1, inf), got 0"),
        ({"degree": 1.5}, "degree", "degree: must be an integer in [1, inf), got 1.5"),
        ({"gamma": 0}, "gamma", "gamma: must be a number in (0, inf), got 0"),
        ({"gamma": -1.0}, "gamma", "gamma: must be a number in (0, inf), got -1.0"),
        ({"kernel": "sigmoid"}, "kernel", "kernel: must be one of 'linear', 'poly', 'rbf'"),
        ({"bias": "sklearn"}, "bias", "bias: must be one of 'feature', 'r2', 'none'"),
    ],
)
def test_bad_parameters_are_one_line_errors(params, field, message):
    with pytest.raises(LinclsInputError) as info:
        KernelPerceptron(**params).fit(SEED001_X, SEED001_Y)
    assert info.value.field == field
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_coef_init_needs_the_linear_kernel():
    with pytest.raises(LinclsInputError) as info:
        KernelPerceptron(kernel="poly").fit(SEED001_X, SEED001_Y, coef_init=[1.0, 0.0])
    assert info.value.field == "coef_init" and "linear kernel" in str(info.value)


@pytest.mark.parametrize(("override", "field"), [("degree=0", "degree"), ("gamma=0", "gamma")])
def test_config_error_names_the_field(override, field):
    with pytest.raises(LinclsInputError) as info:
        prepare(compose_config(["learner=kernel_perceptron", f"learner.{override}"]))
    assert info.value.field == f"learner.{field}"


def test_logged_run(store):
    config = compose_config(
        [
            "learner=kernel_perceptron",
            "learner.kernel=poly",
            "learner.degree=2",
            "dataset.n=300",
            "dataset.d=5",
            "dataset.offset=0.2",
            "dataset.n_test=100",
            "certificates.svm=false",  # the generator's certificate only: a hand formula
            "certificates.best=false",
            f"tracking.uri={store}",
        ]
    )
    outcome = runner.execute(config)
    (run,) = runs_of(store)
    m = run.data.metrics
    assert run.info.status == "FINISHED" and run.data.tags["learner"] == "kernel_perceptron"
    assert m["mistakes"] == outcome.learner.mistakes_ == m["updates"]
    margin, radius = m["margin"], m["radius"]
    b = outcome.dataset.b
    expected = ((1 + radius**2) ** 2 + 1) * (1 / 2 + b**2 / 2) / margin**2
    assert m["bound.kernel_novikoff"] == pytest.approx(expected, rel=1e-12)
    assert m["mistakes"] <= m["bound.kernel_novikoff"]
    assert run.data.tags["bound.tightest"] == "kernel_novikoff"
    assert run.data.tags["bound_violated"] == "false"
    assert "novikoff_bias: not a perceptron-family learner" in run.data.tags["bounds.skipped"]


def quadratic_features(X):
    """φ with ⟨φ(x), φ(z)⟩ = (1 + x·z)²: (1, √2·x_i, x_i², √2·x_i·x_j for i < j)."""
    d = X.shape[1]
    pairs = [np.sqrt(2.0) * X[:, i] * X[:, j] for i in range(d) for j in range(i + 1, d)]
    return np.column_stack([np.ones(len(X)), np.sqrt(2.0) * X, X**2, *pairs])


def test_poly_kernel_is_the_perceptron_on_the_explicit_feature_map():
    X, y = dense_problem(400, 4, seed=11)
    Phi = quadratic_features(X)
    np.testing.assert_allclose(Phi @ Phi.T, (1 + X @ X.T) ** 2, rtol=1e-12, atol=1e-10)
    ours = KernelPerceptron(kernel="poly", degree=2, bias="none", max_passes=3).fit(X, y)
    peer = Perceptron(bias="none", max_passes=3).fit(Phi, y)
    assert ours.mistakes_ == peer.mistakes_ > 0
    np.testing.assert_array_equal(ours.mistake_steps_, peer.mistake_steps_)
    X_test, _ = dense_problem(200, 4, seed=12)
    np.testing.assert_array_equal(ours.predict(X_test), peer.predict(quadratic_features(X_test)))


def test_poly_lift_keeps_the_margin():
    # U = (b, u/√2, 0, ...) in φ-space: ⟨U, φ(x)⟩ = u·x + b, ‖U‖² = 1/2 + b²
    data = make_separable(80, 3, margin=0.1, radius=1.0, offset=0.4, seed=2, n_test=0)
    Phi = quadratic_features(data.X)
    U = np.zeros(Phi.shape[1])
    U[0], U[1:4] = data.b, data.u / np.sqrt(2.0)
    np.testing.assert_allclose(Phi @ U, data.X @ data.u + data.b, rtol=1e-12, atol=1e-15)
    lifted = bounds.kernel.lifted_norm_sq("poly", 2, data.b, 0.0)
    assert U @ U == pytest.approx(lifted, rel=1e-14)
    # with the bias feature c = 1 the offset splits as b/2 + 1·b/2: ‖U‖² = 1/2 + b²/2
    assert bounds.kernel.lifted_norm_sq("poly", 2, data.b, 1.0) == pytest.approx(
        0.5 + data.b**2 / 2, rel=1e-14
    )
