"""AveragedPerceptron: sklearn's average=True, the naive mean, coef_init, bounds, the config."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _online_cases import BOUND_SETTINGS, SEED001_X, SEED001_Y, bias_and_data, bound_values
from conftest import compose_config
from hypothesis import given
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls.evaluation import measure
from lincls.experiments.benchmarks.perceptron import csr_problem, dense_problem
from lincls.learners import AveragedPerceptron, Perceptron


def assert_rel_close(actual, desired, rtol=1e-12):
    """Equal to ``rtol`` relative to the largest magnitude of ``desired``."""
    desired = np.asarray(desired, dtype=np.float64)
    scale = max(float(np.abs(desired).max()), np.finfo(float).tiny)
    np.testing.assert_allclose(actual, desired, rtol=rtol, atol=rtol * scale)


def sklearn_averaged(X, y, passes):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return SGDClassifier(
            loss="perceptron",
            learning_rate="constant",
            eta0=1,
            penalty=None,
            average=True,
            shuffle=False,
            tol=None,
            max_iter=passes,
        ).fit(X, y)


@parametrize_with_checks([AveragedPerceptron()])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("passes", [1, 4])
def test_equals_sklearn_average_dense(passes):
    X, y = dense_problem(2000, 30, seed=3)
    ours = AveragedPerceptron(max_passes=passes).fit(X, y)
    peer = sklearn_averaged(X, y, passes)
    assert_rel_close(ours.coef_, peer.coef_)
    assert_rel_close(ours.intercept_, peer.intercept_)
    assert ours.n_passes_ == passes


@pytest.mark.parametrize("passes", [1, 3])
def test_equals_sklearn_average_csr(passes):
    # scikit-learn damps the bias step by 0.01 on sparse input; only the comparison uses it.
    X, y = csr_problem(2000, 5000, 20, seed=4)
    ours = AveragedPerceptron(max_passes=passes, intercept_decay=0.01).fit(X, y)
    peer = sklearn_averaged(X, y, passes)
    assert_rel_close(ours.coef_, peer.coef_)
    assert_rel_close(ours.intercept_, peer.intercept_)


def test_mistakes_and_last_weights_are_the_perceptrons():
    X, y = dense_problem(1500, 12, seed=5)
    ours = AveragedPerceptron(max_passes=5, shuffle=True, random_state=2).fit(X, y)
    plain = Perceptron(max_passes=5, stop_when_converged=False, shuffle=True, random_state=2)
    plain.fit(X, y)
    np.testing.assert_array_equal(ours.last_coef_, plain.coef_)
    np.testing.assert_array_equal(ours.last_intercept_, plain.intercept_)
    np.testing.assert_array_equal(ours.mistake_steps_, plain.mistake_steps_)
    assert ours.mistakes_ == ours.updates_ == plain.mistakes_


def naive_mean(X, y_signed, orders, lr=1.0):
    """(1/T) Σ_t w_t by brute force: the weights after every step, summed."""
    w = np.zeros(X.shape[1])
    b = 0.0
    total_w = np.zeros_like(w)
    total_b = 0.0
    steps = 0
    for order in orders:
        for i in order:
            if y_signed[i] * (X[i] @ w + b) <= 0:
                w = w + lr * y_signed[i] * X[i]
                b += lr * y_signed[i]
            total_w += w
            total_b += b
            steps += 1
    return total_w / steps, total_b / steps


def test_lazy_mean_equals_brute_force_with_shuffling():
    X, y = dense_problem(300, 5, seed=6)
    model = AveragedPerceptron(lr=0.5, max_passes=3, shuffle=True, random_state=11).fit(X, y)
    rng = np.random.RandomState(11)
    orders = [rng.permutation(300) for _ in range(3)]
    w, b = naive_mean(X, np.where(y > 0, 1.0, -1.0), orders, lr=0.5)
    assert_rel_close(model.coef_[0], w)
    assert model.intercept_[0] == pytest.approx(b, rel=1e-12)


def test_partial_fit_continues_the_mean():
    X, y = dense_problem(400, 6, seed=7)
    whole = AveragedPerceptron(max_passes=3).fit(X, y)
    parts = AveragedPerceptron()
    for _ in range(3):
        parts.partial_fit(X, y, classes=np.unique(y))
    assert_rel_close(parts.coef_, whole.coef_)
    assert parts.intercept_[0] == pytest.approx(whole.intercept_[0], rel=1e-12)
    np.testing.assert_array_equal(parts.mistake_steps_, whole.mistake_steps_)


def test_seed001_table_from_coef_init():
    # Weights after each step: [-1,0,0], [0,3,2] (three times), [-1,1,-1]; their mean.
    model = AveragedPerceptron(max_passes=1).fit(
        SEED001_X, SEED001_Y, coef_init=[0.0, 0.0], intercept_init=[-1.0]
    )
    np.testing.assert_array_equal(model.last_coef_, [[1.0, -1.0]])
    np.testing.assert_array_equal(model.last_intercept_, [-1.0])
    np.testing.assert_allclose(model.coef_, [[2.0, 1.0]], rtol=1e-15)
    np.testing.assert_allclose(model.intercept_, [-0.4], rtol=1e-15)
    np.testing.assert_array_equal(model.mistake_steps_, [1, 4])
    assert model.zero_init_ is False


def test_same_seed_same_bits():
    X, y = dense_problem(500, 8, seed=8)
    a = AveragedPerceptron(max_passes=4, shuffle=True, random_state=5).fit(X, y)
    b = AveragedPerceptron(max_passes=4, shuffle=True, random_state=5).fit(X, y)
    assert a.coef_.tobytes() == b.coef_.tobytes()
    assert a.intercept_.tobytes() == b.intercept_.tobytes()


@BOUND_SETTINGS
@given(case=bias_and_data(), lr=st.sampled_from([0.1, 1.0, 3.0]), shuffle=st.booleans())
def test_mistakes_within_perceptron_bounds(case, lr, shuffle):
    bias, data = case
    model = AveragedPerceptron(
        lr=lr, bias=bias, max_passes=30, stop_when_converged=True, shuffle=shuffle, random_state=0
    )
    values = bound_values(model, data)
    assert set(values) <= {"novikoff", "novikoff_bias", "novikoff_2r"}


def test_runner_logs_perceptron_bounds():
    config = compose_config(
        ["learner=averaged_perceptron", "dataset.n=200", "dataset.d=5", "dataset.n_test=50"]
    )
    outcome = measure(config)
    assert outcome.learner.__class__ is AveragedPerceptron
    assert outcome.metrics["passes_run"] == 10  # all passes: stop_when_converged is off
    assert "bound.novikoff_bias" in outcome.metrics
    assert outcome.metrics["mistakes"] <= outcome.metrics["bound.novikoff_bias"]
